//! What of each stream file can be read, against what LTTng recorded.
//!
//! LTTng writes, beside each stream file, an index (`index/STREAM.idx`,
//! the CTF index format of LTTng's `ctf-index.h`: a header, then one
//! big-endian entry per packet with its offset, sizes and timestamps). A
//! stream is compared with its index packet by packet: a packet that lies
//! past the end of the file, or whose header and context do not say what
//! the index says (magic, stream id, packet and content size), is damaged.
//! Without an index the packets are walked by their headers. What is left
//! is the list of whole, consistent packets, which the reader hands to
//! libbabeltrace2 (see `views.rs`); the rest is reported.
//!
//! CTF has no checksums: damage inside a packet's events that leaves its
//! header and sizes intact cannot be seen here (docs/damaged-traces.md).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Magic number of an LTTng index file (`CTF_INDEX_MAGIC`).
const INDEX_MAGIC: u32 = 0xC1F1_DCC1;
/// Index file header: magic, major, minor, entry size (4 x u32).
const INDEX_HEADER: usize = 16;
/// Index entry fields up to `stream_id` (CTF index 1.0: 7 x u64).
const INDEX_ENTRY_MIN: usize = 56;
/// Magic number opening every CTF packet.
const PACKET_MAGIC: u32 = 0xC1FC_1FC1;
/// LTTng's packet header and context: magic (u32), uuid (16 bytes),
/// stream_id (u32), stream_instance_id (u64), then timestamp_begin,
/// timestamp_end, content_size and packet_size (u64 each, sizes in bits).
const STREAM_ID_AT: usize = 20;
const CONTENT_SIZE_AT: usize = 48;
const PACKET_SIZE_AT: usize = 56;
const PACKET_HEADER: usize = 64;

/// One packet as LTTng's index records it (sizes in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Offset of the packet in the stream file.
    pub offset: u64,
    /// The packet's size, padding included.
    pub packet_size: u64,
    /// The bytes of the packet that hold its header and events.
    pub content_size: u64,
    /// Timestamps of the packet's first and last event (clock cycles).
    pub timestamp_begin: u64,
    /// See `timestamp_begin`.
    pub timestamp_end: u64,
    /// Events the tracer discarded before this packet (a running count).
    pub events_discarded: u64,
    /// The stream class (LTTng's channel) the packet belongs to.
    pub stream_id: u64,
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Parses an LTTng index file. An entry cut short at the end (a session
/// still writing it) is left out; a bad header is an error.
pub fn parse_index(bytes: &[u8]) -> Result<Vec<IndexEntry>, String> {
    if bytes.len() < INDEX_HEADER || be32(bytes, 0) != INDEX_MAGIC {
        return Err("not an LTTng index (bad magic)".into());
    }
    let major = be32(bytes, 4);
    let entry_len = be32(bytes, 12) as usize;
    if major != 1 || entry_len < INDEX_ENTRY_MIN {
        return Err(format!(
            "unknown index version {major}.{} (entry size {entry_len})",
            be32(bytes, 8)
        ));
    }
    Ok(bytes[INDEX_HEADER..]
        .chunks_exact(entry_len)
        .map(|e| IndexEntry {
            offset: be64(e, 0),
            packet_size: be64(e, 8) / 8,
            content_size: be64(e, 16) / 8,
            timestamp_begin: be64(e, 24),
            timestamp_end: be64(e, 32),
            events_discarded: be64(e, 40),
            stream_id: be64(e, 48),
        })
        .collect())
}

/// A packet's header as the stream file holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PacketHeader {
    stream_id: u64,
    packet_size: u64,
    content_size: u64,
}

/// Reads the packet header at the start of `b` in either byte order (a
/// trace is written in its tracer's); `None` without the packet magic.
fn packet_header(b: &[u8]) -> Option<PacketHeader> {
    let b = b.get(..PACKET_HEADER)?;
    let word = |at: usize, little: bool| {
        let bytes: [u8; 4] = b[at..at + 4].try_into().expect("4 bytes");
        if little {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        }
    };
    let dword = |at: usize, little: bool| {
        let bytes: [u8; 8] = b[at..at + 8].try_into().expect("8 bytes");
        if little {
            u64::from_le_bytes(bytes)
        } else {
            u64::from_be_bytes(bytes)
        }
    };
    let little = [true, false]
        .into_iter()
        .find(|&l| word(0, l) == PACKET_MAGIC)?;
    Some(PacketHeader {
        stream_id: u64::from(word(STREAM_ID_AT, little)),
        packet_size: dword(PACKET_SIZE_AT, little) / 8,
        content_size: dword(CONTENT_SIZE_AT, little) / 8,
    })
}

