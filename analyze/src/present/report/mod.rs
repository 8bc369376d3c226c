//! `report OUTDIR TRACE...`: every analysis of the registry in one web
//! page, `OUTDIR/index.html`, self-contained (styles, script, charts and
//! the flame graph inline; its content security policy lets it fetch
//! nothing) and small whatever the trace: each table shows its first
//! `--top` rows, each series at most [`MAX_POINTS`] points.
//!
//! The page is made from the same tables as the text and JSON outputs:
//! a summary of the input, every table the text output shows (sortable by
//! any column), each duration table's distributions (its rows'
//! histograms) and trends (p50 and p99 per window of trace time), then
//! what each analysis draws beyond its tables ([`Charts::report`]: slow
//! calls over time, events per second, the flame graph, memory over
//! time). A new analysis appears in it through its tables and its own
//! `report`, without a change here.

pub mod markup;
pub mod svg;
pub mod trace;

use std::fmt::Write as _;
use std::path::Path;

use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::stats::log2_bucket_floor;
use crate::model::table::{format_ns, text_of, Cell, Row, Shown, Table, Unit};
use crate::present::text::summary_line;
use markup::escape;
use svg::{Axis, Line};
use trace::TraceInfo;

/// Points drawn per series (or dots per scatter) at most.
pub const MAX_POINTS: usize = 2000;
/// Rows of a duration table whose distribution is drawn.
const DISTRIBUTION_ROWS: usize = 6;
/// Rows of a duration table whose trend is drawn.
const TREND_LINES: usize = 5;
/// Windows the trends cut the trace into when `--window` does not say.
pub const TREND_WINDOWS: u64 = 100;
/// Characters of a text cell shown (JSON has it whole).
const CELL_CHARS: usize = 240;
/// What the page may weigh at most: past that, fewer rows per table.
pub const MAX_PAGE_BYTES: usize = 5_000_000;
/// Rows per table the page keeps however big it would be.
const MIN_TOP: usize = 5;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The page being written: what an analysis adds besides its tables
/// ([`Registered::report`](crate::present::commands::Registered::report)).
pub struct Page<'a> {
    /// The summary of the run.
    pub summary: &'a Summary,
    /// Rows shown per table (`--top`).
    pub top: usize,
    sections: Vec<Section>,
}

struct Section {
    id: String,
    title: String,
    body: String,
}

impl Page<'_> {
    /// Adds a section (`id` its anchor, unique on the page).
    pub fn section(&mut self, id: &str, title: &str, body: String) {
        self.sections.push(Section {
            id: id.to_string(),
            title: title.to_string(),
            body,
        });
    }

    /// The time axis of the trace: seconds from its first event.
    pub fn time_axis(&self) -> Axis {
        Axis {
            label: "seconds from the first event",
            log: false,
            format: |s| format!("+{}", trim_float(s)),
        }
    }

    /// Seconds from the first event of a timestamp.
    pub fn seconds(&self, ts_ns: i64) -> f64 {
        (ts_ns - self.summary.first_ns) as f64 / 1e9
    }
}

/// A flame graph (inferno's SVG, its script inside) in a frame of its own
/// document, written into the page (`srcdoc`): its script finds its
/// elements by id and listens to its window's keys and clicks. It keeps
/// its zoom in its address (`history.replaceState`), which a frame written
/// into the page cannot rewrite: there that does nothing.
pub fn flame_frame(svg: &str) -> String {
    let mut svg = svg[svg.find("<svg").unwrap_or(0)..].to_string();
    // Its credits comment: links are all the page would hold otherwise.
    if let (Some(a), Some(b)) = (svg.find("<!--Flame graph"), svg.find("-->")) {
        if a < b {
            svg.replace_range(a..b + 3, "");
        }
    }
    let height = svg
        .split_once(" height=\"")
        .and_then(|(_, rest)| rest.split('"').next()?.parse::<f64>().ok())
        .unwrap_or(600.0);
    let doc = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>html,body{{margin:0}} svg{{display:block;width:100%}}</style>\
         <script>history.replaceState = function () {{}};</script></head><body>{svg}</body></html>"
    );
    format!(
        "<iframe class=\"flame\" title=\"flame graph\" style=\"height:{}px\" srcdoc=\"{}\"></iframe>",
        height.ceil() + 4.0,
        escape(&doc)
    )
}

