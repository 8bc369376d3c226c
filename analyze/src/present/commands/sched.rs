//! `sched`: its options.

use super::registered::Registered;
use crate::analysis::sched::Sched;

/// `sched`'s options.
#[derive(clap::Args, Clone, Debug)]
#[group(skip)]
pub struct SchedOptions {
    /// Processes shown
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Each shown process's time split by the function it was in when
    /// scheduled out, heaviest first
    #[arg(long)]
    pub by_function: bool,
}

impl Registered for Sched {
    const NAME: &'static str = "sched";
    const ABOUT: &'static str = "Time on a scheduler per process";
    type Options = SchedOptions;
    fn new(o: SchedOptions) -> Result<Sched, String> {
        let s = Sched::new(o.top);
        Ok(if o.by_function { s.by_function() } else { s })
    }
}
