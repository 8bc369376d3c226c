//! The event loop: reads the source once, puts live events back in
//! timestamp order, keeps the events inside the time window and selection,
//! and feeds them to every analysis; with `--window`, to a fresh set of
//! analyses per window of trace time.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::analysis::{Analysis, Make};
use crate::engine::identity::{is_identity_row, Identity};
use crate::engine::names::Named;
use crate::engine::reorder::{Reorder, LIVE_REORDER_NS};
use crate::engine::select::{Filter, SelectedCalls};
use crate::engine::summary::Summary;
use crate::engine::windows::{roll, windowed, Trend, Windows};
use crate::input::reader::{Reader, Source};
use crate::input::step::Step;
use crate::model::event::{Counted, Event, EventClass, Kind, Wanted, PROVIDER};
use crate::model::table::Table;

/// Called between graph runs in live mode with the results so far.
pub type Tick<'a> = &'a mut dyn FnMut(&Summary, &[Table]);

/// What a run leaves: the summary, the tables (per window with
/// `--window`) and the analyses of the whole run (or of the last window).
pub struct Outcome<A: ?Sized = dyn Analysis> {
    /// What every output says about the input.
    pub summary: Summary,
    /// The results.
    pub tables: Vec<Table>,
    /// The analyses, for what the report draws beyond tables.
    pub analyses: Vec<Box<A>>,
    /// Who is who, as the whole run learnt it.
    pub who: Identity,
    /// With [`run_with_trend`]: each window's tables (their first
    /// [`TREND_ROWS`](crate::engine::windows::TREND_ROWS) rows, without histograms), oldest first.
    pub trend: Vec<(i64, Vec<Table>)>,
}

struct Feed<'f, A: ?Sized> {
    filter: &'f Filter,
    make: Make<'f, A>,
    analyses: Vec<Box<A>>,
    windows: Option<Windows>,
    trend: Option<Trend<A>>,
    /// Events kept, per kind.
    kinds: [u64; Kind::ALL.len()],
    who: Identity,
    wanted: Wanted,
    calls: SelectedCalls,
    /// With `--name` over traces: the processes that ever carried a
    /// selected name (a first pass).
    named: Option<Named>,
    summary: Summary,
    /// The first event recorded (not an identity row): `--from`/`--to`
    /// count from it.
    origin: Option<i64>,
    bounds: (Option<i64>, Option<i64>),
    /// Events of the selection (identity rows aside).
    matched: u64,
    ours_seen: u64,
    past_window: bool,
    /// Whether `--from`, `--to` or a process selection may leave events
    /// out (else every event is kept, without looking).
    narrowed: bool,
    /// Whether `--window` or a trend cuts the run into windows.
    windowed: bool,
    progress: Option<ProgressBar>,
    failed: Option<String>,
    scratch: Vec<u8>,
}

