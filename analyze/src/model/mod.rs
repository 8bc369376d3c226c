//! The bottom layer: what the trace says and what an answer is made of.
//! The contract's events and their fields, message texts, statistics,
//! result tables and time formatting. Imports nothing of the crate above.

pub mod bytes;
pub mod event;
pub mod keyed;
pub mod message;
pub mod stats;
pub mod table;
pub mod time;
