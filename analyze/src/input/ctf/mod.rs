//! The built-in reader of CTF 1.8 traces as LTTng-UST writes them: the
//! TSDL metadata ([`tsdl`]) compiled once per trace, its event classes
//! bound to the analyser's events then ([`stream::Trace`]), and each stream
//! file mapped and read in place, packet by packet over the packets the
//! damage check found whole (LTTng's index, or the packets' own headers).
//! The streams are split into parts of about equal bytes; each part is
//! read on a thread of its own, its streams merged by timestamp into
//! batches, and the parts merged by [`crate::input::merge::Merge`] as
//! libbabeltrace2's are; a single part is read on its own thread too
//! when there is a second core (a pipeline), else on the merge's own
//! thread, its events handed on from the mapped packets without batches.
//! A trace it cannot read (CTF 2, a type it does not know) is an error at
//! [`open`], before any event is handed on.

mod decode;
pub(crate) mod map;
mod stream;
pub mod tsdl;

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::input::damage::StreamCheck;
use crate::input::merge::{
    Batch, Chooser, CopiedEvent, Head, Merge, Outlet, Part, BATCH, BATCH_BYTES, STEP,
};
use crate::input::step::{Discarded, Step};
use crate::model::event::{set_kinded_message_shape, set_message_shape};
use crate::model::event::{Counted, Event, EventClass, Field, Reading, Wanted, MAX_FIELDS};
use crate::model::message::Shape;

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
/// part decoded on a thread of its own; a single one on the caller's
/// unless `thread_of_its_own`. Fails, before any event is read, when a
/// trace's metadata is not one this reader compiles.
pub fn open(
    checked: &[(PathBuf, Vec<StreamCheck>)],
    groups: Vec<Vec<(usize, Vec<&StreamCheck>)>>,
    wanted: Wanted,
    thread_of_its_own: bool,
) -> Result<Merge, String> {
    let traces = checked
        .iter()
        .map(|(dir, _)| compile(dir).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()?;
    let one = groups.len() == 1;
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
        if one && !thread_of_its_own {
            return Ok(Merge::local(Box::new(Local::new(lane))));
        }
        parts.push(Box::new(move |outlet| {
            lane.run(outlet, one);
            Box::new(()) as Box<dyn Send>
        }));
    }
    Merge::spawn(parts, wanted.kinds())
}

/// Events read, at most, into one batch (see [`Lane::run`]).
const PASSED: usize = 2 * BATCH;

/// A stream of a part, with its next event read ahead.
struct LaneStream {
    stream: Stream,
    /// The trace's index in the part.
    trace: u32,
    path: PathBuf,
    next: Read,
    ended: bool,
    /// Its mapping's index in the part's batches, when its strings are read
    /// in place.
    map: Option<u16>,
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
            map: None,
        }
    }

    /// Reads the part to its end (or its first error, or until the merge
    /// is gone), sending batches.
    /// With `in_place`, the strings are read in place by the merge, which
    /// gives each packet's pages back once it has read its events (a part
    /// of more streams than a mapping's index holds copies the rest's):
    /// what a pipeline's single part does. Several parts copy them: their
    /// merge's thread has every part's batches to read, and reading each
    /// string from the mapped packets, among the events only counted
    /// (`calls`), costs it more than the copy saves the parts.
    fn run(mut self, outlet: Outlet, in_place: bool) {
        let mut batch = Batch::default();
        room(&mut batch, in_place);
        for (i, s) in self.streams.iter_mut().enumerate() {
            if let (true, Ok(m)) = (in_place, u16::try_from(i)) {
                s.map = Some(m);
                s.stream.keep_packets();
                batch.maps.push((m, Arc::clone(s.stream.map())));
            }
        }
        for (i, (dir, trace, base)) in self.traces.iter().enumerate() {
            batch.traces.push((i as u32, dir.clone()));
            for (c, e) in trace.events.iter().enumerate() {
                batch.classes.push((base + c as u32, e.class.clone()));
            }
        }
        let n_classes = self.readings.len();
        let mut counted = (vec![0u64; n_classes], i64::MAX, i64::MIN);
        let mut handed = vec![false; self.traces.len()];
        // Events read since the last batch was sent: with strings read in
        // place, a batch is sent after at most [`PASSED`] of them, handed on
        // or not, so that the packets the merge has yet to give back stay
        // a few MiB.
        let mut passed = 0;
        let most = match in_place {
            true => PASSED,
            false => usize::MAX,
        };
        let mut end = Ok(());
        for i in 0..self.streams.len() {
            if let Err(e) = self.advance(i) {
                end = Err(e);
            }
        }
        let mut chooser = Chooser::default();
        while end.is_ok() {
            let Some(i) = chooser.next(&self.streams) else {
                break;
            };
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
            passed += 1;
            if batch.events.len() >= BATCH || batch.bytes_len() >= BATCH_BYTES || passed >= most {
                passed = 0;
                batch.discarded = self.discarded();
                self.finished(&mut batch);
                if !outlet.send(&mut batch) {
                    return;
                }
                room(&mut batch, in_place);
            }
        }
        batch.discarded = self.discarded();
        self.finished(&mut batch);
        batch.counted = Some(counted);
        batch.end = Some(end);
        outlet.send(&mut batch);
    }

    /// Lists in `batch` the packets read to their end since the last batch:
    /// all their events are in it or in the batches before.
    fn finished(&mut self, batch: &mut Batch) {
        for s in &mut self.streams {
            if let Some(m) = s.map {
                let done = s.stream.finished.drain(..);
                batch.done.extend(done.map(|(at, len)| (m, at, len)));
            }
        }
    }

    /// Reads stream `i`'s next event ahead.
    fn advance(&mut self, i: usize) -> Result<(), String> {
        let s = &mut self.streams[i];
        let base = self.traces[s.trace as usize].2;
        let readings = &self.readings;
        let fields = |c: u32| readings[(base + c) as usize] == Reading::Fields;
        match s.stream.next(&mut s.next, fields) {
            Ok(more) => {
                s.ended = !more;
                Ok(())
            }
            Err(e) => {
                s.ended = true;
                Err(in_file(&s.path, e))
            }
        }
    }

    fn discarded(&self) -> Discarded {
        Discarded {
            events: self.streams.iter().map(|s| s.stream.discarded).sum(),
            reports_without_count: self
                .streams
                .iter()
                .map(|s| s.stream.discarded_unknown)
                .sum(),
        }
    }
}

