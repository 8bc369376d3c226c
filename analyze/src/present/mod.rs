//! The top layer: the command line's options, and the answers as people
//! and programs read them (text, JSON and its schema, the report page,
//! speedscope files).

pub mod cli;
pub mod commands;
pub mod json;
pub mod report;
pub mod schema;
pub mod speedscope;
pub mod text;