/// A duration axis (log scale).
pub fn duration_axis(label: &'static str) -> Axis {
    Axis {
        label,
        log: true,
        format: |v| format_ns(v as u64),
    }
}

/// A count axis.
pub fn count_axis(label: &'static str) -> Axis {
    Axis {
        label,
        log: false,
        format: |v| trim_float(v),
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What the report is made of: the run's results and the traces read.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    /// The summary of the run.
    pub summary: &'a Summary,
    /// The whole run's tables.
    pub tables: &'a [Table],
    /// The analyses, for their own sections.
    pub analyses: &'a [&'a dyn Charts],
    /// Who is who, as the run learnt it.
    pub who: &'a Identity,
    /// Each trend window's start and tables.
    pub trend: &'a [(i64, Vec<Table>)],
    /// The trace directories (empty when read live).
    pub traces: &'a [TraceInfo],
    /// Rows shown per table.
    pub top: usize,
    /// The `--top` asked for, when the page would have weighed more than
    /// it may with it.
    pub top_asked: Option<usize>,
}

/// What an analysis adds to the page besides its tables (sections of
/// charts: [`Page::section`], drawn with [`svg`]), after the tables,
/// distributions and trends every analysis gets from its tables.
pub trait Charts {
    /// Adds its sections to `page`; `who` names the processes.
    fn report(&self, page: &mut Page, who: &Identity) -> Result<(), String>;
}

/// Writes `dir/index.html` (the directory created if needed): its size in
/// bytes, and the rows shown per table.
pub fn write(dir: &Path, input: &Input) -> Result<(usize, usize), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let (html, top) = render_within(input, MAX_PAGE_BYTES)?;
    let path = dir.join("index.html");
    std::fs::write(&path, &html).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((html.len(), top))
}

/// The page in at most `max_bytes`: with `input.top` rows per table, else
/// half as many, and so on down to [`MIN_TOP`]; the rows shown.
pub fn render_within(input: &Input, max_bytes: usize) -> Result<(String, usize), String> {
    let mut top = input.top;
    loop {
        let asked = (top < input.top).then_some(input.top);
        let html = render(&Input {
            top,
            top_asked: asked,
            ..*input
        })?;
        if html.len() <= max_bytes || top <= MIN_TOP {
            return Ok((html, top));
        }
        top = (top / 2).max(MIN_TOP);
    }
}

/// The page's HTML.
pub fn render(input: &Input) -> Result<String, String> {
    let summary = input.summary;
    let mut page = Page {
        summary,
        top: input.top,
        sections: Vec::new(),
    };
    let mut ids = Ids::default();
    // The findings lead the page; the tables follow.
    let (leading, shown): (Vec<&Table>, Vec<&Table>) = input
        .tables
        .iter()
        .filter(|t| t.shown != Shown::JsonOnly)
        .partition(|t| t.key == FINDINGS);
    if !leading.is_empty() {
        let body: String = leading
            .iter()
            .map(|t| table_html(t, summary, input.top, &ids.next(t.key)))
            .collect();
        page.section("findings", "Findings", body);
    }
    page.section("summary", "Summary", summary_html(input));
    let mut body = String::new();
    if let Some(asked) = input.top_asked {
        let _ = write!(
            body,
            "<p class=\"note bad\">With --top {asked} the page would weigh over {} MB: {} rows \
             shown per table.</p>",
            MAX_PAGE_BYTES / 1_000_000,
            input.top
        );
    }
    for t in &shown {
        body.push_str(&table_html(t, summary, input.top, &ids.next(t.key)));
    }
    page.section("tables", "Tables", body);
    page.section("distributions", "Distributions", distributions(&shown)?);
    page.section("trends", "Trends", trends(&page, &shown, input.trend)?);
    for a in input.analyses {
        a.report(&mut page, input.who)?;
    }
    Ok(assemble(&page))
}

/// Anchors made unique on the page.
#[derive(Default)]
struct Ids(Vec<String>);

