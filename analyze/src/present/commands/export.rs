//! `export`: the trace in other tools' formats.

use std::path::PathBuf;

use super::registered::Registered;
use crate::analysis::export::{Export, ExportOptions, DEFAULT_MAX_EVENTS};
use crate::engine::identity::Identity;

/// `export`'s options (the analysis's [`ExportOptions`]).
#[derive(clap::Args, Clone, Debug, Default)]
#[group(skip)]
pub struct ExportArgs {
    /// Write a timeline (Trace Event Format JSON: Perfetto UI, Chrome's
    /// trace viewer, speedscope) to FILE
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Write the trace as Parquet tables (events, messages, calls, slices,
    /// gc, samples, memory: one file each) into DIR, for SQL engines
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Timeline events written at most; past it the file ends there and
    /// the command fails, asking for a selection (--from/--to, --name, --pid)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_EVENTS)]
    pub max_events: u64,
}

impl From<ExportArgs> for ExportOptions {
    fn from(o: ExportArgs) -> ExportOptions {
        ExportOptions {
            timeline: o.timeline,
            parquet: o.parquet,
            max_events: o.max_events,
        }
    }
}

impl Registered for Export {
    const NAME: &'static str = "export";
    const ABOUT: &'static str = "The trace in other tools' formats: --timeline FILE.json \
        (Trace Event Format: Perfetto UI, Chrome's trace viewer, speedscope), --parquet DIR \
        (a Parquet file per table: DuckDB, pandas, Spark, DataFusion)";
    type Options = ExportArgs;
    fn new(o: ExportArgs) -> Result<Export, String> {
        Export::new(o.into())
    }
    fn for_report(_: ExportArgs) -> Option<Result<Export, String>> {
        None
    }

    fn write_files(&self, _who: &Identity) -> Result<(), String> {
        self.check_written()
    }
}
