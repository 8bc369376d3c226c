//! Results, apart from how they are shown: every analysis fills [`Table`]s
//! whose columns say their key, title and unit; the same tables are printed
//! for people (aligned, a unit on every duration), written as JSON (one
//! object per row, keyed by column), drawn as `quantize` histograms and
//! plotted in the report.

use crate::model::stats::Log2Buckets;

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
        (Cell::Proc { pid, name, node }, _) => label_text(pid, name.as_deref(), node.as_deref()),
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

/// The one way a process is written, in every command's text, the report,
/// notes and flame graph roots: `store <0.86.0>`, `store <0.86.0> on
/// n1@host` when the results carry nodes, or the pid alone. The suffix
/// that tells pids apart per node inside the analyser (`@2`) is never
/// part of it: `pid` is the pid as its node writes it.
pub fn label_text(pid: &str, name: Option<&str>, node: Option<&str>) -> String {
    let mut text = match name {
        Some(n) => format!("{n} {pid}"),
        None => pid.to_string(),
    };
    if let Some(node) = node {
        text.push_str(" on ");
        text.push_str(node);
    }
    text
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
}
