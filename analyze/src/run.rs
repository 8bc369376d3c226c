//! The event loop: reads the source once, puts live events back in
//! timestamp order, keeps the events inside the time window and selection,
//! and feeds them to every analysis; with `--window`, to a fresh set of
//! analyses per window of trace time.

use std::collections::{BinaryHeap, HashMap};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::analysis::Analysis;
use crate::event::{Event, EventClass, Field, Slot, PROVIDER};
use crate::reader::{Reader, Source, Step};
use crate::table::{windowed, Summary, Table};

/// How far (in trace time) a live reader may deliver one host's events
/// behind another's: twice LTTng's default live timer.
pub const LIVE_REORDER_NS: u64 = 2_000_000_000;
/// Events held back at most, live, whatever the window.
pub const MAX_HELD: usize = 1 << 18;

/// Which events the analyses see.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Skip events earlier than this long after the first event.
    pub from_ns: Option<u64>,
    /// Stop at events later than this long after the first event.
    pub to_ns: Option<u64>,
    /// Keep only events naming one of these processes (in `pid`, `from`,
    /// `to` or `parent`); empty keeps all.
    pub pids: Vec<Vec<u8>>,
}

impl Filter {
    fn keeps_pids(&self, ev: &Event) -> bool {
        self.pids.is_empty()
            || [Slot::Pid, Slot::From, Slot::To, Slot::Parent]
                .iter()
                .any(|&s| self.pids.iter().any(|p| p[..] == *ev.str(s)))
    }
}

/// Builds a fresh set of analyses (once, and once per `--window`).
pub type Make<'a> = &'a dyn Fn() -> Result<Vec<Box<dyn Analysis>>, String>;

/// Called between graph runs in live mode with the results so far.
pub type Tick<'a> = &'a mut dyn FnMut(&Summary, &[Table]);

/// What a run leaves: the summary, the tables (per window with
/// `--window`) and the analyses of the whole run (or of the last window).
pub struct Outcome {
    /// What every output says about the input.
    pub summary: Summary,
    /// The results.
    pub tables: Vec<Table>,
    /// The analyses, for what the report draws beyond tables.
    pub analyses: Vec<Box<dyn Analysis>>,
}

/// Analyses per window of trace time.
struct Windows {
    width_ns: i64,
    /// Start of the current window (ns from origin); None before the first
    /// event.
    start: Option<i64>,
    /// Events in the current window.
    events: u64,
    closed: Vec<(i64, Vec<Table>)>,
}

struct Feed<'f> {
    filter: &'f Filter,
    make: Make<'f>,
    analyses: Vec<Box<dyn Analysis>>,
    windows: Option<Windows>,
    summary: Summary,
    first: Option<i64>,
    ours_seen: u64,
    past_window: bool,
    progress: Option<ProgressBar>,
    failed: Option<String>,
}

impl Feed<'_> {
    fn on_event(&mut self, ev: &Event) {
        if ev.kind().is_none() || self.past_window {
            return;
        }
        self.ours_seen += 1;
        if self.ours_seen & 0xffff == 0 {
            if let Some(p) = &self.progress {
                p.set_position(self.ours_seen);
            }
        }
        let start = *self.first.get_or_insert(ev.ts_ns);
        let offset = ev.ts_ns.saturating_sub(start).max(0) as u64;
        if self.filter.from_ns.is_some_and(|f| offset < f) || !self.filter.keeps_pids(ev) {
            return;
        }
        if self.filter.to_ns.is_some_and(|t| offset > t) {
            self.past_window = true;
            return;
        }
        if self.summary.events == 0 {
            self.summary.first_ns = ev.ts_ns;
        }
        self.summary.events += 1;
        self.summary.last_ns = ev.ts_ns;
        self.next_window(ev.ts_ns);
        for a in self.analyses.iter_mut() {
            a.on_event(ev);
        }
    }

    /// With `--window`: closes the windows that end before `ts`.
    fn next_window(&mut self, ts: i64) {
        let Some(w) = self.windows.as_mut() else {
            return;
        };
        let start = *w.start.get_or_insert(ts);
        if ts < start.saturating_add(w.width_ns) {
            w.events += 1;
            return;
        }
        for a in self.analyses.iter_mut() {
            a.finish();
        }
        let tables = self
            .analyses
            .iter()
            .flat_map(|a| a.tables(&self.summary))
            .collect();
        w.closed.push((start, tables));
        w.start = Some(start + (ts - start) / w.width_ns * w.width_ns);
        w.events = 1;
        match (self.make)() {
            Ok(fresh) => self.analyses = fresh,
            Err(e) => {
                self.failed.get_or_insert(e);
                self.past_window = true;
            }
        }
    }

    fn tables(&self) -> Vec<Table> {
        let now = || -> Vec<Table> {
            self.analyses
                .iter()
                .flat_map(|a| a.tables(&self.summary))
                .collect()
        };
        let Some(w) = &self.windows else {
            return now();
        };
        let mut parts: Vec<(i64, Vec<Table>)> = w.closed.clone();
        if let (Some(start), true) = (w.start, w.events > 0) {
            parts.push((start, now()));
        }
        windowed(&parts, w.width_ns as u64, self.summary.first_ns)
    }
}

