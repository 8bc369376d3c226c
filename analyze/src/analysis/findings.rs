//! `findings`: what looks wrong, ranked, one numbered finding per line,
//! each with its process, its claim and figures, and the command that
//! shows the evidence. It reads the trace once, feeding `mailbox`,
//! `memory` and `genserver` (per window of [`WINDOW_NS`], for trends) and
//! its own small state for scheduling, GC and exceptions; then applies the
//! rules of docs/findings.md. A cause that grows (a queue, latency, a
//! heap, memory, the cost of a receive) ranks above steady activity (a
//! scheduler hog, slow requests, GC pauses, a burst of exceptions), which
//! ranks above nothing: a periodic CPU burst, a large flat heap or queue, a
//! slow but rare call is no finding. Events lost by LTTng come first: every
//! result is then incomplete. It says which findings it could not look for
//! for lack of events.

use std::fmt::Write as _;

use crate::analysis::genserver::GenServer;
use crate::analysis::mailbox::{rate_text, Counted, Mailbox, Receiver, Traced};
use crate::analysis::memory::{Memory, Series};
use crate::analysis::profile::wilson;
use crate::engine::analysis::Analysis;
use crate::engine::identity::{split_qualified, Identity};
use crate::engine::summary::Summary;
use crate::model::bytes::same;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, get_mut, ById, ByText};
use crate::model::table::{col, format_bytes, format_ns, Cell, Shown, Table, Unit};

/// The windows latency is compared across (first and last with calls).
pub const WINDOW_NS: i64 = 1_000_000_000;
/// A series grows when it rose in each of this many parts of its span.
pub const GROWTH_WINDOWS: u64 = 4;
/// A queue that grows: at least this much per second...
pub const QUEUE_MIN_GROWTH_PER_S: f64 = 10.0;
/// ... and this many messages first to last.
pub const QUEUE_MIN_RISE: u64 = 100;
/// A receive that scans: a queue of at least this many...
pub const SCAN_MIN_QUEUE: u64 = 1000;
/// ... and CPU per message handled this many times higher at the longest
/// queue than at the shortest.
pub const SCAN_MIN_RATIO: f64 = 4.0;
/// A receive that scans, from triage's counted windows (a receive spends
/// a reduction on each message it skips): from the window with the
/// shortest queue to the one with the longest, the reductions per message
/// handled rose by at least this many per message more in the queue...
pub const SCAN_MIN_SLOPE: f64 = 0.5;
/// ... the longest queue being longer than the shortest by at least this
/// share of it.
pub const SCAN_MIN_SPREAD: f64 = 0.25;
/// A scheduler hog: on a scheduler at least this share of the time traced...
pub const HOG_MIN_SHARE: f64 = 0.5;
/// ... or one slice at least this long.
pub const HOG_LONG_SLICE_NS: u64 = 250_000_000;
/// Stack samples of a process that make its share of samples running or
/// runnable count as its share of the time.
pub const HOG_MIN_SAMPLES: u64 = 10;
/// Slow requests: p99 at least this...
pub const SLOW_P99_NS: u64 = 10_000_000;
/// ... over at least this many calls.
pub const SLOW_MIN_CALLS: u64 = 5;
/// Latency that grows: calls in the first and the last window at least...
pub const LATENCY_MIN_CALLS: u64 = 5;
/// ... p50 at least this many times the first window's...
pub const LATENCY_MIN_RATIO: f64 = 2.0;
/// ... and at least this in the last window. Where a request's windows
/// cover at least [`LATENCY_MIN_COVER`] of the time traced, the p50 is
/// compared at the trace's first and last window of the line fitted to
/// its windows' p50 (least squares), not at its own first and last: a
/// triage recording traces a server only in some windows, and which ones
/// must not decide whether its latency grows.
pub const LATENCY_MIN_NS: u64 = 1_000_000;
/// See [`LATENCY_MIN_NS`].
pub const LATENCY_MIN_COVER: f64 = 1.0 / 3.0;
/// GC pauses: at least this share of the time traced...
pub const GC_MIN_SHARE: f64 = 0.05;
/// ... or one pause at least this long.
pub const GC_LONG_PAUSE_NS: u64 = 100_000_000;
/// A heap that grows: at least this many words after GC at the end...
pub const HEAP_MIN_WORDS: u64 = 100_000;
/// ... and at least this many times the first.
pub const HEAP_MIN_RATIO: f64 = 2.0;
/// Memory that grows: at least this many bytes first to last...
pub const MEMORY_MIN_RISE: u64 = 1 << 20;
/// ... and at least this many times the first.
pub const MEMORY_MIN_RATIO: f64 = 1.2;
/// A burst of exceptions: at least this many in one second...
pub const BURST_MIN: u64 = 100;
/// ... and this many times the location's mean per second over the trace.
pub const BURST_MIN_RATIO: f64 = 3.0;
/// Findings listed.
pub const MAX_FINDINGS: usize = 20;
/// Functions kept per process (where its time goes).
const MAX_FUNCTIONS: usize = 32;

/// What a cause that grows scores at least: a queue or latency that grows
/// (what callers feel) from [`FELT`], a receive's cost per message from
/// [`SCANS`], a heap or memory from [`GROWS`], each up to 19 more by its
/// figure; steady activity scores between [`STEADY`] and [`GROWS`].
const FELT: f64 = 140.0;
const SCANS: f64 = 120.0;
const GROWS: f64 = 100.0;
const STEADY: f64 = 50.0;
const LOST: f64 = 1000.0;

/// The erlang:memory/0 categories a finding names (the others are sums of
/// these or of the processes').
const CATEGORIES: [&str; 5] = ["processes", "binary", "ets", "atom", "code"];

/// One process's time on a scheduler.
#[derive(Default)]
struct Cpu {
    since: Option<i64>,
    total: u64,
    slices: u64,
    longest: u64,
    longest_entry: Box<[u8]>,
    /// Time per function it was in when scheduled out...
    functions: ByText<u64>,
    /// ... but for the last slices', which were in `current`, not yet in
    /// `functions`: a process is mostly scheduled out in the function it
    /// was in the time before, and one comparison then stands for a
    /// lookup. `functions` gets them, in the order they came, when the
    /// function changes and at the end ([`Cpu::settle`]).
    current: Vec<u8>,
    current_ns: Option<u64>,
    /// Stack samples per innermost function.
    sampled: ByText<u64>,
    /// Stack samples, and those not waiting (running or runnable).
    samples: u64,
    active: u64,
}

/// One process's garbage collections.
#[derive(Default)]
struct Collections {
    started: Option<i64>,
    pauses: u64,
    total: u64,
    longest: u64,
    /// Heap and old heap after each collection, in words.
    heap: Series,
}

/// One code location's exceptions (or one kind of exit reason's crashes).
#[derive(Default)]
struct Raised {
    count: u64,
    class: Box<[u8]>,
    first_ns: i64,
    last_ns: i64,
    /// The current second and its count, in two alignments half a
    /// second apart: a burst shorter than half a second falls whole in
    /// one of them.
    second: [i64; 2],
    in_second: [u64; 2],
    burst: u64,
    burst_at: i64,
    burst_pid: Box<[u8]>,
    /// Crashes: whether `burst_pid` is the crashed processes' parent.
    by_parent: bool,
}

impl Cpu {
    /// A slice of `ns` that ended in `f`.
    fn slice_out(&mut self, f: &[u8], ns: u64) {
        match &mut self.current_ns {
            Some(sum) if same(&self.current, f) => *sum += ns,
            _ => {
                self.settle();
                self.current.clear();
                self.current.extend_from_slice(f);
                self.current_ns = Some(ns);
            }
        }
    }

    /// The last slices' time into `functions`.
    fn settle(&mut self) {
        if let Some(ns) = self.current_ns.take() {
            add_capped(&mut self.functions, &self.current, ns);
        }
    }
}

impl Raised {
    /// One more at `ts`, by `pid`: whether the busiest second is now its.
    fn count_one(&mut self, ts: i64, pid: &[u8]) -> bool {
        let mut busiest = false;
        self.count += 1;
        self.last_ns = ts;
        for (i, offset) in [0, 500_000_000].into_iter().enumerate() {
            let second = (ts - offset).div_euclid(1_000_000_000);
            if second != self.second[i] {
                self.second[i] = second;
                self.in_second[i] = 0;
            }
            self.in_second[i] += 1;
            if self.in_second[i] > self.burst {
                self.burst = self.in_second[i];
                self.burst_at = second * 1_000_000_000 + offset;
                if *self.burst_pid != *pid {
                    self.burst_pid = pid.into();
                }
                busiest = true;
            }
        }
        busiest
    }
}

/// Live processes whose parent is kept (the spawns seen, less the exits).
const MAX_PARENTS: usize = 1 << 20;
/// An exit reason is cut to this many bytes in a finding.
const MAX_REASON_BYTES: usize = 60;

