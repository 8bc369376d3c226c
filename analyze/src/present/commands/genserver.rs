//! `genserver`: its options.

use super::registered::Registered;
use crate::analysis::genserver::GenServer;

/// `genserver`'s options.
#[derive(clap::Args, Clone, Debug)]
#[group(skip)]
pub struct GenServerOptions {
    /// Also list the N slowest calls one by one (server, request, caller,
    /// start, caller's latency, server's share)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub slowest: usize,
}

impl Registered for GenServer {
    const NAME: &'static str = "genserver";
    const ABOUT: &'static str =
        "gen_server/gen_statem calls from message events: caller's latency, server's share";
    type Options = GenServerOptions;
    fn new(o: GenServerOptions) -> Result<GenServer, String> {
        Ok(GenServer::with_slowest(o.slowest))
    }
    /// In `report`, `findings` runs it inside (one pass, the report's
    /// options) and shows its tables.
    fn for_report(_: GenServerOptions) -> Option<Result<GenServer, String>> {
        None
    }
}
