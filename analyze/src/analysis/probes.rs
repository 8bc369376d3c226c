//! `probes`: the user probes (`dyntrace:p/0..8`, `pn/1..9`,
//! `user_trace_s1/1`): how often each fired and the distribution of each of
//! its integer arguments.
//!
//! A probe is told apart by its event and number (`p`, `pn(7)`, `s1`), its
//! name (its first string: `s1`, or the message of `user_trace_s1`) and the
//! caller's dynamic trace tag, and with `--by-pid` the calling process.
//! The probes kept are capped (the first ones seen); events of the others
//! are counted, so that a name or tag that varies per call (an id put in
//! `s1`) cannot grow the memory without bound.

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::ByText;
use crate::model::stats::Ints;
use crate::model::table::{col, Cell, Column, Shown, Table, Unit};

/// Probes kept by default.
pub const DEFAULT_MAX_PROBES: usize = 1000;

const INT_SLOTS: [Slot; 4] = [Slot::I1, Slot::I2, Slot::I3, Slot::I4];
const INT_NAMES: [&str; 4] = ["i1", "i2", "i3", "i4"];

struct Probe {
    kind: Option<Kind>,
    /// `pn`'s probe number, -1 for the others.
    number: i64,
    label: String,
    name: Box<[u8]>,
    tag: Box<[u8]>,
    pid: Box<[u8]>,
    count: u64,
    first_ns: i64,
    last_ns: i64,
    ints: Option<Box<[Ints; 4]>>,
}

/// The `probes` state machine.
pub struct Probes {
    by_pid: bool,
    max_probes: usize,
    probes: ByText<Probe>,
    /// Events of probes beyond `max_probes`: counted, not shown.
    pub over_cap: u64,
    key: Vec<u8>,
}

impl Probes {
    /// Keeps at most `max_probes` probes, one per process too if `by_pid`.
    pub fn new(by_pid: bool, max_probes: usize) -> Probes {
        Probes {
            by_pid,
            max_probes,
            probes: ByText::default(),
            over_cap: 0,
            key: Vec::new(),
        }
    }

    fn key_columns(&self) -> Vec<Column> {
        let mut columns = vec![
            col("probe", "probe", Unit::Text),
            col("name", "name", Unit::Text),
            col("tag", "tag", Unit::Text),
        ];
        if self.by_pid {
            columns.push(col("pid", "pid", Unit::Pid));
        }
        columns
    }

    fn key_cells(&self, p: &Probe) -> Vec<Cell> {
        let mut cells = vec![
            Cell::Text(p.label.clone()),
            Cell::bytes(&p.name),
            Cell::bytes(&p.tag),
        ];
        if self.by_pid {
            cells.push(Cell::bytes(&p.pid));
        }
        cells
    }
}

impl Default for Probes {
    fn default() -> Probes {
        Probes::new(false, DEFAULT_MAX_PROBES)
    }
}

/// Appends `part` with its length, so that parts cannot run into each other.
fn push_part(key: &mut Vec<u8>, part: &[u8]) {
    key.extend_from_slice(&(part.len() as u32).to_le_bytes());
    key.extend_from_slice(part);
}