/// One process's focus windows: triage traces its messages, scheduling
/// and GC only between a `dyntrace_focus start` and a `dyntrace_focus end`
/// mark.
#[derive(Default)]
struct Focused {
    open: Option<i64>,
    /// The closed windows' time.
    total: u64,
}

/// The marks that bracket a focus window.
const FOCUS_START: &[u8] = b"dyntrace_focus start";
const FOCUS_END: &[u8] = b"dyntrace_focus end";

/// A request's calls over the windows.
#[derive(Default)]
struct Requests {
    count: u64,
    total: u64,
    p99_max: u64,
    /// (window start, calls, p50, p99) of the first and last window with
    /// [`LATENCY_MIN_CALLS`].
    first: Option<(i64, u64, u64, u64)>,
    last: Option<(i64, u64, u64, u64)>,
    /// The p50 of those windows against their start: a least-squares
    /// line's sums (seconds from the first such window, ns), and the
    /// lowest p50.
    fit: Fit,
    p50_min: u64,
    /// The start of the first window of calls still adding up.
    since: Option<i64>,
}

/// A least-squares line's sums.
#[derive(Default, Clone, Copy, Debug)]
struct Fit {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
}

impl Fit {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.xy += x * y;
    }

    /// The line's value at `x`, None under two distinct points.
    fn at(&self, x: f64) -> Option<f64> {
        let d = self.n * self.xx - self.x * self.x;
        if self.n < 2.0 || d <= f64::EPSILON {
            return None;
        }
        let slope = (self.n * self.xy - self.x * self.y) / d;
        Some((self.y - slope * self.x) / self.n + slope * x)
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What kind (docs/findings.md).
    pub kind: &'static str,
    /// How it ranks (higher first).
    pub score: f64,
    /// The process, as the analyses see its pid.
    pub pid: Option<String>,
    /// Its node (as the analyses number them), when known.
    pub node: Option<u32>,
    /// What is wrong, with its figures.
    pub claim: String,
    /// The figures behind it.
    pub figures: String,
    /// The analysis that shows the evidence, and its options.
    pub see: String,
}

impl Finding {
    fn of(
        kind: &'static str,
        score: f64,
        pid: Option<&[u8]>,
        claim: String,
        figures: String,
        see: String,
    ) -> Finding {
        let pid = pid.map(|p| String::from_utf8_lossy(p).into_owned());
        let node = pid.as_deref().and_then(|p| split_qualified(p.as_bytes()).1);
        let see = match kind {
            "lost_events" => see,
            _ => format!("dyntrace-analyze {see}"),
        };
        Finding {
            kind,
            score,
            pid,
            node,
            claim,
            figures,
            see,
        }
    }
}

/// The `findings` state.
pub struct Findings {
    mailbox: Mailbox,
    memory: Memory,
    calls: GenServer,
    window_start: Option<i64>,
    requests: hashbrown::HashMap<(String, String), Requests, rustc_hash::FxBuildHasher>,
    /// Each process's time on a scheduler, in the order first seen, by
    /// its pid's id in `mailbox`'s pids (looked up once per event for
    /// both).
    cpu: ById<Cpu>,
    /// The process last scheduled in (its pid's id) and when, not yet in `cpu`: it is
    /// mostly the next one scheduled out, and one lookup then does for
    /// both events ([`Findings::settle_in`] puts it in `cpu` otherwise).
    held_in: Option<(u32, i64)>,
    scheduling: Traced,
    gc: ByText<Collections>,
    collecting: Traced,
    raised: ByText<Raised>,
    /// Crashes by the kind of their exit reason.
    exits: ByText<Raised>,
    /// Each live process's parent, from `process_spawn`.
    parents: ByText<Box<[u8]>>,
    /// Each process's focus windows (triage's `dyntrace_focus` marks).
    focus: ByText<Focused>,
    /// The first and the last event's time.
    first_ns: i64,
    last_ns: i64,
    /// Events per kind.
    kinds: [u64; Kind::ALL.len()],
    /// From `finish`: names and nodes of the processes found.
    names: ByText<String>,
    node_names: hashbrown::HashMap<u32, String, rustc_hash::FxBuildHasher>,
    /// In `report`: also the tables and sections of `genserver`, `memory`
    /// and `mailbox`, which it runs inside.
    report: bool,
}

impl Findings {
    /// In `report`: the `mailbox`, `memory` and `genserver` it runs inside
    /// are the report's (built with the report's options), and their
    /// tables come from here, so that each reads the trace once.
    pub fn in_report(memory: Memory, calls: GenServer) -> Findings {
        Findings {
            memory,
            calls: calls.with_sub_windows(),
            report: true,
            ..Findings::default()
        }
    }

    /// The analyses it runs inside, when it stands in for them in `report`.
    pub fn report_parts(&self) -> Option<(&GenServer, &Memory, &Mailbox)> {
        self.report
            .then_some((&self.calls, &self.memory, &self.mailbox))
    }
}

impl Default for Findings {
    fn default() -> Findings {
        Findings {
            mailbox: Mailbox::default(),
            memory: Memory::with_leak_windows(GROWTH_WINDOWS),
            calls: GenServer::default().with_sub_windows(),
            window_start: None,
            requests: Default::default(),
            cpu: ById::default(),
            held_in: None,
            scheduling: Traced::default(),
            gc: ByText::default(),
            collecting: Traced::default(),
            raised: ByText::default(),
            exits: ByText::default(),
            parents: ByText::default(),
            focus: ByText::default(),
            first_ns: i64::MAX,
            last_ns: i64::MIN,
            kinds: [0; Kind::ALL.len()],
            names: ByText::default(),
            node_names: Default::default(),
            report: false,
        }
    }
}

fn top_function(counts: &ByText<u64>) -> Option<(String, f64)> {
    let waiting = |f: &[u8]| {
        f.starts_with(b"gen_server:loop")
            || f.starts_with(b"gen_statem:loop")
            || f.starts_with(b"proc_lib:")
            || f.starts_with(b"gen:")
            || f == b"undefined"
    };
    let all: u64 = counts.values().sum();
    let (f, n) = counts
        .iter()
        .filter(|(f, _)| !waiting(f))
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))?;
    Some((
        String::from_utf8_lossy(f).into_owned(),
        *n as f64 / all.max(1) as f64,
    ))
}

/// A growing cause's score: its kind's `base`, and up to 19 more by its
/// figure.
fn grows(base: f64, by: f64) -> f64 {
    base + by.clamp(0.0, 19.0)
}

fn add_capped(counts: &mut ByText<u64>, key: &[u8], n: u64) {
    if let Some(c) = get_mut(counts, key) {
        *c += n;
    } else if counts.len() < MAX_FUNCTIONS {
        counts.insert(key.into(), n);
    }
}

impl Findings {
    /// Closes the window of `calls` that started at `start`.
    fn roll(&mut self, last: bool) {
        let Some(start) = self.window_start else {
            return;
        };
        // The callers' latency, else (callers not traced, as in triage's
        // windows) the server's share. A request with calls, but fewer than
        // LATENCY_MIN_CALLS, adds up over the windows that follow until it
        // has them (a triage window of 150 ms on a loaded host may hold a
        // few calls): one point of its latency, at the first window's start.
        let mut short = Vec::new();
        for (server, request, caller, server_share) in self.calls.sub_window_requests() {
            let d = match caller.count() {
                0 => server_share,
                _ => caller,
            };
            let count = d.count();
            if count == 0 {
                continue;
            }
            let key = (
                String::from_utf8_lossy(server).into_owned(),
                String::from_utf8_lossy(request).into_owned(),
            );
            let r = self.requests.entry(key).or_default();
            let since = *r.since.get_or_insert(start);
            if count < LATENCY_MIN_CALLS && !last {
                short.push((Box::<[u8]>::from(server), Box::<[u8]>::from(request)));
                continue;
            }
            r.since = None;
            let (p50, p99) = (d.quantile(0.5), d.quantile(0.99));
            r.count += count;
            r.total = r.total.saturating_add(d.total());
            r.p99_max = r.p99_max.max(p99);
            if count >= LATENCY_MIN_CALLS {
                let w = Some((since, count, p50, p99));
                let base = r.first.map_or(since, |f| f.0);
                if r.first.is_none() {
                    r.first = w;
                    r.p50_min = p50;
                }
                r.last = w;
                r.p50_min = r.p50_min.min(p50);
                r.fit.add((since - base) as f64 / 1e9, p50 as f64);
            }
        }
        self.calls.next_sub_window(|server, request| {
            short.iter().any(|(s, r)| **s == *server && **r == *request)
        });
    }

