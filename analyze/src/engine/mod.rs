//! The event loop: which events reach the analyses (time window,
//! selection), in which order (live reordering), cut into which windows,
//! and who is who (names, nodes, aliases, clocks).

pub mod analysis;
pub mod clocks;
pub mod identity;
pub mod names;
pub mod reorder;
pub mod run;
pub mod select;
pub mod summary;
pub mod windows;