/// Fields per event a batch has room for from the start (LTTng's events
/// of the analyser have three or four).
const FIELDS_PER_EVENT: usize = 4;

/// Makes room in `batch`, an empty one (a read one back from the merge,
/// or a new one when none is back yet), for a full batch: a new one is
/// not grown by doubling, each step a copy of what it holds and its
/// pages touched again. Its text's bytes only when strings are copied.
fn room(batch: &mut Batch, in_place: bool) {
    let bytes = if in_place { 0 } else { BATCH_BYTES };
    batch.reserve(BATCH, FIELDS_PER_EVENT, bytes);
}

/// `e`, said of the stream file `path`: out of the reading loop's way.
#[cold]
#[inline(never)]
fn in_file(path: &Path, e: decode::Error) -> String {
    format!("{}: {e}", path.display())
}

/// Room for an event's fields, written by `fields_of` (only the slots it
/// uses: an event has a few fields of the sixteen).
type Slots<'p> = [MaybeUninit<Field<'p>>; MAX_FIELDS];

/// No field written yet.
const EMPTY: MaybeUninit<Field<'static>> = MaybeUninit::uninit();

/// The read-ahead event `r`'s fields (of `packet`, its stream's current
/// packet) written into the first slots of `out` when `with_fields`.
fn fields_of<'o, 'p>(
    packet: &'p [u8],
    r: &Read,
    with_fields: bool,
    out: &'o mut Slots<'p>,
) -> &'o [Field<'p>] {
    let n = if with_fields {
        r.fields.len().min(MAX_FIELDS)
    } else {
        0
    };
    for (slot, v) in out.iter_mut().zip(&r.fields[..n]) {
        slot.write(match *v {
            Val::Int(i) => Field::Int(i),
            // As widened, the end cannot wrap below the start: the slice
            // is checked against the packet's end only.
            Val::Str(at, len) => {
                let at = at as usize;
                Field::Str(&packet[at..at + len as usize])
            }
            Val::Other => Field::Other,
        });
    }
    // SAFETY: the loop above wrote each of the first `n` slots (`n` is at
    // most `r.fields.len()` and `MAX_FIELDS`, so the zip stops at neither
    // before `n`), and `MaybeUninit<Field>` has `Field`'s layout.
    unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<Field<'p>>(), n) }
}

/// The read-ahead event's CPU and `vpid` as a batch holds them (-1 when
/// its fields are not read).
fn cpu_vpid(r: &Read, with_fields: bool) -> (i32, i32) {
    match with_fields {
        true => (
            i32::try_from(r.cpu).unwrap_or(-1),
            i32::try_from(r.vpid).unwrap_or(-1),
        ),
        false => (-1, -1),
    }
}

/// Copies the read-ahead event of `s` into `batch` (its fields when
/// `with_fields`, else its time only): its strings as their place in the
/// stream's mapping when it has one in the batches, else their bytes.
fn copy(batch: &mut Batch, s: &LaneStream, class: u32, with_fields: bool) {
    let r = &s.next;
    let mut slots = [EMPTY; MAX_FIELDS];
    let fields = fields_of(s.stream.packet(), r, with_fields, &mut slots);
    let ec = &s.stream.trace.events[r.class as usize].class;
    let (cpu, vpid) = cpu_vpid(r, with_fields);
    let event = CopiedEvent {
        ts_ns: r.ts_ns,
        cpu,
        vpid,
        class,
        trace: s.trace,
        first: 0,
        n: 0,
        shape: Shape::Unknown,
    };
    // The shape is written into the event where the batch holds it, after
    // the push, not built apart and copied in with the event.
    let at = batch.events.len();
    match s.map {
        // SAFETY: the strings lie in the packet, part of the stream's
        // mapping, which `Lane::run` listed in the first batch's maps.
        Some(_) => unsafe { batch.push_in_place(event, fields) },
        None => batch.push(event, fields),
    }
    shape_in_place(batch, at, ec, fields);
}

