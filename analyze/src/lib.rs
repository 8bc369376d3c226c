//! dyntrace-analyze: answers from dyntrace's LTTng traces.
//!
//! Five layers, one folder each, lowest first; a module imports only from
//! its own layer and those below (`scripts/module-graph.sh analyze/src`
//! checks it):
//! - [`model`]: the contract's events (fields resolved by name once per
//!   class), message texts, statistics, result tables, time formatting;
//! - [`input`]: traces found, checked for damage, decoded ([`input::ctf`],
//!   the built-in CTF reader, or libbabeltrace2) and merged into one
//!   timeline;
//! - [`engine`]: the event loop (time window, selection, live reordering,
//!   `--window`), who is who (names, nodes, aliases) and clocks;
//! - [`analysis`]: one state machine per analysis, fed by the loop;
//! - [`present`]: the command line's options and registry of subcommands,
//!   and the answers as text, JSON, the report page and speedscope files.

// module-graph layers: model input engine analysis present

pub mod analysis;
pub mod engine;
pub mod input;
pub mod model;
pub mod present;
