//! Per-analysis state machines and the registry that makes each one a
//! subcommand. Each reads the event stream once through
//! [`Analysis::on_event`] and keeps only what is bounded by the number of
//! processes and code locations; [`Analysis::tables`] turns the state into
//! result tables at any time (live mode prints them repeatedly).
//!
//! A new analysis is one file of this directory implementing [`Analysis`]
//! and [`Registered`] (its subcommand name, its help line, its own clap
//! options) plus one line in the `registry!` list below (`file::Type,`). The run loop and the renderers give it the rest: the
//! trace arguments, `--json`, `--pid`/`--name`, `--from`/`--to`, `--hist`,
//! live reading with `--every`, `--window`, and a section of `report`.

pub mod callstack;
#[cfg(test)]
mod testing;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::event::{Event, Kind};
use crate::identity::Identity;
use crate::report::Page;
use crate::stats::Durations;
use crate::table::{col, Cell, Column, Summary, Table, Unit};

/// Declares each analysis's module and its registry line at once.
macro_rules! registry {
    ($($module:ident :: $analysis:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// Every analysis the command line offers, in the order of `--help`
        /// and of the report's sections.
        pub static REGISTRY: &[Entry] = &[$(Entry::of::<$module::$analysis>()),*];
    };
}

// One line per analysis: its module (a file of this directory) and its type.
registry! {
    findings::Findings,
    calls::Calls,
    latency::Latency,
    genserver::GenServer,
    delivery::Delivery,
    gc::Gc,
    sched::Sched,
    rates::Rates,
    probes::Probes,
    profile::Profile,
    memory::Memory,
    exceptions::Exceptions,
    mailbox::Mailbox,
    export::Export,
}

/// A streaming analysis.
pub trait Analysis {
    /// Feeds one event (already inside the time window and selection, and
    /// in timestamp order: live sources are reordered by the run loop).
    /// `who` is what the trace said so far about names, nodes and aliases,
    /// this event included.
    fn on_event(&mut self, ev: &Event, who: &Identity);
    /// Whether the analysis reads the fields of `kind`'s events. Events of
    /// a kind no analysis reads the fields of still reach every analysis,
    /// with their time and no fields (what `rates` needs), and the reader
    /// spends nothing on their fields: an analysis of a few kinds reads a
    /// trace of many at a little more than the decoding's cost.
    fn needs_fields(&self, _kind: Kind) -> bool {
        true
    }
    /// Whether the analysis does nothing with the events of the kinds it
    /// does not read the fields of. When every analysis of a run says so
    /// (and nothing else needs every event: no `--window`, `--from`/`--to`,
    /// process selection or live source), the reader only counts those
    /// events rather than handing them on.
    fn ignores_other_kinds(&self) -> bool {
        false
    }
    /// The input has ended: handle anything held back.
    fn finish(&mut self, _who: &Identity) {}
    /// `--window`: whether the analysis starts its statistics again for
    /// each window itself ([`Analysis::next_window`]), carrying over what is
    /// pending (open calls, sends awaiting their receive), so that what
    /// spans a boundary counts in the window where it ends. Otherwise each
    /// window gets a fresh analysis, and what spans a boundary is lost.
    fn carries_over(&self) -> bool {
        false
    }
    /// `--window`: a new window starts; forget the statistics, keep what
    /// is pending.
    fn next_window(&mut self) {}
    /// The results so far.
    fn tables(&self, summary: &Summary) -> Vec<Table>;
    /// Writes the files its options name (besides the tables on stdout),
    /// once the run has ended (with `--window`: the last window's); `who`
    /// names the processes.
    fn write_files(&self, _who: &Identity) -> Result<(), String> {
        Ok(())
    }
    /// What the analysis adds to the `report` page besides its tables
    /// (sections of charts: [`Page::section`], drawn with
    /// [`crate::report::svg`]), after the tables, distributions and trends
    /// every analysis gets from its tables.
    fn report(&self, _page: &mut Page, _who: &Identity) -> Result<(), String> {
        Ok(())
    }
}

/// An analysis the command line knows.
pub trait Registered: Analysis + Sized + 'static {
    /// The subcommand.
    const NAME: &'static str;
    /// The subcommand's help line.
    const ABOUT: &'static str;
    /// Its own options (clap derive), besides the common ones.
    type Options: Args + FromArgMatches;
    /// A fresh state from the options (called once per `--window`).
    fn new(options: Self::Options) -> Result<Self, String>;
    /// Its state in `report`, given the report's values of its options;
    /// `None` keeps it out of the report.
    fn for_report(options: Self::Options) -> Option<Result<Self, String>> {
        Some(Self::new(options))
    }
    /// The same, with every option `report` was given: an analysis that
    /// runs others inside it (`findings`) reads their options there.
    fn for_report_in(options: Self::Options, _report: &ArgMatches) -> Option<Result<Self, String>> {
        Self::for_report(options)
    }
}