impl Ids {
    fn next(&mut self, key: &str) -> String {
        let mut id = format!("t-{key}");
        let mut n = 1;
        while self.0.contains(&id) {
            n += 1;
            id = format!("t-{key}-{n}");
        }
        self.0.push(id.clone());
        id
    }
}

fn assemble(page: &Page) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; frame-src about:\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>dyntrace-analyze report</title><style>",
    );
    out.push_str(CSS);
    out.push_str("</style></head><body><header><h1>dyntrace-analyze report</h1><nav>");
    for s in &page.sections {
        let _ = write!(out, "<a href=\"#{}\">{}</a>", s.id, escape(&s.title));
    }
    out.push_str("</nav></header><main>");
    for s in &page.sections {
        let _ = write!(
            out,
            "<section id=\"{}\"><h2>{}</h2>{}</section>",
            s.id,
            escape(&s.title),
            s.body
        );
    }
    let _ = write!(
        out,
        "</main><footer>dyntrace-analyze {}: the same tables as its text and --json \
         outputs, of which this page shows the first rows.</footer><script>",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(JS);
    out.push_str("</script></body></html>\n");
    out
}

fn summary_html(input: &Input) -> String {
    let s = input.summary;
    let mut out = format!("<p class=\"headline\">{}</p>", escape(&summary_line(s)));
    out.push_str("<dl class=\"facts\">");
    let mut fact = |k: &str, v: String| {
        let _ = write!(out, "<dt>{}</dt><dd>{v}</dd>", escape(k));
    };
    if s.events > 0 {
        fact(
            "time span",
            format!(
                "{} to {} ({})",
                escape(&crate::model::time::format_utc(s.first_ns)),
                escape(&crate::model::time::format_utc(s.last_ns)),
                escape(&format_ns(
                    s.last_ns.saturating_sub(s.first_ns).max(0) as u64
                ))
            ),
        );
    }
    fact("events", s.events.to_string());
    fact("discarded by LTTng", {
        let mut d = s.discarded.to_string();
        if s.discarded_reports_without_count > 0 {
            let _ = write!(
                d,
                " (+{} losses of unknown size)",
                s.discarded_reports_without_count
            );
        }
        d
    });
    let streams: usize = input.traces.iter().map(|t| t.streams).sum();
    fact(
        "damage",
        match s.damaged.len() {
            0 if input.traces.is_empty() => "read live: no damage check".into(),
            0 => format!("complete: {streams} streams, all readable"),
            n => format!(
                "<strong class=\"bad\">damaged: {n} of {streams} streams \
                 not wholly readable, results are incomplete</strong>"
            ),
        },
    );
    fact(
        "nodes",
        match s.nodes.is_empty() {
            true => "not named in the trace (no node_name events)".into(),
            false => escape(&s.nodes.join(", ")),
        },
    );
    out.push_str("</dl>");
    let mut notes = crate::input::damage::damage_lines(&s.damaged);
    notes.extend(s.notices());
    if s.aliases_evicted > 0 {
        notes.push(format!(
            "{} call aliases forgotten before their reply (too many outstanding)",
            s.aliases_evicted
        ));
    }
    for n in notes {
        let class = if n.starts_with("warning") || n.starts_with("damaged") {
            "note bad"
        } else {
            "note"
        };
        let _ = write!(out, "<p class=\"{class}\">{}</p>", escape(&n));
    }
    if !s.event_counts.is_empty() {
        out.push_str("<h3>Events read</h3><ul class=\"counts\">");
        for (name, n) in &s.event_counts {
            let _ = write!(out, "<li><span>{name}</span><b>{n}</b></li>");
        }
        out.push_str("</ul>");
    }
    for t in input.traces {
        let _ = write!(
            out,
            "<h3 class=\"trace\">Trace {}</h3><p class=\"note\">{} stream files; the tracer's \
             environment as its metadata records it:</p>",
            escape(&t.dir.display().to_string()),
            t.streams
        );
        out.push_str("<ul class=\"counts env\">");
        for (k, v) in &t.env {
            let _ = write!(
                out,
                "<li><span>{}</span><b>{}</b></li>",
                escape(k),
                escape(v)
            );
        }
        out.push_str("</ul>");
    }
    out
}

