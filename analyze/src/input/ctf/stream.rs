//! One trace bound for reading (its metadata compiled, its event classes
//! bound to the analyser's events once), and one stream file read packet
//! by packet, event by event.

use std::path::Path;
use std::sync::Arc;

use super::decode::{Code, Cursor, Error, Flat, Header, Names, Val};
use super::map::Map;
use super::tsdl::Metadata;
use crate::model::event::EventClass;

/// Magic number opening every CTF packet.
const PACKET_MAGIC: u64 = 0xC1FC_1FC1;

/// A stream class, compiled.
struct StreamCode {
    id: u64,
    packet_context: Option<Code>,
    event_header: Option<Code>,
    /// How its event header is read.
    header: Header,
    event_context: Option<Code>,
    /// Position of `vpid` among the event context's members.
    vpid: Option<usize>,
    /// Event class (index in [`Trace::events`]) per id, for small ids.
    by_id: Vec<u32>,
}

/// An event class, compiled.
pub struct EventCode {
    pub class: EventClass,
    context: Option<Code>,
    fields: Option<Code>,
    /// Its fields' members and alignment when each is a string or a plain
    /// integer (what LTTng-UST writes for the analyser's events): read in a
    /// loop of their own, their integers not kept, since no variant or
    /// sequence of the event looks back at them.
    flat: Option<(Vec<Flat>, u32)>,
}

/// A trace's metadata, compiled once and shared by its streams' readers.
pub struct Trace {
    names: Names,
    packet_header: Option<Code>,
    streams: Vec<StreamCode>,
    pub events: Vec<EventCode>,
    /// ns = `origin_ns` + cycles * 1e9 / `freq`.
    origin_ns: i128,
    freq: u64,
    /// Numbers of the names the reader looks for.
    n_magic: u32,
    n_stream_id: u32,
    n_content_size: u32,
    n_packet_size: u32,
    n_events_discarded: u32,
    n_cpu_id: u32,
    n_id: u32,
}

/// Event ids bound through a table (larger ones are searched).
const DENSE_IDS: u64 = 1 << 16;

impl Trace {
    /// Compiles `meta`: every event class is bound to the analyser's
    /// events (by its name and its fields' names) here, once.
    pub fn new(meta: &Metadata) -> Result<Trace, String> {
        if meta.clocks.len() > 1 {
            return Err("metadata with more than one clock".into());
        }
        let mut names = Names::default();
        let little = meta.little;
        let packet_header = meta
            .packet_header
            .as_ref()
            .map(|t| names.compile(t, little, true));
        let mut streams: Vec<StreamCode> = meta
            .streams
            .iter()
            .map(|s| StreamCode {
                id: s.id,
                packet_context: s
                    .packet_context
                    .as_ref()
                    .map(|t| names.compile(t, little, true)),
                event_header: s
                    .event_header
                    .as_ref()
                    .map(|t| names.compile(t, little, true)),
                event_context: s
                    .event_context
                    .as_ref()
                    .map(|t| names.compile(t, little, true)),
                header: Header::Other,
                vpid: None,
                by_id: Vec::new(),
            })
            .collect();
        let vpid = names.intern("vpid");
        for s in &mut streams {
            if let Some(h) = &s.event_header {
                s.header = Header::of(h, &names);
            }
            if let Some(Code::Struct(members, _)) = &s.event_context {
                s.vpid = members
                    .iter()
                    .position(|(n, c)| *n == vpid && matches!(c, Code::Int(_) | Code::Enum(..)));
            }
        }
        let mut events = Vec::new();
        for (i, e) in meta.events.iter().enumerate() {
            let fields = e.fields.as_ref().map(|t| names.compile(t, little, true));
            let field_names = match &fields {
                Some(Code::Struct(members, _)) => members
                    .iter()
                    .map(|(n, _)| names.names[*n as usize].clone())
                    .collect(),
                _ => Vec::new(),
            };
            let stream = streams
                .iter_mut()
                .find(|s| s.id == e.stream_id)
                .ok_or_else(|| {
                    format!(
                        "event `{}` of an undescribed stream {}",
                        e.name, e.stream_id
                    )
                })?;
            if e.id < DENSE_IDS {
                let id = e.id as usize;
                if stream.by_id.len() <= id {
                    stream.by_id.resize(id + 1, u32::MAX);
                }
                stream.by_id[id] = i as u32;
            } else {
                return Err(format!(
                    "event `{}` has id {} (larger than this reader takes)",
                    e.name, e.id
                ));
            }
            events.push(EventCode {
                class: EventClass::new(&e.name, field_names),
                context: e.context.as_ref().map(|t| names.compile(t, little, true)),
                flat: fields.as_ref().and_then(Code::flat),
                fields,
            });
        }
        let clock = meta.clocks.first();
        let freq = clock.map_or(1_000_000_000, |c| c.freq);
        let origin_ns = clock.map_or(0, |c| {
            i128::from(c.offset_s) * 1_000_000_000
                + i128::from(c.offset) * 1_000_000_000 / i128::from(c.freq)
        });
        Ok(Trace {
            n_magic: names.intern("magic"),
            n_stream_id: names.intern("stream_id"),
            n_content_size: names.intern("content_size"),
            n_packet_size: names.intern("packet_size"),
            n_events_discarded: names.intern("events_discarded"),
            n_cpu_id: names.intern("cpu_id"),
            n_id: names.intern("id"),
            names,
            packet_header,
            streams,
            events,
            origin_ns,
            freq,
        })
    }

