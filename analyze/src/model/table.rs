//! Results, apart from how they are shown: every analysis fills [`Table`]s
//! whose columns say their key, title and unit; the same tables are printed
//! for people (aligned, a unit on every duration), written as JSON (one
//! object per row, keyed by column), drawn as `quantize` histograms and
//! plotted in the report.

use serde_json::{json, Map, Value};
use std::fmt::Write as _;

use crate::model::stats::{log2_bucket_floor, Log2Buckets};

/// How a column's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Text (entries, event names).
    Text,
    /// A process: its pid, shown with its name (and node) when the trace
    /// says ([`crate::engine::identity::Identity::annotate`]).
    Pid,
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
    /// Long text (a message, a request): whole in JSON, cut to the
    /// terminal's width in text.
    Excerpt,
    /// Bytes of memory (signed for a change).
    Bytes,
    /// A share in percent.
    Percent,
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
    /// A fraction (shares in percent).
    Float(f64),
    /// No value (JSON `null`, `-` in text).
    Null,
    /// A process of a [`Unit::Pid`] column with what is known of it.
    Proc {
        /// The pid as the trace writes it.
        pid: String,
        /// Its registered name or initial call.
        name: Option<String>,
        /// Its node, when several are told apart.
        node: Option<String>,
    },
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
    /// Column titles made at run time (per-window columns), in place of the
    /// columns' own in text output.
    pub headings: Option<Vec<String>>,
    /// Rows carry each process's node (JSON `node`).
    pub with_nodes: bool,
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
            headings: None,
            with_nodes: false,
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

    /// The column titles for people.
    pub fn titles(&self) -> Vec<&str> {
        match &self.headings {
            Some(h) => h.iter().map(String::as_str).collect(),
            None => self.columns.iter().map(|c| c.title).collect(),
        }
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
    pub damaged: Vec<crate::input::damage::DamagedStream>,
    /// Streams holding the events of several nodes that cannot be told
    /// apart (no `vpid` context): the names of each one's nodes.
    pub mixed_nodes: Vec<Vec<String>>,
    /// Call aliases forgotten before their reply (too many outstanding).
    pub aliases_evicted: u64,
    /// The selection, when it matched nothing.
    pub empty_selection: Option<String>,
    /// The names of the nodes the trace names (`node_name`), in order.
    pub nodes: Vec<String>,
    /// Events read per event name (in the contract's order), of those
    /// present.
    pub event_counts: Vec<(&'static str, u64)>,
    /// Processes selected by `--name` whose earliest naming event comes
    /// after their first event (they are selected from their first).
    pub named_later: Vec<crate::engine::names::NamedLater>,
}

impl Summary {
    /// Lines every output adds under the summary line: the clock's +0, the
    /// nodes that cannot be told apart, a selection that matched nothing.
    pub fn notices(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.events > 0 {
            lines.push(format!(
                "+0 = {} (the first event of the selection; times are relative to it)",
                crate::present::cli::format_utc(self.first_ns)
            ));
        }
        for nodes in &self.mixed_nodes {
            lines.push(format!(
                "warning: one stream holds the events of nodes {}, which cannot be told apart \
                 (same pids merged): record with LTTng's vpid context \
                 (lttng add-context -u -t vpid -s SESSION, before lttng start)",
                nodes.join(", ")
            ));
        }
        for n in &self.named_later {
            lines.push(format!(
                "{} {} is named by the trace only at +{}: selected from its first event at +{}",
                n.name,
                n.pid,
                format_ns((n.named_ns - self.first_ns).max(0) as u64),
                format_ns((n.first_ns - self.first_ns).max(0) as u64),
            ));
        }
        if let Some(sel) = &self.empty_selection {
            lines.push(format!("nothing matched the selection {sel}"));
        }
        lines
    }
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

/// Formats a byte count (or a signed change) with three significant
/// digits and a binary unit.
pub fn format_bytes(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes.abs();
    let mut unit = 0;
    while value >= 1024.0 && unit < units.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let sign = if bytes < 0.0 { "-" } else { "" };
    match (unit, value) {
        (0, v) => format!("{sign}{v:.0} B"),
        (u, v) if v >= 100.0 => format!("{sign}{v:.0} {}", units[u]),
        (u, v) if v >= 10.0 => format!("{sign}{v:.1} {}", units[u]),
        (u, v) => format!("{sign}{v:.2} {}", units[u]),
    }
}

/// A value as people read it; timestamps relative to `origin_ns`.
pub fn text_of(cell: &Cell, unit: Unit, origin_ns: i64) -> String {
    match (cell, unit) {
        (Cell::Text(s), _) => s.clone(),
        (Cell::Proc { pid, name, node }, _) => {
            crate::engine::identity::label_text(pid, name.as_deref(), node.as_deref())
        }
        (Cell::Num(n), Unit::Ns) => format_ns(*n),
        (Cell::Num(n), Unit::Words) => format!("{n} w"),
        (Cell::Num(n), Unit::Bytes) => format_bytes(*n as f64),
        (Cell::Int(n), Unit::Bytes) => format_bytes(*n as f64),
        (Cell::Int(t), Unit::Timestamp) => format!("+{:.6} s", (*t - origin_ns) as f64 / 1e9),
        (Cell::Num(n), _) => n.to_string(),
        (Cell::Int(n), _) => n.to_string(),
        (Cell::Float(x), Unit::Percent) => format!("{x:.1}%"),
        (Cell::Float(x), _) => format!("{x:.3}"),
        (Cell::Null, _) => "-".to_string(),
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
    let mut lines = crate::input::damage::damage_lines(&summary.damaged);
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

/// The column a windowed text table follows per window: the p99, else the
/// first duration, else the first count.
fn window_metric(t: &Table) -> Option<usize> {
    let cols = &t.columns;
    cols.iter()
        .position(|c| c.key == "p99_ns")
        .or_else(|| cols.iter().position(|c| c.unit == Unit::Ns))
        .or_else(|| cols.iter().position(|c| c.unit == Unit::Count))
}

/// Width of the terminal (`COLUMNS`), 100 when unknown.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c| c >= 40)
        .unwrap_or(100)
}

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One character per value, scaled to the largest; ' ' where a window had
/// no row.
pub fn sparkline(values: &[Option<u64>]) -> String {
    let top = values.iter().flatten().copied().max().unwrap_or(0).max(1);
    values
        .iter()
        .map(|v| match v {
            None => ' ',
            Some(v) => SPARKS[((*v as u128 * 7 + top as u128 / 2) / top as u128) as usize],
        })
        .collect()
}

/// Tables per window of trace time (`--window`) as one set: for machines,
/// each table's rows of every window with `window_start_ns` first; for
/// people, per row key (its text cells) one line per window with its
/// count, p50 and p99 there, and the metric of [`window_metric`] across
/// the windows as a sparkline.
pub fn windowed(parts: &[(i64, Vec<Table>)], width_ns: u64, origin_ns: i64) -> Vec<Table> {
    let mut keys: Vec<&'static str> = Vec::new();
    for (_, tables) in parts {
        for t in tables {
            if !keys.contains(&t.key) {
                keys.push(t.key);
            }
        }
    }
    let mut out = Vec::new();
    for key in keys {
        let of_key: Vec<(usize, &Table)> = parts
            .iter()
            .enumerate()
            .filter_map(|(w, (_, ts))| ts.iter().find(|t| t.key == key).map(|t| (w, t)))
            .collect();
        let Some(&(_, last)) = of_key.last() else {
            continue;
        };
        let mut long = Table::new(
            key,
            format!("{} (per window of {})", last.title, format_ns(width_ns)),
            [col("window_start_ns", "window", Unit::Timestamp)]
                .into_iter()
                .chain(last.columns.iter().copied())
                .collect(),
        );
        long.shown = match last.shown {
            Shown::TextOnly => Shown::TextOnly,
            _ => Shown::JsonOnly,
        };
        for &(w, t) in &of_key {
            for r in &t.rows {
                long.rows.push(Row {
                    cells: [Cell::Int(parts[w].0)]
                        .into_iter()
                        .chain(r.cells.iter().cloned())
                        .collect(),
                    hist: r.hist.clone(),
                });
            }
            for n in &t.notes {
                if !long.notes.contains(n) {
                    long.notes.push(n.clone());
                }
            }
        }
        if last.shown == Shown::JsonOnly {
            out.push(long);
            continue;
        }
        match pivot(&long, parts, width_ns, origin_ns) {
            Some(p) => {
                out.push(long);
                out.push(p);
            }
            None => {
                long.shown = last.shown;
                out.push(long);
            }
        }
    }
    out
}

/// The text view of a long windowed table (see [`windowed`]): per row key
/// (its text cells), one line per window that had the row, with the
/// row's count, p50 and p99 there (those the table has; else the column
/// [`window_metric`] follows), and on the key's first line the followed
/// column across every window as a sparkline. None when it has no column
/// to follow.
fn pivot(
    long: &Table,
    parts: &[(i64, Vec<Table>)],
    width_ns: u64,
    origin_ns: i64,
) -> Option<Table> {
    let metric = window_metric(&Table {
        columns: long.columns[1..].to_vec(),
        ..Table::new(long.key, "", Vec::new())
    })? + 1;
    let find = |key: &str| (1..long.columns.len()).find(|&i| long.columns[i].key == key);
    let mut shown: Vec<usize> = Vec::new();
    for i in [find("count"), find("p50_ns"), Some(metric)]
        .into_iter()
        .flatten()
    {
        if !shown.contains(&i) {
            shown.push(i);
        }
    }
    let key_cols: Vec<usize> = (1..long.columns.len())
        .filter(|&i| matches!(long.columns[i].unit, Unit::Text | Unit::Pid))
        .collect();
    let starts: Vec<i64> = parts.iter().map(|p| p.0).collect();
    // Per row key: its rows' indices, and the followed value per window.
    let mut row_keys: Vec<Vec<Cell>> = Vec::new();
    let mut rows_of: Vec<Vec<usize>> = Vec::new();
    let mut values: Vec<Vec<Option<u64>>> = Vec::new();
    for (ri, r) in long.rows.iter().enumerate() {
        let k: Vec<Cell> = key_cols.iter().map(|&i| r.cells[i].clone()).collect();
        let at = match row_keys.iter().position(|x| *x == k) {
            Some(at) => at,
            None => {
                row_keys.push(k);
                rows_of.push(Vec::new());
                values.push(vec![None; starts.len()]);
                row_keys.len() - 1
            }
        };
        rows_of[at].push(ri);
        let w = match r.cells[0] {
            Cell::Int(s) => starts.iter().position(|&x| x == s).unwrap_or(0),
            _ => 0,
        };
        if let Cell::Num(v) = r.cells[metric] {
            values[at][w] = Some(v);
        }
    }
    let m = long.columns[metric];
    let mut columns: Vec<Column> = key_cols.iter().map(|&i| long.columns[i]).collect();
    columns.push(col("window", "window", Unit::Text));
    columns.extend(shown.iter().map(|&i| long.columns[i]));
    columns.push(col("sparkline", "", Unit::Text));
    let mut headings: Vec<String> = columns.iter().map(|c| c.title.to_string()).collect();
    if let Some(last) = headings.last_mut() {
        *last = format!("{} over the windows", m.title);
    }
    let titles: Vec<&str> = shown.iter().map(|&i| long.columns[i].title).collect();
    let mut t = Table::new(
        long.key,
        format!(
            "{}: {} per window of {} ({} windows)",
            long.title
                .split(" (per window")
                .next()
                .unwrap_or(&long.title),
            match titles.as_slice() {
                [one] => one.to_string(),
                [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
                [] => String::new(),
            },
            format_ns(width_ns),
            starts.len()
        ),
        columns,
    );
    t.shown = Shown::TextOnly;
    t.headings = Some(headings);
    t.notes = long.notes.clone();
    for ((k, rows), vs) in row_keys.into_iter().zip(rows_of).zip(values) {
        for (n, &ri) in rows.iter().enumerate() {
            let r = &long.rows[ri];
            let mut cells: Vec<Cell> = match n {
                0 => k.clone(),
                _ => vec![Cell::Text(String::new()); k.len()],
            };
            let start = match r.cells[0] {
                Cell::Int(s) => s,
                _ => origin_ns,
            };
            cells.push(Cell::Text(format!(
                "+{}",
                format_ns((start - origin_ns).max(0) as u64)
            )));
            cells.extend(shown.iter().map(|&i| r.cells[i].clone()));
            cells.push(Cell::Text(match n {
                0 => sparkline(&vs),
                _ => String::new(),
            }));
            t.push(cells, None);
        }
    }
    Some(t)
}

fn json_of(cell: &Cell) -> Value {
    match cell {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Num(n) => json!(n),
        Cell::Int(n) => json!(n),
        Cell::Float(x) => json!(x),
        Cell::Proc { pid, .. } => Value::String(pid.clone()),
        Cell::Null => Value::Null,
    }
}

/// The JSON keys of a table's row objects: each column's key, and beside
/// each [`Unit::Pid`] column the process's name (`name` for the first when
/// no column is called so, else `KEY_name`) and, when nodes are told apart,
/// its node (`node`, else `KEY_node`).
pub(crate) fn json_keys(t: &Table) -> Vec<(usize, String, Extra)> {
    let mut keys = Vec::new();
    let mut first = true;
    let taken = |k: &str| t.columns.iter().any(|c| c.key == k);
    for (i, c) in t.columns.iter().enumerate() {
        keys.push((i, c.key.to_string(), Extra::Value));
        if c.unit != Unit::Pid {
            continue;
        }
        let plain = first && !taken("name");
        let name = if plain {
            "name".to_string()
        } else {
            format!("{}_name", c.key)
        };
        keys.push((i, name, Extra::Name));
        if t.with_nodes {
            let plain = first && !taken("node");
            let node = if plain {
                "node".to_string()
            } else {
                format!("{}_node", c.key)
            };
            keys.push((i, node, Extra::Node));
        }
        first = false;
    }
    keys
}

/// What a JSON key of a row holds: the cell's value, or the name or node
/// of the process in a pid cell.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    Value,
    Name,
    Node,
}

fn json_extra(cell: &Cell, extra: Extra) -> Value {
    match (extra, cell) {
        (Extra::Value, c) => json_of(c),
        (Extra::Name, Cell::Proc { name: Some(n), .. }) => Value::String(n.clone()),
        (Extra::Node, Cell::Proc { node: Some(n), .. }) => Value::String(n.clone()),
        _ => Value::Null,
    }
}

/// The version of the JSON every command writes (its `schema` key). A
/// changed key or column is a new version; `schema::tests` holds each
/// version's columns to a fingerprint (docs/json.md).
pub const SCHEMA: &str = "dyntrace-analyze/1";

/// Renders the machine interface: the summary's keys, then one list of row
/// objects per table, and `columns` describing each list's keys.
pub fn render_json(summary: &Summary, tables: &[Table]) -> Value {
    let mut top = Map::new();
    top.insert("schema".into(), json!(SCHEMA));
    top.insert("events".into(), json!(summary.events));
    top.insert("discarded".into(), json!(summary.discarded));
    top.insert(
        "discarded_reports_without_count".into(),
        json!(summary.discarded_reports_without_count),
    );
    top.insert("first_ns".into(), json!(summary.first_ns));
    top.insert("last_ns".into(), json!(summary.last_ns));
    for (key, value) in crate::input::damage::damage_json(&summary.damaged) {
        top.insert(key.into(), value);
    }
    top.insert(
        "clock".into(),
        json!(crate::present::cli::format_utc(summary.first_ns)),
    );
    top.insert("nodes_mixed".into(), json!(!summary.mixed_nodes.is_empty()));
    if !summary.mixed_nodes.is_empty() {
        top.insert("mixed_nodes".into(), json!(summary.mixed_nodes));
    }
    top.insert("aliases_evicted".into(), json!(summary.aliases_evicted));
    top.insert(
        "warnings".into(),
        json!(summary
            .notices()
            .into_iter()
            .filter(|l| l.starts_with("warning"))
            .collect::<Vec<_>>()),
    );
    top.insert("empty_selection".into(), json!(summary.empty_selection));
    top.insert(
        "named_later".into(),
        Value::Array(
            summary
                .named_later
                .iter()
                .map(|n| {
                    json!({"name": n.name, "pid": n.pid, "first_ns": n.first_ns,
                           "named_ns": n.named_ns})
                })
                .collect(),
        ),
    );
    let mut columns = Map::new();
    for t in tables.iter().filter(|t| t.shown != Shown::TextOnly) {
        let keys = json_keys(t);
        let rows: Vec<Value> = t
            .rows
            .iter()
            .map(|r| {
                Value::Object(
                    keys.iter()
                        .map(|(i, k, extra)| (k.clone(), json_extra(&r.cells[*i], *extra)))
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
