//! Results, apart from how they are shown: every analysis fills [`Table`]s
//! whose columns say their key, title and unit; the same tables are printed
//! for people (aligned, a unit on every duration), written as JSON (one
//! object per row, keyed by column), drawn as `quantize` histograms and
//! plotted in the report.

use serde_json::{json, Map, Value};
use std::fmt::Write as _;

use crate::stats::{log2_bucket_floor, Log2Buckets};

/// How a column's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Text (pids, entries, event names).
    Text,
    /// A plain count.
    Count,
    /// A duration in nanoseconds.
    Ns,
    /// A timestamp, ns from the clock's origin; printed relative to the
    /// first event of the trace.
    Timestamp,
    /// Words of memory.
    Words,
    /// A number as the trace gave it (a user probe's integer argument).
    Value,
}

/// A column: its JSON key, its title in text tables, its unit.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Stable JSON key (`p99_ns`).
    pub key: &'static str,
    /// Short title for people (`p99`).
    pub title: &'static str,
    /// How to show values.
    pub unit: Unit,
}

/// Shorthand for a column.
pub const fn col(key: &'static str, title: &'static str, unit: Unit) -> Column {
    Column { key, title, unit }
}

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text.
    Text(String),
    /// An unsigned number (count, ns, words).
    Num(u64),
    /// A signed number (timestamps, CPUs: -1 when unknown).
    Int(i64),
}

impl Cell {
    /// Text from trace bytes (UTF-8 by the contract; anything else replaced).
    pub fn bytes(b: &[u8]) -> Cell {
        Cell::Text(String::from_utf8_lossy(b).into_owned())
    }
}

/// A row and, for duration views, its power-of-two histogram.
#[derive(Debug, Clone)]
pub struct Row {
    /// Values, one per column.
    pub cells: Vec<Cell>,
    /// Distribution drawn by `--hist` and plotted in the report.
    pub hist: Option<Box<Log2Buckets>>,
}

/// Where a table is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Text and JSON.
    Everywhere,
    /// Only in JSON (a long form whose text view is another table).
    JsonOnly,
    /// Only in text.
    TextOnly,
}

/// A result table.
#[derive(Debug, Clone)]
pub struct Table {
    /// JSON key of the row list (`calls`).
    pub key: &'static str,
    /// Heading in text output.
    pub title: String,
    /// Columns.
    pub columns: Vec<Column>,
    /// Rows, already in display order.
    pub rows: Vec<Row>,
    /// Where it is shown.
    pub shown: Shown,
    /// Lines printed under the table in text output (e.g. what was unmatched).
    pub notes: Vec<String>,
}

impl Table {
    /// An empty table shown everywhere.
    pub fn new(key: &'static str, title: impl Into<String>, columns: Vec<Column>) -> Table {
        Table {
            key,
            title: title.into(),
            columns,
            rows: Vec::new(),
            shown: Shown::Everywhere,
            notes: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn push(&mut self, cells: Vec<Cell>, hist: Option<&Log2Buckets>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(Row {
            cells,
            hist: hist.map(|h| Box::new(*h)),
        });
    }

    /// The row's value of the column `key`.
    pub fn value<'r>(&self, row: &'r Row, key: &str) -> Option<&'r Cell> {
        let i = self.columns.iter().position(|c| c.key == key)?;
        row.cells.get(i)
    }
}

/// What every output says about the input besides the tables.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// `org_erlang_dyntrace` events analysed (inside the window and filter).
    pub events: u64,
    /// Events LTTng discarded (sum of the trace's discarded-events counts).
    pub discarded: u64,
    /// Discarded-events reports that gave no count.
    pub discarded_reports_without_count: u64,
    /// Timestamp of the first event read (ns from origin).
    pub first_ns: i64,
    /// Timestamp of the last event read.
    pub last_ns: i64,
    /// Streams whose recorded packets could not all be read.
    pub damaged: Vec<crate::damage::DamagedStream>,
}