/// A cell's sort key: its number, else nothing (sorted by its text).
fn sort_value(cell: &Cell) -> Option<String> {
    match cell {
        Cell::Num(n) => Some(n.to_string()),
        Cell::Int(n) => Some(n.to_string()),
        Cell::Float(x) => Some(x.to_string()),
        _ => None,
    }
}

fn cell_html(cell: &Cell, unit: Unit, origin: i64) -> String {
    match cell {
        Cell::Proc { pid, name, node } => {
            let mut s = String::new();
            if let Some(n) = name {
                let _ = write!(s, "<b>{}</b> ", escape(n));
            }
            let _ = write!(s, "<span class=\"pid\">{}</span>", escape(pid));
            if let Some(n) = node {
                let _ = write!(s, " <span class=\"node\">on {}</span>", escape(n));
            }
            s
        }
        _ => {
            let text = text_of(cell, unit, origin);
            match text.chars().count() > CELL_CHARS {
                true => format!(
                    "{}<span class=\"cut\">…</span>",
                    escape(&text.chars().take(CELL_CHARS).collect::<String>())
                ),
                false => escape(&text),
            }
        }
    }
}

/// The table of findings, the page's first section.
const FINDINGS: &str = "findings_text";

/// Whether a row has nothing in it: it has numbers, and every one of them
/// (timestamps aside) is zero or missing.
fn is_empty_row(t: &Table, row: &Row) -> bool {
    let mut numbers = t
        .columns
        .iter()
        .zip(&row.cells)
        .filter(|(c, v)| {
            !matches!(
                c.unit,
                Unit::Text | Unit::Pid | Unit::Excerpt | Unit::Timestamp
            ) && !matches!(v, Cell::Text(_))
        })
        .peekable();
    numbers.peek().is_some()
        && numbers.all(|(_, v)| match v {
            Cell::Num(n) => *n == 0,
            Cell::Int(n) => *n == 0,
            Cell::Float(x) => *x == 0.0,
            _ => true,
        })
}

