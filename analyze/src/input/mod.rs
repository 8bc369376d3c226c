//! Reading traces: finding them, checking them for damage, decoding them
//! (the built-in CTF reader or libbabeltrace2) and merging their streams
//! into one timeline of [`crate::model::event::Event`]s.

#[cfg(feature = "babeltrace2")]
pub mod babeltrace;
pub mod ctf;
pub mod damage;
pub mod discovery;
pub mod merge;
pub mod reader;
pub mod step;
#[cfg(test)]
mod tests;
#[cfg(feature = "babeltrace2")]
pub mod views;