impl<A: Analysis + ?Sized> Feed<'_, A> {
    fn on_event(&mut self, ev: &Event) {
        let Some(kind) = ev.kind() else {
            return;
        };
        if self.past_window {
            return;
        }
        self.ours_seen += 1;
        if self.ours_seen & 0xffff == 0 {
            if let Some(p) = &self.progress {
                p.set_position(self.ours_seen);
            }
        }
        let identity_row = is_identity_row(ev);
        // Events whose fields nobody reads come without them: only their
        // time counts (there is no process selection then, see `wanted`).
        let fields = self.wanted.wants(kind);
        let node = match fields {
            true => self.who.node_of(ev),
            false => ev.node,
        };
        if fields {
            self.who.learn(node, ev);
        }
        if !identity_row && self.origin.is_none() {
            self.start_clock(ev.ts_ns);
        }
        let kept = identity_row || !self.narrowed || self.selected(ev, node);
        if kept {
            if !identity_row {
                if self.matched == 0 {
                    self.summary.first_ns = ev.ts_ns;
                }
                self.matched += 1;
                self.summary.last_ns = ev.ts_ns;
                if self.windowed {
                    self.next_window(ev.ts_ns);
                    self.next_trend_window(ev.ts_ns);
                }
            }
            self.summary.events += 1;
            self.kinds[kind as usize] += 1;
            match fields {
                true => self.dispatch(ev, node),
                false => self.dispatch_bare(ev),
            }
        }
        if fields {
            self.who.forget(node, ev);
        }
    }

    fn start_clock(&mut self, ts: i64) {
        self.origin = Some(ts);
        let (from, to) = (
            self.filter.from.map(|f| f.at(ts)),
            self.filter.to.map(|t| t.at(ts)),
        );
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                self.failed.get_or_insert(format!(
                    "--from {} is after --to {} (the first event is at {}): the selection is empty",
                    crate::model::time::format_utc(f),
                    crate::model::time::format_utc(t),
                    crate::model::time::format_utc(ts)
                ));
                self.past_window = true;
            }
        }
        self.bounds = (from, to);
    }

    fn selected(&mut self, ev: &Event, node: u32) -> bool {
        let (from, to) = self.bounds;
        if from.is_some_and(|f| ev.ts_ns < f) {
            return false;
        }
        if to.is_some_and(|t| ev.ts_ns > t) {
            self.past_window = true;
            return false;
        }
        self.filter
            .keeps(ev, node, &self.who, &mut self.named, &mut self.calls)
    }

    fn dispatch(&mut self, ev: &Event, node: u32) {
        let (analyses, who) = (&mut self.analyses, &self.who);
        let Some(trend) = self.trend.as_mut().map(|t| &mut t.analyses) else {
            return who.present(ev, node, &mut self.scratch, &mut |ev| {
                for a in analyses.iter_mut() {
                    a.on_event(ev, who);
                }
            });
        };
        who.present(ev, node, &mut self.scratch, &mut |ev| {
            for a in analyses.iter_mut().chain(trend.iter_mut()) {
                a.on_event(ev, who);
            }
        });
    }

    /// An event whose fields nobody reads: its kind and time, to every
    /// analysis.
    fn dispatch_bare(&mut self, ev: &Event) {
        let trend = self.trend.iter_mut().flat_map(|t| t.analyses.iter_mut());
        for a in self.analyses.iter_mut().chain(trend) {
            a.on_event(ev, &self.who);
        }
    }

    /// Events the reader counted rather than handed on (of kinds no
    /// analysis looks at, without a window or selection): in the summary as
    /// if they had been.
    fn add_counted(&mut self, counted: &Counted) {
        let total = counted.total();
        if total == 0 {
            return;
        }
        for (n, c) in self.kinds.iter_mut().zip(counted.per_kind) {
            *n += c;
        }
        self.summary.first_ns = match self.matched {
            0 => counted.first_ns,
            _ => self.summary.first_ns.min(counted.first_ns),
        };
        self.summary.last_ns = match self.matched {
            0 => counted.last_ns,
            _ => self.summary.last_ns.max(counted.last_ns),
        };
        self.matched += total;
        self.summary.events += total;
        self.ours_seen += total;
    }

    /// What every output says besides the tables: nodes that cannot be
    /// told apart, a selection that matched nothing.
    fn finish_summary(&mut self) {
        self.summary.mixed_nodes = self.who.mixed();
        self.summary.aliases_evicted = self.who.aliases_evicted;
        self.summary.nodes = self.who.node_names();
        self.summary.event_counts = Kind::ALL
            .iter()
            .filter(|k| self.kinds[**k as usize] > 0)
            .map(|k| (k.name(), self.kinds[*k as usize]))
            .collect();
        self.summary.named_later = self.named.as_ref().map_or_else(Vec::new, Named::later);
        self.summary.empty_selection =
            (self.matched == 0 && self.ours_seen > 0 && !self.filter.is_empty())
                .then(|| self.filter.describe());
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
        match roll(&mut self.analyses, self.make, &self.summary, &self.who) {
            Ok(tables) => w.closed.push((start, tables)),
            Err(e) => {
                self.failed.get_or_insert(e);
                self.past_window = true;
            }
        }
        w.start = Some(start + (ts - start) / w.width_ns * w.width_ns);
        w.events = 1;
    }

    /// With a trend: closes its windows that end before `ts`.
    fn next_trend_window(&mut self, ts: i64) {
        let Some(t) = self.trend.as_mut() else {
            return;
        };
        let start = *t.start.get_or_insert(ts);
        if ts < start.saturating_add(t.width_ns) {
            t.events += 1;
            return;
        }
        t.start = Some(start + (ts - start) / t.width_ns * t.width_ns);
        t.events = 1;
        match roll(&mut t.analyses, self.make, &self.summary, &self.who) {
            Ok(tables) => t.keep(start, tables),
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
        let mut tables = match &self.windows {
            None => now(),
            Some(w) => {
                let mut parts: Vec<(i64, Vec<Table>)> = w.closed.clone();
                if let (Some(start), true) = (w.start, w.events > 0) {
                    parts.push((start, now()));
                }
                windowed(&parts, w.width_ns as u64, self.summary.first_ns)
            }
        };
        self.who.annotate(&mut tables);
        tables
    }
}

