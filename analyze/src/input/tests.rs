//! A small trace written here byte by byte, as LTTng-UST writes one
//! (compact event headers, a `vpid` context, two packets with discarded
//! events between them, a timestamp whose low bits wrap), read by the
//! built-in reader, and by libbabeltrace2 when the build has it: both
//! must hand on the same events.

use std::path::{Path, PathBuf};

use crate::input::reader::{Decoder, Reader, Source};
use crate::input::step::Step;
use crate::model::event::{Field, Kind, Wanted};
use crate::model::message::Shape;

const METADATA: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
trace {
	major = 1;
	minor = 8;
	uuid = "2a2a2a2a-2a2a-2a2a-2a2a-2a2a2a2a2a2a";
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint8_t  uuid[16];
		uint32_t stream_id;
		uint64_t stream_instance_id;
	};
};
clock {
	name = "monotonic";
	freq = 1000000000;
	offset = 1700000000000000000;
};
typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } := uint27_clock_monotonic_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
struct packet_context {
	uint64_clock_monotonic_t timestamp_begin;
	uint64_clock_monotonic_t timestamp_end;
	uint64_t content_size;
	uint64_t packet_size;
	uint64_t packet_seq_num;
	unsigned long events_discarded;
	uint32_t cpu_id;
};
struct event_header_compact {
	enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
	variant <id> {
		struct { uint27_clock_monotonic_t timestamp; } compact;
		struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;
	} v;
} align(8);
event {
	name = "org_erlang_dyntrace:function_call";
	id = 0;
	stream_id = 0;
	fields := struct {
		string _pid;
		string _entry;
		integer { size = 32; align = 8; signed = 0; encoding = none; base = 10; } _depth;
	};
};
event {
	name = "org_erlang_dyntrace:message_send";
	id = 1;
	stream_id = 0;
	fields := struct { string _from; string _to; string _message; };
};
event {
	name = "another_provider:thing";
	id = 2;
	stream_id = 0;
	fields := struct { uint8_t _n; uint32_t _xs[_n]; };
};
stream {
	id = 0;
	event.header := struct event_header_compact;
	packet.context := struct packet_context;
	event.context := struct {
		integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;
	};
};
"#;

/// One event to write: class id, clock cycles, payload bytes.
struct Ev(u32, u64, Vec<u8>);

fn strings(parts: &[&str]) -> Vec<u8> {
    parts.iter().flat_map(|s| s.bytes().chain([0])).collect()
}

/// A packet of `size` bytes holding `events`, after `prev_ts`.
fn packet(events: &[Ev], discarded: u64, seq: u64, cpu: u32, size: usize) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0xC1FC_1FC1u32.to_le_bytes());
    b.extend_from_slice(&[0x2a; 16]);
    b.extend_from_slice(&0u32.to_le_bytes());
    // One stream instance per CPU, as LTTng writes them: packets of one
    // instance in two files would be one stream to libbabeltrace2, its
    // packets in the order the directory lists the files.
    b.extend_from_slice(&u64::from(cpu).to_le_bytes());
    let begin = events.first().map_or(0, |e| e.1);
    let end = events.last().map_or(0, |e| e.1);
    b.extend_from_slice(&begin.to_le_bytes());
    b.extend_from_slice(&end.to_le_bytes());
    let sizes_at = b.len();
    b.extend_from_slice(&[0; 16]);
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(&discarded.to_le_bytes());
    b.extend_from_slice(&cpu.to_le_bytes());
    let mut prev = begin;
    for Ev(id, ts, payload) in events {
        if ts - prev < 1 << 27 {
            let word = id | ((*ts as u32 & 0x7ff_ffff) << 5);
            b.extend_from_slice(&word.to_le_bytes());
        } else {
            b.push(31);
            b.extend_from_slice(&id.to_le_bytes());
            b.extend_from_slice(&ts.to_le_bytes());
        }
        prev = *ts;
        b.extend_from_slice(&4242i32.to_le_bytes());
        b.extend_from_slice(payload);
    }
    let content = b.len() as u64 * 8;
    b[sizes_at..sizes_at + 8].copy_from_slice(&content.to_le_bytes());
    b[sizes_at + 8..sizes_at + 16].copy_from_slice(&(size as u64 * 8).to_le_bytes());
    b.resize(size, 0);
    b
}

fn write_trace(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("metadata"), METADATA).unwrap();
    let call = |ts, depth: u32| {
        let mut p = strings(&["<0.90.0>", "shop:buy/2"]);
        p.extend_from_slice(&depth.to_le_bytes());
        Ev(0, ts, p)
    };
    let send = |ts, msg: &str| Ev(1, ts, strings(&["<0.90.0>", "<0.91.0>", msg]));
    let other = Ev(2, 0x7ff_fff8, vec![2, 1, 0, 0, 0, 2, 0, 0, 0]);
    let first = [
        call(1_000, 1),
        send(0x7ff_fff0, "{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>},stock}"),
        other,
        // The low 27 bits wrap: 0x10 after 0x7ff_fff8.
        call(0x800_0010, 2),
        // Further than 2^27 cycles: an extended header.
        send(0x3000_0000, "{#Ref<0.1.2.3>,42}"),
    ];
    let second = [call(0x3000_0100, 3), send(0x3000_0200, "")];
    let mut stream = packet(&first, 0, 0, 1, 1024);
    stream.extend(packet(&second, 3, 1, 1, 512));
    std::fs::write(dir.join("chan_1"), stream).unwrap();
    let third = [call(0x3000_0150, 4)];
    std::fs::write(dir.join("chan_0"), packet(&third, 0, 0, 0, 256)).unwrap();
}

