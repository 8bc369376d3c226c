//! What makes an analysis a subcommand: its name, help line and options,
//! how the command line builds it, the files it writes and its charts.

use clap::{ArgMatches, Args, Command, FromArgMatches};

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::present::report::{Charts, Page};

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
    /// Writes the files its options name (besides the tables on stdout),
    /// once the run has ended (with `--window`: the last window's); `who`
    /// names the processes.
    fn write_files(&self, _who: &Identity) -> Result<(), String> {
        Ok(())
    }
    /// What the analysis adds to the `report` page besides its tables
    /// ([`Charts::report`]).
    fn report(&self, _page: &mut Page, _who: &Identity) -> Result<(), String> {
        Ok(())
    }
}

/// An analysis as the command line runs it: fed by the event loop, then
/// asked for its files and its charts.
pub trait Subcommand: Analysis + Charts {
    /// [`Registered::write_files`].
    fn write_files(&self, who: &Identity) -> Result<(), String>;
}

impl<A: Registered> Subcommand for A {
    fn write_files(&self, who: &Identity) -> Result<(), String> {
        Registered::write_files(self, who)
    }
}

impl<A: Registered> Charts for A {
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
    A::for_report_in(options, m).map(|a| a.map(|a| Box::new(a) as Box<dyn Subcommand>))
}

/// For analyses without options of their own.
#[derive(Args, Clone, Debug, Default)]
#[group(skip)]
pub struct NoOptions {}
