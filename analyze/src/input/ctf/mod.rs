//! The built-in reader of CTF 1.8 traces as LTTng-UST writes them: the
//! TSDL metadata ([`tsdl`]) compiled once per trace, its event classes
//! bound to the analyser's events then ([`stream::Trace`]), and each stream
//! file mapped and read in place, packet by packet over the packets the
//! damage check found whole (LTTng's index, or the packets' own headers).
//! The streams are split into parts of about equal bytes; each part is
//! read on a thread of its own, its streams merged by timestamp into
//! batches, and the parts merged by [`crate::input::merge::Merge`] as
//! libbabeltrace2's are. A trace it cannot read (CTF 2, a type it does not
//! know) is an error at [`open`], before any event is handed on.

mod decode;
mod map;
mod stream;
pub mod tsdl;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

use crate::input::damage::StreamCheck;
use crate::input::merge::{Batch, CopiedEvent, Merge, Part, BATCH, BATCH_BYTES};
use crate::model::event::message_shape;
use crate::model::event::{Field, Reading, Wanted, MAX_FIELDS};

use decode::Val;
use stream::{Read, Stream, Trace};

/// Compiles a trace's metadata (the error says why it cannot be read).
pub fn compile(dir: &Path) -> Result<Trace, String> {
    let text = crate::input::discovery::metadata_text(&dir.join("metadata"))?;
    let meta = tsdl::parse(&text).map_err(|e| format!("{}: {e}", dir.display()))?;
    Trace::new(&meta).map_err(|e| format!("{}: {e}", dir.display()))
}

