//! Which clocks the input's traces were timestamped with: each trace's
//! metadata names its host (the `env` block's `hostname`) and its clock
//! (the `clock` block's `uuid`, where the metadata has one). Traces of one
//! host and one clock share it: a receive timestamped before its send
//! there is no clock skew.

use std::path::PathBuf;

/// One trace's host and clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clock {
    /// LTTng's `hostname`.
    pub host: String,
    /// The clock's UUID, when the metadata gives one.
    pub uuid: Option<String>,
}

/// The value of `key = "VALUE";` in the block that starts with `block {`
/// of a metadata text.
fn quoted_in_block(text: &str, block: &str, key: &str) -> Option<String> {
    let start = text.find(&format!("{block} {{"))?;
    let body = &text[start..];
    let body = &body[..body.find("};").unwrap_or(body.len())];
    body.lines().find_map(|line| {
        let line = line.trim();
        let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?;
        let value = rest.trim().strip_suffix(';')?.trim();
        Some(value.strip_prefix('"')?.strip_suffix('"')?.to_string())
    })
}

/// The clock of one metadata text; None without a `hostname`.
pub fn clock_of_metadata(text: &str) -> Option<Clock> {
    Some(Clock {
        host: quoted_in_block(text, "env", "hostname")?,
        uuid: quoted_in_block(text, "clock", "uuid"),
    })
}

/// Whether every trace of `dirs` says it was recorded on one host with
/// one clock (None when a trace does not say).
pub fn one_clock(dirs: &[PathBuf]) -> Option<bool> {
    let mut seen: Option<Clock> = None;
    for dir in crate::input::discovery::distinct_traces(dirs) {
        let text = crate::input::discovery::metadata_text(&dir.join("metadata")).ok()?;
        let clock = clock_of_metadata(&text)?;
        match &seen {
            None => seen = Some(clock),
            Some(c)
                if c.host == clock.host
                    && (c.uuid.is_none() || clock.uuid.is_none() || c.uuid == clock.uuid) => {}
            Some(_) => return Some(false),
        }
    }
    seen.map(|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metadata text's host and clock UUID (not the trace's UUID).
    #[test]
    fn host_and_clock_come_from_their_blocks() {
        let text = "trace {\n\tuuid = \"aaaa\";\n};\n\nenv {\n\thostname = \"vm\";\n\tdomain = \"ust\";\n};\n\n\
                    clock {\n\tname = \"monotonic\";\n\tuuid = \"42899df6\";\n\tfreq = 1000000000;\n};\n";
        assert_eq!(
            clock_of_metadata(text),
            Some(Clock {
                host: "vm".into(),
                uuid: Some("42899df6".into()),
            })
        );
        assert_eq!(clock_of_metadata("clock {\n\tuuid = \"x\";\n};"), None);
    }
}
