//! Per-analysis state machines. Each reads the event stream once through
//! [`Analysis::on_event`] and keeps only what is bounded by the number of
//! processes and code locations; [`Analysis::tables`] turns the state into
//! result tables at any time (live mode prints them repeatedly). None knows
//! the command line or the report page: [`crate::present::commands`] makes
//! each a subcommand and draws its charts.
//!
//! A new analysis is one file of this directory implementing [`Analysis`],
//! its `pub mod` line below, and its line in the registry
//! ([`crate::present::commands`]: its subcommand name, help line and
//! options). The run loop and the renderers give it the rest: the trace
//! arguments, `--json`, `--pid`/`--name`, `--from`/`--to`, `--hist`, live
//! reading with `--every`, `--window`, and a section of `report`.
//!
//! [`Analysis`]: crate::engine::analysis::Analysis
//! [`Analysis::on_event`]: crate::engine::analysis::Analysis::on_event
//! [`Analysis::tables`]: crate::engine::analysis::Analysis::tables

pub mod callstack;
pub mod durations;
pub mod message_pairs;
pub mod parquet_file;
#[cfg(test)]
mod parquet_tests;
#[cfg(test)]
mod testing;
pub mod to_parquet;

pub mod calls;
pub mod delivery;
pub mod exceptions;
pub mod export;
pub mod findings;
pub mod gc;
pub mod genserver;
pub mod latency;
pub mod mailbox;
pub mod memory;
pub mod probes;
pub mod profile;
pub mod rates;
pub mod sched;
