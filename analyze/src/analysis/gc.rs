//! `gc`: garbage collection pauses per process and kind (minor, major),
//! from each `gc_*_start` to the next `gc_*_end` of the same kind in the
//! same process, and the words reclaimed.

use crate::analysis::durations::{duration_cells, duration_columns};
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, sorted_keys, ByText};
use crate::model::stats::Durations;
use crate::model::table::{col, Cell, Table, Unit};

const KINDS: [&str; 2] = ["minor", "major"];

struct Pauses {
    durations: Durations,
    reclaimed: u64,
}

#[derive(Default)]
struct Process {
    started: [Option<i64>; 2],
    kinds: [Option<Box<Pauses>>; 2],
}

/// The `gc` state machine.
#[derive(Default)]
pub struct Gc {
    procs: ByText<Process>,
    unmatched_ends: u64,
}

impl Gc {
    fn start(&mut self, ev: &Event, kind: usize) {
        entry(&mut self.procs, ev.str(Slot::Pid), Process::default).started[kind] = Some(ev.ts_ns);
    }

    fn end(&mut self, ev: &Event, kind: usize) {
        let p = self.procs.get_mut(ev.str(Slot::Pid));
        let Some((p, start)) = p.and_then(|p| p.started[kind].take().map(|s| (p, s))) else {
            self.unmatched_ends += 1;
            return;
        };
        let pauses = p.kinds[kind].get_or_insert_with(|| {
            Box::new(Pauses {
                durations: Durations::new(2),
                reclaimed: 0,
            })
        });
        pauses
            .durations
            .record(ev.ts_ns.saturating_sub(start).max(0) as u64);
        pauses.reclaimed = pauses
            .reclaimed
            .saturating_add(ev.int(Slot::Reclaimed).max(0) as u64);
    }
}

impl Analysis for Gc {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::GcMajorStart | Kind::GcMajorEnd | Kind::GcMinorStart | Kind::GcMinorEnd
        )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        match ev.kind() {
            Some(Kind::GcMinorStart) => self.start(ev, 0),
            Some(Kind::GcMajorStart) => self.start(ev, 1),
            Some(Kind::GcMinorEnd) => self.end(ev, 0),
            Some(Kind::GcMajorEnd) => self.end(ev, 1),
            _ => {}
        }
    }

    fn carries_over(&self) -> bool {
        true
    }

    fn next_window(&mut self) {
        for p in self.procs.values_mut() {
            p.kinds = [None, None];
        }
        self.unmatched_ends = 0;
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut t = Table::new(
            "gc",
            "GC pauses per process (longest total first)",
            [
                col("pid", "pid", Unit::Pid),
                col("kind", "kind", Unit::Text),
            ]
            .into_iter()
            .chain(duration_columns())
            .chain([col("reclaimed_words", "reclaimed", Unit::Words)])
            .collect(),
        );
        let mut rows = Vec::new();
        for pid in sorted_keys(&self.procs) {
            for (kind, pauses) in self.procs[pid].kinds.iter().enumerate() {
                if let Some(p) = pauses {
                    rows.push((pid, kind, p));
                }
            }
        }
        rows.sort_by_key(|(_, _, p)| std::cmp::Reverse(p.durations.total()));
        for (pid, kind, p) in rows {
            let d = &p.durations;
            t.push(
                [Cell::bytes(pid), Cell::Text(KINDS[kind].into())]
                    .into_iter()
                    .chain(duration_cells(d))
                    .chain([Cell::Num(p.reclaimed)])
                    .collect(),
                Some(d.log2()),
            );
        }
        if self.unmatched_ends > 0 {
            t.notes.push(format!(
                "{} GC ends without a start (before the window)",
                self.unmatched_ends
            ));
        }
        vec![t]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    #[test]
    fn pauses_pair_start_and_end_per_kind() {
        let mut s = Script::default();
        s.ev_int(0, Kind::GcMinorStart, "<0.1.0>", &[10, 100, 0]);
        s.ev_int(50, Kind::GcMinorEnd, "<0.1.0>", &[7, 100, 0]);
        s.ev_int(60, Kind::GcMajorStart, "<0.1.0>", &[10, 100, 0]);
        s.ev_int(260, Kind::GcMajorEnd, "<0.1.0>", &[90, 100, 0]);
        s.ev_int(300, Kind::GcMinorEnd, "<0.2.0>", &[1, 1, 0]);
        let mut g = Gc::default();
        s.feed(&mut g);
        let t = &g.tables(&Summary::default())[0];
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.value(&t.rows[0], "kind"),
            Some(&Cell::Text("major".into()))
        );
        assert_eq!(t.value(&t.rows[0], "max_ns"), Some(&Cell::Num(200)));
        assert_eq!(t.value(&t.rows[1], "reclaimed_words"), Some(&Cell::Num(7)));
        assert_eq!(t.notes.len(), 1);
    }

    /// Two nodes recorded with the vpid context keep the same pid apart;
    /// rows carry each one's name (from the snapshot) and node.
    #[test]
    fn nodes_with_vpid_stay_apart() {
        let mut s = Script::default();
        s.in_vpid(100)
            .ev_node(0, "'n1@h'", 0, "'n1@h'")
            .snapshot(1, "<0.82.0>", "shop_audit")
            .ev_int(10, Kind::GcMinorStart, "<0.82.0>", &[1, 1, 0])
            .ev_int(30, Kind::GcMinorEnd, "<0.82.0>", &[1, 1, 0]);
        s.in_vpid(200)
            .ev_node(0, "'n2@h'", 0, "'n2@h'")
            .ev_int(20, Kind::GcMinorStart, "<0.82.0>", &[1, 1, 0])
            .ev_int(25, Kind::GcMinorEnd, "<0.82.0>", &[1, 1, 0]);
        let mut g = Gc::default();
        let who = s.feed(&mut g);
        let mut t = g.tables(&Summary::default());
        who.annotate(&mut t);
        let proc = |row: usize| t[0].value(&t[0].rows[row], "pid").cloned();
        assert_eq!(t[0].rows.len(), 2);
        let first = Cell::Proc {
            pid: "<0.82.0>".into(),
            name: Some("shop_audit".into()),
            node: Some("n1@h".into()),
        };
        assert_eq!(proc(0), Some(first.clone()));
        let second = Cell::Proc {
            pid: "<0.82.0>".into(),
            name: None,
            node: Some("n2@h".into()),
        };
        assert_eq!(proc(1), Some(second));
        let text = crate::model::table::text_of(&first, Unit::Pid, 0);
        assert_eq!(text, "shop_audit <0.82.0> on n1@h");
    }
}