/// Writes the message shape of the event pushed at `at` into `batch`
/// (of class `ec`, with `fields`) where the batch holds it, when the part
/// finds shapes (see [`Batch::shaped`]).
fn shape_in_place(batch: &mut Batch, at: usize, ec: &EventClass, fields: &[Field]) {
    if !batch.shaped {
        return;
    }
    let kinds = batch.kinds;
    let shape = &mut batch.events[at].shape;
    match kinds {
        true => set_kinded_message_shape(shape, ec, fields),
        false => set_message_shape(shape, ec, fields),
    }
}

/// A part read on the merge's thread: its events handed on from the
/// mapped packets as [`Lane::run`] would send them.
struct Local {
    lane: Lane,
    started: bool,
    handed: Vec<bool>,
    /// Per class index of the part, its events counted rather than handed
    /// on, and the first and last one's time.
    counted: (Vec<u64>, i64, i64),
    /// The part's classes, per class index (for [`Counted::add`]).
    classes: Vec<EventClass>,
    /// Per trace of the part: its number among the merge's traces, once
    /// its first event is handed on.
    numbers: Vec<Option<u32>>,
    ended: bool,
    chooser: Chooser,
}

impl Local {
    fn new(lane: Lane) -> Local {
        let classes = lane
            .traces
            .iter()
            .flat_map(|(_, trace, _)| trace.events.iter().map(|e| e.class.clone()))
            .collect();
        Local {
            started: false,
            handed: vec![false; lane.traces.len()],
            counted: (vec![0; lane.readings.len()], i64::MAX, i64::MIN),
            classes,
            numbers: vec![None; lane.traces.len()],
            ended: false,
            chooser: Chooser::default(),
            lane,
        }
    }
}

impl Head for LaneStream {
    #[inline(always)]
    fn head(&self) -> Option<i64> {
        (!self.ended).then_some(self.next.ts_ns)
    }
}

impl crate::input::merge::Local for Local {
    fn step(
        &mut self,
        handler: &mut dyn FnMut(&Event) -> bool,
        traces: &mut HashMap<PathBuf, u32>,
    ) -> Result<Step, String> {
        if !self.started {
            self.started = true;
            // As `Lane::run`: every stream read ahead, the last error kept.
            let mut end = Ok(());
            for i in 0..self.lane.streams.len() {
                if let Err(e) = self.lane.advance(i) {
                    end = Err(e);
                }
            }
            end?;
        }
        for _ in 0..STEP {
            let Some(i) = self.chooser.next(&self.lane.streams) else {
                self.ended = true;
                return Ok(Step::End);
            };
            let s = &self.lane.streams[i];
            let (dir, _, base) = &self.lane.traces[s.trace as usize];
            let class = base + s.next.class;
            match self.lane.readings[class as usize] {
                Reading::Dropped => {}
                Reading::Counted if self.handed[s.trace as usize] => {
                    self.counted.0[class as usize] += 1;
                    self.counted.1 = self.counted.1.min(s.next.ts_ns);
                    self.counted.2 = self.counted.2.max(s.next.ts_ns);
                }
                reading => {
                    self.handed[s.trace as usize] = true;
                    let next = traces.len() as u32;
                    let trace = *self.numbers[s.trace as usize]
                        .get_or_insert_with(|| *traces.entry(dir.clone()).or_insert(next));
                    let with_fields = reading == Reading::Fields;
                    let r = &s.next;
                    let mut slots = [EMPTY; MAX_FIELDS];
                    let fields = fields_of(s.stream.packet(), r, with_fields, &mut slots);
                    let ec = &s.stream.trace.events[r.class as usize].class;
                    let (cpu, vpid) = cpu_vpid(r, with_fields);
                    let mut event = Event {
                        class: ec,
                        ts_ns: r.ts_ns,
                        cpu: cpu.into(),
                        trace,
                        vpid: vpid.into(),
                        node: trace,
                        fields,
                        shape: Shape::Unknown,
                    };
                    // Written in place: a shape built apart and copied in
                    // is read back, 8 bytes at a time, right after its
                    // smaller stores.
                    set_message_shape(&mut event.shape, ec, fields);
                    if !handler(&event) {
                        return Ok(Step::End);
                    }
                }
            }
            self.lane.advance(i)?;
        }
        Ok(Step::Progress)
    }

    fn counted(&self, counted: &mut Counted) {
        if self.ended {
            let (counts, first, last) = &self.counted;
            counted.add(&self.classes, counts, *first, *last);
        }
    }

    fn discarded(&self) -> Discarded {
        self.lane.discarded()
    }
}
