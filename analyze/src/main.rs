//! `dyntrace-analyze`: slow calls, latency percentiles, GC pauses, rates
//! and user probes from dyntrace's LTTng traces (see README, "Finding a
//! latency problem").

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use dyntrace_analyze::analysis::{
    calls::Calls,
    delivery::Delivery,
    gc::Gc,
    genserver::GenServer,
    latency::Latency,
    memory::Memory,
    probes::{Probes, DEFAULT_MAX_PROBES},
    rates::Rates,
    sched::Sched,
    Analysis,
};
use dyntrace_analyze::reader::{find_traces, Source};
use dyntrace_analyze::run::{run, Filter};
use dyntrace_analyze::table::{render_json, render_text, Summary, Table};

/// How far (in trace time) a live reader may deliver one host's events
/// behind another's: twice LTTng's default live timer.
const LIVE_REORDER_NS: u64 = 2_000_000_000;

#[derive(Parser)]
#[command(
    name = "dyntrace-analyze",
    version,
    about = "Answers from dyntrace's LTTng traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Function durations per code location (function_call -> return)
    Calls {
        /// List each call at least this long (e.g. 1ms)
        #[arg(long, value_parser = parse_duration)]
        slower_than: Option<u64>,
        /// At most this many slow calls listed
        #[arg(long, default_value_t = 10_000)]
        max_slow: usize,
        /// The processes were traced with the return_to flag
        #[arg(long)]
        return_to: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Message send -> receiver scheduled in (and -> received)
    Latency {
        #[command(flatten)]
        common: Common,
    },
    /// gen_server/gen_statem calls from message events: caller's latency, server's share
    Genserver {
        #[command(flatten)]
        common: Common,
    },
    /// Message delivery between nodes (send on one -> receive on another),
    /// per pair of nodes; give every node's trace (a relay's output
    /// directory holds them all, or one live URL per node)
    Delivery {
        #[command(flatten)]
        common: Common,
    },
    /// Garbage collection pauses per process and kind
    Gc {
        #[command(flatten)]
        common: Common,
    },
    /// Time on a scheduler per process
    Sched {
        /// Processes shown
        #[arg(long, default_value_t = 20)]
        top: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Memory over time from dyntrace:memory/1's samples: per category,
    /// allocator and process, growth first to last, leak candidates
    Memory {
        /// Windows of this length for the leak candidates (default: each
        /// series' span in four)
        #[arg(long, value_parser = parse_duration)]
        window: Option<u64>,
        #[command(flatten)]
        common: Common,
    },
    /// Events per second per event name
    Rates {
        #[command(flatten)]
        common: Common,
    },
    /// User probes (dyntrace:p/0..8, pn/1..9, user_trace_s1/1): events per
    /// probe (number, name = first string, tag) and each integer argument's
    /// min, p50, p90, p99, max
    Probes {
        /// One row per probe and calling process
        #[arg(long)]
        by_pid: bool,
        /// Probes kept (the first seen); events of more are counted
        #[arg(long, default_value_t = DEFAULT_MAX_PROBES, value_parser = parse_max_probes)]
        max_probes: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Every analysis in OUTDIR/index.md with SVG plots
    Report {
        /// Directory for index.md and the plots
        outdir: PathBuf,
        /// Calls at least this long are plotted over time
        #[arg(long, value_parser = parse_duration, default_value = "1ms")]
        slower_than: u64,
        /// Processes shown in the scheduler table
        #[arg(long, default_value_t = 20)]
        top: usize,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Args)]
struct Common {
    /// LTTng output directories or CTF traces (searched recursively), or
    /// lttng-live URLs net://RELAYD/host/HOSTNAME/SESSION (one per node)
    #[arg(required = true)]
    traces: Vec<String>,
    /// Start this long after the first event (e.g. 2s)
    #[arg(long, value_parser = parse_duration)]
    from: Option<u64>,
    /// End this long after the first event
    #[arg(long, value_parser = parse_duration)]
    to: Option<u64>,
    /// Only events naming this process (repeatable), e.g. '<0.90.0>'
    #[arg(long)]
    pid: Vec<String>,
    /// JSON for machines instead of tables
    #[arg(long)]
    json: bool,
    /// Draw each duration row's power-of-two histogram
    #[arg(long)]
    hist: bool,
    /// Live: print the results at this period (e.g. 5s)
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    every: u64,
}

/// Parses `12`, `12ns`, `3us`, `1.5ms`, `2s`, `1m` into nanoseconds.
fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 500us, 1ms, 2s)"))?;
    let scale = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        other => return Err(format!("unknown unit `{other}` (ns, us, ms, s, m)")),
    };
    Ok((value * scale).round() as u64)
}

