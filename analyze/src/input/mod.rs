//! Reading traces: finding them, checking them for damage, decoding them
//! (the built-in CTF reader or libbabeltrace2) and merging their streams
//! into one timeline of [`crate::model::event::Event`]s.

pub mod ctf;
pub mod damage;
pub mod merge;
pub mod reader;
