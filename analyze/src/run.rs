//! The event loop: reads the source once, keeps the events inside the time
//! window and pid filter, and feeds them to every analysis.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::analysis::Analysis;
use crate::event::{Event, EventClass, Slot, PROVIDER};
use crate::reader::{Reader, Source, Step};
use crate::table::Summary;

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

/// Called between graph runs in live mode with the summary so far.
pub type Tick<'a> = &'a mut dyn FnMut(&Summary, &mut [&mut dyn Analysis]);

struct Feed<'f, 'a> {
    filter: &'f Filter,
    analyses: &'f mut [&'a mut dyn Analysis],
    summary: Summary,
    first: Option<i64>,
    ours_seen: u64,
    past_window: bool,
    progress: Option<ProgressBar>,
}

impl Feed<'_, '_> {
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
        for a in self.analyses.iter_mut() {
            a.on_event(ev);
        }
    }
}

/// Reads `source` to its end (or, live, until the relay ends the session),
/// feeding `analyses`. `every` calls `tick` at that period (live mode).
pub fn run(
    source: &Source,
    filter: &Filter,
    analyses: &mut [&mut dyn Analysis],
    mut every: Option<(Duration, Tick)>,
) -> Result<Summary, String> {
    let mut reader = Reader::open(source)?;
    let mut classes: Vec<EventClass> = Vec::new();
    let mut feed = Feed {
        filter,
        analyses,
        summary: Summary {
            damaged: reader.damaged().to_vec(),
            ..Summary::default()
        },
        first: None,
        ours_seen: 0,
        past_window: false,
        progress: progress_bar(),
    };
    let mut last_tick = Instant::now();
    loop {
        let step = reader.step(&mut classes, &mut |ev| feed.on_event(ev))?;
        let d = reader.discarded();
        feed.summary.discarded = d.events;
        feed.summary.discarded_reports_without_count = d.reports_without_count;
        if let Some((period, tick)) = every.as_mut() {
            if last_tick.elapsed() >= *period {
                last_tick = Instant::now();
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
                for a in feed.analyses.iter_mut() {
                    a.advance_to(now);
                }
                tick(&feed.summary, feed.analyses);
            }
        }
        match step {
            Step::Progress => {}
            Step::Again => std::thread::sleep(Duration::from_millis(50)),
            Step::End => break,
        }
        if feed.past_window && matches!(source, Source::Traces(_)) {
            break;
        }
    }
    if let Some(p) = &feed.progress {
        p.finish_and_clear();
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
    Ok(feed.summary)
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
