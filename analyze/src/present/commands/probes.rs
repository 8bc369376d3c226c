//! `probes`: its options.

use super::registered::Registered;
use crate::analysis::probes::{Probes, DEFAULT_MAX_PROBES};

/// `probes`' options.
#[derive(clap::Args, Clone, Debug)]
#[group(skip)]
pub struct ProbesOptions {
    /// One row per probe and calling process
    #[arg(long)]
    pub by_pid: bool,
    /// Probes kept (the first seen); events of more are counted
    #[arg(long, default_value_t = DEFAULT_MAX_PROBES, value_parser = parse_max_probes)]
    pub max_probes: usize,
}

impl Registered for Probes {
    const NAME: &'static str = "probes";
    const ABOUT: &'static str = "User probes (dyntrace:p/0..8, pn/1..9, user_trace_s1/1): events per \
        probe (number, name = first string, tag) and each integer argument's min, p50, p90, p99, max";
    type Options = ProbesOptions;
    fn new(o: ProbesOptions) -> Result<Probes, String> {
        Ok(Probes::new(o.by_pid, o.max_probes))
    }
}

fn parse_max_probes(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` is not a number of probes from 1 to 1000000"
        )),
    }
}