/// Reads `source` to its end (or, live, until the relay ends the session),
/// feeding the analyses `make` builds (a fresh set per `window_ns` of trace
/// time when given). `every` calls its tick at that period (live mode).
pub fn run(
    source: &Source,
    filter: &Filter,
    make: Make,
    window_ns: Option<u64>,
    mut every: Option<(Duration, Tick)>,
) -> Result<Outcome, String> {
    let mut reader = Reader::open(source)?;
    let live = matches!(source, Source::Live(_));
    let mut classes: Vec<EventClass> = Vec::new();
    let mut feed = Feed {
        filter,
        make,
        analyses: make()?,
        windows: window_ns.map(|w| Windows {
            width_ns: i64::try_from(w.max(1)).unwrap_or(i64::MAX),
            start: None,
            events: 0,
            closed: Vec::new(),
        }),
        summary: Summary {
            damaged: reader.damaged().to_vec(),
            ..Summary::default()
        },
        first: None,
        ours_seen: 0,
        past_window: false,
        progress: progress_bar(),
        failed: None,
    };
    let mut reorder = live.then(|| Reorder::new(LIVE_REORDER_NS));
    let mut last_tick = Instant::now();
    loop {
        let step = reader.step(&mut classes, &mut |ev| match reorder.as_mut() {
            Some(r) => r.push(ev, &mut |ev| feed.on_event(ev)),
            None => feed.on_event(ev),
        })?;
        let d = reader.discarded();
        feed.summary.discarded = d.events;
        feed.summary.discarded_reports_without_count = d.reports_without_count;
        if let Some(r) = reorder.as_mut() {
            if step != Step::Progress {
                r.advance_to(wall_clock_ns(), &mut |ev| feed.on_event(ev));
            }
        }
        if let Some((period, tick)) = every.as_mut() {
            if last_tick.elapsed() >= *period {
                last_tick = Instant::now();
                if let Some(r) = reorder.as_mut() {
                    r.advance_to(wall_clock_ns(), &mut |ev| feed.on_event(ev));
                }
                tick(&feed.summary, &feed.tables());
            }
        }
        match step {
            Step::Progress => {}
            Step::Again => std::thread::sleep(Duration::from_millis(50)),
            Step::End => break,
        }
        if feed.past_window && !live {
            break;
        }
    }
    if let Some(r) = reorder.as_mut() {
        r.drain(&mut |ev| feed.on_event(ev));
    }
    if let Some(p) = &feed.progress {
        p.finish_and_clear();
    }
    if let Some(e) = feed.failed.take() {
        return Err(e);
    }
    for a in feed.analyses.iter_mut() {
        a.finish();
    }
    if feed.ours_seen == 0 {
        if let Source::Traces(dirs) = source {
            let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(format!(
                "{}: no {PROVIDER} events in the trace",
                names.join(", ")
            ));
        }
    }
    let tables = feed.tables();
    Ok(Outcome {
        summary: feed.summary,
        tables,
        analyses: feed.analyses,
    })
}

/// The wall clock in ns from the Unix epoch, as LTTng's timestamps.
fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

fn progress_bar() -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {human_pos} events read ({per_sec})").ok()?,
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// An owned copy of an event, held back for reordering.
struct Held {
    ts: i64,
    seq: u64,
    cpu: i64,
    trace: u32,
    class: usize,
    fields: Vec<OwnedField>,
}

enum OwnedField {
    Str(Box<[u8]>),
    Int(i64),
    Other,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.ts, self.seq) == (other.ts, other.seq)
    }
}

impl Eq for Held {}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Held {
    // Reversed: BinaryHeap pops the oldest first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.ts, other.seq).cmp(&(self.ts, self.seq))
    }
}

