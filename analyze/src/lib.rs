//! dyntrace-analyze: answers from dyntrace's LTTng traces.
//!
//! Layers, each its own module: [`reader`] (traces or a live relay, muxed
//! into one timeline; [`ctf`], the built-in CTF reader, or libbabeltrace2), [`event`] (the contract's events,
//! fields resolved by name once per class), [`identity`] (names, nodes,
//! aliases: who is who, for every analysis), [`run`] (the event loop: time
//! window, selection, live reordering, `--window`), [`analysis`] (one state
//! machine per analysis and the registry of subcommands), [`cli`] (the
//! options every analysis takes),
//! [`message`] (gen_server's calls and replies in message texts),
//! [`table`] (results as tables: text, JSON, histograms) and [`report`] (one
//! self-contained web page of every analysis); [`schema`] describes the
//! versioned JSON that [`table`] writes (docs/json.md); [`speedscope`] writes
//! speedscope's file format.

pub mod analysis;
pub mod engine;
pub mod input;
pub mod model;
pub mod present;

pub use engine::{clocks, identity, names, run};
pub use input::{ctf, damage, merge, reader};
pub use model::{event, message, stats, table};
pub use present::{cli, report, schema, speedscope};