    /// Cycles of the clock as ns from its origin.
    #[inline]
    fn ns(&self, cycles: u64) -> i64 {
        if self.freq == 1_000_000_000 {
            return (self.origin_ns as i64).wrapping_add(cycles as i64);
        }
        (self.origin_ns + i128::from(cycles) * 1_000_000_000 / i128::from(self.freq)) as i64
    }
}

/// `e`, said of the packet at byte `offset`: out of the reading loop's
/// way (an error ends the stream's reading).
#[cold]
#[inline(never)]
fn at_packet(offset: u64, e: Error) -> Error {
    format!("packet at byte {offset}: {e}").into()
}

/// One event as read: its values are positions in the current packet.
#[derive(Default)]
pub struct Read {
    pub ts_ns: i64,
    /// Index in [`Trace::events`].
    pub class: u32,
    pub cpu: i64,
    pub vpid: i64,
    pub fields: Vec<Val>,
}

/// One stream file read in order over its readable packets.
pub struct Stream {
    pub trace: Arc<Trace>,
    map: Arc<Map>,
    /// Whether the pages of a packet read go back to the kernel at once;
    /// else its place is kept in `finished` for whoever reads its strings
    /// last ([`Stream::keep_packets`]).
    give_back: bool,
    /// Packets read to their end and not given back: offset and size.
    pub finished: Vec<(usize, usize)>,
    /// `(offset, size)` of each packet to read, in order.
    packets: Vec<(u64, u64)>,
    next_packet: usize,
    /// The current packet: its offset and size in the file, read position
    /// and content end (bits from the packet's start).
    at: usize,
    size: usize,
    pos: u64,
    end: u64,
    stream: usize,
    cpu: i64,
    clock: u64,
    /// The previous packet's discarded-events count.
    prev_discarded: Option<u64>,
    /// Discarded events reported (as babeltrace2 reports them) and
    /// reports without a count.
    pub discarded: u64,
    pub discarded_unknown: u64,
    ints: Vec<(u32, u64, u32)>,
    context: Vec<Val>,
}

