//! The options every analysis takes (the traces, the selection, the output
//! form), parsed once at the edge into what the run loop needs.

use std::path::PathBuf;

use clap::Args;

use crate::reader::{find_traces, Source};
use crate::run::Filter;

/// The options common to every analysis subcommand.
#[derive(Args, Clone, Debug)]
#[group(skip)]
pub struct Common {
    /// LTTng output directories or CTF traces (searched recursively), or
    /// lttng-live URLs net://RELAYD/host/HOSTNAME/SESSION (one per node)
    #[arg(required = true)]
    pub traces: Vec<String>,
    /// Start this long after the first event (e.g. 2s)
    #[arg(long, value_parser = parse_duration)]
    pub from: Option<u64>,
    /// End this long after the first event
    #[arg(long, value_parser = parse_duration)]
    pub to: Option<u64>,
    /// Only events naming this process (repeatable), e.g. '<0.90.0>'
    #[arg(long)]
    pub pid: Vec<String>,
    /// JSON for machines instead of tables
    #[arg(long)]
    pub json: bool,
    /// Draw each duration row's power-of-two histogram
    #[arg(long)]
    pub hist: bool,
    /// Live: print the results at this period (e.g. 5s)
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub every: u64,
    /// The same results per window of trace time (e.g. 1s): JSON rows gain
    /// window_start_ns; text follows each row's p99 (or total) per window
    #[arg(long, value_parser = parse_window)]
    pub window: Option<u64>,
}

/// Parses `12`, `12ns`, `3us`, `1.5ms`, `2s`, `1m` into nanoseconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
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

fn parse_window(text: &str) -> Result<u64, String> {
    match parse_duration(text)? {
        0 => Err(format!("`{text}`: a window lasts more than 0 ns")),
        ns => Ok(ns),
    }
}

impl Common {
    /// Where the events come from.
    pub fn source(&self) -> Result<Source, String> {
        let urls: Vec<String> = self
            .traces
            .iter()
            .filter(|t| t.starts_with("net://"))
            .cloned()
            .collect();
        if let Some(url) = urls.first() {
            if urls.len() < self.traces.len() {
                return Err(format!(
                    "{url}: live URLs are read without trace directories"
                ));
            }
            return Ok(Source::Live(urls));
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for t in &self.traces {
            dirs.extend(find_traces(std::path::Path::new(t))?);
        }
        Ok(Source::Traces(dirs))
    }

    /// Which events the analyses see.
    pub fn filter(&self) -> Result<Filter, String> {
        Ok(Filter {
            from_ns: self.from,
            to_ns: self.to,
            pids: self.pid.iter().map(|p| p.as_bytes().to_vec()).collect(),
        })
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