    fn scheduled(&mut self, ev: &Event, id: u32, scheduled_in: bool) {
        self.scheduling.see(ev.ts_ns);
        match scheduled_in {
            true => {
                if !matches!(self.held_in, Some((held, _)) if held == id) {
                    self.settle_in();
                }
                self.held_in = Some((id, ev.ts_ns));
            }
            _ => {
                let pending = match self.held_in {
                    Some((held, at)) if held == id => {
                        self.held_in = None;
                        Some(at)
                    }
                    _ => None,
                };
                let p = self.cpu.entry(id);
                // The `in` held back, if it is this process's, is later
                // than the one in `cpu`; either way `cpu` keeps none.
                let since = p.since.take();
                if let Some(since) = pending.or(since) {
                    let ns = ev.ts_ns.saturating_sub(since).max(0) as u64;
                    p.slices += 1;
                    p.total = p.total.saturating_add(ns);
                    let f = ev.str(Slot::Entry);
                    if ns >= p.longest {
                        p.longest = ns;
                        if *p.longest_entry != *f {
                            p.longest_entry = f.into();
                        }
                    }
                    p.slice_out(f, ns);
                }
            }
        }
    }

    /// The process scheduled in last, when held back, into `cpu`.
    fn settle_in(&mut self) {
        if let Some((id, at)) = self.held_in.take() {
            self.cpu.entry(id).since = Some(at);
        }
    }

    fn sampled(&mut self, ev: &Event) {
        let id = self.mailbox.pid_id(ev.str(Slot::Pid));
        let p = self.cpu.entry(id);
        p.samples += 1;
        if ev.str(Slot::Status) == b"waiting" {
            return;
        }
        p.active += 1;
        let stack = ev.str(Slot::Stack);
        let top = stack.split(|&b| b == b';').next().unwrap_or_default();
        if top.is_empty() {
            return;
        }
        add_capped(&mut p.sampled, top, 1);
    }

    fn collection(&mut self, ev: &Event, end: bool) {
        self.collecting.see(ev.ts_ns);
        let p = entry(&mut self.gc, ev.str(Slot::Pid), Collections::default);
        if !end {
            p.started = Some(ev.ts_ns);
            return;
        }
        if let Some(start) = p.started.take() {
            let ns = ev.ts_ns.saturating_sub(start).max(0) as u64;
            p.pauses += 1;
            p.total = p.total.saturating_add(ns);
            p.longest = p.longest.max(ns);
        }
        let words = ev.int(Slot::Heap).max(0) as u64 + ev.int(Slot::OldHeap).max(0) as u64;
        p.heap.push(ev.ts_ns, words);
    }

    fn exception(&mut self, ev: &Event) {
        let r = entry(&mut self.raised, ev.str(Slot::Entry), || Raised {
            first_ns: ev.ts_ns,
            second: [i64::MIN; 2],
            class: ev.str(Slot::Class).into(),
            ..Raised::default()
        });
        r.count_one(ev.ts_ns, ev.str(Slot::Pid));
    }

    fn spawned(&mut self, ev: &Event) {
        if self.parents.len() < MAX_PARENTS {
            self.parents
                .insert(ev.str(Slot::Pid).into(), ev.str(Slot::Parent).into());
        }
    }

    /// A process exit: one that crashed (a reason other than `normal`,
    /// `shutdown` or `{shutdown, _}`) counts for its reason's kind, and the
    /// process that spawned it, when the trace saw the spawn.
    fn exited(&mut self, ev: &Event) {
        let parent = self.parents.remove(ev.str(Slot::Pid));
        let reason = ev.str(Slot::Reason).trim_ascii();
        if reason == b"normal" || reason == b"shutdown" || reason.starts_with(b"{shutdown,") {
            return;
        }
        let kind = crate::analysis::mailbox::kind_of(reason);
        let r = entry(&mut self.exits, kind.as_bytes(), || Raised {
            first_ns: ev.ts_ns,
            second: [i64::MIN; 2],
            class: reason[..reason.len().min(MAX_REASON_BYTES)].into(),
            ..Raised::default()
        });
        if r.count_one(ev.ts_ns, parent.as_deref().unwrap_or(ev.str(Slot::Pid))) {
            r.by_parent = parent.is_some();
        }
    }

    fn mark(&mut self, ev: &Event) {
        let text = ev.str(Slot::Message);
        let start = text.starts_with(FOCUS_START);
        if !start && !text.starts_with(FOCUS_END) {
            return;
        }
        let f = entry(&mut self.focus, ev.str(Slot::Pid), Focused::default);
        if let Some(since) = f.open.take() {
            f.total = f
                .total
                .saturating_add(ev.ts_ns.saturating_sub(since).max(0) as u64);
        }
        if start {
            f.open = Some(ev.ts_ns);
        }
    }

    /// The seconds a process was in focus windows (a window the trace's
    /// end cut short ends with the trace), None when it had none: then
    /// it was traced throughout, or not at all.
    fn focused_s(&self, pid: &[u8]) -> Option<f64> {
        let f = self.focus.get(pid)?;
        let open = f
            .open
            .map_or(0, |since| self.last_ns.saturating_sub(since).max(0) as u64);
        let ns = f.total.saturating_add(open);
        (ns > 0).then_some(ns as f64 / 1e9)
    }

    fn has(&self, kind: Kind) -> bool {
        self.kinds[kind as usize] > 0
    }

    /// What could not be looked for, for lack of events.
    pub fn skipped(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut lack = |missing: bool, what: &str| {
            if missing {
                lines.push(what.to_string());
            }
        };
        lack(
            !self.has(Kind::MessageSend) && !self.has(Kind::MessageReceive),
            "no message events: which messages fill a queue, slow requests and latency findings skipped",
        );
        lack(
            !self.has(Kind::ProcessMemory),
            "no process_memory samples: queue and process memory findings skipped",
        );
        lack(
            !self.has(Kind::MemorySample),
            "no memory_sample events: memory category findings skipped",
        );
        lack(
            !self.has(Kind::ProcessScheduled),
            "no scheduling events: CPU findings skipped",
        );
        lack(
            !(self.has(Kind::GcMinorEnd) || self.has(Kind::GcMajorEnd)),
            "no GC events: GC findings skipped",
        );
        lack(
            !self.has(Kind::FunctionException) && !self.has(Kind::ProcessExit),
            "no function_exception or process_exit events: exception findings skipped",
        );
        lack(
            !self.has(Kind::FunctionException) && self.has(Kind::ProcessExit),
            "no function_exception events: bursts of caught exceptions not looked for (crashes are, from process exits)",
        );
        lines
    }