/// What a reader hands on, owned.
type Seen = (i64, String, i64, i64, Vec<String>);

fn read(dir: &Path, decoder: Decoder) -> (Vec<Seen>, u64) {
    let source = Source::Traces(vec![dir.to_path_buf()]);
    let reader = Reader::open_with(&source, Wanted::all(), decoder).expect("opens");
    let (seen, _, discarded) = read_all(reader);
    (seen, discarded)
}

/// Every event `reader` hands on, each message's shape, and the
/// discarded count.
fn read_all(mut reader: Reader) -> (Vec<Seen>, Vec<Shape>, u64) {
    let mut classes = Vec::new();
    let mut shapes = Vec::new();
    let mut seen = Vec::new();
    loop {
        let step = reader
            .step(&mut classes, &mut |ev| {
                let fields = ev
                    .fields
                    .iter()
                    .map(|f| match f {
                        Field::Str(s) => String::from_utf8_lossy(s).into_owned(),
                        Field::Int(i) => i.to_string(),
                        Field::Other => "?".into(),
                    })
                    .collect();
                seen.push((ev.ts_ns, ev.class.name.clone(), ev.cpu, ev.vpid, fields));
                if ev.kind() == Some(Kind::MessageSend) {
                    shapes.push(ev.shape.without_kind());
                }
            })
            .expect("reads");
        if step == Step::End {
            break;
        }
    }
    (seen, shapes, reader.discarded().events)
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("dyntrace-ctf-{name}-{}", std::process::id()))
}

#[test]
fn a_written_trace_reads_as_written() {
    let dir = scratch("written");
    write_trace(&dir);
    let (seen, discarded) = read(&dir, Decoder::Builtin);
    let origin = 1_700_000_000_000_000_000i64;
    let times: Vec<i64> = seen.iter().map(|s| s.0 - origin).collect();
    assert_eq!(
        times,
        vec![
            1_000,
            0x7ff_fff0,
            0x800_0010,
            0x3000_0000,
            0x3000_0100,
            0x3000_0150,
            0x3000_0200
        ]
    );
    // Another provider's event is not handed on.
    assert!(seen.iter().all(|s| s.1.starts_with("org_erlang_dyntrace:")));
    assert_eq!(seen[0].2, 1);
    assert_eq!(seen[0].3, 4242);
    assert_eq!(seen[0].4, vec!["<0.90.0>", "shop:buy/2", "1"]);
    assert_eq!(seen[5].2, 0, "chan_0's packet is of CPU 0");
    assert_eq!(seen[6].4, vec!["<0.90.0>", "<0.91.0>", ""]);
    assert_eq!(discarded, 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every arrangement of the built-in reader hands on the same events in
/// the same order, with the same messages' shapes: its streams read on
/// this thread, read on a thread of their own (a pipeline), or split in
/// two parts merged here.
#[test]
fn every_arrangement_reads_the_same_events() {
    let dir = scratch("arrangements");
    write_trace(&dir);
    let open = |parts, own| Reader::open_builtin(&dir, Wanted::all(), parts, own).expect("opens");
    let here = read_all(open(1, false));
    assert_eq!(here.0.len(), 7);
    assert!(matches!(here.1[0], Shape::Plain { .. }), "{:?}", here.1);
    assert!(matches!(here.1[1], Shape::Reply(_)), "{:?}", here.1);
    assert_eq!(read_all(open(1, true)), here);
    assert_eq!(read_all(open(2, true)), here);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "babeltrace2")]
#[test]
fn libbabeltrace2_reads_the_same_events() {
    let dir = scratch("both");
    write_trace(&dir);
    let ours = read(&dir, Decoder::Builtin);
    let reference = read(&dir, Decoder::Babeltrace2);
    assert_eq!(ours, reference);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_it_cannot_read_says_why() {
    let dir = scratch("unknown");
    write_trace(&dir);
    let text = METADATA.replace("string _entry;", "mystery_t _entry;");
    std::fs::write(dir.join("metadata"), text).unwrap();
    let err = crate::input::ctf::compile(&dir)
        .err()
        .expect("an unknown type");
    assert!(err.contains("unknown type `mystery_t`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace the built-in reader refuses (here an event id above the ones
/// it binds) is read by libbabeltrace2 instead, with the same events.
#[cfg(feature = "babeltrace2")]
#[test]
fn a_trace_it_cannot_read_goes_to_libbabeltrace2() {
    let dir = scratch("fallback");
    write_trace(&dir);
    let text = METADATA.to_string()
        + "event {\n\tname = \"another_provider:rare\";\n\tid = 70000;\n\tstream_id = 0;\n\
           \tfields := struct { uint8_t _n; };\n};\n";
    std::fs::write(dir.join("metadata"), text).unwrap();
    assert!(crate::input::ctf::compile(&dir).is_err());
    let fell_back = read(&dir, Decoder::Builtin);
    assert_eq!(fell_back.0.len(), 7);
    assert_eq!(fell_back, read(&dir, Decoder::Babeltrace2));
    std::fs::remove_dir_all(&dir).unwrap();
}