fn parse_max_probes(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` is not a number of probes from 1 to 1000000"
        )),
    }
}

fn source_of(common: &Common) -> Result<Source, String> {
    let urls: Vec<String> = common
        .traces
        .iter()
        .filter(|t| t.starts_with("net://"))
        .cloned()
        .collect();
    if let Some(url) = urls.first() {
        if urls.len() < common.traces.len() {
            return Err(format!(
                "{url}: live URLs are read without trace directories"
            ));
        }
        return Ok(Source::Live(urls));
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for t in &common.traces {
        dirs.extend(find_traces(std::path::Path::new(t))?);
    }
    Ok(Source::Traces(dirs))
}

fn filter_of(common: &Common) -> Filter {
    Filter {
        from_ns: common.from,
        to_ns: common.to,
        pids: common.pid.iter().map(|p| p.as_bytes().to_vec()).collect(),
    }
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

fn tables_of(analyses: &[&mut dyn Analysis], summary: &Summary) -> Vec<Table> {
    analyses.iter().flat_map(|a| a.tables(summary)).collect()
}

fn analyse(common: &Common, analyses: &mut [&mut dyn Analysis]) -> Result<(), String> {
    let source = source_of(common)?;
    let filter = filter_of(common);
    let live = matches!(source, Source::Live(_));
    let mut failed: Option<String> = None;
    let mut tick = |summary: &Summary, analyses: &mut [&mut dyn Analysis]| {
        if let Err(e) = emit(
            common,
            summary,
            &tables_of(analyses, summary),
            Some("live: results so far"),
        ) {
            failed.get_or_insert(e);
        }
    };
    let every = live.then_some((Duration::from_nanos(common.every), &mut tick as _));
    let summary = run(&source, &filter, analyses, every)?;
    if let Some(e) = failed {
        return Err(e);
    }
    let heading = live.then_some("live: the session ended");
    emit(common, &summary, &tables_of(analyses, &summary), heading)
}

/// One pass of every analysis, written as a page with plots.
fn report(outdir: &Path, slower_than: u64, top: usize, common: &Common) -> Result<(), String> {
    let source = source_of(common)?;
    let mut calls = Calls::new(Some(slower_than), 10_000, false);
    let mut latency = Latency::default();
    let mut genserver = GenServer::default();
    let mut gc = Gc::default();
    let mut sched = Sched::new(top);
    let mut rates = Rates::default();
    let mut probes = Probes::default();
    let summary = {
        let mut all: [&mut dyn Analysis; 7] = [
            &mut calls,
            &mut latency,
            &mut genserver,
            &mut gc,
            &mut sched,
            &mut rates,
            &mut probes,
        ];
        run(&source, &filter_of(common), &mut all, None)?
    };
    let all: [&dyn Analysis; 7] = [&calls, &latency, &genserver, &gc, &sched, &rates, &probes];
    let tables: Vec<Table> = all.iter().flat_map(|a| a.tables(&summary)).collect();
    dyntrace_analyze::report::write(outdir, &summary, &tables, &calls, &rates)?;
    emit(common, &summary, &[], None)?;
    eprintln!(
        "dyntrace-analyze: wrote {}",
        outdir.join("index.md").display()
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
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
    let result = match &cli.command {
        Command::Calls {
            slower_than,
            max_slow,
            return_to,
            common,
        } => analyse(
            common,
            &mut [&mut Calls::new(*slower_than, *max_slow, *return_to)],
        ),
        Command::Latency { common } => analyse(common, &mut [&mut Latency::default()]),
        Command::Genserver { common } => analyse(common, &mut [&mut GenServer::default()]),
        Command::Delivery { common } => {
            // Live, each host's events may be read a little apart.
            let live = common.traces.iter().any(|t| t.starts_with("net://"));
            let mut delivery = match live {
                true => Delivery::with_window(LIVE_REORDER_NS),
                false => Delivery::new(),
            };
            analyse(common, &mut [&mut delivery])
        }
        Command::Gc { common } => analyse(common, &mut [&mut Gc::default()]),
        Command::Sched { top, common } => analyse(common, &mut [&mut Sched::new(*top)]),
        Command::Memory { window, common } => analyse(common, &mut [&mut Memory::new(*window)]),
        Command::Rates { common } => analyse(common, &mut [&mut Rates::default()]),
        Command::Probes {
            by_pid,
            max_probes,
            common,
        } => analyse(common, &mut [&mut Probes::new(*by_pid, *max_probes)]),
        Command::Report {
            outdir,
            slower_than,
            top,
            common,
        } => report(outdir, *slower_than, *top, common),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dyntrace-analyze: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("1ms"), Ok(1_000_000));
        assert_eq!(parse_duration("1.5us"), Ok(1_500));
        assert_eq!(parse_duration("250"), Ok(250));
        assert_eq!(parse_duration("5s"), Ok(5_000_000_000));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3 fortnights").is_err());
    }
}
