//! `sched`: time each process spends on a scheduler, from its
//! `process_scheduled` `in` to the next `out` (`out_exiting`, `out_exited`):
//! slices, total, longest slice and the function it was in at the end.
//! With `--by-function`, each process's time split by the function it was
//! in when it was scheduled out (the `entry` of the `out` event).

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, ByText};
use crate::model::table::{col, Cell, Table, Unit};

#[derive(Default)]
struct Process {
    since: Option<i64>,
    slices: u64,
    total: u64,
    max: u64,
    max_entry: Box<[u8]>,
    /// With `--by-function`: slices and time per function.
    functions: ByText<(u64, u64)>,
}

/// The `sched` state machine.
pub struct Sched {
    procs: ByText<Process>,
    top: usize,
    by_function: bool,
}

impl Sched {
    /// Shows the `top` processes with the most time on a scheduler.
    pub fn new(top: usize) -> Sched {
        Sched {
            procs: ByText::default(),
            top,
            by_function: false,
        }
    }

    /// Also splits each process's time by function.
    pub fn by_function(mut self) -> Sched {
        self.by_function = true;
        self
    }
}

impl Analysis for Sched {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(kind, Kind::ProcessScheduled)
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        if ev.kind() != Some(Kind::ProcessScheduled) {
            return;
        }
        let p = entry(&mut self.procs, ev.str(Slot::Pid), Process::default);
        match ev.str(Slot::Type) {
            b"in" | b"in_exiting" => p.since = Some(ev.ts_ns),
            b"out" | b"out_exiting" | b"out_exited" => {
                if let Some(since) = p.since.take() {
                    let ns = ev.ts_ns.saturating_sub(since).max(0) as u64;
                    p.slices += 1;
                    p.total = p.total.saturating_add(ns);
                    if ns >= p.max {
                        p.max = ns;
                        p.max_entry = ev.str(Slot::Entry).into();
                    }
                    if self.by_function {
                        let f = entry(&mut p.functions, ev.str(Slot::Entry), || (0, 0));
                        f.0 += 1;
                        f.1 = f.1.saturating_add(ns);
                    }
                }
            }
            _ => {}
        }
    }

    fn carries_over(&self) -> bool {
        true
    }

    fn next_window(&mut self) {
        for p in self.procs.values_mut() {
            *p = Process {
                since: p.since,
                ..Process::default()
            };
        }
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut t = Table::new(
            "sched",
            format!(
                "Time on a scheduler per process (top {} by total)",
                self.top
            ),
            vec![
                col("pid", "pid", Unit::Pid),
                col("count", "slices", Unit::Count),
                col("total_ns", "total", Unit::Ns),
                col("max_ns", "longest", Unit::Ns),
                col("max_entry", "longest ended in", Unit::Text),
            ],
        );
        let mut procs: Vec<(&Box<[u8]>, &Process)> =
            self.procs.iter().filter(|(_, p)| p.slices > 0).collect();
        procs.sort_by(|a, b| b.1.total.cmp(&a.1.total).then_with(|| a.0.cmp(b.0)));
        for (pid, p) in procs.iter().take(self.top) {
            t.push(
                vec![
                    Cell::bytes(pid),
                    Cell::Num(p.slices),
                    Cell::Num(p.total),
                    Cell::Num(p.max),
                    Cell::bytes(&p.max_entry),
                ],
                None,
            );
        }
        if procs.len() > self.top {
            t.notes
                .push(format!("{} more processes (--top)", procs.len() - self.top));
        }
        if !self.by_function {
            return vec![t];
        }
        let mut f = Table::new(
            "sched_functions",
            "Time on a scheduler per process and function it was in when scheduled out \
             (heaviest first)",
            vec![
                col("pid", "pid", Unit::Pid),
                col("entry", "function", Unit::Text),
                col("count", "slices", Unit::Count),
                col("total_ns", "total", Unit::Ns),
            ],
        );
        let mut rows: Vec<(&[u8], &[u8], u64, u64)> = procs
            .iter()
            .take(self.top)
            .flat_map(|(pid, p)| {
                p.functions
                    .iter()
                    .map(move |(e, &(n, total))| (&pid[..], &e[..], n, total))
            })
            .collect();
        rows.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| (a.0, a.1).cmp(&(b.0, b.1))));
        for (pid, e, n, total) in rows {
            f.push(
                vec![
                    Cell::bytes(pid),
                    Cell::bytes(e),
                    Cell::Num(n),
                    Cell::Num(total),
                ],
                None,
            );
        }
        vec![t, f]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    #[test]
    fn slices_run_from_in_to_out() {
        let mut s = Script::default();
        s.ev(0, Kind::ProcessScheduled, &["<0.1.0>", "m:f/0", "in"]);
        s.ev(40, Kind::ProcessScheduled, &["<0.1.0>", "m:g/0", "out"]);
        s.ev(50, Kind::ProcessScheduled, &["<0.1.0>", "m:g/0", "in"]);
        s.ev(
            60,
            Kind::ProcessScheduled,
            &["<0.1.0>", "m:h/0", "out_exited"],
        );
        s.ev(70, Kind::ProcessScheduled, &["<0.2.0>", "m:h/0", "out"]);
        let mut a = Sched::new(10);
        s.feed(&mut a);
        let t = &a.tables(&Summary::default())[0];
        assert_eq!(t.rows.len(), 1);
        assert_eq!(
            t.rows[0].cells[1..4],
            [Cell::Num(2), Cell::Num(50), Cell::Num(40)]
        );
        assert_eq!(t.rows[0].cells[4], Cell::Text("m:g/0".into()));
        let mut a = Sched::new(10).by_function();
        s.feed(&mut a);
        let t = &a.tables(&Summary::default())[1];
        let rows: Vec<_> = t.rows.iter().map(|r| r.cells[1..].to_vec()).collect();
        assert_eq!(
            rows,
            [
                vec![Cell::Text("m:g/0".into()), Cell::Num(1), Cell::Num(40)],
                vec![Cell::Text("m:h/0".into()), Cell::Num(1), Cell::Num(10)],
            ]
        );
    }
}