impl Stream {
    /// Opens `path` to read the packets `packets`.
    pub fn open(
        trace: Arc<Trace>,
        path: &Path,
        packets: Vec<(u64, u64)>,
    ) -> Result<Stream, String> {
        let map = Map::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Stream {
            trace,
            map: Arc::new(map),
            give_back: true,
            finished: Vec::new(),
            packets,
            next_packet: 0,
            at: 0,
            size: 0,
            pos: 0,
            end: 0,
            stream: 0,
            cpu: -1,
            clock: 0,
            prev_discarded: None,
            discarded: 0,
            discarded_unknown: 0,
            ints: Vec::new(),
            context: Vec::new(),
        })
    }

    /// The current packet's bytes.
    pub fn packet(&self) -> &[u8] {
        &self.map.bytes()[self.at..self.at + self.size]
    }

    /// The stream file's mapping, for reading its strings elsewhere.
    pub fn map(&self) -> &Arc<Map> {
        &self.map
    }

    /// Keeps each packet read to its end mapped, listed in
    /// [`Stream::finished`], rather than giving its pages back: another
    /// thread reads its strings in place after this one has moved on.
    pub fn keep_packets(&mut self) {
        self.give_back = false;
    }

    /// Reads the next packet's header and context; false past the last.
    fn next_packet(&mut self) -> Result<bool, Error> {
        if self.size > 0 {
            match self.give_back {
                true => self.map.done_with(self.at, self.size),
                false => self.finished.push((self.at, self.size)),
            }
        }
        let Some(&(offset, size)) = self.packets.get(self.next_packet) else {
            self.size = 0;
            return Ok(false);
        };
        self.next_packet += 1;
        let len = self.map.bytes().len();
        let (at, size) = (offset as usize, size as usize);
        if at.checked_add(size).is_none_or(|e| e > len) {
            return Err(format!("packet at byte {offset} runs past the file's end").into());
        }
        self.at = at;
        self.size = size;
        let t = Arc::clone(&self.trace);
        self.ints.clear();
        let mut c = Cursor {
            buf: &self.map.bytes()[at..at + size],
            pos: 0,
            end: size as u64 * 8,
            ints: &mut self.ints,
            clock: self.clock,
        };
        let bad = |e: Error| at_packet(offset, e);
        if let Some(h) = &t.packet_header {
            c.read(h, u32::MAX, &t.names).map_err(bad)?;
            if c.last(t.n_magic).is_some_and(|m| m != PACKET_MAGIC) {
                return Err(format!("packet at byte {offset}: bad magic number").into());
            }
        }
        let id = c.last(t.n_stream_id).unwrap_or(0);
        self.stream = t
            .streams
            .iter()
            .position(|s| s.id == id)
            .ok_or_else(|| format!("packet at byte {offset}: undescribed stream class {id}"))?;
        if let Some(pc) = &t.streams[self.stream].packet_context {
            c.read(pc, u32::MAX, &t.names).map_err(bad)?;
        }
        let packet_bits = c.last(t.n_packet_size).unwrap_or(size as u64 * 8);
        let content_bits = c.last(t.n_content_size).unwrap_or(packet_bits);
        if content_bits > size as u64 * 8 || content_bits < c.pos {
            return Err(format!(
                "packet at byte {offset}: content size {content_bits} bits out of its packet"
            )
            .into());
        }
        self.cpu = c.last(t.n_cpu_id).map_or(-1, |v| v as i64);
        if let Some(d) = c.last(t.n_events_discarded) {
            match self.prev_discarded {
                None if d > 0 => self.discarded_unknown += 1,
                Some(prev) => self.discarded += d.wrapping_sub(prev),
                None => {}
            }
            self.prev_discarded = Some(d);
        }
        self.pos = c.pos;
        self.end = content_bits;
        self.clock = c.clock;
        Ok(true)
    }

    /// Reads the next event into `out` (its fields' values only when
    /// `fields` says so for its class); false at the stream's end.
    #[inline]
    pub fn next(&mut self, out: &mut Read, fields: impl Fn(u32) -> bool) -> Result<bool, Error> {
        while self.size == 0 || self.pos >= self.end {
            if !self.next_packet()? {
                return Ok(false);
            }
        }
        let t = &*self.trace;
        let s = &t.streams[self.stream];
        self.ints.clear();
        let mut c = Cursor {
            buf: &self.map.bytes()[self.at..self.at + self.size],
            pos: self.pos,
            end: self.end,
            ints: &mut self.ints,
            clock: self.clock,
        };
        let offset = self.at as u64;
        let bad = |e: Error| at_packet(offset, e);
        let id = match (s.header, &s.event_header) {
            (Header::Compact, _) => c.lttng_header::<5, 27>().map_err(bad)?,
            (Header::Large, _) => c.lttng_header::<16, 32>().map_err(bad)?,
            (Header::Other, Some(h)) => {
                c.read(h, u32::MAX, &t.names).map_err(bad)?;
                c.last(t.n_id).unwrap_or(0)
            }
            (Header::Other, None) => 0,
        };
        let class = s
            .by_id
            .get(id as usize)
            .copied()
            .filter(|&i| i != u32::MAX)
            .ok_or_else(|| at_packet(offset, format!("an event of undescribed id {id}").into()))?;
        out.ts_ns = t.ns(c.clock);
        out.class = class;
        out.cpu = self.cpu;
        out.vpid = -1;
        if let Some(ctx) = &s.event_context {
            self.context.clear();
            c.read_members(ctx, &t.names, &mut self.context)
                .map_err(bad)?;
            if let Some(Val::Int(v)) = s.vpid.and_then(|i| self.context.get(i)) {
                out.vpid = *v;
            }
        }
        let e = &t.events[class as usize];
        if let Some(ctx) = &e.context {
            c.read(ctx, u32::MAX, &t.names).map_err(bad)?;
        }
        out.fields.clear();
        if let Some((members, align)) = &e.flat {
            c.read_flat(members, *align, fields(class).then_some(&mut out.fields))
                .map_err(bad)?;
        } else if let Some(f) = &e.fields {
            if fields(class) {
                c.read_members(f, &t.names, &mut out.fields).map_err(bad)?;
            } else {
                c.read(f, u32::MAX, &t.names).map_err(bad)?;
            }
        }
        self.pos = c.pos;
        self.clock = c.clock;
        Ok(true)
    }
}
