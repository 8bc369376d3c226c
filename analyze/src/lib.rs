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
pub mod cli;
pub mod clocks;
pub mod ctf;
pub mod damage;
pub mod event;
pub mod identity;
pub mod merge;
pub mod message;
pub mod names;
pub mod reader;
pub mod report;
pub mod run;
pub mod schema;
pub mod speedscope;
pub mod stats;
pub mod table;