/// A table's first `top` rows with something in them, sortable by any
/// column (page.js); how many rows with nothing in them were left out.
fn table_html(t: &Table, summary: &Summary, top: usize, id: &str) -> String {
    let mut out = format!("<h3 id=\"{id}\">{}</h3>", escape(&t.title));
    let kept: Vec<&Row> = t.rows.iter().filter(|r| !is_empty_row(t, r)).collect();
    let empty = t.rows.len() - kept.len();
    if kept.is_empty() {
        out.push_str("<p class=\"none\">(none)</p>");
    } else {
        let _ = write!(
            out,
            "<div class=\"scroll\"><table class=\"sortable\" data-key=\"{}\"><thead><tr>",
            escape(t.key)
        );
        for (c, title) in t.columns.iter().zip(t.titles()) {
            let text = matches!(c.unit, Unit::Text | Unit::Pid | Unit::Excerpt);
            let _ = write!(
                out,
                "<th data-key=\"{}\" data-type=\"{}\" title=\"sort by {}\">{}</th>",
                escape(c.key),
                if text { "text" } else { "num" },
                escape(title),
                escape(title)
            );
        }
        out.push_str("</tr></thead><tbody>");
        for row in kept.iter().take(top) {
            out.push_str("<tr>");
            for (cell, c) in row.cells.iter().zip(&t.columns) {
                let class = match c.unit {
                    Unit::Text | Unit::Pid | Unit::Excerpt => "",
                    _ => " class=\"num\"",
                };
                match sort_value(cell) {
                    Some(v) => {
                        let _ = write!(out, "<td{class} data-v=\"{v}\">");
                    }
                    None => {
                        let _ = write!(out, "<td{class}>");
                    }
                }
                out.push_str(&cell_html(cell, c.unit, summary.first_ns));
                out.push_str("</td>");
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table></div>");
        if kept.len() > top {
            let _ = write!(
                out,
                "<p class=\"more\">{} more rows not shown (--top {top}; --json gives them all)</p>",
                kept.len() - top
            );
        }
    }
    if empty > 0 {
        let _ = write!(
            out,
            "<p class=\"more\">{empty} rows with nothing in them (every number 0) left out</p>"
        );
    }
    for n in &t.notes {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(n));
    }
    out
}

/// The row's text cells, joined: what it is about.
fn row_label(t: &Table, row: &Row) -> String {
    let texts: Vec<String> = t
        .columns
        .iter()
        .zip(&row.cells)
        .filter(|(c, _)| matches!(c.unit, Unit::Text | Unit::Pid))
        .map(|(c, v)| text_of(v, c.unit, 0))
        .filter(|s| !s.is_empty() && s != "-")
        .collect();
    let label = texts.join(" ");
    match label.chars().count() > 120 {
        true => label.chars().take(120).collect::<String>() + "…",
        false => label,
    }
}

/// The histograms of each duration table's first rows.
fn distributions(tables: &[&Table]) -> Result<String, String> {
    let mut out = String::new();
    for t in tables {
        let rows: Vec<&Row> = t
            .rows
            .iter()
            .filter(|r| r.hist.as_ref().is_some_and(|h| h.iter().any(|&c| c > 0)))
            .take(DISTRIBUTION_ROWS)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = write!(out, "<h3>{}</h3><div class=\"grid\">", escape(&t.title));
        for r in rows {
            let Some(h) = r.hist.as_deref() else { continue };
            let first = h.iter().position(|&c| c > 0).unwrap_or(0);
            let last = h.iter().rposition(|&c| c > 0).unwrap_or(first);
            // At least 8 buckets, the used ones in the middle.
            let pad = 8usize.saturating_sub(last - first + 1).div_ceil(2);
            let (first, last) = (first.saturating_sub(pad), (last + pad).min(h.len() - 1));
            let buckets: Vec<(String, u64)> = (first..=last)
                .map(|i| (format_ns(log2_bucket_floor(i)), h[i]))
                .collect();
            let label = row_label(t, r);
            let _ = write!(
                out,
                "<div class=\"dist\" data-table=\"{}\"><h4>{}</h4>{}</div>",
                escape(t.key),
                escape(&label),
                svg::bars(
                    &format!("{}: {label}", t.key),
                    Axis {
                        label: "count (log scale)",
                        log: true,
                        format: |v| trim_float(v),
                    },
                    &buckets
                )?
            );
        }
        out.push_str("</div>");
    }
    if out.is_empty() {
        out.push_str("<p class=\"none\">No duration was measured.</p>");
    }
    Ok(out)
}

/// The key cells of a row (its text and process cells), to find it again
/// in each window.
fn row_key(t: &Table, row: &Row) -> Vec<String> {
    t.columns
        .iter()
        .zip(&row.cells)
        .filter(|(c, _)| matches!(c.unit, Unit::Text | Unit::Pid))
        .map(|(c, v)| match v {
            Cell::Proc { pid, node, .. } => format!("{pid} {node:?}"),
            v => text_of(v, c.unit, 0),
        })
        .collect()
}

fn ns_of(t: &Table, row: &Row, key: &str) -> Option<f64> {
    match t.value(row, key) {
        Some(Cell::Num(n)) if *n > 0 => Some(*n as f64),
        _ => None,
    }
}

/// p50 and p99 per window of the first rows of each duration table.
fn trends(page: &Page, tables: &[&Table], windows: &[(i64, Vec<Table>)]) -> Result<String, String> {
    if windows.len() < 2 {
        return Ok(
            "<p class=\"none\">The selection spans fewer than two windows: no trend.</p>".into(),
        );
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "<p>p99 (solid) and p50 (dashed) per window of {}, {} windows.</p>",
        escape(&format_ns(
            windows
                .get(1)
                .map_or(0, |w| (w.0 - windows[0].0).max(0) as u64)
        )),
        windows.len()
    );
    for t in tables {
        if !t.columns.iter().any(|c| c.key == "p99_ns") {
            continue;
        }
        let mut lines = Vec::new();
        for (i, row) in t.rows.iter().take(TREND_LINES).enumerate() {
            let key = row_key(t, row);
            let mut p99 = Vec::new();
            let mut p50 = Vec::new();
            for (start, tables) in windows {
                let Some(wt) = tables.iter().find(|w| w.key == t.key) else {
                    continue;
                };
                let Some(wr) = wt.rows.iter().find(|r| row_key(wt, r) == key) else {
                    continue;
                };
                let x = page.seconds(*start);
                if let Some(v) = ns_of(wt, wr, "p99_ns") {
                    p99.push((x, v));
                }
                if let Some(v) = ns_of(wt, wr, "p50_ns") {
                    p50.push((x, v));
                }
            }
            if p99.len() < 2 {
                continue;
            }
            let label = row_label(t, row);
            lines.push(Line {
                name: format!("{label} p99"),
                points: svg::thin(&p99, MAX_POINTS),
                dashed: false,
                color: i,
            });
            lines.push(Line {
                name: format!("{label} p50"),
                points: svg::thin(&p50, MAX_POINTS),
                dashed: true,
                color: i,
            });
        }
        if lines.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "<h3>{}</h3><div class=\"trend\" data-table=\"{}\">{}</div>",
            escape(&t.title),
            escape(t.key),
            svg::lines(
                &format!("{}: p50 and p99 per window", t.key),
                page.time_axis(),
                duration_axis("duration (log scale)"),
                &lines
            )?
        );
    }
    if out.is_empty() {
        out.push_str("<p class=\"none\">No duration was measured.</p>");
    }
    Ok(out)
}

