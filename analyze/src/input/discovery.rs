//! Finding CTF traces (every directory holding a `metadata` file, as
//! babeltrace2 does), their stream files, and their metadata's text
//! (plain or packetized).

use std::path::{Path, PathBuf};

/// Searches `path` for CTF traces as babeltrace2 does for a directory: every
/// directory below it (or itself) holding a `metadata` file is a trace.
pub fn find_traces(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut found = Vec::new();
    if meta.is_dir() {
        walk(path, &mut found).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if found.is_empty() {
        return Err(format!(
            "{}: no CTF trace found (no `metadata` file)",
            path.display()
        ));
    }
    found.sort();
    found.dedup();
    for dir in &found {
        check_metadata(&dir.join("metadata"))?;
    }
    Ok(found)
}

/// Magic number opening each packet of packetized CTF metadata.
const METADATA_MAGIC: [u8; 4] = 0x75d1_1d57u32.to_le_bytes();

/// Bytes before a metadata packet's `packet_size` (magic, uuid, checksum,
/// content_size), and the packet header's whole size.
const METADATA_SIZE_AT: usize = 28;

const METADATA_HEADER: usize = 37;

/// Checks that packetized metadata ends at a packet boundary:
/// libbabeltrace2 2.0 loops forever on a truncated last packet.
pub fn check_metadata(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !bytes.starts_with(&METADATA_MAGIC) {
        return Ok(());
    }
    let mut at = 0usize;
    while at < bytes.len() {
        let header = bytes
            .get(at..at + METADATA_HEADER)
            .filter(|h| h.starts_with(&METADATA_MAGIC));
        let size_bits = header.map(|h| {
            let field = [
                h[METADATA_SIZE_AT],
                h[METADATA_SIZE_AT + 1],
                h[METADATA_SIZE_AT + 2],
                h[METADATA_SIZE_AT + 3],
            ];
            u32::from_le_bytes(field) as usize
        });
        match size_bits {
            Some(bits) if bits / 8 >= METADATA_HEADER && at + bits / 8 <= bytes.len() => {
                at += bits / 8
            }
            _ => {
                return Err(format!(
                    "{}: truncated or corrupt metadata packet at byte {at}",
                    path.display()
                ))
            }
        }
    }
    Ok(())
}

/// The text of a trace's metadata (TSDL), from its packets when packetized.
pub fn metadata_text(path: &Path) -> Result<String, String> {
    check_metadata(path)?;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !bytes.starts_with(&METADATA_MAGIC) {
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    let mut text = Vec::new();
    let mut at = 0usize;
    while at + METADATA_HEADER <= bytes.len() {
        let word = |i: usize| {
            let f = [bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]];
            u32::from_le_bytes(f) as usize / 8
        };
        let (content, size) = (word(at + METADATA_SIZE_AT - 4), word(at + METADATA_SIZE_AT));
        let end = (at + content).min(bytes.len());
        text.extend_from_slice(bytes.get(at + METADATA_HEADER..end).unwrap_or_default());
        at += size.max(METADATA_HEADER);
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if dir.join("metadata").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        // Symlinked directories are not followed: no cycles.
        if entry.file_type()?.is_dir() {
            walk(&entry.path(), found)?;
        }
    }
    Ok(())
}

/// The same trace directories once each: a trace named twice, or both
/// through a parent and itself, is read once (first naming kept).
pub fn distinct_traces(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    dirs.iter()
        .filter(|d| seen.insert(std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())))
        .cloned()
        .collect()
}

/// A trace's stream files, as libbabeltrace2's `ctf.fs` takes them: every
/// regular file beside `metadata` not starting with a dot.
pub fn stream_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        let is_file = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file());
        if is_file && name != "metadata" && !name.to_string_lossy().starts_with('.') {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}
