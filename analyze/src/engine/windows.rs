//! `--window`: tables per window of trace time, merged into one set (long
//! tables for machines, a line per window and a sparkline for people).

use crate::engine::analysis::Analysis;
use crate::engine::analysis::Make;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::table::{col, format_ns, sparkline, Cell, Column, Row, Shown, Table, Unit};

/// The column a windowed text table follows per window: the p99, else the
/// first duration, else the first count.
fn window_metric(t: &Table) -> Option<usize> {
    let cols = &t.columns;
    cols.iter()
        .position(|c| c.key == "p99_ns")
        .or_else(|| cols.iter().position(|c| c.unit == Unit::Ns))
        .or_else(|| cols.iter().position(|c| c.unit == Unit::Count))
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

/// Rows of each table kept per trend window.
pub const TREND_ROWS: usize = 100;
/// Trend windows kept: past this, every other one goes (the series stay
/// evenly spaced, at most this many points).
pub const MAX_TREND_WINDOWS: usize = 500;

/// The report's trends: a second set of analyses, per window of trace
/// time, beside the whole run's.
pub(crate) struct Trend<A: ?Sized> {
    pub(crate) width_ns: i64,
    pub(crate) analyses: Vec<Box<A>>,
    /// Start of the current window; None before the first event.
    pub(crate) start: Option<i64>,
    pub(crate) events: u64,
    /// Windows between two kept ones (doubles as windows are thinned).
    pub(crate) stride: usize,
    pub(crate) seen: usize,
    pub(crate) closed: Vec<(i64, Vec<Table>)>,
}

/// Closes a window of `analyses`: their tables, then a fresh set in place
/// of those that do not carry over (built by `make`) and the next window
/// for those that do.
pub(crate) fn roll<A: Analysis + ?Sized>(
    analyses: &mut [Box<A>],
    make: Make<A>,
    summary: &Summary,
    who: &Identity,
) -> Result<Vec<Table>, String> {
    let mut tables = Vec::new();
    for a in analyses.iter_mut() {
        if !a.carries_over() {
            a.finish(who);
        }
        tables.extend(a.tables(summary));
    }
    let mut fresh: Option<Vec<Box<A>>> = None;
    for (i, a) in analyses.iter_mut().enumerate() {
        if a.carries_over() {
            a.next_window();
            continue;
        }
        if fresh.is_none() {
            fresh = Some(make()?);
        }
        if let Some(f) = fresh.as_mut().and_then(|f| f.get_mut(i)) {
            std::mem::swap(a, f);
        }
    }
    Ok(tables)
}

/// A trend window's tables, cut to what the trends draw.
pub(crate) fn trend_tables(tables: Vec<Table>) -> Vec<Table> {
    tables
        .into_iter()
        .map(|mut t| {
            t.rows.truncate(TREND_ROWS);
            for r in t.rows.iter_mut() {
                r.hist = None;
            }
            t
        })
        .collect()
}

/// Analyses per window of trace time.
pub(crate) struct Windows {
    pub(crate) width_ns: i64,
    /// Start of the current window (ns from origin); None before the first
    /// event.
    pub(crate) start: Option<i64>,
    /// Events in the current window.
    pub(crate) events: u64,
    pub(crate) closed: Vec<(i64, Vec<Table>)>,
}

impl<A: ?Sized> Trend<A> {
    /// Keeps a closed window's tables (every `stride`-th window).
    pub(crate) fn keep(&mut self, start: i64, tables: Vec<Table>) {
        if self.seen.is_multiple_of(self.stride) {
            if self.closed.len() == MAX_TREND_WINDOWS {
                let mut i = 0;
                self.closed.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
            if self.seen.is_multiple_of(self.stride) {
                self.closed.push((start, trend_tables(tables)));
            }
        }
        self.seen += 1;
    }
}
