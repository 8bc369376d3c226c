//! `dyntrace-analyze`: slow calls, latency percentiles, GC pauses, rates
//! and user probes from dyntrace's LTTng traces (docs/analysis.md). The
//! subcommands come from the analyses' registry
//! (`dyntrace_analyze::present::commands::REGISTRY`), plus `report`, which runs every
//! analysis of the registry that belongs in it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use dyntrace_analyze::engine::run::run_with_trend;
use dyntrace_analyze::engine::summary::Summary;
use dyntrace_analyze::input::discovery::distinct_traces;
use dyntrace_analyze::input::reader::Source;
use dyntrace_analyze::model::table::Table;
use dyntrace_analyze::present::cli::Common;
use dyntrace_analyze::present::commands::{Built, Entry, Subcommand, REGISTRY};
use dyntrace_analyze::present::json::render_json;
use dyntrace_analyze::present::report::{self, trace::TraceInfo};
use dyntrace_analyze::present::text::render_text;

const REPORT: &str = "report";

/// The command line: one subcommand per registered analysis, and `report`
/// with the options of every analysis it runs.
fn command() -> Command {
    let mut cmd = Command::new("dyntrace-analyze")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Answers from dyntrace's LTTng traces")
        .subcommand_required(true);
    for e in REGISTRY {
        // The help line last: clap's derive sets the options' doc as one.
        cmd =
            cmd.subcommand(Common::augment_args((e.options)(Command::new(e.name))).about(e.about));
    }
    let mut report = Command::new(REPORT).arg(
        Arg::new("outdir")
            .required(true)
            .value_parser(clap::value_parser!(PathBuf))
            .help("Directory for index.html"),
    );
    report = Common::augment_args(report);
    // Before the analyses' options: theirs of the same name (profile's
    // and sched's --top) take this value in the report.
    report = report.arg(
        Arg::new("top")
            .long("top")
            .value_name("N")
            .default_value("50")
            .value_parser(clap::value_parser!(usize))
            .help("Rows shown per table (and per process in profile, processes in sched)"),
    );
    for e in REGISTRY {
        // Options several analyses share (by name) are given once.
        for arg in (e.options)(Command::new(e.name)).get_arguments() {
            if report.get_arguments().all(|a| a.get_id() != arg.get_id()) {
                report = report.arg(arg.clone());
            }
        }
    }
    cmd.subcommand(report.about(
        "Every analysis in one self-contained web page, OUTDIR/index.html: tables, \
         distributions, trends, the flame graph, slow calls, rates, memory",
    ))
}

/// Prints the results; `heading` (text output only) marks live updates.
fn emit(
    common: &Common,
    summary: &Summary,
    tables: &[Table],
    heading: Option<&str>,
) -> Result<(), String> {
    let text = if common.json {
        render_json(summary, tables).to_string() + "\n"
    } else {
        heading
            .map(|h| format!("\n== {h} ==\n"))
            .unwrap_or_default()
            + &render_text(summary, tables, common.hist)
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error of the analysis.
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("stdout: {e}")),
        _ => Ok(()),
    }
}

/// Where `report` writes and how many rows it shows.
struct ReportTo {
    dir: PathBuf,
    top: usize,
}

/// Runs the analyses `make` builds over the traces of `common`; prints
/// their tables unless `outdir` asks for the report page instead.
fn analyse(
    common: &Common,
    make: &dyn Fn() -> Result<Vec<Box<dyn Subcommand>>, String>,
    outdir: Option<&ReportTo>,
) -> Result<(), String> {
    let source = common.source()?;
    let filter = common.filter()?;
    let live = matches!(source, Source::Live(_));
    let mut failed: Option<String> = None;
    let mut tick = |summary: &Summary, tables: &[Table]| {
        if let Err(e) = emit(common, summary, tables, Some("live: results so far")) {
            failed.get_or_insert(e);
        }
    };
    let every =
        (live && outdir.is_none()).then_some((Duration::from_nanos(common.every), &mut tick as _));
    // The report: whole-run tables, and --window (else a hundredth of
    // the traces' span) for its trends.
    let traces: Vec<TraceInfo> = match (&source, outdir) {
        (Source::Traces(dirs), Some(_)) => distinct_traces(dirs)
            .iter()
            .map(|d| report::trace::describe(d))
            .collect(),
        _ => Vec::new(),
    };
    let (window, trend) = match outdir {
        Some(_) => (None, Some(report::trend_window(common.window, &traces))),
        None => (common.window, None),
    };
    let outcome = run_with_trend(&source, &filter, make, window, every, trend)?;
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(to) = outdir {
        let charts: Vec<&dyn report::Charts> = outcome
            .analyses
            .iter()
            .map(|a| a.as_ref() as &dyn report::Charts)
            .collect();
        let (bytes, top) = report::write(
            &to.dir,
            &report::Input {
                summary: &outcome.summary,
                tables: &outcome.tables,
                analyses: &charts,
                who: &outcome.who,
                trend: &outcome.trend,
                traces: &traces,
                top: to.top,
                top_asked: None,
            },
        )?;
        emit(common, &outcome.summary, &[], None)?;
        if top < to.top {
            eprintln!(
                "dyntrace-analyze: {top} rows per table (not --top {}): the page keeps under {} MB",
                to.top,
                report::MAX_PAGE_BYTES / 1_000_000
            );
        }
        eprintln!(
            "dyntrace-analyze: wrote {} ({})",
            to.dir.join("index.html").display(),
            dyntrace_analyze::model::table::format_bytes(bytes as f64)
        );
        return Ok(());
    }
    let heading = live.then_some("live: the session ended");
    emit(common, &outcome.summary, &outcome.tables, heading)?;
    outcome
        .analyses
        .iter()
        .try_for_each(|a| a.write_files(&outcome.who))
}

