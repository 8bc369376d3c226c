//! `exceptions`: which functions raised, how often and of which class,
//! from `function_exception` events (calls traced with `exception_trace`,
//! or `exception => true` through the front door), most raised first, with
//! the processes that raised and the process that raised last.

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, ByText};
use crate::model::table::{col, Cell, Table, Unit};

/// Distinct processes counted per row before the count says "at least".
const MAX_PROCESSES_PER_ROW: usize = 1024;

/// One code location and class.
#[derive(Default)]
struct Raised {
    count: u64,
    first_ns: i64,
    last_ns: i64,
    last_pid: Box<[u8]>,
    /// The processes that raised here, up to the cap.
    pids: hashbrown::HashSet<Box<[u8]>, rustc_hash::FxBuildHasher>,
    more_pids: bool,
}

/// The `exceptions` state: one row per location and class, so memory is
/// bounded by code locations (and the capped process sets).
#[derive(Default)]
pub struct Exceptions {
    rows: ByText<Raised>,
}

impl Analysis for Exceptions {
    fn needs_fields(&self, kind: Kind) -> bool {
        kind == Kind::FunctionException
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        if ev.kind() != Some(Kind::FunctionException) {
            return;
        }
        // The key: the location and the class, apart by a byte neither holds.
        let mut key = Vec::with_capacity(64);
        key.extend_from_slice(ev.str(Slot::Entry));
        key.push(0);
        key.extend_from_slice(ev.str(Slot::Class));
        let pid = ev.str(Slot::Pid);
        let r = entry(&mut self.rows, &key, || Raised {
            first_ns: ev.ts_ns,
            ..Raised::default()
        });
        r.count += 1;
        r.last_ns = ev.ts_ns;
        if *r.last_pid != *pid {
            r.last_pid = pid.into();
        }
        if r.pids.len() < MAX_PROCESSES_PER_ROW {
            if !r.pids.contains(pid) {
                r.pids.insert(pid.into());
            }
        } else if !r.pids.contains(pid) {
            r.more_pids = true;
        }
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut t = Table::new(
            "exceptions",
            "Exceptions per code location and class (most raised first)",
            vec![
                col("entry", "entry", Unit::Text),
                col("class", "class", Unit::Text),
                col("count", "count", Unit::Count),
                col("processes", "processes", Unit::Count),
                col("first_ns", "first", Unit::Timestamp),
                col("last_ns", "last", Unit::Timestamp),
                col("last_pid", "last raised by", Unit::Pid),
            ],
        );
        let mut rows: Vec<(&[u8], &Raised)> = self.rows.iter().map(|(k, r)| (&k[..], r)).collect();
        rows.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        let mut capped = 0;
        for (key, r) in rows {
            let (location, class) = match key.iter().position(|&b| b == 0) {
                Some(i) => (&key[..i], &key[i + 1..]),
                None => (key, &b""[..]),
            };
            capped += u64::from(r.more_pids);
            t.push(
                vec![
                    Cell::bytes(location),
                    Cell::bytes(class),
                    Cell::Num(r.count),
                    Cell::Num(r.pids.len() as u64),
                    Cell::Int(r.first_ns),
                    Cell::Int(r.last_ns),
                    Cell::bytes(&r.last_pid),
                ],
                None,
            );
        }
        if capped > 0 {
            t.notes.push(format!(
                "{capped} rows raised in more than {MAX_PROCESSES_PER_ROW} processes: their processes column counts the first {MAX_PROCESSES_PER_ROW}"
            ));
        }
        if t.rows.is_empty() {
            t.notes.push(
                "no function_exception events: trace calls with exception_trace (dyntrace:calls/2 with exception => true)"
                    .into(),
            );
        }
        vec![t]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    #[test]
    fn counts_per_location_and_class_most_first() {
        let mut s = Script::default();
        s.exception(10, "<0.1.0>", "m:f/1")
            .exception(20, "<0.2.0>", "m:f/1")
            .exception(30, "<0.2.0>", "m:f/1")
            .ev(40, Kind::FunctionException, &["<0.3.0>", "m:g/0", "throw"])
            .call(50, "<0.1.0>", "m:h/0");
        let mut a = Exceptions::default();
        s.feed(&mut a);
        let t = &a.tables(&Summary::default())[0];
        assert_eq!(t.rows.len(), 2);
        let row = |i: usize, k: &str| t.value(&t.rows[i], k).cloned();
        assert_eq!(row(0, "entry"), Some(Cell::Text("m:f/1".into())));
        assert_eq!(row(0, "class"), Some(Cell::Text("error".into())));
        assert_eq!(row(0, "count"), Some(Cell::Num(3)));
        assert_eq!(row(0, "processes"), Some(Cell::Num(2)));
        assert_eq!(row(0, "last_ns"), Some(Cell::Int(30)));
        assert_eq!(row(1, "class"), Some(Cell::Text("throw".into())));
        assert_eq!(row(1, "count"), Some(Cell::Num(1)));
    }

    #[test]
    fn says_what_to_trace_when_nothing_raised() {
        let mut a = Exceptions::default();
        Script::default().call(1, "<0.1.0>", "m:f/0").feed(&mut a);
        let t = &a.tables(&Summary::default())[0];
        assert!(t.rows.is_empty());
        assert!(t.notes[0].contains("exception_trace"), "{:?}", t.notes);
    }
}