/// Reads `source` to its end (or, live, until the relay ends the session),
/// feeding the analyses `make` builds (a fresh set per `window_ns` of trace
/// time when given). `every` calls its tick at that period (live mode).
pub fn run<A: Analysis + ?Sized>(
    source: &Source,
    filter: &Filter,
    make: Make<A>,
    window_ns: Option<u64>,
    every: Option<(Duration, Tick)>,
) -> Result<Outcome<A>, String> {
    run_with_trend(source, filter, make, window_ns, every, None)
}

/// [`run`], and with `trend_ns` a second set of analyses per window of
/// that much trace time beside the whole run's: [`Outcome::trend`].
pub fn run_with_trend<A: Analysis + ?Sized>(
    source: &Source,
    filter: &Filter,
    make: Make<A>,
    window_ns: Option<u64>,
    mut every: Option<(Duration, Tick)>,
    trend_ns: Option<u64>,
) -> Result<Outcome<A>, String> {
    let trend = match trend_ns {
        Some(w) => Some(Trend {
            width_ns: i64::try_from(w.max(1)).unwrap_or(i64::MAX),
            analyses: make()?,
            start: None,
            events: 0,
            stride: 1,
            seen: 0,
            closed: Vec::new(),
        }),
        None => None,
    };
    let analyses = make()?;
    let wanted = wanted(
        analyses
            .iter()
            .chain(trend.iter().flat_map(|t| t.analyses.iter())),
        filter,
        window_ns.is_some() || trend.is_some(),
    );
    // A name holds for its process's whole life: read which processes
    // carry the names before the events (a live session is read once).
    let named = match source {
        Source::Traces(_) if !filter.names.is_empty() => Some(Named::scan(source, &filter.names)?),
        _ => None,
    };
    let mut reader = Reader::open(source, wanted)?;
    let live = matches!(source, Source::Live(_));
    let mut classes: Vec<EventClass> = Vec::new();
    let mut feed = Feed {
        filter,
        make,
        analyses,
        wanted,
        windows: window_ns.map(|w| Windows {
            width_ns: i64::try_from(w.max(1)).unwrap_or(i64::MAX),
            start: None,
            events: 0,
            closed: Vec::new(),
        }),
        trend,
        kinds: [0; Kind::ALL.len()],
        who: Identity::default(),
        calls: SelectedCalls::default(),
        named,
        summary: Summary {
            damaged: reader.damaged().to_vec(),
            ..Summary::default()
        },
        origin: None,
        bounds: (None, None),
        matched: 0,
        ours_seen: 0,
        past_window: false,
        narrowed: !filter.is_empty(),
        windowed: window_ns.is_some() || trend_ns.is_some(),
        progress: progress_bar(),
        failed: None,
        scratch: Vec::new(),
    };
    feed.who.one_clock = match source {
        Source::Traces(dirs) => crate::engine::clocks::one_clock(dirs),
        Source::Live(_) => None,
    };
    let trend = feed.trend.iter().flat_map(|t| t.analyses.iter());
    if feed.analyses.iter().chain(trend).any(|a| a.keeps_calls()) {
        feed.who.keep_calls();
    }
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
                feed.finish_summary();
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
    feed.add_counted(&reader.counted(&classes));
    if let Some(p) = &feed.progress {
        p.finish_and_clear();
    }
    if let Some(e) = feed.failed.take() {
        return Err(e);
    }
    for a in feed.analyses.iter_mut() {
        a.finish(&feed.who);
    }
    let mut trend = Vec::new();
    if let Some(mut t) = feed.trend.take() {
        if let (Some(start), true) = (t.start, t.events > 0) {
            for a in t.analyses.iter_mut() {
                a.finish(&feed.who);
            }
            let tables = t.analyses.iter().flat_map(|a| a.tables(&feed.summary));
            t.keep(start, tables.collect());
        }
        for (_, tables) in t.closed.iter_mut() {
            feed.who.annotate(tables);
        }
        trend = t.closed;
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
    feed.finish_summary();
    let tables = feed.tables();
    Ok(Outcome {
        summary: feed.summary,
        tables,
        analyses: feed.analyses,
        who: feed.who,
        trend,
    })
}

/// The kinds whose fields are read: those some analysis reads, the
/// identity layer's own rows, both message kinds when either is read (the
/// layer learns aliases from them), and every kind under a process
/// selection (it looks at every event's processes). The others' events are
/// only counted when no analysis looks at them and nothing needs each
/// one's time (`windows`: `--window` or trends; `--from`/`--to`); the
/// reader hands on every live event itself.
fn wanted<'a, A: Analysis + ?Sized + 'a>(
    analyses: impl Iterator<Item = &'a Box<A>>,
    filter: &Filter,
    windows: bool,
) -> Wanted {
    let analyses: Vec<&Box<A>> = analyses.collect();
    let mut wanted = match filter.selects_processes() {
        true => Wanted::all(),
        false => Wanted::none(),
    };
    if analyses.iter().any(|a| a.reads_message_kinds()) {
        wanted.read_kinds();
    }
    if filter.selects_processes() {
        return wanted;
    }
    let mut others_ignored = !windows && filter.is_empty();
    for a in analyses {
        for &kind in Kind::ALL {
            if a.needs_fields(kind) {
                wanted.add(kind);
            }
        }
        others_ignored &= a.ignores_other_kinds();
    }
    for kind in [Kind::NodeName, Kind::ProcessName, Kind::ProcessRegister] {
        wanted.add(kind);
    }
    if wanted.wants(Kind::MessageSend) || wanted.wants(Kind::MessageReceive) {
        wanted.add(Kind::MessageSend);
        wanted.add(Kind::MessageReceive);
    }
    if others_ignored {
        wanted.count_the_rest();
    }
    wanted
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::select::When;

    /// An analysis that reads the fields of `reads`, and does nothing with
    /// other kinds' events when `only`: what the loop asks of one.
    struct Reads {
        reads: &'static [Kind],
        only: bool,
    }

    impl Analysis for Reads {
        fn on_event(&mut self, _ev: &Event, _who: &Identity) {}
        fn needs_fields(&self, kind: Kind) -> bool {
            self.reads.contains(&kind)
        }
        fn ignores_other_kinds(&self) -> bool {
            self.only
        }
        fn tables(&self, _summary: &Summary) -> Vec<Table> {
            Vec::new()
        }
    }

    /// As `calls` reads: its functions' events only.
    fn functions() -> Box<dyn Analysis> {
        Box::new(Reads {
            reads: &[
                Kind::FunctionCall,
                Kind::FunctionReturn,
                Kind::FunctionException,
                Kind::ProcessExit,
                Kind::CallGuard,
            ],
            only: true,
        })
    }

    /// As `rates` reads: no field, every event's time.
    fn every_time() -> Box<dyn Analysis> {
        Box::new(Reads {
            reads: &[],
            only: false,
        })
    }

    /// Reads one message kind (the loop reads both: the identity layer
    /// learns aliases from either).
    fn receives() -> Box<dyn Analysis> {
        Box::new(Reads {
            reads: &[Kind::MessageReceive],
            only: true,
        })
    }

    /// The reader hands on the fields an analysis reads, the identity
    /// layer's rows, and messages both ways when either is read; every
    /// kind's under a process selection.
    #[test]
    fn only_read_fields_are_wanted() {
        let calls: Vec<Box<dyn Analysis>> = vec![functions()];
        let w = wanted(calls.iter(), &Filter::default(), false);
        assert!(w.wants(Kind::FunctionReturn) && w.wants(Kind::ProcessRegister));
        assert!(!w.wants(Kind::MessageSend) && !w.wants(Kind::ProcessScheduled));
        let rates: Vec<Box<dyn Analysis>> = vec![every_time()];
        assert!(!wanted(rates.iter(), &Filter::default(), false).wants(Kind::FunctionCall));
        let gs: Vec<Box<dyn Analysis>> = vec![receives()];
        let w = wanted(gs.iter(), &Filter::default(), false);
        assert!(w.wants(Kind::MessageReceive) && !w.wants(Kind::FunctionCall));
        let selected = Filter {
            names: vec![b"shop".to_vec()],
            ..Filter::default()
        };
        assert_eq!(wanted(calls.iter(), &selected, false), Wanted::all());
    }

    /// Events no analysis looks at are only counted, unless an analysis
    /// looks at every event (`rates`) or something needs each one's time.
    #[test]
    fn unread_kinds_are_counted_only_when_nothing_needs_them() {
        let calls: Vec<Box<dyn Analysis>> = vec![functions()];
        let w = wanted(calls.iter(), &Filter::default(), false);
        assert!(w.counts(Kind::ProcessScheduled) && w.counts(Kind::MessageSend));
        assert!(!w.counts(Kind::FunctionCall) && !w.counts(Kind::ProcessName));
        let both: Vec<Box<dyn Analysis>> = vec![functions(), every_time()];
        assert!(!wanted(both.iter(), &Filter::default(), false).counts(Kind::ProcessScheduled));
        assert!(!wanted(calls.iter(), &Filter::default(), true).counts(Kind::ProcessScheduled));
        let from = Filter {
            from: Some(When::After(0)),
            ..Filter::default()
        };
        assert!(!wanted(calls.iter(), &from, false).counts(Kind::ProcessScheduled));
        assert_eq!(
            wanted(calls.iter(), &Filter::default(), false).without_counting(),
            wanted(calls.iter(), &from, false)
        );
    }
}
