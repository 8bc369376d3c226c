//! `calls`: function durations per code location, from `function_call`
//! and its `function_return`/`function_exception` in the same process,
//! matched by [`super::callstack`] (its rules: unmatched frames and returns
//! counted, never guessed; `return_to` events skipped when the processes
//! were traced with `return_to`).
//!
//! A call made while another call of the same location is open in the
//! process (recursion) is counted as `nested` and its time is already
//! inside the outer call's: a location's total never exceeds the trace's
//! duration times the processes that ran it.

use super::callstack::{CallStack, Frame, Functions, Popped, Pushed};
use crate::analysis::durations::{duration_cells, duration_columns};
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, ByText};
use crate::model::stats::Durations;
use crate::model::table::{col, Cell, Table, Unit};

#[derive(Default)]
struct Process {
    stack: CallStack<i64>,
}

#[derive(Clone)]
struct EntryStats {
    durations: Durations,
    nested: u64,
    unmatched: u64,
}

impl Default for EntryStats {
    fn default() -> Self {
        EntryStats {
            durations: Durations::new(3),
            nested: 0,
            unmatched: 0,
        }
    }
}

/// One call slower than `--slower-than`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowCall {
    /// The process.
    pub pid: Box<[u8]>,
    /// Index into the entries.
    entry: u32,
    /// When the call started (ns from origin).
    pub start_ns: i64,
    /// How long it took.
    pub duration_ns: u64,
    /// CPU of the call event.
    pub cpu_call: i64,
    /// CPU of the return event.
    pub cpu_return: i64,
}

/// What `report` plots calls at least this long by default.
pub const REPORT_SLOWER_THAN_NS: u64 = 1_000_000;
/// `call_guard` events kept (one per function the guard removed).
const MAX_GUARDED: usize = 100;

/// The `calls` state machine.
pub struct Calls {
    procs: ByText<Process>,
    functions: Functions,
    entries: Vec<EntryStats>,
    pub(crate) slower_than_ns: Option<u64>,
    max_slow: usize,
    pub(crate) slow: Vec<SlowCall>,
    pub(crate) slow_total: u64,
    return_to_skipped: u64,
    return_to: bool,
    /// The functions whose pattern the calls' rate guard removed
    /// (`call_guard`): entry, time, calls, ms.
    guarded: Vec<(String, i64, i64, i64)>,
}

impl Calls {
    /// `slower_than_ns` lists calls at least that long (up to `max_slow`);
    /// `return_to` says the processes were traced with the `return_to` flag.
    pub fn new(slower_than_ns: Option<u64>, max_slow: usize, return_to: bool) -> Calls {
        Calls {
            procs: ByText::default(),
            functions: Functions::default(),
            entries: Vec::new(),
            slower_than_ns,
            max_slow,
            slow: Vec::new(),
            slow_total: 0,
            return_to_skipped: 0,
            return_to,
            guarded: Vec::new(),
        }
    }

    fn entry_id(&mut self, name: &[u8]) -> u32 {
        let id = self.functions.id(name);
        if id as usize == self.entries.len() {
            self.entries.push(EntryStats::default());
        }
        id
    }

    fn unmatched(entries: &mut [EntryStats], f: Frame<i64>) {
        entries[f.entry as usize].unmatched += u64::from(f.depth);
    }

    fn call(&mut self, ev: &Event) {
        let entry_id = self.entry_id(ev.str(Slot::Entry));
        let p = entry(&mut self.procs, ev.str(Slot::Pid), Process::default);
        let entries = &mut self.entries;
        let pushed = p.stack.call(
            entry_id,
            ev.ts_ns,
            |_| ev.cpu,
            |f| Self::unmatched(entries, f),
        );
        if pushed == Pushed::Recursed {
            entries[entry_id as usize].nested += 1;
        }
    }

    fn ret(&mut self, ev: &Event, exception: bool) {
        let entry_id = self.entry_id(ev.str(Slot::Entry));
        let pid = ev.str(Slot::Pid);
        let p = entry(&mut self.procs, pid, Process::default);
        let entries = &mut self.entries;
        let frame = match p.stack.ret(entry_id, exception, self.return_to, |f| {
            Self::unmatched(entries, f)
        }) {
            Popped::Closed(frame) => frame,
            Popped::Nested => return,
            Popped::NoCall => {
                entries[entry_id as usize].unmatched += 1;
                return;
            }
            Popped::ReturnTo => {
                self.return_to_skipped += 1;
                return;
            }
        };
        if !frame.outer {
            entries[entry_id as usize].nested += 1;
            return;
        }
        let duration = ev.ts_ns.saturating_sub(frame.start_ns).max(0) as u64;
        entries[entry_id as usize].durations.record(duration);
        if self.slower_than_ns.is_some_and(|t| duration >= t) {
            self.slow_total += 1;
            if self.slow.len() < self.max_slow {
                self.slow.push(SlowCall {
                    pid: pid.into(),
                    entry: entry_id,
                    start_ns: frame.start_ns,
                    duration_ns: duration,
                    cpu_call: frame.data,
                    cpu_return: ev.cpu,
                });
            }
        }
    }