/// Live, each host's events may be read a little apart from the others':
/// events are held back for a window of trace time and handed on in
/// timestamp order, and the wall clock lets them go when nothing more is
/// read.
pub struct Reorder {
    window_ns: i64,
    held: BinaryHeap<Held>,
    seq: u64,
    newest_ns: i64,
    classes: Vec<EventClass>,
    class_ids: HashMap<String, usize>,
}

impl Reorder {
    /// Holds events back for `window_ns` of trace time.
    pub fn new(window_ns: u64) -> Reorder {
        Reorder {
            window_ns: i64::try_from(window_ns).unwrap_or(i64::MAX),
            held: BinaryHeap::new(),
            seq: 0,
            newest_ns: i64::MIN,
            classes: Vec::new(),
            class_ids: HashMap::new(),
        }
    }

    /// Takes `ev`, and hands on the events older than the window.
    pub fn push(&mut self, ev: &Event, sink: &mut dyn FnMut(&Event)) {
        let class = match self.class_ids.get(&ev.class.name) {
            Some(&i) => i,
            None => {
                self.classes.push(ev.class.clone());
                self.class_ids
                    .insert(ev.class.name.clone(), self.classes.len() - 1);
                self.classes.len() - 1
            }
        };
        self.seq += 1;
        self.held.push(Held {
            ts: ev.ts_ns,
            seq: self.seq,
            cpu: ev.cpu,
            trace: ev.trace,
            class,
            fields: ev
                .fields
                .iter()
                .map(|f| match f {
                    Field::Str(s) => OwnedField::Str((*s).into()),
                    Field::Int(i) => OwnedField::Int(*i),
                    Field::Other => OwnedField::Other,
                })
                .collect(),
        });
        self.release(ev.ts_ns, sink);
    }

    /// Live, between reads: the wall clock reads `now_ns`. A live reader
    /// gets events a live-timer period or so after they happen: no event
    /// older than the window is due before another window has passed.
    pub fn advance_to(&mut self, now_ns: i64, sink: &mut dyn FnMut(&Event)) {
        self.release(now_ns.saturating_sub(self.window_ns), sink);
    }

    /// The input has ended: hands on everything held.
    pub fn drain(&mut self, sink: &mut dyn FnMut(&Event)) {
        while let Some(h) = self.held.pop() {
            self.hand_on(&h, sink);
        }
    }

    fn release(&mut self, now_ns: i64, sink: &mut dyn FnMut(&Event)) {
        self.newest_ns = self.newest_ns.max(now_ns);
        while let Some(oldest) = self.held.peek() {
            if oldest.ts > self.newest_ns.saturating_sub(self.window_ns)
                && self.held.len() <= MAX_HELD
            {
                break;
            }
            let h = self.held.pop().expect("peeked");
            self.hand_on(&h, sink);
        }
    }

    fn hand_on(&self, h: &Held, sink: &mut dyn FnMut(&Event)) {
        let fields: Vec<Field> = h
            .fields
            .iter()
            .map(|f| match f {
                OwnedField::Str(s) => Field::Str(s),
                OwnedField::Int(i) => Field::Int(*i),
                OwnedField::Other => Field::Other,
            })
            .collect();
        sink(&Event {
            class: &self.classes[h.class],
            ts_ns: h.ts,
            cpu: h.cpu,
            trace: h.trace,
            fields: &fields,
        });
    }
}

/// An analysis read through a [`Reorder`] (the run loop's live path, for
/// the analyses' tests).
pub struct Reordered<A: Analysis> {
    /// The analysis fed in timestamp order.
    pub inner: A,
    reorder: Reorder,
}

impl<A: Analysis> Reordered<A> {
    /// `inner` behind a reordering window of `window_ns`.
    pub fn new(inner: A, window_ns: u64) -> Reordered<A> {
        Reordered {
            inner,
            reorder: Reorder::new(window_ns),
        }
    }

    /// See [`Reorder::advance_to`].
    pub fn advance_to(&mut self, now_ns: i64) {
        let inner = &mut self.inner;
        self.reorder
            .advance_to(now_ns, &mut |ev| inner.on_event(ev));
    }
}

impl<A: Analysis> Analysis for Reordered<A> {
    fn on_event(&mut self, ev: &Event) {
        let inner = &mut self.inner;
        self.reorder.push(ev, &mut |ev| inner.on_event(ev));
    }

    fn finish(&mut self) {
        let inner = &mut self.inner;
        self.reorder.drain(&mut |ev| inner.on_event(ev));
        self.inner.finish();
    }

    fn tables(&self, summary: &Summary) -> Vec<Table> {
        self.inner.tables(summary)
    }
}