    /// The findings, highest score first (at most [`MAX_FINDINGS`]).
    pub fn findings(&self, summary: &Summary) -> Vec<Finding> {
        let origin = summary.first_ns;
        let at = |ts: i64| format!("+{:.1} s", (ts - origin) as f64 / 1e9);
        let span_s = (summary.last_ns - summary.first_ns).max(1) as f64 / 1e9;
        let mut found = Vec::new();
        let lost = summary.discarded + summary.discarded_reports_without_count;
        if lost > 0 {
            found.push(Finding::of(
                "lost_events",
                LOST,
                None,
                format!(
                    "LTTng discarded {} events ({} reports without a count): every result below is incomplete",
                    summary.discarded, summary.discarded_reports_without_count
                ),
                format!("{} events read", summary.events),
                "docs/recording.md (larger or more sub-buffers, fewer flags)".into(),
            ));
        }

        for (pid, r) in self.mailbox.receivers() {
            if r.counted_windows() {
                found.extend(self.scans_by_reductions(pid, r.queue.peak(), r));
            }
            let (Some(first), last) = (r.queue.first(), r.queue.last()) else {
                continue;
            };
            let growth = r.growth_per_s();
            if r.queue.grows_in_every_window(GROWTH_WINDOWS)
                && last.1 >= first.1 + QUEUE_MIN_RISE
                && growth >= QUEUE_MIN_GROWTH_PER_S
            {
                let kinds: Vec<String> = r
                    .kind_rates()
                    .into_iter()
                    .filter(|k| k.accounts)
                    .map(|k| format!("{} {} in", k.kind, rate_text(k.per_s)))
                    .collect();
                let why = match kinds.is_empty() {
                    true => match r.count_in() {
                        0 => "no message events say which messages".to_string(),
                        _ => "no one kind of message accounts for it".to_string(),
                    },
                    false => format!("{}, not taken out", kinds.join(", ")),
                };
                found.push(Finding::of(
                    "growing_queue",
                    grows(FELT, 5.0 * growth.log10()),
                    Some(pid),
                    format!("message queue grows {growth:+.0}/s: {why}"),
                    format!(
                        "queue {} at {} -> {} at {} (peak {}), grew in each of {GROWTH_WINDOWS} windows; in {}",
                        first.1,
                        at(first.0),
                        last.1,
                        at(last.0),
                        r.queue.peak(),
                        rate_text(r.rate_in())
                    ),
                    format!("mailbox {}", self.select(pid)),
                ));
            }
            let buckets = r.cpu_by_queue();
            if let (true, Some((lo_q, lo)), Some((hi_q, hi))) = (
                !r.counted_windows() && r.queue.peak() >= SCAN_MIN_QUEUE && buckets.len() >= 2,
                buckets.first(),
                buckets.last(),
            ) {
                let per = |b: &crate::analysis::mailbox::QueueBucket| b.cpu_ns / b.handled.max(1);
                let ratio = per(hi) as f64 / per(lo).max(1) as f64;
                if ratio >= SCAN_MIN_RATIO && *hi_q * 2 >= SCAN_MIN_QUEUE {
                    found.push(Finding::of(
                        "receive_scans_queue",
                        grows(SCANS, 5.0 * ratio.log2()),
                        Some(pid),
                        format!(
                            "receive scans a long queue: CPU per message handled {} at queue {lo_q}+ -> {} at queue {hi_q}+ ({ratio:.0}x)",
                            format_ns(per(lo)),
                            format_ns(per(hi))
                        ),
                        format!(
                            "{} messages handled at queue {lo_q}+, {} at {hi_q}+; queue peak {}",
                            lo.handled,
                            hi.handled,
                            r.queue.peak()
                        ),
                        format!("mailbox {}", self.select(pid)),
                    ));
                }
            }
        }

        let sched_s = self.scheduling.seconds().unwrap_or(span_s);
        for (id, p) in self.cpu.iter() {
            let pid = self.mailbox.pids().text(id);
            let traced_s = self.focused_s(pid).unwrap_or(sched_s);
            // Where scheduling was traced in windows only (triage), the
            // stack samples' share of running or runnable says it too: the
            // low end of its 95% interval, so that a few samples never
            // make a hog.
            let (low, high) = wilson(p.active, p.samples);
            let sampled = match p.samples >= HOG_MIN_SAMPLES {
                true => low,
                false => 0.0,
            };
            let share = (p.total as f64 / 1e9 / traced_s).max(sampled);
            if (p.slices == 0 && sampled == 0.0)
                || (share < HOG_MIN_SHARE && p.longest < HOG_LONG_SLICE_NS)
            {
                continue;
            }
            let top = top_function(&p.functions)
                .or_else(|| top_function(&p.sampled))
                .map(|(f, s)| format!(", mostly in {f} ({:.0}%)", s * 100.0))
                .unwrap_or_default();
            found.push(Finding::of(
                "scheduler_hog",
                STEADY + 30.0 * share.min(1.0) + (p.longest as f64 / 5e7).min(10.0),
                Some(pid),
                format!(
                    "on a scheduler {:.0}% of the time traced{top}",
                    share * 100.0
                ),
                format!(
                    "{} in {} slices over {:.1} s traced; longest slice {} (in {}); {} of {} stack samples running or runnable (95% {:.0}-{:.0}%)",
                    format_ns(p.total),
                    p.slices,
                    traced_s,
                    format_ns(p.longest),
                    String::from_utf8_lossy(&p.longest_entry),
                    p.active,
                    p.samples,
                    low * 100.0,
                    high * 100.0
                ),
                format!("sched --by-function {}", self.select(pid)),
            ));
        }

        for ((server, request), r) in &self.requests {
            if r.count >= SLOW_MIN_CALLS && r.p99_max >= SLOW_P99_NS {
                let load = r.total as f64 / 1e9 / span_s;
                let inside = self
                    .mailbox
                    .pids()
                    .get(server.as_bytes())
                    .and_then(|id| self.cpu.get(id))
                    .and_then(|p| top_function(&p.functions).or_else(|| top_function(&p.sampled)))
                    .map(|(f, s)| format!("; the server's time goes to {f} ({:.0}%)", s * 100.0))
                    .unwrap_or_default();
                found.push(Finding::of(
                    "slow_requests",
                    STEADY + (40.0 * load).min(40.0),
                    Some(server.as_bytes()),
                    format!(
                        "slow {request} requests: p99 up to {} over {} calls{inside}",
                        format_ns(r.p99_max),
                        r.count
                    ),
                    waited(r.total, load, span_s),
                    format!("genserver --slowest 10 {}", self.select(server.as_bytes())),
                ));
            }
            if let (Some(first), Some(last)) = (r.first, r.last) {
                let (ratio, trend) = self.latency_growth(r, first, last);
                if last.0 > first.0
                    && last.2 > first.2
                    && ratio >= LATENCY_MIN_RATIO
                    && last.2 >= LATENCY_MIN_NS
                {
                    found.push(Finding::of(
                        "growing_latency",
                        grows(FELT, 5.0 * ratio.log2()),
                        Some(server.as_bytes()),
                        format!(
                            "{request} latency grows: p50 {} -> {}, p99 {} -> {}",
                            format_ns(first.2),
                            format_ns(last.2),
                            format_ns(first.3),
                            format_ns(last.3)
                        ),
                        format!(
                            "first window {} ({} calls), last window {} ({} calls), windows of {}{trend}",
                            at(first.0),
                            first.1,
                            at(last.0),
                            last.1,
                            format_ns(WINDOW_NS as u64)
                        ),
                        format!("genserver --window 1s {}", self.select(server.as_bytes())),
                    ));
                }
            }
        }

        let gc_s = self.collecting.seconds().unwrap_or(span_s);
        let mut heaps: Vec<&[u8]> = Vec::new();
        for (pid, p) in &self.gc {
            let (Some(first), last) = (p.heap.first(), p.heap.last()) else {
                continue;
            };
            let pauses = format!(
                "{} GC pauses, {} in all, longest {}",
                p.pauses,
                format_ns(p.total),
                format_ns(p.longest)
            );
            let ratio = last.1 as f64 / first.1.max(1) as f64;
            if p.heap.grows_in_every_window(GROWTH_WINDOWS)
                && last.1 >= HEAP_MIN_WORDS
                && ratio >= HEAP_MIN_RATIO
            {
                found.push(Finding::of(
                    "growing_heap",
                    grows(GROWS, 5.0 * ratio.log2()),
                    Some(pid),
                    format!(
                        "heap after GC grows {} -> {} words ({:+.0} words/s)",
                        first.1,
                        last.1,
                        p.heap.growth_per_s()
                    ),
                    format!(
                        "{} at {}, {} at {}, grew in each of {GROWTH_WINDOWS} windows; {pauses}",
                        first.1,
                        at(first.0),
                        last.1,
                        at(last.0)
                    ),
                    format!("gc {}", self.select(pid)),
                ));
                heaps.push(pid);
                continue;
            }
            let share = p.total as f64 / 1e9 / self.focused_s(pid).unwrap_or(gc_s);
            if share >= GC_MIN_SHARE || p.longest >= GC_LONG_PAUSE_NS {
                found.push(Finding::of(
                    "gc_pauses",
                    STEADY + (100.0 * share).min(30.0),
                    Some(pid),
                    format!(
                        "GC pauses {:.0}% of the time traced, longest {}",
                        share * 100.0,
                        format_ns(p.longest)
                    ),
                    pauses,
                    format!("gc {}", self.select(pid)),
                ));
            }
        }

        // Where GC was traced only in windows (triage), the memory
        // sampler's total heap tells whether a heap grows.
        for (pid, heap) in self.memory.heaps() {
            let (Some(first), last) = (heap.first(), heap.last()) else {
                continue;
            };
            let ratio = last.1 as f64 / first.1.max(1) as f64;
            // The heap's block grows in steps: it grew in each half of the
            // span, and is at its peak at the end.
            if heaps.contains(&pid)
                || !heap.grows_in_every_window(2)
                || last.1 < heap.peak()
                || last.1 < HEAP_MIN_WORDS * 8
                || ratio < HEAP_MIN_RATIO
            {
                continue;
            }
            found.push(Finding::of(
                "growing_heap",
                grows(GROWS, 5.0 * ratio.log2()),
                Some(pid),
                format!(
                    "heap grows {} -> {} ({}/s)",
                    format_bytes(first.1 as f64),
                    format_bytes(last.1 as f64),
                    format_bytes(heap.growth_per_s())
                ),
                format!(
                    "total heap {} at {}, {} at {} (memory sampler), grew in each half, at its peak at the end",
                    format_bytes(first.1 as f64),
                    at(first.0),
                    format_bytes(last.1 as f64),
                    at(last.0)
                ),
                format!("memory {}", self.select(pid)),
            ));
            heaps.push(pid);
        }

        for g in self.memory.growths() {
            let (Some(first), last) = (g.series.first(), g.series.last()) else {
                continue;
            };
            // A process whose heap grows: its memory grows with it, said
            // once, as a growing heap.
            let wanted = match g.pid {
                None => CATEGORIES.contains(&g.what),
                Some(pid) => g.what != "queue" && !(g.what == "memory" && heaps.contains(&pid)),
            };
            if !wanted
                || !g.series.grows_in_every_window(GROWTH_WINDOWS)
                || last.1 < first.1 + MEMORY_MIN_RISE
                || (last.1 as f64) < first.1 as f64 * MEMORY_MIN_RATIO
            {
                continue;
            }
            let growth = g.series.growth_per_s();
            let what = match g.pid {
                None => format!("memory category {}", g.what),
                Some(_) => format!("process {}", g.what),
            };
            let see = match g.pid {
                None => "memory".to_string(),
                Some(pid) => format!("memory {}", self.select(pid)),
            };
            let before = found.len();
            found.push(Finding::of(
                "growing_memory",
                grows(GROWS, 5.0 * (growth / 1024.0).max(1.0).log10()),
                g.pid,
                format!(
                    "{what} grows {}/s: {} -> {}",
                    format_bytes(growth),
                    format_bytes(first.1 as f64),
                    format_bytes(last.1 as f64)
                ),
                format!(
                    "{} at {} -> {} at {}, grew in each of {GROWTH_WINDOWS} windows",
                    format_bytes(first.1 as f64),
                    at(first.0),
                    format_bytes(last.1 as f64),
                    at(last.0)
                ),
                see,
            ));
            if g.pid.is_none() {
                found[before].node = Some(g.node);
            }
        }

        // Exceptions by code location; and processes that crash in a
        // burst, what triage sees of exceptions (it traces no calls), from
        // every process's exits.
        let bursts = self.raised.iter().map(|(location, r)| {
            let claim = format!(
                "burst of {} exceptions ({}) in one second in {}",
                r.burst,
                String::from_utf8_lossy(&r.class),
                String::from_utf8_lossy(location)
            );
            (r, claim, "exceptions")
        });
        let crashes = self.exits.iter().map(|(kind, r)| {
            let claim = format!(
                "burst of {} processes crashing ({}, such as {}) in one second{}",
                r.burst,
                String::from_utf8_lossy(kind),
                String::from_utf8_lossy(&r.class),
                match r.by_parent {
                    true => ", spawned by this one",
                    false => "",
                }
            );
            (r, claim, "rates")
        });
        for (r, claim, see) in bursts.chain(crashes) {
            let mean = r.count as f64 / span_s.max(1.0);
            if r.burst >= BURST_MIN && r.burst as f64 >= BURST_MIN_RATIO * mean {
                let pid = (!r.burst_pid.is_empty()).then_some(&r.burst_pid[..]);
                found.push(Finding::of(
                    "exception_burst",
                    STEADY + (10.0 * (r.burst as f64).log10()).min(40.0),
                    pid,
                    claim,
                    format!(
                        "the second from {}; {} in all from {} to {} ({:.1}/s over the trace)",
                        at(r.burst_at),
                        r.count,
                        at(r.first_ns),
                        at(r.last_ns),
                        mean
                    ),
                    see.into(),
                ));
            }
        }

        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.kind.cmp(b.kind))
                .then_with(|| a.pid.cmp(&b.pid))
        });
        found.truncate(MAX_FINDINGS);
        found
    }

    /// How many times a request's p50 grew, and what the figures say of
    /// how: its last window's over its first's; or, where its windows
    /// cover at least [`LATENCY_MIN_COVER`] of the time traced, the line
    /// fitted to every window's p50 at the trace's first and last window
    /// (its start at least half the lowest p50 seen).
    fn latency_growth(
        &self,
        r: &Requests,
        first: (i64, u64, u64, u64),
        last: (i64, u64, u64, u64),
    ) -> (f64, String) {
        let seen = last.2 as f64 / first.2.max(1) as f64;
        let (x0, x1) = (
            (self.first_ns - first.0) as f64 / 1e9,
            ((self.last_ns - WINDOW_NS).max(last.0) - first.0) as f64 / 1e9,
        );
        let covered = (last.0 - first.0) as f64 / 1e9;
        let (Some(y0), Some(y1)) = (r.fit.at(x0), r.fit.at(x1)) else {
            return (seen, String::new());
        };
        if x1 - x0 <= 0.0 || covered < LATENCY_MIN_COVER * (x1 - x0) {
            return (seen, String::new());
        }
        let y0 = y0.max(r.p50_min as f64 / 2.0);
        let ratio = y1 / y0;
        (
            ratio,
            format!(
                "; the line through its {} windows' p50: {} -> {} over the {:.1} s traced ({ratio:.1}x)",
                r.fit.n,
                format_ns(y0 as u64),
                format_ns(y1.max(0.0) as u64),
                x1 - x0 + WINDOW_NS as f64 / 1e9
            ),
        )
    }

    /// A receive that scans its queue, from triage's counted windows (their
    /// marks give the exact queue and reductions at each end): the queue
    /// reached [`SCAN_MIN_QUEUE`], and from the window with the shortest
    /// queue to the one with the longest (at least [`SCAN_MIN_SPREAD`] of
    /// it apart), the reductions per message handled rose by at least
    /// [`SCAN_MIN_SLOPE`] per message more in the queue. A process whose
    /// every message costs much, whatever its queue, does not rise so.
    fn scans_by_reductions(&self, pid: &[u8], peak: u64, r: &Receiver) -> Option<Finding> {
        let (lo, hi) = r.counted_extremes()?;
        let (lo_r, hi_r) = (lo.reductions_per_message(), hi.reductions_per_message());
        let spread = hi.queue.saturating_sub(lo.queue);
        if hi.queue < SCAN_MIN_QUEUE
            || (spread as f64) < SCAN_MIN_SPREAD * hi.queue as f64
            || (hi_r as f64 - lo_r as f64) < SCAN_MIN_SLOPE * spread as f64
        {
            return None;
        }
        let per_cpu = |c: &Counted| format_ns(c.cpu_ns / c.handled.max(1));
        Some(Finding::of(
            "receive_scans_queue",
            grows(SCANS, 5.0 * (hi_r as f64 / lo_r.max(1) as f64).log2()),
            Some(pid),
            format!(
                "receive scans a long queue: {hi_r} reductions per message handled at queue {}, \
                 {lo_r} at queue {} (a receive spends one on each message it skips)",
                hi.queue, lo.queue
            ),
            format!(
                "{} handled at queue {}, CPU {} per message; {} at queue {}, CPU {} per message \
                 (triage's windows); queue peak {}",
                hi.handled,
                hi.queue,
                per_cpu(&hi),
                lo.handled,
                lo.queue,
                per_cpu(&lo),
                peak.max(hi.queue)
            ),
            format!("mailbox {}", self.select(pid)),
        ))
    }

    /// `--name NAME` of a process the trace names, else `--pid PID`.
    fn select(&self, pid: &[u8]) -> String {
        match self.names.get(pid) {
            Some(name) => format!("--name {name}"),
            None => format!("--pid {}", String::from_utf8_lossy(split_qualified(pid).0)),
        }
    }
}