/// The window of the trends: `--window` when given, else the traces' span
/// (from their indexes) cut into [`TREND_WINDOWS`], else one second.
pub fn trend_window(window: Option<u64>, traces: &[TraceInfo]) -> u64 {
    if let Some(w) = window {
        return w;
    }
    let lo = traces.iter().filter_map(|t| t.span.map(|s| s.0)).min();
    let hi = traces.iter().filter_map(|t| t.span.map(|s| s.1)).max();
    match (lo, hi) {
        (Some(lo), Some(hi)) if hi > lo => {
            let raw = (hi - lo) as u64 / TREND_WINDOWS;
            // A 1-2-5 width, at least 1 ms.
            let mut w = 1_000_000u64;
            while w < raw {
                w = match w.to_string().as_bytes()[0] {
                    b'1' => w * 2,
                    b'2' => w / 2 * 5,
                    _ => w * 2,
                };
            }
            w
        }
        _ => 1_000_000_000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::table::col;

    fn calls_table(rows: usize) -> Table {
        let mut t = Table::new(
            "calls",
            "Calls <per> location",
            vec![
                col("entry", "entry", Unit::Text),
                col("pid", "pid", Unit::Pid),
                col("p50_ns", "p50", Unit::Ns),
                col("p99_ns", "p99", Unit::Ns),
            ],
        );
        for i in 0..rows {
            let mut h = [0u64; 65];
            h[10 + i % 5] = 3;
            t.push(
                vec![
                    Cell::Text(format!("m:f{i}/1")),
                    Cell::Proc {
                        pid: "<0.9.0>".into(),
                        name: Some("shop".into()),
                        node: None,
                    },
                    Cell::Num(1000 + i as u64),
                    Cell::Num(5000 + i as u64),
                ],
                Some(&h),
            );
        }
        t
    }

    fn input<'a>(
        summary: &'a Summary,
        tables: &'a [Table],
        trend: &'a [(i64, Vec<Table>)],
    ) -> Input<'a> {
        Input {
            summary,
            tables,
            analyses: &[],
            who: Box::leak(Box::new(Identity::default())),
            trend,
            traces: &[],
            top: 50,
            top_asked: None,
        }
    }

    #[test]
    fn the_findings_lead_and_empty_rows_are_left_out_and_counted() {
        use crate::model::table::{col, Shown};
        let summary = Summary {
            events: 10,
            ..Summary::default()
        };
        let mut findings = Table::new(
            FINDINGS,
            "Findings",
            vec![
                col("rank", "#", Unit::Count),
                col("finding", "finding", Unit::Text),
            ],
        );
        findings.shown = Shown::TextOnly;
        findings.push(vec![Cell::Num(1), Cell::Text("queue grows".into())], None);
        let mut counts = Table::new(
            "counts",
            "Counts",
            vec![
                col("to", "to", Unit::Pid),
                col("count", "count", Unit::Count),
            ],
        );
        for (to, n) in [("<0.1.0>", 3), ("<0.2.0>", 0), ("<9.3.0>", 0)] {
            counts.push(vec![Cell::Text(to.into()), Cell::Num(n)], None);
        }
        let tables = [counts, findings];
        let html = render(&input(&summary, &tables, &[])).expect("page");
        let first = html.find("queue grows").expect("findings");
        assert!(first < html.find("id=\"t-counts\"").expect("counts"));
        assert!(first < html.find("<h2>Summary</h2>").expect("summary"));
        assert!(html.contains("&lt;0.1.0&gt;"));
        assert!(!html.contains("&lt;0.2.0&gt;"));
        assert!(html.contains("2 rows with nothing in them (every number 0) left out"));
    }

    #[test]
    fn tables_show_their_top_rows_sortable_with_names() {
        let summary = Summary {
            events: 10,
            ..Summary::default()
        };
        let tables = [calls_table(60)];
        let html = render(&input(&summary, &tables, &[])).expect("page");
        assert!(html.contains("<table class=\"sortable\" data-key=\"calls\">"));
        assert!(html.contains("<h3 id=\"t-calls\">Calls &lt;per&gt; location</h3>"));
        assert_eq!(html.matches("<td>m:f").count(), 50);
        assert!(html.contains("10 more rows not shown (--top 50"));
        assert!(html.contains("<b>shop</b> <span class=\"pid\">&lt;0.9.0&gt;</span>"));
        assert!(html.contains("<td class=\"num\" data-v=\"5000\">5.00 us</td>"));
        assert_eq!(
            html.matches("<div class=\"dist\"").count(),
            DISTRIBUTION_ROWS
        );
        assert!(!html.contains("src=\"http"), "nothing fetched");
    }

    #[test]
    fn a_page_too_big_shows_fewer_rows() {
        let summary = Summary::default();
        let tables = [calls_table(400)];
        let mut big = input(&summary, &tables, &[]);
        big.top = 400;
        let (whole, top) = render_within(&big, usize::MAX).expect("page");
        assert_eq!(top, 400);
        let (cut, top) = render_within(&big, whole.len() / 2).expect("page");
        assert!(cut.len() <= whole.len() / 2, "{}", cut.len());
        assert!((MIN_TOP..400).contains(&top), "{top}");
        assert!(cut.contains(&format!(
            "With --top 400 the page would weigh over 5 MB: {top} rows"
        )));
        assert_eq!(cut.matches("<td>m:f").count(), top);
    }

    #[test]
    fn trends_follow_the_top_rows_across_windows() {
        let summary = Summary {
            events: 10,
            ..Summary::default()
        };
        let tables = [calls_table(8)];
        let windows: Vec<(i64, Vec<Table>)> = (0..4)
            .map(|w| (w * 1_000_000_000, vec![calls_table(8)]))
            .collect();
        let html = render(&input(&summary, &tables, &windows)).expect("page");
        let trend = &html[html.find("id=\"trends\"").expect("trends")..];
        assert_eq!(
            trend[..trend.find("</section>").expect("end")]
                .matches("</title></polyline>")
                .count(),
            2 * TREND_LINES
        );
        assert!(trend.contains("per window of 1.00 s, 4 windows"));
    }

    #[test]
    fn trend_windows_cut_the_span_into_about_a_hundred() {
        let t = |span: i64| TraceInfo {
            span: Some((1_000, 1_000 + span)),
            ..TraceInfo::default()
        };
        assert_eq!(trend_window(None, &[t(10_000_000_000)]), 100_000_000);
        assert_eq!(trend_window(None, &[t(3_000_000_000)]), 50_000_000);
        assert_eq!(trend_window(None, &[t(1_000)]), 1_000_000);
        assert_eq!(trend_window(None, &[]), 1_000_000_000);
        assert_eq!(trend_window(Some(7), &[t(1_000)]), 7);
    }
}