    fn exit(&mut self, ev: &Event) {
        if let Some(mut p) = self.procs.remove(ev.str(Slot::Pid)) {
            for f in p.stack.drain() {
                Self::unmatched(&mut self.entries, f);
            }
        }
    }

    /// Slow calls in the order they returned.
    pub fn slow_calls(&self) -> &[SlowCall] {
        &self.slow
    }

    /// The code location of a slow call.
    pub fn slow_entry(&self, s: &SlowCall) -> &[u8] {
        self.functions.name(s.entry)
    }
}

impl Analysis for Calls {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::FunctionCall
                | Kind::FunctionReturn
                | Kind::FunctionException
                | Kind::ProcessExit
                | Kind::CallGuard
        )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        match ev.kind() {
            Some(Kind::FunctionCall) => self.call(ev),
            Some(Kind::FunctionReturn) => self.ret(ev, false),
            Some(Kind::FunctionException) => self.ret(ev, true),
            Some(Kind::ProcessExit) => self.exit(ev),
            Some(Kind::CallGuard) if self.guarded.len() < MAX_GUARDED => self.guarded.push((
                String::from_utf8_lossy(ev.str(Slot::Entry)).into_owned(),
                ev.ts_ns,
                ev.int(Slot::Calls),
                ev.int(Slot::Ms),
            )),
            _ => {}
        }
    }

    fn carries_over(&self) -> bool {
        true
    }

    fn next_window(&mut self) {
        for e in self.entries.iter_mut() {
            e.durations = Durations::new(3);
            e.unmatched = 0;
        }
        self.slow.clear();
        self.slow_total = 0;
        self.return_to_skipped = 0;
    }

    fn tables(&self, summary: &Summary) -> Vec<Table> {
        let mut open = vec![0u64; self.entries.len()];
        for p in self.procs.values() {
            for f in p.stack.frames() {
                open[f.entry as usize] += u64::from(f.depth);
            }
        }
        let mut t = Table::new(
            "calls",
            "Calls per code location (slowest total first)",
            [col("entry", "entry", Unit::Text)]
                .into_iter()
                .chain(duration_columns())
                .chain([
                    col("nested", "nested", Unit::Count),
                    col("unmatched", "unmatched", Unit::Count),
                    col("open", "open", Unit::Count),
                ])
                .collect(),
        );
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(self.entries[i].durations.total()), i));
        for i in order {
            let e = &self.entries[i];
            let d = &e.durations;
            if d.count() == 0 && e.nested == 0 && e.unmatched == 0 && open[i] == 0 {
                continue;
            }
            t.push(
                [Cell::bytes(self.functions.name(i as u32))]
                    .into_iter()
                    .chain(duration_cells(d))
                    .chain([
                        Cell::Num(e.nested),
                        Cell::Num(e.unmatched),
                        Cell::Num(open[i]),
                    ])
                    .collect(),
                (d.count() > 0).then(|| d.log2()),
            );
        }
        if self.return_to_skipped > 0 {
            t.notes.push(format!(
                "{} return_to events skipped (not returns)",
                self.return_to_skipped
            ));
        }
        for (entry, ts, calls, ms) in &self.guarded {
            t.notes.push(format!(
                "the rate guard removed {entry}'s pattern at {} (more than {calls} calls per {ms} ms): \
                 its calls after that are not in the trace",
                crate::model::table::text_of(&Cell::Int(*ts), Unit::Timestamp, summary.first_ns)
            ));
        }
        let mut tables = vec![t];
        if let Some(threshold) = self.slower_than_ns {
            let mut s = Table::new(
                "slow",
                format!(
                    "Calls of {} or longer",
                    crate::model::table::format_ns(threshold)
                ),
                vec![
                    col("pid", "pid", Unit::Pid),
                    col("entry", "entry", Unit::Text),
                    col("start_ns", "start", Unit::Timestamp),
                    col("duration_ns", "duration", Unit::Ns),
                    col("cpu_call", "cpu call", Unit::Count),
                    col("cpu_return", "cpu return", Unit::Count),
                ],
            );
            for c in &self.slow {
                s.push(
                    vec![
                        Cell::bytes(&c.pid),
                        Cell::bytes(self.slow_entry(c)),
                        Cell::Int(c.start_ns),
                        Cell::Num(c.duration_ns),
                        Cell::Int(c.cpu_call),
                        Cell::Int(c.cpu_return),
                    ],
                    None,
                );
            }
            if self.slow_total > self.slow.len() as u64 {
                s.notes.push(format!(
                    "{} slow calls in all; the first {} listed",
                    self.slow_total,
                    self.slow.len()
                ));
            }
            tables.push(s);
        }
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::callstack::MAX_STACK;
    use crate::analysis::testing::Script;

    fn run(script: &Script, return_to: bool) -> (Calls, Vec<Table>) {
        let mut c = Calls::new(Some(1_000), 10, return_to);
        script.feed(&mut c);
        let t = c.tables(&Summary::default());
        (c, t)
    }

    fn num(t: &Table, entry: &str, key: &str) -> u64 {
        match t.value(row(t, entry), key) {
            Some(Cell::Num(n)) => *n,
            other => panic!("{entry} {key}: {other:?}"),
        }
    }

    fn row<'t>(t: &'t Table, entry: &str) -> &'t crate::model::table::Row {
        t.rows
            .iter()
            .find(|r| r.cells[0] == Cell::Text(entry.into()))
            .expect("row for entry")
    }

    #[test]
    fn nested_calls_match_their_returns() {
        let mut s = Script::default();
        s.call(0, "<0.1.0>", "a:f/0")
            .call(10, "<0.1.0>", "a:g/1")
            .ret(30, "<0.1.0>", "a:g/1");
        s.ret(5000, "<0.1.0>", "a:f/0");
        let (c, t) = run(&s, false);
        let f = row(&t[0], "a:f/0");
        assert_eq!(t[0].value(f, "count"), Some(&Cell::Num(1)));
        assert_eq!(t[0].value(f, "max_ns"), Some(&Cell::Num(5000)));
        assert_eq!(num(&t[0], "a:g/1", "max_ns"), 20);
        assert_eq!(c.slow_calls().len(), 1);
        assert_eq!(c.slow_entry(&c.slow_calls()[0]), b"a:f/0");
    }

    #[test]
    fn frames_without_returns_are_unmatched_not_guessed() {
        let mut s = Script::default();
        s.call(0, "<0.1.0>", "a:f/0")
            .call(10, "<0.1.0>", "a:untraced/0")
            .ret(50, "<0.1.0>", "a:f/0");
        s.ret(60, "<0.2.0>", "a:h/0");
        let (_, t) = run(&s, false);
        assert_eq!(num(&t[0], "a:untraced/0", "unmatched"), 1);
        assert_eq!(num(&t[0], "a:h/0", "unmatched"), 1);
        assert_eq!(num(&t[0], "a:f/0", "count"), 1);
    }

    #[test]
    fn return_to_events_are_skipped_only_when_told() {
        // f calls g: return_from g, return_to f, return_from f, return_to
        // the shell.
        let mut s = Script::default();
        s.call(0, "<0.1.0>", "a:f/0")
            .call(10, "<0.1.0>", "a:g/0")
            .ret(20, "<0.1.0>", "a:g/0");
        s.ret(20, "<0.1.0>", "a:f/0")
            .ret(40, "<0.1.0>", "a:f/0")
            .ret(40, "<0.1.0>", "shell:eval/3");
        let (_, t) = run(&s, true);
        assert_eq!(num(&t[0], "a:f/0", "max_ns"), 40);
        assert_eq!(num(&t[0], "a:f/0", "unmatched"), 0);
        assert!(t[0].notes[0].starts_with("2 return_to events skipped"));
        // Untold, every return is a return: no word about return_to.
        let (_, t) = run(&s, false);
        assert_eq!(num(&t[0], "a:f/0", "max_ns"), 20);
        assert_eq!(num(&t[0], "a:f/0", "unmatched"), 1);
        assert!(t[0].notes.is_empty());
    }

    #[test]
    fn deep_recursion_pairs_every_call_and_counts_the_time_once() {
        let mut s = Script::default();
        for i in 0..30_000 {
            s.call(i, "<0.1.0>", "a:deep/1");
        }
        for i in 0..30_000 {
            s.ret(30_000 + i, "<0.1.0>", "a:deep/1");
        }
        // Indirect recursion: the inner a:f/0 is inside the outer's time.
        s.call(70_000, "<0.1.0>", "a:f/0")
            .call(70_010, "<0.1.0>", "a:g/0")
            .call(70_020, "<0.1.0>", "a:f/0");
        s.ret(70_030, "<0.1.0>", "a:f/0")
            .ret(70_040, "<0.1.0>", "a:g/0")
            .ret(70_100, "<0.1.0>", "a:f/0");
        let (_, t) = run(&s, false);
        let t = &t[0];
        assert_eq!(num(t, "a:deep/1", "count"), 1);
        assert_eq!(num(t, "a:deep/1", "nested"), 29_999);
        assert_eq!(num(t, "a:deep/1", "unmatched"), 0);
        assert_eq!(num(t, "a:deep/1", "total_ns"), 59_999);
        assert_eq!(num(t, "a:f/0", "count"), 1);
        assert_eq!(num(t, "a:f/0", "nested"), 1);
        assert_eq!(num(t, "a:f/0", "total_ns"), 100);
        assert!(t.notes.is_empty());
    }

    #[test]
    fn stacks_are_bounded() {
        let mut s = Script::default();
        for i in 0..(MAX_STACK as i64 + 10) {
            let f = if i % 2 == 0 { "a:even/1" } else { "a:odd/1" };
            s.call(i, "<0.1.0>", f);
        }
        let (c, t) = run(&s, false);
        assert_eq!(num(&t[0], "a:even/1", "unmatched"), 5);
        assert_eq!(num(&t[0], "a:odd/1", "unmatched"), 5);
        assert_eq!(
            c.procs.get(&b"<0.1.0>"[..]).map(|p| p.stack.frames().len()),
            Some(MAX_STACK)
        );
    }
}