/// One stream file: which of its bytes hold whole, consistent packets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamCheck {
    /// The stream file.
    pub path: PathBuf,
    /// Byte ranges `(offset, size)` of the packets to read, in order.
    pub packets: Vec<(u64, u64)>,
    /// Packets LTTng recorded (index entries, or headers walked without one).
    pub recorded_packets: u64,
    /// Bytes LTTng recorded.
    pub recorded_bytes: u64,
    /// Bytes of the file, for the no-index walk's report.
    pub file_bytes: u64,
}

impl StreamCheck {
    /// Bytes in whole, consistent packets.
    pub fn readable_bytes(&self) -> u64 {
        self.packets.iter().map(|p| p.1).sum()
    }

    /// Whether every recorded packet can be read.
    pub fn complete(&self) -> bool {
        self.packets.len() as u64 == self.recorded_packets
            && self.readable_bytes() == self.recorded_bytes
    }

    /// Whether the file can be handed to libbabeltrace2 as it is: complete,
    /// and nothing after its last packet (a cut packet there).
    pub fn whole_file(&self) -> bool {
        self.complete() && self.readable_bytes() == self.file_bytes
    }
}

/// Checks a stream file against its index (`None`: walk its headers).
pub fn check_stream(path: &Path, index: Option<&[IndexEntry]>) -> std::io::Result<StreamCheck> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut header = [0u8; PACKET_HEADER];
    let mut read_header = |at: u64| -> Option<PacketHeader> {
        if at + PACKET_HEADER as u64 > len {
            return None;
        }
        file.seek(SeekFrom::Start(at)).ok()?;
        file.read_exact(&mut header).ok()?;
        packet_header(&header)
    };
    let mut check = StreamCheck {
        path: path.to_path_buf(),
        packets: Vec::new(),
        recorded_packets: 0,
        recorded_bytes: 0,
        file_bytes: len,
    };
    // The furthest byte some packet (recorded or walked) accounts for.
    let mut accounted = 0u64;
    if let Some(entries) = index {
        for e in entries {
            check.recorded_packets += 1;
            check.recorded_bytes += e.packet_size;
            accounted = accounted.max(e.offset + e.packet_size);
            let expected = PacketHeader {
                stream_id: e.stream_id,
                packet_size: e.packet_size,
                content_size: e.content_size,
            };
            if e.offset + e.packet_size <= len && read_header(e.offset) == Some(expected) {
                check.packets.push((e.offset, e.packet_size));
            }
        }
    }
    // Packets past the index's end (or every packet, without an index):
    // what their headers say, up to the first that does not fit.
    let mut at = accounted;
    while at < len {
        let Some(h) = read_header(at).filter(|h| h.packet_size >= PACKET_HEADER as u64) else {
            break;
        };
        check.recorded_packets += 1;
        check.recorded_bytes += h.packet_size;
        accounted = at + h.packet_size;
        if accounted > len || h.content_size > h.packet_size {
            break;
        }
        check.packets.push((at, h.packet_size));
        at = accounted;
    }
    // Bytes past the last packet that no header accounts for (a cut header).
    check.recorded_bytes += len.saturating_sub(accounted);
    Ok(check)
}

/// A stream whose recorded packets cannot all be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedStream {
    /// The stream file, as the user named its trace.
    pub stream: String,
    /// Bytes in whole, consistent packets (read).
    pub readable_bytes: u64,
    /// Bytes LTTng recorded (its index, or the file).
    pub recorded_bytes: u64,
    /// Packets read.
    pub readable_packets: u64,
    /// Packets LTTng recorded.
    pub recorded_packets: u64,
}

impl DamagedStream {
    /// The report of a check, `None` when the stream is complete.
    pub fn of(check: &StreamCheck) -> Option<DamagedStream> {
        (!check.complete()).then(|| DamagedStream {
            stream: check.path.display().to_string(),
            readable_bytes: check.readable_bytes(),
            recorded_bytes: check.recorded_bytes,
            readable_packets: check.packets.len() as u64,
            recorded_packets: check.recorded_packets,
        })
    }