fn run_command(m: &ArgMatches) -> Result<(), String> {
    let Some((name, sub)) = m.subcommand() else {
        return Err("no analysis named (see --help)".into());
    };
    let common = Common::from_arg_matches(sub).map_err(|e| e.to_string())?;
    if name == REPORT {
        let outdir = sub.get_one::<PathBuf>("outdir").map(|dir| ReportTo {
            dir: dir.clone(),
            top: sub.get_one::<usize>("top").copied().unwrap_or(50),
        });
        let make = || -> Result<Vec<Box<dyn Subcommand>>, String> {
            REGISTRY
                .iter()
                .filter_map(|e| (e.build_for_report)(sub))
                .collect()
        };
        make()?;
        return analyse(&common, &make, outdir.as_ref());
    }
    let entry: &Entry = REGISTRY
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| format!("{name}: no such analysis"))?;
    let make = || -> Result<Vec<Box<dyn Subcommand>>, String> {
        let built: Built = (entry.build)(sub);
        Ok(vec![built?])
    };
    analyse(&common, &make, None)
}

fn main() -> ExitCode {
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        // --help and --version go to stdout as clap prints them.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // One line: clap's message up to its usage paragraph.
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let message = message.join(" ");
            eprintln!(
                "dyntrace-analyze: {} (see --help)",
                message.strip_prefix("error: ").unwrap_or(&message)
            );
            return ExitCode::FAILURE;
        }
    };
    match run_command(&matches) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dyntrace-analyze: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::command;

    /// Every registered analysis is a subcommand, and `report` takes every
    /// option of the analyses it runs without a clash.
    #[test]
    fn the_command_line_is_well_formed() {
        let cmd = command();
        cmd.clone().debug_assert();
        let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        for e in dyntrace_analyze::present::commands::REGISTRY {
            assert!(names.contains(&e.name), "{}", e.name);
        }
    }

    /// `report` reads the trace into `mailbox`, `memory` and `genserver`
    /// once: `findings` runs them, with the report's options, and their
    /// tables are on the page once.
    #[test]
    fn the_report_runs_each_analysis_once() {
        let m = command()
            .try_get_matches_from([
                "dyntrace-analyze",
                "report",
                "/tmp/out",
                "--slowest",
                "3",
                "t",
            ])
            .unwrap();
        let (_, sub) = m.subcommand().unwrap();
        let summary = dyntrace_analyze::engine::summary::Summary::default();
        let mut keys = Vec::new();
        let mut reading_queues = 0;
        for e in dyntrace_analyze::present::commands::REGISTRY {
            if let Some(a) = (e.build_for_report)(sub) {
                let a = a.unwrap();
                reading_queues +=
                    a.needs_fields(dyntrace_analyze::model::event::Kind::ProcessMemory) as u32;
                keys.extend(a.tables(&summary).into_iter().map(|t| t.key));
            }
        }
        // The memory sampler's process samples are read once, by findings.
        assert_eq!(reading_queues, 1);
        for key in ["findings", "mailbox", "genserver", "memory_text"] {
            assert_eq!(
                keys.iter().filter(|k| **k == key).count(),
                1,
                "{key}: {keys:?}"
            );
        }
        // --slowest reached the genserver findings runs.
        assert!(keys.contains(&"slowest"), "{keys:?}");
    }
}
