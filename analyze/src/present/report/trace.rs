//! What the report says of each trace besides its events: the tracer's
//! environment as the metadata records it (`env { ... }`: tracer, version,
//! buffering, session, host), its stream files, and the time its packets
//! span (from LTTng's index), which sets the width of the trends'
//! windows before any event is read.

use std::path::{Path, PathBuf};

use crate::input::damage::parse_index;
use crate::input::discovery::{metadata_text, stream_files};

/// One trace directory as the report describes it.
#[derive(Debug, Clone, Default)]
pub struct TraceInfo {
    /// The directory.
    pub dir: PathBuf,
    /// The metadata's `env` entries, in order, values unquoted.
    pub env: Vec<(String, String)>,
    /// Stream files.
    pub streams: usize,
    /// First packet's start and last packet's end, ns since the epoch.
    pub span: Option<(i64, i64)>,
}

/// Reads what the report says of the trace at `dir` (what cannot be read
/// is left out: the run reports the trace's errors).
pub fn describe(dir: &Path) -> TraceInfo {
    let text = metadata_text(&dir.join("metadata")).unwrap_or_default();
    let streams = stream_files(dir).unwrap_or_default();
    let (freq, offset_ns) = clock(&text);
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for s in &streams {
        let Some(name) = s.file_name() else { continue };
        let mut idx = dir.join("index").join(name);
        idx.as_mut_os_string().push(".idx");
        let Some(entries) = std::fs::read(&idx).ok().and_then(|b| parse_index(&b).ok()) else {
            continue;
        };
        for e in entries {
            lo = lo.min(e.timestamp_begin);
            hi = hi.max(e.timestamp_end);
        }
    }
    let to_ns = |cycles: u64| offset_ns.saturating_add((cycles as f64 * 1e9 / freq) as i64);
    TraceInfo {
        dir: dir.to_path_buf(),
        env: env(&text),
        streams: streams.len(),
        span: (lo < hi).then(|| (to_ns(lo), to_ns(hi))),
    }
}

/// The `env { key = value; ... };` block's entries.
fn env(text: &str) -> Vec<(String, String)> {
    let Some(start) = text.find("env {") else {
        return Vec::new();
    };
    let body = &text[start + 5..];
    let body = &body[..body.find('}').unwrap_or(body.len())];
    body.split(';')
        .filter_map(|entry| {
            let (k, v) = entry.split_once('=')?;
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v);
            Some((k.trim().to_string(), v.to_string()))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// The first clock's frequency and its offset from the epoch in ns.
fn clock(text: &str) -> (f64, i64) {
    let Some(start) = text.find("clock {") else {
        return (1e9, 0);
    };
    let body = &text[start..];
    let body = &body[..body.find("};").unwrap_or(body.len())];
    let field = |name: &str| -> Option<i64> {
        body.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(name)?.trim_start().strip_prefix('='))
            .and_then(|v| v.split(';').next()?.trim().parse().ok())
    };
    let freq = field("freq").filter(|&f| f > 0).unwrap_or(1_000_000_000);
    let offset_s = field("offset_s").unwrap_or(0) as i128;
    let offset = field("offset").unwrap_or(0) as i128;
    let ns = offset_s * 1_000_000_000 + offset * 1_000_000_000 / freq as i128;
    (freq as f64, i64::try_from(ns).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const METADATA: &str =
        "/* CTF 1.8 */\nenv {\n\tdomain = \"ust\";\n\ttracer_name = \"lttng-ust\";\n\
        \ttracer_major = 2;\n\ttrace_name = \"shop\";\n\thostname = \"vm\";\n};\n\n\
        clock {\n\tname = \"monotonic\";\n\tfreq = 1000000000; /* Frequency, in Hz */\n\
        \toffset_s = 0;\n\toffset = 1795757914871936376;\n};\n";

    #[test]
    fn the_environment_and_clock_come_from_the_metadata() {
        let env = env(METADATA);
        assert_eq!(env[0], ("domain".into(), "ust".into()));
        assert_eq!(env[2], ("tracer_major".into(), "2".into()));
        assert_eq!(env.len(), 5);
        assert_eq!(clock(METADATA), (1e9, 1_795_757_914_871_936_376));
    }
}