/// A boxed analysis built from the parsed command line.
pub type Built = Result<Box<dyn Analysis>, String>;

/// One registry line: what `main` needs to offer an analysis.
pub struct Entry {
    /// The subcommand.
    pub name: &'static str,
    /// Its help line.
    pub about: &'static str,
    /// Adds the analysis's own options to a command.
    pub options: fn(Command) -> Command,
    /// Builds it from the subcommand's parsed options.
    pub build: fn(&ArgMatches) -> Built,
    /// Builds it for `report` (None: not in the report).
    pub build_for_report: fn(&ArgMatches) -> Option<Built>,
}

impl Entry {
    /// The registry line of `A`.
    pub const fn of<A: Registered>() -> Entry {
        Entry {
            name: A::NAME,
            about: A::ABOUT,
            options: A::Options::augment_args,
            build: build::<A>,
            build_for_report: build_for_report::<A>,
        }
    }
}

/// `A`'s options from parsed command-line matches.
pub fn options_of<A: Registered>(m: &ArgMatches) -> Result<A::Options, String> {
    A::Options::from_arg_matches(m).map_err(|e| e.to_string().trim().to_string())
}

fn build<A: Registered>(m: &ArgMatches) -> Built {
    Ok(Box::new(A::new(options_of::<A>(m)?)?))
}

fn build_for_report<A: Registered>(m: &ArgMatches) -> Option<Built> {
    let options = match options_of::<A>(m) {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    A::for_report_in(options, m).map(|a| a.map(|a| Box::new(a) as Box<dyn Analysis>))
}

/// For analyses without options of their own.
#[derive(Args, Clone, Debug, Default)]
#[group(skip)]
pub struct NoOptions {}

/// Per-process (or per-anything) state keyed by the text in the trace.
pub type ByText<V> = hashbrown::HashMap<Box<[u8]>, V, rustc_hash::FxBuildHasher>;

/// The entry for `key`, created with `make` the first time (one hash
/// lookup; the key is copied only when inserted).
pub fn entry<'m, V>(map: &'m mut ByText<V>, key: &[u8], make: impl FnOnce() -> V) -> &'m mut V {
    map.entry_ref(key).or_insert_with(make)
}

/// Keys sorted for stable output.
pub fn sorted_keys<V>(map: &ByText<V>) -> Vec<&[u8]> {
    let mut keys: Vec<&[u8]> = map.keys().map(|k| &k[..]).collect();
    keys.sort();
    keys
}

/// The columns every duration view shows: count, percentiles, max, total.
pub fn duration_columns() -> [Column; 7] {
    [
        col("count", "count", Unit::Count),
        col("p50_ns", "p50", Unit::Ns),
        col("p90_ns", "p90", Unit::Ns),
        col("p99_ns", "p99", Unit::Ns),
        col("p999_ns", "p99.9", Unit::Ns),
        col("max_ns", "max", Unit::Ns),
        col("total_ns", "total", Unit::Ns),
    ]
}

/// The values of [`duration_columns`].
pub fn duration_cells(d: &Durations) -> [Cell; 7] {
    [
        Cell::Num(d.count()),
        Cell::Num(d.quantile(0.5)),
        Cell::Num(d.quantile(0.9)),
        Cell::Num(d.quantile(0.99)),
        Cell::Num(d.quantile(0.999)),
        Cell::Num(d.max()),
        Cell::Num(d.total()),
    ]
}