/// Formats a duration with three significant digits and its unit.
pub fn format_ns(ns: u64) -> String {
    let (value, unit) = match ns {
        0..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (ns as f64 / 1e3, "us"),
        1_000_000..=999_999_999 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    if value >= 100.0 {
        format!("{value:.0} {unit}")
    } else if value >= 10.0 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}

/// A value as people read it; timestamps relative to `origin_ns`.
pub fn text_of(cell: &Cell, unit: Unit, origin_ns: i64) -> String {
    match (cell, unit) {
        (Cell::Text(s), _) => s.clone(),
        (Cell::Num(n), Unit::Ns) => format_ns(*n),
        (Cell::Num(n), Unit::Words) => format!("{n} w"),
        (Cell::Int(t), Unit::Timestamp) => format!("+{:.6} s", (*t - origin_ns) as f64 / 1e9),
        (Cell::Num(n), _) => n.to_string(),
        (Cell::Int(n), _) => n.to_string(),
    }
}

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
    for line in crate::damage::damage_lines(&summary.damaged) {
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
        let cells: Vec<Vec<String>> = t
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
        if !t.rows.is_empty() {
            let widths: Vec<usize> = t
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    cells
                        .iter()
                        .map(|r| r[i].chars().count())
                        .chain([c.title.len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |vals: &mut dyn Iterator<Item = (usize, &str)>| -> String {
                let mut s = String::new();
                for (i, v) in vals {
                    let pad = widths[i].saturating_sub(v.chars().count());
                    s.push_str("  ");
                    if t.columns[i].unit == Unit::Text {
                        s.push_str(v);
                        s.extend(std::iter::repeat_n(' ', pad));
                    } else {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(v);
                    }
                }
                s.trim_end().to_string() + "\n"
            };
            out.push_str(&line(&mut t.columns.iter().map(|c| c.title).enumerate()));
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

fn json_of(cell: &Cell) -> Value {
    match cell {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Num(n) => json!(n),
        Cell::Int(n) => json!(n),
    }
}

/// Renders the machine interface: the summary's keys, then one list of row
/// objects per table, and `columns` describing each list's keys.
pub fn render_json(summary: &Summary, tables: &[Table]) -> Value {
    let mut top = Map::new();
    top.insert("events".into(), json!(summary.events));
    top.insert("discarded".into(), json!(summary.discarded));
    top.insert(
        "discarded_reports_without_count".into(),
        json!(summary.discarded_reports_without_count),
    );
    top.insert("first_ns".into(), json!(summary.first_ns));
    top.insert("last_ns".into(), json!(summary.last_ns));
    for (key, value) in crate::damage::damage_json(&summary.damaged) {
        top.insert(key.into(), value);
    }
    let mut columns = Map::new();
    for t in tables.iter().filter(|t| t.shown != Shown::TextOnly) {
        let rows: Vec<Value> = t
            .rows
            .iter()
            .map(|r| {
                Value::Object(
                    t.columns
                        .iter()
                        .zip(&r.cells)
                        .map(|(c, v)| (c.key.to_string(), json_of(v)))
                        .collect(),
                )
            })
            .collect();
        top.insert(t.key.into(), Value::Array(rows));
        let described: Vec<Value> = t
            .columns
            .iter()
            .map(|c| json!({"key": c.key, "title": c.title, "unit": format!("{:?}", c.unit).to_lowercase()}))
            .collect();
        columns.insert(t.key.into(), Value::Array(described));
    }
    top.insert("columns".into(), Value::Object(columns));
    Value::Object(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_carry_units() {
        assert_eq!(format_ns(812), "812 ns");
        assert_eq!(format_ns(12_840_000), "12.8 ms");
        assert_eq!(format_ns(1_500), "1.50 us");
        assert_eq!(format_ns(250_000_000), "250 ms");
        assert_eq!(format_ns(3_000_000_000), "3.00 s");
    }

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
}