impl Analysis for Findings {
    fn needs_fields(&self, kind: Kind) -> bool {
        self.mailbox.needs_fields(kind)
            || self.memory.needs_fields(kind)
            || self.calls.needs_fields(kind)
            || matches!(
                kind,
                Kind::ProcessScheduled
                    | Kind::StackSample
                    | Kind::GcMinorStart
                    | Kind::GcMinorEnd
                    | Kind::GcMajorStart
                    | Kind::GcMajorEnd
                    | Kind::FunctionException
                    | Kind::UserTraceS1
                    | Kind::ProcessSpawn
                    | Kind::ProcessExit
            )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn reads_message_kinds(&self) -> bool {
        self.mailbox.reads_message_kinds()
    }
    fn keeps_calls(&self) -> bool {
        self.calls.keeps_calls()
    }

    fn on_event(&mut self, ev: &Event, who: &Identity) {
        let Some(kind) = ev.kind() else {
            return;
        };
        self.kinds[kind as usize] += 1;
        self.first_ns = self.first_ns.min(ev.ts_ns);
        self.last_ns = self.last_ns.max(ev.ts_ns);
        match kind {
            Kind::MessageSend | Kind::MessageReceive => {
                let start = *self.window_start.get_or_insert(ev.ts_ns);
                if ev.ts_ns >= start.saturating_add(WINDOW_NS) {
                    self.roll(false);
                    self.window_start = Some(start + (ev.ts_ns - start) / WINDOW_NS * WINDOW_NS);
                }
                self.calls.on_event(ev, who);
                self.mailbox.on_event(ev, who);
            }
            Kind::ProcessScheduled => {
                let id = self.mailbox.pid_id(ev.str(Slot::Pid));
                let scheduled_in = ev.scheduled_in();
                self.mailbox.scheduled(ev, Some(id), scheduled_in);
                self.scheduled(ev, id, scheduled_in);
            }
            Kind::ProcessMemory => {
                self.mailbox.on_event(ev, who);
                self.memory.on_event(ev, who);
            }
            Kind::StackSample => self.sampled(ev),
            Kind::GcMinorStart | Kind::GcMajorStart => self.collection(ev, false),
            Kind::GcMinorEnd | Kind::GcMajorEnd => self.collection(ev, true),
            Kind::FunctionException => self.exception(ev),
            Kind::ProcessSpawn => self.spawned(ev),
            Kind::ProcessExit => self.exited(ev),
            Kind::UserTraceS1 => {
                self.mailbox.on_event(ev, who);
                self.mark(ev);
            }
            _ => self.memory.on_event(ev, who),
        }
    }

    fn finish(&mut self, who: &Identity) {
        self.mailbox.finish(who);
        self.memory.finish(who);
        self.settle_in();
        for p in self.cpu.values_mut() {
            p.settle();
        }
        // The last sub-window of `calls` is read, and taken into the whole
        // run's figures, by the last roll; `finish` then finds it empty.
        self.roll(true);
        self.calls.finish(who);
        self.window_start = None;
        self.names.clear();
        for f in self.findings(&Summary::default()) {
            if let Some(pid) = f.pid {
                let (bare, node) = split_qualified(pid.as_bytes());
                if let Some(name) = who.name_of(node, bare) {
                    let name = String::from_utf8_lossy(name).into_owned();
                    self.names.insert(pid.as_bytes().into(), name);
                }
            }
            if let Some(node) = f.node {
                if let Some(name) = who.node_name(node) {
                    let name = String::from_utf8_lossy(name).into_owned();
                    self.node_names.insert(node, name);
                }
            }
        }
    }

    fn tables(&self, summary: &Summary) -> Vec<Table> {
        let found = self.findings(summary);
        let only_node = match summary.nodes.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        let node_of = |f: &Finding| -> Cell {
            f.node
                .and_then(|n| self.node_names.get(&n).cloned())
                .or_else(|| only_node.clone())
                .map_or(Cell::Null, Cell::Text)
        };
        let pid_cell = |f: &Finding| f.pid.clone().map_or(Cell::Null, Cell::Text);
        let mut json = Table::new(
            "findings",
            "Findings",
            vec![
                col("rank", "#", Unit::Count),
                col("kind", "kind", Unit::Text),
                col("node", "node", Unit::Text),
                col("process", "process", Unit::Pid),
                col("claim", "claim", Unit::Text),
                col("figures", "figures", Unit::Text),
                col("see", "see", Unit::Text),
            ],
        );
        json.shown = Shown::JsonOnly;
        let mut lines = Table::new(
            "findings_text",
            "Findings (the likeliest share of the symptom first; docs/findings.md)",
            vec![
                col("rank", "#", Unit::Count),
                col("process", "process", Unit::Pid),
                col("finding", "finding", Unit::Text),
                col("see", "see", Unit::Text),
            ],
        );
        lines.shown = Shown::TextOnly;
        for (i, f) in found.iter().enumerate() {
            let rank = Cell::Num(i as u64 + 1);
            json.push(
                vec![
                    rank.clone(),
                    Cell::Text(f.kind.into()),
                    node_of(f),
                    pid_cell(f),
                    Cell::Text(f.claim.clone()),
                    Cell::Text(f.figures.clone()),
                    Cell::Text(f.see.clone()),
                ],
                None,
            );
            let mut finding = f.claim.clone();
            let _ = write!(finding, " ({})", f.figures);
            lines.push(
                vec![
                    rank,
                    pid_cell(f),
                    Cell::Text(finding),
                    Cell::Text(format!("see: {}", f.see)),
                ],
                None,
            );
        }
        let mut skipped = Table::new(
            "findings_skipped",
            "Findings not looked for",
            vec![col("reason", "reason", Unit::Text)],
        );
        skipped.shown = Shown::JsonOnly;
        for line in self.skipped() {
            skipped.push(vec![Cell::Text(line.clone())], None);
            lines.notes.push(line);
        }
        if found.is_empty() {
            lines
                .notes
                .insert(0, "nothing found by the rules of docs/findings.md".into());
        }
        let mut tables = vec![lines, json, skipped];
        if self.report {
            // In the registry's order.
            tables.extend(self.calls.tables(summary));
            tables.extend(self.memory.tables(summary));
            tables.extend(self.mailbox.tables(summary));
        }
        tables
    }
}

/// What a server's slow requests cost their callers: their waits added
/// up, and that against the time traced. Several callers waiting at once
/// add up to more than the time traced: that is said as how many waited at
/// once on average, not as a share over 100%.
fn waited(total_ns: u64, load: f64, span_s: f64) -> String {
    if load >= 1.0 {
        format!(
            "callers waited {} in all: {load:.1} waiting at once on average over the {span_s:.1} s traced",
            format_ns(total_ns)
        )
    } else {
        format!(
            "callers waited {} in all ({:.0}% of the {span_s:.1} s traced)",
            format_ns(total_ns),
            load * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    const MS: i64 = 1_000_000;
    const S: i64 = 1_000_000_000;

    fn process_memory(s: &mut Script, ts: i64, pid: &str, mem: i64, bin: i64, q: i64) {
        s.named(
            ts,
            Kind::ProcessMemory,
            &[("pid", pid), ("name", "")],
            &[
                ("memory", mem),
                ("total_heap", mem / 8),
                ("bin_vheap", bin),
                ("message_queue_len", q),
            ],
        );
    }

    /// The findings of `s` over `span` ns, `discarded` events lost.
    fn run(s: &Script, span: i64, discarded: u64) -> (Vec<Finding>, Findings) {
        let mut f = Findings::default();
        let who = s.feed(&mut f);
        f.finish(&who);
        let summary = Summary {
            first_ns: 0,
            last_ns: span,
            discarded,
            ..Summary::default()
        };
        (f.findings(&summary), f)
    }

    /// The rank (1 first) of the finding of `kind` about `pid`.
    fn rank(found: &[Finding], kind: &str, pid: Option<&str>) -> Option<usize> {
        found
            .iter()
            .position(|f| f.kind == kind && f.pid.as_deref() == pid)
            .map(|i| i + 1)
    }

    #[test]
    fn callers_waiting_at_once_are_not_a_share_over_100_percent() {
        assert_eq!(
            waited(353_000_000_000, 353.0 / 17.7, 17.7),
            "callers waited 353 s in all: 19.9 waiting at once on average over the 17.7 s traced"
        );
        assert_eq!(
            waited(135_000_000, 0.135 / 9.9, 9.9),
            "callers waited 135 ms in all (1% of the 9.9 s traced)"
        );
    }

    #[test]
    fn a_growing_queue_outranks_a_large_flat_one_and_names_its_messages() {
        let mut s = Script::default();
        s.snapshot(0, "<0.80.0>", "store");
        let mut q = 0;
        for ms in (0..4000).step_by(2) {
            let t = ms * MS;
            s.ev(t, Kind::MessageReceive, &["<0.80.0>", "{note,1}"]);
            q += 1;
            if ms % 100 == 0 {
                process_memory(&mut s, t, "<0.80.0>", 10_000, 0, q);
                process_memory(&mut s, t, "<0.81.0>", 10_000_000, 0, 200_000);
            }
        }
        let (found, _) = run(&s, 4 * S, 0);
        assert_eq!(
            rank(&found, "growing_queue", Some("<0.80.0>")),
            Some(1),
            "{found:?}"
        );
        assert!(
            found.iter().all(|f| f.pid.as_deref() != Some("<0.81.0>")),
            "{found:?}"
        );
        let f = &found[0];
        assert_eq!(
            f.claim,
            "message queue grows +500/s: note 500/s in, not taken out"
        );
        assert_eq!(f.see, "dyntrace-analyze mailbox --name store");
        assert!(
            f.figures.starts_with("queue 1 at +0.0 s -> 1951 at +3.9 s"),
            "{}",
            f.figures
        );
    }

    #[test]
    fn a_receive_scanning_its_queue_costs_more_per_message_as_it_grows() {
        let mut s = Script::default();
        let mut t = 0;
        for (q, per_msg) in [(10, 10_000), (2000, 100_000), (5000, 400_000)] {
            for _ in 0..5 {
                process_memory(&mut s, t, "<0.7.0>", 1000, 0, q);
                // A steady worker beside it: cheap per message at any queue.
                process_memory(&mut s, t, "<0.8.0>", 1000, 0, 5000);
                for _ in 0..10 {
                    for (pid, cost) in [("<0.7.0>", per_msg), ("<0.8.0>", 10_000)] {
                        s.ev(t, Kind::MessageReceive, &[pid, "{req,1}"]);
                        s.sched(t + 1, pid, "in");
                        s.sched(t + 1 + cost, pid, "out");
                    }
                    t += 2 * MS;
                }
                t += 100 * MS;
            }
        }
        process_memory(&mut s, t, "<0.7.0>", 1000, 0, 5000);
        let (found, _) = run(&s, t, 0);
        let r = rank(&found, "receive_scans_queue", Some("<0.7.0>"));
        assert_eq!(r, Some(1), "{found:?}");
        assert!(found[0]
            .claim
            .contains("10.0 us at queue 8+ -> 400 us at queue 4096+ (40x)"));
        assert_eq!(rank(&found, "receive_scans_queue", Some("<0.8.0>")), None);
    }

    /// Triage's counted windows: a scanner spends about its queue's
    /// length in reductions per message handled, more as the queue grows;
    /// a worker that spends 3000 per message whatever its queue (1000 to
    /// 1500) is no scanning receive.
    #[test]
    fn a_receive_scanning_its_queue_spends_its_length_in_reductions_per_message() {
        let mut s = Script::default();
        let mut t = 0;
        let mut reductions = [0i64, 0];
        for (w, q) in [(0i64, 0i64), (1, 8000), (2, 20000), (3, 36000)] {
            for (i, pid) in ["<0.7.0>", "<0.8.0>"].into_iter().enumerate() {
                let q0 = match i {
                    0 => q,
                    _ => 1000 + 150 * w,
                };
                s.ev(
                    t,
                    Kind::UserTraceS1,
                    &[pid, "dyntrace_focus start reductions=1"],
                );
                let mark = |what: &str, q: i64, r: i64| {
                    format!("dyntrace_focus {what} queue={q} reductions={r}")
                };
                s.ev(
                    t + 1,
                    Kind::UserTraceS1,
                    &[pid, &mark("count_from", q0, reductions[i])],
                );
                // 700 junk messages queued, 40 requests taken out.
                for m in 0..740 {
                    let msg = match m % 18 {
                        0 => "{req,1}",
                        _ => "{junk,1}",
                    };
                    s.ev(t + 2 + m, Kind::MessageReceive, &[pid, msg]);
                }
                let handled = 740 - 700;
                reductions[i] += handled
                    * match i {
                        0 => q + 10,
                        _ => 3000,
                    };
                s.ev(
                    t + 5000,
                    Kind::UserTraceS1,
                    &[pid, &mark("count_to", q0 + 700, reductions[i])],
                );
                s.ev(t + 5001, Kind::UserTraceS1, &[pid, "dyntrace_focus end"]);
            }
            t += 2 * S;
        }
        let (found, _) = run(&s, t, 0);
        let r = rank(&found, "receive_scans_queue", Some("<0.7.0>"));
        assert!(r.is_some(), "{found:?}");
        let f = &found[r.unwrap() - 1];
        assert!(
            f.claim
                .contains("36010 reductions per message handled at queue 36350, 10 at queue 350"),
            "{}",
            f.claim
        );
        assert_eq!(rank(&found, "receive_scans_queue", Some("<0.8.0>")), None);
    }

    #[test]
    fn a_busy_process_is_a_hog_and_a_periodic_burst_is_not() {
        let mut s = Script::default();
        for ms in 0..4000 {
            let t = ms * MS;
            // Busy: on a scheduler 900 us of every ms.
            s.sched(t, "<0.5.0>", "in");
            s.ev(
                t + 900_000,
                Kind::ProcessScheduled,
                &["<0.5.0>", "m:spin/1", "out"],
            );
            // A burst of 200 ms every second.
            if ms % 1000 < 200 {
                s.sched(t + 900_000, "<0.6.0>", "in");
                s.sched(t + 999_000, "<0.6.0>", "out");
            }
        }
        let (found, _) = run(&s, 4 * S, 0);
        assert_eq!(
            rank(&found, "scheduler_hog", Some("<0.5.0>")),
            Some(1),
            "{found:?}"
        );
        assert!(
            found[0]
                .claim
                .starts_with("on a scheduler 90% of the time traced, mostly in m:spin/1 (100%)"),
            "{}",
            found[0].claim
        );
        assert_eq!(rank(&found, "scheduler_hog", Some("<0.6.0>")), None);
    }

    #[test]
    fn hogs_on_two_schedulers_at_once_get_their_own_time_and_functions() {
        let mut s = Script::default();
        for ms in 0..4000 {
            let t = ms * MS;
            // Each 700 us of every ms, the second scheduled in before the
            // first is out; the first ends one slice in four elsewhere.
            let f = if ms % 4 == 3 { "m:calc/2" } else { "m:spin/1" };
            s.sched(t, "<0.5.0>", "in");
            s.sched(t + 100_000, "<0.6.0>", "in");
            s.ev(t + 700_000, Kind::ProcessScheduled, &["<0.5.0>", f, "out"]);
            s.ev(
                t + 800_000,
                Kind::ProcessScheduled,
                &["<0.6.0>", "m:b/1", "out"],
            );
        }
        let (found, _) = run(&s, 4 * S, 0);
        for (pid, top) in [("<0.5.0>", "m:spin/1 (75%)"), ("<0.6.0>", "m:b/1 (100%)")] {
            let r = rank(&found, "scheduler_hog", Some(pid));
            let f = &found[r.expect("a hog") - 1];
            assert_eq!(
                f.claim,
                format!("on a scheduler 70% of the time traced, mostly in {top}")
            );
            assert!(f.figures.contains(" in 4000 slices "), "{}", f.figures);
        }
    }

    /// gen_server calls: `n` calls of `request` to `server` from caller
    /// `caller`, one every `every` ns from `start`, each `latency(i)` long.
    #[allow(clippy::too_many_arguments)]
    fn calls(
        s: &mut Script,
        server: &str,
        caller: &str,
        request: &str,
        start: i64,
        every: i64,
        n: i64,
        latency: impl Fn(i64) -> i64,
    ) {
        for i in 0..n {
            let t = start + i * every;
            let r = format!("#Ref<0.1.{}.{i}>", server.len());
            let call = format!("{{'$gen_call',{{{caller},[alias|{r}]}},{{{request},{i}}}}}");
            s.ev(t, Kind::MessageSend, &[caller, server, &call]);
            s.ev(t + 1, Kind::MessageReceive, &[server, &call]);
            let reply = format!("{{[alias|{r}],ok}}");
            let done = t + latency(i);
            s.ev(done - 1, Kind::MessageSend, &[server, &r, &reply]);
            s.ev(done, Kind::MessageReceive, &[caller, &reply]);
        }
    }

    /// A server traced only in triage's windows: 150 ms every 4 s, in
    /// either phase (from +0.1 s or from +2.1 s) of a 10 s trace. Its
    /// latency grows 1.5 ms + 0.35 ms a second: 1.6x from +2.1 s to
    /// +6.1 s, 2.9x from +0.1 s to +8.1 s; the line through its windows
    /// says ~3x over the trace either way. Beside it a steady server,
    /// 3 ms give or take 10%, in the same windows, is no finding.
    #[test]
    fn latency_grows_whichever_windows_triage_traced_the_server_in() {
        for starts in [&[100, 4100, 8100][..], &[2100, 6100][..]] {
            let mut s = Script::default();
            s.ev(0, Kind::UserTraceS1, &["<0.9.0>", "dyntrace_focus start"]);
            for &ms in starts {
                let t0 = ms * MS;
                let grown = move |_: i64| 1_500_000 + ms * 350;
                calls(
                    &mut s,
                    "<0.50.0>",
                    "<0.60.0>",
                    "ask",
                    t0,
                    10 * MS,
                    14,
                    grown,
                );
                let noisy = move |i: i64| 3 * MS + ((i + ms / 100) % 3 - 1) * 300_000;
                calls(
                    &mut s,
                    "<0.51.0>",
                    "<0.61.0>",
                    "nap",
                    t0 + 1,
                    10 * MS,
                    14,
                    noisy,
                );
            }
            s.ev(
                10 * S,
                Kind::UserTraceS1,
                &["<0.9.0>", "dyntrace_focus end"],
            );
            let (found, _) = run(&s, 10 * S, 0);
            assert_eq!(
                rank(&found, "growing_latency", Some("<0.50.0>")),
                Some(1),
                "{found:?}"
            );
            assert_eq!(
                rank(&found, "growing_latency", Some("<0.51.0>")),
                None,
                "{found:?}"
            );
            assert!(
                found[0].figures.contains("over the 10.0 s traced (3."),
                "{}",
                found[0].figures
            );
        }
    }

    /// On a loaded host a triage window of 150 ms holds 3 calls: windows
    /// add up until they have 5, one point of latency each.
    #[test]
    fn latency_grows_from_windows_of_few_calls() {
        let mut s = Script::default();
        s.ev(0, Kind::UserTraceS1, &["<0.9.0>", "dyntrace_focus start"]);
        for w in 0..10i64 {
            let t0 = w * S + 100 * MS;
            let grown = move |_: i64| 2 * MS + w * 2 * MS;
            calls(
                &mut s,
                "<0.50.0>",
                "<0.60.0>",
                "lookup",
                t0,
                50 * MS,
                3,
                grown,
            );
        }
        s.ev(
            10 * S,
            Kind::UserTraceS1,
            &["<0.9.0>", "dyntrace_focus end"],
        );
        let (found, _) = run(&s, 10 * S, 0);
        assert_eq!(
            rank(&found, "growing_latency", Some("<0.50.0>")),
            Some(1),
            "{found:?}"
        );
        assert!(
            found[0].figures.contains("(6 calls)"),
            "{}",
            found[0].figures
        );
    }

    /// Triage traces no calls, but every process's spawn and exit: 3000
    /// workers of `<0.5.0>` crash within half a second; `<0.6.0>`'s
    /// crash twice a second; thousands exit `normal`.
    #[test]
    fn processes_crashing_in_a_burst_are_a_burst_of_exceptions() {
        let mut s = Script::default();
        for i in 0..3000i64 {
            let (pid, t) = (format!("<0.{}.0>", 1000 + i), 2 * S + i * 150_000);
            s.ev(t, Kind::ProcessSpawn, &[&pid, "<0.5.0>", "m:work/1"]);
            s.ev(
                t + 1,
                Kind::ProcessExit,
                &[&pid, &format!("{{planted,{i}}}")],
            );
        }
        for i in 0..20i64 {
            let (pid, t) = (format!("<0.{}.0>", 5000 + i), i * 500 * MS);
            s.ev(t, Kind::ProcessSpawn, &[&pid, "<0.6.0>", "m:grumble/1"]);
            s.ev(
                t + 1,
                Kind::ProcessExit,
                &[&pid, &format!("{{grumpy,{i}}}")],
            );
        }
        for i in 0..5000i64 {
            s.ev(
                3 * S + i * 1000,
                Kind::ProcessExit,
                &[&format!("<0.{}.0>", 9000 + i), "normal"],
            );
        }
        let (found, f) = run(&s, 10 * S, 0);
        assert_eq!(
            rank(&found, "exception_burst", Some("<0.5.0>")),
            Some(1),
            "{found:?}"
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].claim,
            "burst of 3000 processes crashing (planted, such as {planted,0}) in one second, spawned by this one"
        );
        assert!(f
            .skipped()
            .iter()
            .any(|l| l.contains("bursts of caught exceptions not looked for")));
    }

    #[test]
    fn slow_frequent_requests_outrank_a_slow_rare_call() {
        let mut s = Script::default();
        calls(
            &mut s,
            "<0.50.0>",
            "<0.60.0>",
            "buy",
            0,
            25 * MS,
            160,
            |_| 15 * MS,
        );
        calls(
            &mut s,
            "<0.51.0>",
            "<0.61.0>",
            "audit",
            100 * MS,
            S,
            3,
            |_| 200 * MS,
        );
        for i in 0..160 {
            let t = i * 25 * MS;
            s.sched(t + 2, "<0.50.0>", "in");
            s.ev(
                t + 14 * MS,
                Kind::ProcessScheduled,
                &["<0.50.0>", "shop:price/1", "out"],
            );
        }
        let (found, _) = run(&s, 4 * S, 0);
        let buy = rank(&found, "slow_requests", Some("<0.50.0>")).expect("buy");
        let audit = rank(&found, "slow_requests", Some("<0.51.0>")).unwrap_or(usize::MAX);
        assert!(buy < audit && buy <= 3, "{found:?}");
        let f = &found[buy - 1];
        assert!(f.claim.starts_with("slow buy requests: p99 up to 15.0 ms over 160 calls; the server's time goes to shop:price/1 (100%)"), "{}", f.claim);
    }

    #[test]
    fn latency_that_grows_outranks_latency_that_is_steady() {
        let mut s = Script::default();
        calls(
            &mut s,
            "<0.50.0>",
            "<0.60.0>",
            "lookup",
            0,
            20 * MS,
            200,
            |i| (i + 1) * 50_000,
        );
        calls(
            &mut s,
            "<0.51.0>",
            "<0.61.0>",
            "steady",
            0,
            20 * MS,
            200,
            |_| 5 * MS,
        );
        let (found, _) = run(&s, 4 * S, 0);
        assert_eq!(
            rank(&found, "growing_latency", Some("<0.50.0>")),
            Some(1),
            "{found:?}"
        );
        assert_eq!(rank(&found, "growing_latency", Some("<0.51.0>")), None);
        assert!(
            found[0]
                .claim
                .starts_with("lookup latency grows: p50 1.25 ms -> 8.78 ms"),
            "{}",
            found[0].claim
        );
    }

    #[test]
    fn a_heap_that_grows_is_found_and_a_large_flat_one_is_not() {
        let mut s = Script::default();
        for i in 0..40i64 {
            let t = i * 100 * MS;
            for (pid, heap) in [("<0.9.0>", 50_000 + i * 20_000), ("<0.10.0>", 5_000_000)] {
                s.ev_int(t, Kind::GcMajorStart, pid, &[0, heap, 0]);
                s.ev_int(t + 100_000, Kind::GcMajorEnd, pid, &[0, heap, 0]);
            }
        }
        let (found, _) = run(&s, 4 * S, 0);
        assert_eq!(
            rank(&found, "growing_heap", Some("<0.9.0>")),
            Some(1),
            "{found:?}"
        );
        assert!(
            found.iter().all(|f| f.pid.as_deref() != Some("<0.10.0>")),
            "{found:?}"
        );
    }

    #[test]
    fn gc_pauses_of_a_large_share_are_found() {
        let mut s = Script::default();
        for i in 0..10i64 {
            let t = i * 100 * MS;
            s.ev_int(t, Kind::GcMajorStart, "<0.9.0>", &[0, 1000, 0]);
            s.ev_int(t + 10 * MS, Kind::GcMajorEnd, "<0.9.0>", &[0, 1000, 0]);
        }
        let (found, _) = run(&s, S, 0);
        assert_eq!(
            rank(&found, "gc_pauses", Some("<0.9.0>")),
            Some(1),
            "{found:?}"
        );
    }

    #[test]
    fn growing_binaries_are_found_and_flat_ones_are_not() {
        let mut s = Script::default();
        for i in 0..40i64 {
            let t = i * 100 * MS;
            process_memory(&mut s, t, "<0.20.0>", 10_000, i * 1_000_000, 0);
            process_memory(&mut s, t, "<0.21.0>", 10_000, 50_000_000, 0);
        }
        let (found, _) = run(&s, 4 * S, 0);
        assert_eq!(
            rank(&found, "growing_memory", Some("<0.20.0>")),
            Some(1),
            "{found:?}"
        );
        assert!(
            found[0].claim.starts_with("process binary heap grows"),
            "{}",
            found[0].claim
        );
        assert!(
            found.iter().all(|f| f.pid.as_deref() != Some("<0.21.0>")),
            "{found:?}"
        );
    }

    #[test]
    fn a_burst_of_exceptions_is_found_and_steady_ones_are_not() {
        let mut s = Script::default();
        // Across a second's boundary: whole in the half-second alignment.
        for i in 0..2000 {
            s.exception(S - 100 * MS + i * 100_000, "<0.30.0>", "m:fail/1");
        }
        for i in 0..8 {
            s.exception(i * 500 * MS, "<0.31.0>", "m:grumble/1");
        }
        let (found, _) = run(&s, 4 * S, 0);
        assert_eq!(
            rank(&found, "exception_burst", Some("<0.30.0>")),
            Some(1),
            "{found:?}"
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0]
            .claim
            .contains("2000 exceptions (error) in one second in m:fail/1"));
    }

    #[test]
    fn lost_events_come_first_and_missing_events_are_said() {
        let mut s = Script::default();
        s.exception(0, "<0.30.0>", "m:fail/1");
        let (found, f) = run(&s, S, 12);
        assert_eq!(found[0].kind, "lost_events");
        assert!(found[0].claim.starts_with("LTTng discarded 12 events"));
        let skipped = f.skipped();
        assert!(skipped.contains(&"no scheduling events: CPU findings skipped".to_string()));
        assert!(
            !skipped.iter().any(|l| l.contains("exception")),
            "{skipped:?}"
        );
        let tables = f.tables(&Summary::default());
        let json = tables.iter().find(|t| t.key == "findings").unwrap();
        let keys: Vec<&str> = json.columns.iter().map(|c| c.key).collect();
        assert_eq!(
            keys,
            ["rank", "kind", "node", "process", "claim", "figures", "see"]
        );
    }
}
