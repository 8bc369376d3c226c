//! The registry of subcommands: one line per analysis, with its name, help
//! line and options (clap), how the command line builds it, and what it
//! adds besides its tables: the files its options name, and its charts on
//! the `report` page. The analyses themselves ([`crate::analysis`]) know
//! none of it.

mod calls;
mod export;
mod genserver;
mod memory;
mod probes;
mod profile;
mod rates;
mod sched;

use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::analysis::delivery::Delivery;
use crate::analysis::exceptions::Exceptions;
use crate::analysis::findings::Findings;
use crate::analysis::gc::Gc;
use crate::analysis::latency::Latency;
use crate::analysis::mailbox::Mailbox;
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::present::report::Page;

/// Every analysis the command line offers, in the order of `--help` and of
/// the report's sections: one line per analysis.
pub static REGISTRY: &[Entry] = &[
    Entry::of::<Findings>(),
    Entry::of::<crate::analysis::calls::Calls>(),
    Entry::of::<Latency>(),
    Entry::of::<crate::analysis::genserver::GenServer>(),
    Entry::of::<Delivery>(),
    Entry::of::<Gc>(),
    Entry::of::<crate::analysis::sched::Sched>(),
    Entry::of::<crate::analysis::rates::Rates>(),
    Entry::of::<crate::analysis::probes::Probes>(),
    Entry::of::<crate::analysis::profile::Profile>(),
    Entry::of::<crate::analysis::memory::Memory>(),
    Entry::of::<Exceptions>(),
    Entry::of::<Mailbox>(),
    Entry::of::<crate::analysis::export::Export>(),
];

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
    /// Writes the files its options name (besides the tables on stdout),
    /// once the run has ended (with `--window`: the last window's); `who`
    /// names the processes.
    fn write_files(&self, _who: &Identity) -> Result<(), String> {
        Ok(())
    }
    /// What the analysis adds to the `report` page besides its tables
    /// (sections of charts: [`Page::section`], drawn with
    /// [`crate::present::report::svg`]), after the tables, distributions
    /// and trends every analysis gets from its tables.
    fn report(&self, _page: &mut Page, _who: &Identity) -> Result<(), String> {
        Ok(())
    }
}

/// An analysis as the command line runs it: fed by the event loop, then
/// asked for its files and its charts.
pub trait Subcommand: Analysis {
    /// [`Registered::write_files`].
    fn write_files(&self, who: &Identity) -> Result<(), String>;
    /// [`Registered::report`].
    fn report(&self, page: &mut Page, who: &Identity) -> Result<(), String>;
}

impl<A: Registered> Subcommand for A {
    fn write_files(&self, who: &Identity) -> Result<(), String> {
        Registered::write_files(self, who)
    }

    fn report(&self, page: &mut Page, who: &Identity) -> Result<(), String> {
        Registered::report(self, page, who)
    }
}

/// A boxed analysis built from the parsed command line.
pub type Built = Result<Box<dyn Subcommand>, String>;

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

fn options_of<A: Registered>(m: &ArgMatches) -> Result<A::Options, String> {
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
    A::for_report(options).map(|a| a.map(|a| Box::new(a) as Box<dyn Subcommand>))
}

/// For analyses without options of their own.
#[derive(Args, Clone, Debug, Default)]
#[group(skip)]
pub struct NoOptions {}

impl Registered for Findings {
    const NAME: &'static str = "findings";
    const ABOUT: &'static str = "What looks wrong, ranked: growing queues, latency, heaps and memory, \
                                 receives that scan, scheduler hogs, slow requests, GC, exceptions, lost events";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Findings, String> {
        Ok(Findings::default())
    }
}

impl Registered for Latency {
    const NAME: &'static str = "latency";
    const ABOUT: &'static str = "Message send -> receiver scheduled in (and -> received)";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Latency, String> {
        Ok(Latency::default())
    }
}

impl Registered for Delivery {
    const NAME: &'static str = "delivery";
    const ABOUT: &'static str =
        "Message delivery between nodes (send on one -> receive on another), \
        per pair of nodes; give every node's trace (a relay's output directory holds them all, or \
        one live URL per node)";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Delivery, String> {
        Ok(Delivery::new())
    }
    fn for_report(_: NoOptions) -> Option<Result<Delivery, String>> {
        None
    }
}

impl Registered for Gc {
    const NAME: &'static str = "gc";
    const ABOUT: &'static str = "Garbage collection pauses per process and kind";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Gc, String> {
        Ok(Gc::default())
    }
}

impl Registered for Exceptions {
    const NAME: &'static str = "exceptions";
    const ABOUT: &'static str =
        "Functions that raised (function_exception), per code location and class, most first";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Exceptions, String> {
        Ok(Exceptions::default())
    }
}

impl Registered for Mailbox {
    const NAME: &'static str = "mailbox";
    const ABOUT: &'static str = "Per receiver: messages in by kind and sender, the queue over time \
                                 and its growth beside each kind's arrivals, CPU per message by queue length";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Mailbox, String> {
        Ok(Mailbox::default())
    }
}
