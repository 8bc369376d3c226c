//! The options every analysis takes (the traces, the selection, the output
//! form), parsed once at the edge into what the run loop needs.

use std::path::PathBuf;

use clap::Args;

use crate::engine::select::{Filter, When};
use crate::input::discovery::find_traces;
use crate::input::reader::{use_decoder, Decoder, Source};

/// The options common to every analysis subcommand.
#[derive(Args, Clone, Debug)]
#[group(skip)]
pub struct Common {
    /// LTTng output directories or CTF traces (searched recursively), or
    /// lttng-live URLs net://RELAYD/host/HOSTNAME/SESSION (one per node)
    #[arg(required = true)]
    pub traces: Vec<String>,
    /// Start this long after the first event recorded (e.g. 2s), or at this
    /// time: 2026-11-24T18:02:57[.123] (UTC) or ns since the epoch (16+ digits)
    #[arg(long, value_parser = parse_when)]
    pub from: Option<When>,
    /// End this long after the first event recorded, or at this time (as --from)
    #[arg(long, value_parser = parse_when)]
    pub to: Option<When>,
    /// Only events naming this process (repeatable), e.g. '<0.90.0>'
    #[arg(long, value_parser = parse_pid_arg)]
    pub pid: Vec<String>,
    /// Only events naming the process of this name (repeatable): a
    /// registered name, or a snapshot's initial call M:F/A
    #[arg(long, value_parser = parse_name_arg)]
    pub name: Vec<String>,
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
    /// Which CTF reader decodes trace files: the built-in one, or
    /// libbabeltrace2 (the reference; lttng-live always uses it)
    #[arg(long, value_enum, default_value = "builtin")]
    pub reader: Decoder,
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

/// Digits from which a bare number is a time (ns since the epoch) rather
/// than a duration: 10^15 ns is 11.6 days.
const EPOCH_DIGITS: usize = 16;

/// Parses a relative time (a duration) or an absolute one.
pub fn parse_when(text: &str) -> Result<When, String> {
    let t = text.trim();
    if t.len() >= EPOCH_DIGITS && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<i64>()
            .map(When::At)
            .map_err(|_| format!("`{text}`: ns since the epoch out of range"));
    }
    if t.len() >= 10 && t.as_bytes()[4] == b'-' {
        return parse_utc(t).map(When::At);
    }
    parse_duration(t).map(When::After)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction][Z]` (UTC) as ns since the epoch.
pub fn parse_utc(text: &str) -> Result<i64, String> {
    let bad = || {
        format!("`{text}` is not a time (e.g. 2026-11-24T18:02:57 or 2026-11-24T18:02:57.250, UTC)")
    };
    let t = text.strip_suffix('Z').unwrap_or(text);
    let (date, time) = t.split_once(['T', ' ']).unwrap_or((t, "00:00:00"));
    let num = |s: &str| s.parse::<i64>().map_err(|_| bad());
    let d: Vec<&str> = date.split('-').collect();
    let (sec, frac) = time.split_once('.').unwrap_or((time, ""));
    let h: Vec<&str> = sec.split(':').collect();
    if d.len() != 3 || h.len() != 3 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (y, m, day) = (num(d[0])?, num(d[1])?, num(d[2])?);
    let (hh, mm, ss) = (num(h[0])?, num(h[1])?, num(h[2])?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return Err(bad());
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        num(frac)? * 10i64.pow(9 - frac.len() as u32)
    };
    let days = days_from_civil(y, m, day);
    Ok(((days * 24 + hh) * 60 + mm) * 60_000_000_000 + ss * 1_000_000_000 + frac_ns)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// well-known algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_pid_arg(text: &str) -> Result<String, String> {
    match crate::engine::identity::parse_pid(text.trim().as_bytes()) {
        Some(_) => Ok(text.trim().to_string()),
        None => Err(format!("`{text}` is not a pid (e.g. '<0.90.0>')")),
    }
}

fn parse_name_arg(text: &str) -> Result<String, String> {
    match text.trim() {
        "" => Err("an empty name selects nothing (e.g. --name shop_audit)".into()),
        t => Ok(t.to_string()),
    }
}

fn parse_window(text: &str) -> Result<u64, String> {
    match parse_duration(text)? {
        0 => Err(format!("`{text}`: a window lasts more than 0 ns")),
        ns => Ok(ns),
    }
}

impl Common {
    /// Where the events come from (and which reader decodes them).
    pub fn source(&self) -> Result<Source, String> {
        use_decoder(self.reader);
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
        let filter = Filter {
            from: self.from,
            to: self.to,
            pids: self.pid.iter().map(|p| p.as_bytes().to_vec()).collect(),
            names: self.name.iter().map(|n| n.as_bytes().to_vec()).collect(),
        };
        filter.check()?;
        Ok(filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::format_utc;

    #[test]
    fn times_parse_relative_or_absolute() {
        assert_eq!(parse_when("2s"), Ok(When::After(2_000_000_000)));
        assert_eq!(
            parse_when("1764007377000000000"),
            Ok(When::At(1_764_007_377_000_000_000))
        );
        let t = parse_utc("2026-11-24T18:02:57").expect("a time");
        assert_eq!(format_utc(t), "2026-11-24T18:02:57.000000000Z");
        assert_eq!(
            parse_when("2026-11-24T18:02:57.25Z"),
            Ok(When::At(t + 250_000_000))
        );
        assert_eq!(format_utc(0), "1970-01-01T00:00:00.000000000Z");
        assert!(parse_when("2026-13-01T00:00:00").is_err());
        assert!(parse_pid_arg("garbage").is_err());
        assert!(parse_pid_arg("<0.90.0>").is_ok());
        assert!(parse_name_arg("").is_err());
    }

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
