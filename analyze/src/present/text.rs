//! Results for people: aligned tables with a unit on every duration,
//! DTrace-style `quantize` histograms, the summary line and notices.

use std::fmt::Write as _;

use crate::engine::summary::Summary;
use crate::input::damage::damage_lines;
use crate::model::stats::{log2_bucket_floor, Log2Buckets};
use crate::model::table::{format_ns, text_of, Shown, Table, Unit};

/// The summary line every text output starts with.
pub fn summary_line(s: &Summary) -> String {
    let mut line = format!(
        "{} events over {}, {} discarded by LTTng",
        s.events,
        format_ns(s.last_ns.saturating_sub(s.first_ns).max(0) as u64),
        s.discarded
    );
    if s.discarded_reports_without_count > 0 {
        let _ = write!(
            line,
            " (+{} losses of unknown size)",
            s.discarded_reports_without_count
        );
    }
    if s.discarded > 0 || s.discarded_reports_without_count > 0 {
        line.push_str(": results are incomplete");
    }
    line
}

/// Renders tables for people; `hist` adds a `quantize` picture per row.
pub fn render_text(summary: &Summary, tables: &[Table], hist: bool) -> String {
    let mut out = summary_line(summary);
    out.push('\n');
    let mut lines = damage_lines(&summary.damaged);
    lines.extend(summary.notices());
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    for t in tables.iter().filter(|t| t.shown != Shown::JsonOnly) {
        out.push('\n');
        out.push_str(&t.title);
        out.push('\n');
        if t.rows.is_empty() {
            out.push_str("  (none)\n");
        }
        let mut cells: Vec<Vec<String>> = t
            .rows
            .iter()
            .map(|r| {
                r.cells
                    .iter()
                    .zip(&t.columns)
                    .map(|(c, col)| text_of(c, col.unit, summary.first_ns))
                    .collect()
            })
            .collect();
        cut_excerpts(t, &mut cells);
        if !t.rows.is_empty() {
            let titles = t.titles();
            let widths: Vec<usize> = titles
                .iter()
                .enumerate()
                .map(|(i, title)| {
                    cells
                        .iter()
                        .map(|r| r[i].chars().count())
                        .chain([title.chars().count()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |vals: &mut dyn Iterator<Item = (usize, &str)>| -> String {
                let mut s = String::new();
                for (i, v) in vals {
                    let pad = widths[i].saturating_sub(v.chars().count());
                    s.push_str("  ");
                    if matches!(t.columns[i].unit, Unit::Text | Unit::Pid) {
                        s.push_str(v);
                        s.extend(std::iter::repeat_n(' ', pad));
                    } else {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(v);
                    }
                }
                s.trim_end().to_string() + "\n"
            };
            out.push_str(&line(&mut titles.iter().copied().enumerate()));
            for (row, texts) in t.rows.iter().zip(&cells) {
                out.push_str(&line(&mut texts.iter().map(|s| s.as_str()).enumerate()));
                if let (true, Some(h)) = (hist, &row.hist) {
                    out.push_str(&quantize(h));
                }
            }
        }
        for note in &t.notes {
            let _ = writeln!(out, "  {note}");
        }
    }
    out
}

/// Fewest characters an excerpt is cut to, however narrow the terminal.
const MIN_EXCERPT: usize = 24;

/// Cuts the [`Unit::Excerpt`] cells so that each line fits the terminal.
fn cut_excerpts(t: &Table, cells: &mut [Vec<String>]) {
    let Some(e) = t.columns.iter().position(|c| c.unit == Unit::Excerpt) else {
        return;
    };
    let others: usize = (0..t.columns.len())
        .filter(|&i| i != e)
        .map(|i| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([t.columns[i].title.len()])
                .max()
                .unwrap_or(0)
                + 2
        })
        .sum();
    let room = terminal_width().saturating_sub(others + 2).max(MIN_EXCERPT);
    for r in cells.iter_mut() {
        if r[e].chars().count() > room {
            r[e] = r[e].chars().take(room - 3).collect::<String>() + "...";
        }
    }
}

/// DTrace's `quantize`: one line per power-of-two bucket from the first to
/// the last non-empty one, a bar of `@` scaled to 40 columns.
pub fn quantize(h: &Log2Buckets) -> String {
    let Some(first) = h.iter().position(|&c| c > 0) else {
        return String::new();
    };
    let last = h.iter().rposition(|&c| c > 0).unwrap_or(first);
    let total: u64 = h.iter().sum();
    let mut out = format!("{:>16}  {:-^41}  count\n", "value (ns)", " Distribution ");
    for (i, &count) in h
        .iter()
        .enumerate()
        .take((last + 2).min(h.len()))
        .skip(first)
    {
        let bar = ((count as f64 / total as f64) * 40.0).round() as usize;
        let _ = writeln!(
            out,
            "{:>16} |{:<40} {count}",
            log2_bucket_floor(i),
            "@".repeat(if count > 0 { bar.max(1) } else { 0 })
        );
    }
    out
}

/// Width of the terminal (`COLUMNS`), 100 when unknown.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c| c >= 40)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::windows::windowed;
    use crate::model::table::{col, sparkline, Cell};
    use crate::present::json::render_json;

    #[test]
    fn text_and_json_come_from_one_table() {
        let mut t = Table::new(
            "calls",
            "Calls",
            vec![
                col("entry", "entry", Unit::Text),
                col("max_ns", "max", Unit::Ns),
            ],
        );
        t.push(
            vec![Cell::Text("kv:get/1".into()), Cell::Num(2_000_000)],
            None,
        );
        let s = Summary {
            events: 2,
            discarded: 1,
            ..Summary::default()
        };
        let text = render_text(&s, &[t.clone()], false);
        assert!(
            text.contains("1 discarded by LTTng: results are incomplete"),
            "{text}"
        );
        assert!(text.contains("kv:get/1  2.00 ms"), "{text}");
        let v = render_json(&s, &[t]);
        assert_eq!(v["calls"][0]["max_ns"], 2_000_000);
        assert_eq!(v["discarded"], 1);
    }

    #[test]
    fn quantize_spans_the_used_buckets() {
        let mut h = [0u64; 65];
        h[11] = 3;
        h[13] = 1;
        let pic = quantize(&h);
        assert!(
            pic.contains("1024 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ "),
            "{pic}"
        );
        assert_eq!(pic.lines().count(), 1 + 4);
    }

    fn per_process(rows: &[(&str, u64)]) -> Vec<Table> {
        let mut t = Table::new(
            "gc",
            "GC",
            vec![
                col("pid", "pid", Unit::Text),
                col("count", "count", Unit::Count),
                col("p50_ns", "p50", Unit::Ns),
                col("p99_ns", "p99", Unit::Ns),
            ],
        );
        for (pid, p99) in rows {
            t.push(
                vec![
                    Cell::Text(pid.to_string()),
                    Cell::Num(p99 / 5 + 1),
                    Cell::Num(p99 / 2),
                    Cell::Num(*p99),
                ],
                None,
            );
        }
        vec![t]
    }

    /// Per window: JSON rows carry their window's start; text gives each
    /// row's count, p50 and p99 in every window that had it, one line
    /// each, and the p99 across the windows as a sparkline.
    #[test]
    fn windows_give_rows_per_window_and_a_line_per_row() {
        let parts = vec![
            (100, per_process(&[("<0.1.0>", 10), ("<0.2.0>", 5)])),
            (200, per_process(&[("<0.1.0>", 80)])),
        ];
        let tables = windowed(&parts, 100, 100);
        let json = render_json(&Summary::default(), &tables);
        let rows = json["gc"].as_array().expect("rows");
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2]["window_start_ns"], 200);
        assert_eq!(rows[2]["pid"], "<0.1.0>");
        assert_eq!(rows[2]["p99_ns"], 80);
        let text = render_text(&Summary::default(), &tables, false);
        assert!(
            text.contains("GC: count, p50 and p99 per window of 100 ns (2 windows)"),
            "{text}"
        );
        assert!(
            text.contains("  pid      window   count    p50    p99  p99 over the windows"),
            "{text}"
        );
        assert!(
            text.contains("  <0.1.0>  +0 ns        3   5 ns  10 ns  ▂█"),
            "{text}"
        );
        assert!(
            text.contains("           +100 ns     17  40 ns  80 ns\n"),
            "{text}"
        );
        assert!(
            text.contains("  <0.2.0>  +0 ns        2   2 ns   5 ns  █"),
            "{text}"
        );
        let many: Vec<(i64, Vec<Table>)> = (0..40)
            .map(|w| (w * 100, per_process(&[("<0.1.0>", w as u64)])))
            .collect();
        let text = render_text(&Summary::default(), &windowed(&many, 100, 0), false);
        assert!(text.contains("+3.90 us"), "{text}");
        assert!(text.contains("▁▁▁▂▂▂▂▂▂▃"), "{text}");
        assert_eq!(sparkline(&[Some(0), None, Some(7), Some(3)]), "▁ █▄");
    }
}
