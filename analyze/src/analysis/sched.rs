//! `sched`: time each process spends on a scheduler, from its
//! `process_scheduled` `in` to the next `out` (`out_exiting`, `out_exited`):
//! slices, total, longest slice and the function it was in at the end.

use super::{entry, Analysis, ByText, Registered};
use crate::event::{Event, Kind, Slot};
use crate::table::{col, Cell, Summary, Table, Unit};

#[derive(Default)]
struct Process {
    since: Option<i64>,
    slices: u64,
    total: u64,
    max: u64,
    max_entry: Box<[u8]>,
}

/// `sched`'s options.
#[derive(clap::Args, Clone, Debug)]
#[group(skip)]
pub struct SchedOptions {
    /// Processes shown
    #[arg(long, default_value_t = 20)]
    pub top: usize,
}

impl Registered for Sched {
    const NAME: &'static str = "sched";
    const ABOUT: &'static str = "Time on a scheduler per process";
    type Options = SchedOptions;
    fn new(o: SchedOptions) -> Result<Sched, String> {
        Ok(Sched::new(o.top))
    }
}

/// The `sched` state machine.
pub struct Sched {
    procs: ByText<Process>,
    top: usize,
}

impl Sched {
    /// Shows the `top` processes with the most time on a scheduler.
    pub fn new(top: usize) -> Sched {
        Sched {
            procs: ByText::default(),
            top,
        }
    }
}

impl Analysis for Sched {
    fn on_event(&mut self, ev: &Event) {
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
                }
            }
            _ => {}
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
                col("pid", "pid", Unit::Text),
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
        vec![t]
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
    }
}