impl Analysis for Probes {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::UserTraceI4s4 | Kind::UserTraceN | Kind::UserTraceS1
        )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        let kind = ev.kind();
        let (label, name) = match kind {
            Some(Kind::UserTraceI4s4) => (None, ev.str(Slot::S1)),
            Some(Kind::UserTraceN) => (Some(ev.int(Slot::Probe)), ev.str(Slot::S1)),
            Some(Kind::UserTraceS1) => (None, ev.str(Slot::Message)),
            _ => return,
        };
        let (tag, pid) = (ev.str(Slot::Tag), ev.str(Slot::Pid));
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push(kind.map_or(0, |k| k as u8));
        key.extend_from_slice(&label.unwrap_or(-1).to_le_bytes());
        push_part(&mut key, name);
        push_part(&mut key, tag);
        if self.by_pid {
            key.extend_from_slice(pid);
        }
        let known = self.probes.contains_key(&key[..]);
        if !known && self.probes.len() >= self.max_probes {
            self.over_cap += 1;
            self.key = key;
            return;
        }
        let p = crate::model::keyed::entry(&mut self.probes, &key, || Probe {
            kind,
            number: label.unwrap_or(-1),
            label: match (kind, label) {
                (Some(Kind::UserTraceS1), _) => "s1".into(),
                (_, Some(n)) => format!("pn({n})"),
                _ => "p".into(),
            },
            name: name.into(),
            tag: tag.into(),
            pid: if self.by_pid {
                pid.into()
            } else {
                Box::default()
            },
            count: 0,
            first_ns: ev.ts_ns,
            last_ns: ev.ts_ns,
            ints: None,
        });
        p.count += 1;
        p.last_ns = ev.ts_ns;
        if kind != Some(Kind::UserTraceS1) {
            let ints = p.ints.get_or_insert_with(Box::default);
            for (stats, slot) in ints.iter_mut().zip(INT_SLOTS) {
                stats.record(ev.int(slot));
            }
        }
        self.key = key;
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut probes: Vec<&Probe> = self.probes.values().collect();
        probes.sort_by(|a, b| {
            (a.kind, a.number, &a.name, &a.tag, &a.pid)
                .cmp(&(b.kind, b.number, &b.name, &b.tag, &b.pid))
        });
        let mut counts = Table::new(
            "probes",
            "User probes: events per probe",
            self.key_columns()
                .into_iter()
                .chain([
                    col("count", "count", Unit::Count),
                    col("first_ns", "first", Unit::Timestamp),
                    col("last_ns", "last", Unit::Timestamp),
                ])
                .collect(),
        );
        let mut values = Table::new(
            "probe_ints",
            "User probes: integer arguments (those ever other than 0)",
            self.key_columns()
                .into_iter()
                .chain([
                    col("arg", "arg", Unit::Text),
                    col("count", "count", Unit::Count),
                    col("min", "min", Unit::Value),
                    col("p50", "p50", Unit::Value),
                    col("p90", "p90", Unit::Value),
                    col("p99", "p99", Unit::Value),
                    col("max", "max", Unit::Value),
                ])
                .collect(),
        );
        for p in probes {
            counts.push(
                self.key_cells(p)
                    .into_iter()
                    .chain([
                        Cell::Num(p.count),
                        Cell::Int(p.first_ns),
                        Cell::Int(p.last_ns),
                    ])
                    .collect(),
                None,
            );
            let Some(ints) = &p.ints else { continue };
            for (stats, arg) in ints.iter().zip(INT_NAMES) {
                if !stats.any_non_zero() {
                    continue;
                }
                values.push(
                    self.key_cells(p)
                        .into_iter()
                        .chain([
                            Cell::Text(arg.into()),
                            Cell::Num(stats.count()),
                            Cell::Int(stats.min()),
                            Cell::Int(stats.quantile(0.5)),
                            Cell::Int(stats.quantile(0.9)),
                            Cell::Int(stats.quantile(0.99)),
                            Cell::Int(stats.max()),
                        ])
                        .collect(),
                    None,
                );
            }
        }
        if self.over_cap > 0 {
            counts.notes.push(format!(
                "{} events of probes beyond the first {} (--max-probes) are not shown",
                self.over_cap, self.max_probes
            ));
        }
        let mut dropped = Table::new(
            "probes_summary",
            "User probes not shown",
            vec![
                col("kept", "probes kept", Unit::Count),
                col("over_cap", "events of probes not kept", Unit::Count),
            ],
        );
        dropped.shown = Shown::JsonOnly;
        dropped.push(
            vec![
                Cell::Num(self.probes.len() as u64),
                Cell::Num(self.over_cap),
            ],
            None,
        );
        vec![counts, values, dropped]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    fn probe(s: &mut Script, ts: i64, pid: &str, name: &str, ints: &[i64]) {
        s.probe(ts, Kind::UserTraceI4s4, None, pid, "", ints, name);
    }

    #[test]
    fn counts_and_integer_percentiles_per_probe() {
        let mut s = Script::default();
        for i in 1..=100 {
            probe(&mut s, i, "<0.1.0>", "work", &[i, -3]);
        }
        s.probe(
            200,
            Kind::UserTraceN,
            Some(7),
            "<0.2.0>",
            "t",
            &[],
            "checkout",
        );
        s.ev(201, Kind::UserTraceS1, &["<0.2.0>", "hello"]);
        let mut p = Probes::default();
        s.feed(&mut p);
        let tables = p.tables(&Summary::default());
        let (counts, values) = (&tables[0], &tables[1]);
        let rows: Vec<_> = counts
            .rows
            .iter()
            .map(|r| {
                (
                    counts.value(r, "probe").cloned(),
                    counts.value(r, "name").cloned(),
                    counts.value(r, "count").cloned(),
                )
            })
            .collect();
        let text = |s: &str| Some(Cell::Text(s.into()));
        assert!(rows.contains(&(text("p"), text("work"), Some(Cell::Num(100)))));
        assert!(rows.contains(&(text("pn(7)"), text("checkout"), Some(Cell::Num(1)))));
        assert!(rows.contains(&(text("s1"), text("hello"), Some(Cell::Num(1)))));
        // i1 and i2 of `work`; `checkout` gave no integer.
        assert_eq!(values.rows.len(), 2);
        let i1 = &values.rows[0];
        let get = |k| values.value(i1, k).cloned().expect("column");
        assert_eq!(get("arg"), Cell::Text("i1".into()));
        assert_eq!(
            [get("min"), get("p50"), get("p90"), get("p99"), get("max")],
            [1, 50, 90, 99, 100].map(Cell::Int)
        );
        assert_eq!(values.value(&values.rows[1], "p50"), Some(&Cell::Int(-3)));
    }

    #[test]
    fn probes_beyond_the_cap_are_counted() {
        let mut s = Script::default();
        for i in 0..10 {
            probe(&mut s, i, "<0.1.0>", &format!("order {}", i % 4), &[]);
        }
        let mut p = Probes::new(false, 3);
        s.feed(&mut p);
        let tables = p.tables(&Summary::default());
        assert_eq!(tables[0].rows.len(), 3);
        // orders 0..2 kept; the 2 events of order 3 counted.
        assert_eq!(p.over_cap, 2);
        assert_eq!(tables[2].rows[0].cells, [Cell::Num(3), Cell::Num(2)]);
        assert_eq!(tables[0].notes.len(), 1);
    }

    #[test]
    fn by_pid_splits_rows() {
        let mut s = Script::default();
        probe(&mut s, 1, "<0.1.0>", "a", &[1]);
        probe(&mut s, 2, "<0.2.0>", "a", &[2]);
        probe(&mut s, 3, "<0.2.0>", "a", &[3]);
        let mut merged = Probes::default();
        let mut split = Probes::new(true, 10);
        s.feed(&mut merged);
        s.feed(&mut split);
        assert_eq!(merged.tables(&Summary::default())[0].rows.len(), 1);
        let t = &split.tables(&Summary::default())[0];
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.value(&t.rows[1], "pid"),
            Some(&Cell::Text("<0.2.0>".into()))
        );
        assert_eq!(t.value(&t.rows[1], "count"), Some(&Cell::Num(2)));
    }
}