/// Opens the streams of `checked` (trace directories with their streams'
/// readable packets) in the parts `groups` makes of them (per part: each
/// trace's index in `checked` and the streams of it the part reads), each
/// part decoded on a thread of its own. Fails, before any event is read,
/// when a trace's metadata is not one this reader compiles.
pub fn open(
    checked: &[(PathBuf, Vec<StreamCheck>)],
    groups: Vec<Vec<(usize, Vec<&StreamCheck>)>>,
    wanted: Wanted,
) -> Result<Merge, String> {
    let traces = checked
        .iter()
        .map(|(dir, _)| compile(dir).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    let mut parts: Vec<Part> = Vec::new();
    for group in groups {
        let mut lane = Lane {
            streams: Vec::new(),
            traces: Vec::new(),
            readings: Vec::new(),
        };
        for (t, checks) in group {
            let base = lane.readings.len() as u32;
            let trace = &traces[t];
            lane.readings
                .extend(trace.events.iter().map(|e| wanted.reading(&e.class)));
            let index = lane.traces.len() as u32;
            lane.traces
                .push((checked[t].0.clone(), Arc::clone(trace), base));
            for check in checks {
                if check.packets.is_empty() {
                    continue;
                }
                let s = Stream::open(Arc::clone(trace), &check.path, check.packets.clone())?;
                lane.streams
                    .push(Lane::stream(s, index, check.path.clone()));
            }
        }
        parts.push(Box::new(move |send, spare| {
            lane.run(send, spare);
            Box::new(()) as Box<dyn Send>
        }));
    }
    Merge::spawn(parts)
}

/// A stream of a part, with its next event read ahead.
struct LaneStream {
    stream: Stream,
    /// The trace's index in the part.
    trace: u32,
    path: PathBuf,
    next: Read,
    ended: bool,
}

/// One part: its streams, its traces (directory, compiled metadata,
/// index of its first class among the part's) and what is done with
/// each class's events.
struct Lane {
    streams: Vec<LaneStream>,
    traces: Vec<(PathBuf, Arc<Trace>, u32)>,
    readings: Vec<Reading>,
}

impl Lane {
    fn stream(stream: Stream, trace: u32, path: PathBuf) -> LaneStream {
        LaneStream {
            stream,
            trace,
            path,
            next: Read::default(),
            ended: false,
        }
    }

    /// Reads the part to its end (or its first error, or until the merge
    /// is gone), sending batches.
    fn run(mut self, send: SyncSender<Batch>, spare: Receiver<Batch>) {
        let mut batch = Batch::default();
        for (i, (dir, trace, base)) in self.traces.iter().enumerate() {
            batch.traces.push((i as u32, dir.clone()));
            for (c, e) in trace.events.iter().enumerate() {
                batch.classes.push((base + c as u32, e.class.clone()));
            }
        }
        let n_classes = self.readings.len();
        let mut counted = (vec![0u64; n_classes], i64::MAX, i64::MIN);
        let mut handed = vec![false; self.traces.len()];
        let mut end = Ok(());
        for i in 0..self.streams.len() {
            if let Err(e) = self.advance(i) {
                end = Err(e);
            }
        }
        while end.is_ok() {
            let mut best: Option<(i64, usize)> = None;
            for (i, s) in self.streams.iter().enumerate() {
                if !s.ended && best.is_none_or(|(ts, _)| s.next.ts_ns < ts) {
                    best = Some((s.next.ts_ns, i));
                }
            }
            let Some((_, i)) = best else { break };
            let s = &self.streams[i];
            let base = self.traces[s.trace as usize].2;
            let class = base + s.next.class;
            match self.readings[class as usize] {
                Reading::Dropped => {}
                Reading::Counted if handed[s.trace as usize] => {
                    counted.0[class as usize] += 1;
                    counted.1 = counted.1.min(s.next.ts_ns);
                    counted.2 = counted.2.max(s.next.ts_ns);
                }
                reading => {
                    handed[s.trace as usize] = true;
                    copy(&mut batch, s, class, reading == Reading::Fields);
                }
            }
            if let Err(e) = self.advance(i) {
                end = Err(e);
                break;
            }
            if batch.events.len() >= BATCH || batch.bytes.len() >= BATCH_BYTES {
                batch.discarded = self.discarded();
                let mut next = spare.try_recv().unwrap_or_default();
                next.clear();
                let full = std::mem::replace(&mut batch, next);
                if send.send(full).is_err() {
                    return;
                }
            }
        }
        batch.discarded = self.discarded();
        batch.counted = Some(counted);
        batch.end = Some(end);
        let _ = send.send(batch);
    }

    /// Reads stream `i`'s next event ahead.
    fn advance(&mut self, i: usize) -> Result<(), String> {
        let s = &mut self.streams[i];
        let base = self.traces[s.trace as usize].2;
        let readings = &self.readings;
        let fields = |c: u32| readings[(base + c) as usize] == Reading::Fields;
        match s.stream.next(&mut s.next, &fields) {
            Ok(more) => {
                s.ended = !more;
                Ok(())
            }
            Err(e) => {
                s.ended = true;
                Err(format!("{}: {e}", s.path.display()))
            }
        }
    }

    fn discarded(&self) -> crate::input::step::Discarded {
        crate::input::step::Discarded {
            events: self.streams.iter().map(|s| s.stream.discarded).sum(),
            reports_without_count: self
                .streams
                .iter()
                .map(|s| s.stream.discarded_unknown)
                .sum(),
        }
    }
}

/// Copies the read-ahead event of `s` into `batch` (its fields when
/// `with_fields`, else its time only).
fn copy(batch: &mut Batch, s: &LaneStream, class: u32, with_fields: bool) {
    let packet = s.stream.packet();
    let r = &s.next;
    let mut fields = [Field::Other; MAX_FIELDS];
    let n = if with_fields {
        r.fields.len().min(MAX_FIELDS)
    } else {
        0
    };
    for (slot, v) in fields.iter_mut().zip(&r.fields[..n]) {
        *slot = match *v {
            Val::Int(i) => Field::Int(i),
            Val::Str(at, len) => Field::Str(&packet[at as usize..(at + len) as usize]),
            Val::Other => Field::Other,
        };
    }
    let ec = &s.stream.trace.events[r.class as usize].class;
    let shape = message_shape(ec, &fields[..n]);
    let (cpu, vpid) = if with_fields {
        (r.cpu, r.vpid)
    } else {
        (-1, -1)
    };
    batch.push(
        CopiedEvent {
            ts_ns: r.ts_ns,
            cpu: i32::try_from(cpu).unwrap_or(-1),
            vpid: i32::try_from(vpid).unwrap_or(-1),
            class,
            trace: s.trace,
            first: 0,
            n: 0,
            shape,
        },
        &fields[..n],
    );
}
