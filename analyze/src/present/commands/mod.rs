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
pub mod registered;
mod sched;

pub use registered::{options_of, Built, Entry, NoOptions, Registered, Subcommand};

use clap::ArgMatches;

use crate::engine::identity::Identity;
use crate::present::report::Page;

use crate::analysis::calls::Calls;
use crate::analysis::delivery::Delivery;
use crate::analysis::exceptions::Exceptions;
use crate::analysis::export::Export;
use crate::analysis::findings::Findings;
use crate::analysis::gc::Gc;
use crate::analysis::genserver::GenServer;
use crate::analysis::latency::Latency;
use crate::analysis::mailbox::Mailbox;
use crate::analysis::memory::Memory;
use crate::analysis::probes::Probes;
use crate::analysis::profile::Profile;
use crate::analysis::rates::Rates;
use crate::analysis::sched::Sched;

/// Every analysis the command line offers, in the order of `--help` and of
/// the report's sections: one line per analysis.
pub static REGISTRY: &[Entry] = &[
    Entry::of::<Findings>(),
    Entry::of::<Calls>(),
    Entry::of::<Latency>(),
    Entry::of::<GenServer>(),
    Entry::of::<Delivery>(),
    Entry::of::<Gc>(),
    Entry::of::<Sched>(),
    Entry::of::<Rates>(),
    Entry::of::<Probes>(),
    Entry::of::<Profile>(),
    Entry::of::<Memory>(),
    Entry::of::<Exceptions>(),
    Entry::of::<Mailbox>(),
    Entry::of::<Export>(),
];

// The analyses without options of their own or anything besides their
// tables.

impl Registered for Findings {
    const NAME: &'static str = "findings";
    const ABOUT: &'static str = "What looks wrong, ranked: growing queues, latency, heaps and memory, \
                                 receives that scan, scheduler hogs, slow requests, GC, exceptions, lost events";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Findings, String> {
        Ok(Findings::default())
    }
    /// In `report`, the `mailbox`, `memory` and `genserver` it runs inside
    /// are the report's (with the report's options): their tables and
    /// sections come from here, and the trace is read into each once.
    fn for_report_in(_: NoOptions, report: &ArgMatches) -> Option<Result<Findings, String>> {
        let parts = || -> Result<Findings, String> {
            let memory = <Memory as Registered>::new(options_of::<Memory>(report)?)?;
            let calls = <GenServer as Registered>::new(options_of::<GenServer>(report)?)?;
            Ok(Findings::in_report(memory, calls))
        };
        Some(parts())
    }
    fn report(&self, page: &mut Page, who: &Identity) -> Result<(), String> {
        if let Some((calls, memory, mailbox)) = self.report_parts() {
            Registered::report(calls, page, who)?;
            Registered::report(memory, page, who)?;
            Registered::report(mailbox, page, who)?;
        }
        Ok(())
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
    /// In `report`, `findings` runs it inside (one pass) and shows its
    /// tables.
    fn for_report(_: NoOptions) -> Option<Result<Mailbox, String>> {
        None
    }
}