    /// A stream whose index names it but whose file is gone.
    pub fn missing(path: &Path, entries: &[IndexEntry]) -> DamagedStream {
        DamagedStream {
            stream: path.display().to_string(),
            readable_bytes: 0,
            recorded_bytes: entries.iter().map(|e| e.packet_size).sum(),
            readable_packets: 0,
            recorded_packets: entries.len() as u64,
        }
    }
}

/// The text output's lines about damage (none for a complete trace).
pub fn damage_lines(damaged: &[DamagedStream]) -> Vec<String> {
    damaged
        .iter()
        .map(|d| {
            format!(
                "damaged stream {}: {} of {} bytes readable ({} of {} packets): results are incomplete",
                d.stream, d.readable_bytes, d.recorded_bytes, d.readable_packets, d.recorded_packets
            )
        })
        .collect()
}

/// The JSON output's `complete` and `damaged` keys.
pub fn damage_json(damaged: &[DamagedStream]) -> [(&'static str, Value); 2] {
    let rows = damaged
        .iter()
        .map(|d| {
            json!({
                "stream": d.stream,
                "readable_bytes": d.readable_bytes,
                "recorded_bytes": d.recorded_bytes,
                "readable_packets": d.readable_packets,
                "recorded_packets": d.recorded_packets,
            })
        })
        .collect();
    [
        ("complete", Value::Bool(damaged.is_empty())),
        ("damaged", Value::Array(rows)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_file(entries: &[[u64; 9]], entry_len: u32) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [INDEX_MAGIC, 1, 1, entry_len] {
            b.extend_from_slice(&w.to_be_bytes());
        }
        for e in entries {
            for v in &e[..entry_len as usize / 8] {
                b.extend_from_slice(&v.to_be_bytes());
            }
        }
        b
    }

    fn packet(stream_id: u32, size: u64, content: u64) -> Vec<u8> {
        let mut p = vec![0u8; size as usize];
        p[..4].copy_from_slice(&PACKET_MAGIC.to_le_bytes());
        p[STREAM_ID_AT..STREAM_ID_AT + 4].copy_from_slice(&stream_id.to_le_bytes());
        p[CONTENT_SIZE_AT..CONTENT_SIZE_AT + 8].copy_from_slice(&(content * 8).to_le_bytes());
        p[PACKET_SIZE_AT..PACKET_SIZE_AT + 8].copy_from_slice(&(size * 8).to_le_bytes());
        p
    }

    fn entry(offset: u64, size: u64, content: u64) -> [u64; 9] {
        [
            offset,
            size * 8,
            content * 8,
            10,
            20,
            0,
            2,
            0,
            offset / size,
        ]
    }

    #[test]
    fn index_entries_parse_in_both_versions() {
        let entries = [entry(0, 4096, 4000), entry(4096, 4096, 100)];
        for len in [72, 56] {
            let parsed = parse_index(&index_file(&entries, len)).unwrap();
            assert_eq!(parsed.len(), 2);
            assert_eq!(
                parsed[1],
                IndexEntry {
                    offset: 4096,
                    packet_size: 4096,
                    content_size: 100,
                    timestamp_begin: 10,
                    timestamp_end: 20,
                    events_discarded: 0,
                    stream_id: 2,
                }
            );
        }
    }

    #[test]
    fn index_cut_mid_entry_keeps_whole_entries() {
        let mut bytes = index_file(&[entry(0, 4096, 4000), entry(4096, 4096, 10)], 72);
        bytes.truncate(bytes.len() - 5);
        assert_eq!(parse_index(&bytes).unwrap().len(), 1);
    }

    #[test]
    fn index_with_bad_header_is_refused() {
        assert!(parse_index(b"").is_err());
        assert!(parse_index(&[0u8; 40]).is_err());
        let mut bytes = index_file(&[entry(0, 4096, 4000)], 72);
        bytes[7] = 2; // major version 2
        assert!(parse_index(&bytes).is_err());
        let short = index_file(&[], 40);
        assert!(parse_index(&short).is_err());
    }

    fn stream_file(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dyntrace-damage-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn three_packets() -> (Vec<u8>, Vec<IndexEntry>) {
        let bytes = [
            packet(2, 4096, 4000),
            packet(2, 4096, 3000),
            packet(2, 4096, 200),
        ]
        .concat();
        let idx = index_file(
            &[
                entry(0, 4096, 4000),
                entry(4096, 4096, 3000),
                entry(8192, 4096, 200),
            ],
            72,
        );
        (bytes, parse_index(&idx).unwrap())
    }

    #[test]
    fn intact_stream_is_complete() {
        let (bytes, idx) = three_packets();
        let path = stream_file("intact", &bytes);
        for index in [Some(&idx[..]), None] {
            let c = check_stream(&path, index).unwrap();
            assert!(c.complete() && c.whole_file(), "{c:?}");
            assert_eq!(c.packets, vec![(0, 4096), (4096, 4096), (8192, 4096)]);
            assert_eq!(DamagedStream::of(&c), None);
        }
    }

    #[test]
    fn stream_cut_at_a_packet_boundary_is_seen_only_with_its_index() {
        let (bytes, idx) = three_packets();
        let path = stream_file("cut_boundary", &bytes[..8192]);
        let c = check_stream(&path, Some(&idx)).unwrap();
        let d = DamagedStream::of(&c).unwrap();
        assert_eq!(
            (
                d.readable_bytes,
                d.recorded_bytes,
                d.readable_packets,
                d.recorded_packets
            ),
            (8192, 12288, 2, 3)
        );
        assert!(check_stream(&path, None).unwrap().complete());
    }

    #[test]
    fn stream_cut_mid_packet_keeps_its_whole_packets() {
        let (bytes, idx) = three_packets();
        let path = stream_file("cut_mid", &bytes[..6000]);
        let with_index = check_stream(&path, Some(&idx)).unwrap();
        assert_eq!(with_index.packets, vec![(0, 4096)]);
        assert_eq!(with_index.recorded_bytes, 12288);
        let walked = check_stream(&path, None).unwrap();
        assert_eq!(walked.packets, vec![(0, 4096)]);
        assert_eq!(walked.recorded_bytes, 8192);
        assert!(!walked.complete());
    }

    #[test]
    fn garbage_over_a_packet_header_drops_that_packet_only() {
        let (mut bytes, idx) = three_packets();
        // The middle packet's content size says less than the index: its
        // last events would be silently lost.
        bytes[4096 + CONTENT_SIZE_AT..4096 + CONTENT_SIZE_AT + 8]
            .copy_from_slice(&(1000u64 * 8).to_le_bytes());
        let path = stream_file("garbage_ctx", &bytes);
        let c = check_stream(&path, Some(&idx)).unwrap();
        assert_eq!(c.packets, vec![(0, 4096), (8192, 4096)]);
        // Over the magic too.
        bytes[4096..4100].copy_from_slice(b"junk");
        let path = stream_file("garbage_magic", &bytes);
        let c = check_stream(&path, Some(&idx)).unwrap();
        assert_eq!(c.packets, vec![(0, 4096), (8192, 4096)]);
        let d = DamagedStream::of(&c).unwrap();
        assert_eq!((d.readable_packets, d.recorded_packets), (2, 3));
    }

    #[test]
    fn packets_past_the_index_are_walked() {
        let (bytes, idx) = three_packets();
        let path = stream_file("past_index", &bytes);
        let c = check_stream(&path, Some(&idx[..2])).unwrap();
        assert!(c.complete() && c.whole_file(), "{c:?}");
        assert_eq!(c.recorded_packets, 3);
    }

    #[test]
    fn damage_is_rendered_for_people_and_machines() {
        let d = DamagedStream {
            stream: "t/ust/big_0".into(),
            readable_bytes: 4096,
            recorded_bytes: 8192,
            readable_packets: 1,
            recorded_packets: 2,
        };
        assert_eq!(
            damage_lines(std::slice::from_ref(&d)),
            vec!["damaged stream t/ust/big_0: 4096 of 8192 bytes readable (1 of 2 packets): results are incomplete"]
        );
        let [(_, complete), (_, rows)] = damage_json(&[d]);
        assert_eq!(complete, Value::Bool(false));
        assert_eq!(rows[0]["recorded_bytes"], 8192);
        assert_eq!(damage_json(&[])[0].1, Value::Bool(true));
    }
}
