//! Decoding on several cores: each part of the streams is read by a
//! decoder of its own (a libbabeltrace2 graph, or the built-in CTF
//! reader's streams) on a thread of its own (decoding is most of a read's
//! work), which copies our provider's events into batches (a pipeline's
//! single built-in part writes its strings as their place in the mapped
//! stream file, whose packets the merge gives back once it has read them;
//! other parts copy their bytes); the reader's thread merges the batches by timestamp (ties in part order) and hands
//! the events to the analyses in that one order. A single part on a
//! thread of its own makes a pipeline: one thread decodes, the other
//! analyses. Each part sends through a queue of a few batches, and the
//! read ones come back to it to be filled again, so memory stays bounded
//! whatever the trace's length and nothing is allocated per event. A
//! message event's shape is found on whichever side has time to spare
//! ([`Outlet::merge_behind`]).

use std::collections::HashMap;
#[cfg(feature = "babeltrace2")]
use std::ffi::{c_char, c_int, c_void, CStr};
#[cfg(feature = "babeltrace2")]
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

#[cfg(feature = "babeltrace2")]
use crate::input::babeltrace::{keep_class, Callbacks, Graph, RawEvent};
use crate::input::ctf::map::Map;
use crate::input::step::{Discarded, Step};
#[cfg(feature = "babeltrace2")]
use crate::model::event::kinded_message_shape;
#[cfg(feature = "babeltrace2")]
use crate::model::event::message_shape;
use crate::model::event::set_message_shape;
#[cfg(feature = "babeltrace2")]
use crate::model::event::Wanted;
#[cfg(feature = "babeltrace2")]
use crate::model::event::MAX_FIELDS;
use crate::model::event::{Counted, Event, EventClass, Field};
use crate::model::message::Shape;

/// Events per batch: each batch handed over may wake a sleeping thread,
/// which costs as much as copying a few hundred events.
pub(crate) const BATCH: usize = 4096;
/// Text bytes per batch: a batch is full at [`BATCH`] events or this much
/// text, whichever comes first, so that the batches in flight stay a few
/// MiB however long the fields (events only counted leave the batches to
/// the ones with fields).
pub(crate) const BATCH_BYTES: usize = 192 << 10;
/// Batches a part may have decoded ahead of the merge: enough to ride out
/// the other threads being scheduled out for a few time slices on a busy
/// machine (the merge waits for the slowest part), a few MiB per part.
const QUEUE: usize = 8;
/// Read batches kept for reuse per part: room for every batch a part can
/// have made (a full queue, the one it fills and the one being read), so
/// that none is freed and made anew, its pages faulted in again.
const SPARE: usize = QUEUE + 2;
/// Events merged per call of [`Merge::step`].
pub(crate) const STEP: usize = 1 << 16;

/// A copied event: its fields are `fields[first..first + n]` of its batch.
#[derive(Clone, Copy)]
pub(crate) struct CopiedEvent {
    pub(crate) ts_ns: i64,
    /// CPU numbers and pids fit (-1 stands for unknown, as for the shim).
    pub(crate) cpu: i32,
    pub(crate) vpid: i32,
    pub(crate) class: u32,
    pub(crate) trace: u32,
    pub(crate) first: u32,
    pub(crate) n: u32,
    /// Its message's shape, when the batch is [`Batch::shaped`].
    pub(crate) shape: Shape,
}

/// What a part sends: classes and traces first seen, then events.
#[derive(Default)]
pub(crate) struct Batch {
    pub(crate) classes: Vec<(u32, EventClass)>,
    /// A trace's first event: its index in the part and its directory.
    pub(crate) traces: Vec<(u32, PathBuf)>,
    pub(crate) events: Vec<CopiedEvent>,
    /// The events' fields as the analyses read them, so that the merge
    /// hands them on as they are: a string points into `bytes` (once the
    /// batch is sealed, see `unsealed`) or into a stream file's mapping
    /// that the merge keeps (see [`Batch::push_in_place`]). Their
    /// `'static` stands for "while the batch is unchanged": they are only
    /// lent out borrowed from the batch ([`Batch::fields`]).
    fields: Vec<Field<'static>>,
    /// Fields whose string is copied into `bytes` (the field's index, the
    /// offset, the length), pointed at by [`Batch::seal`]: `bytes` may
    /// move while it grows.
    unsealed: Vec<(u32, u32, u32)>,
    bytes: Vec<u8>,
    /// Whether [`Batch::seal`] pointed the fields at `bytes`: until
    /// [`Batch::clear`] no event is pushed and no room reserved (`bytes`
    /// would move under them; debug builds assert it).
    sealed: bool,
    /// Stream files first seen, whose strings [`Batch::push_in_place`]
    /// points into: the mapping's index in the part, and the mapping.
    pub(crate) maps: Vec<(u16, Arc<Map>)>,
    /// Packets read to their end by the part (mapping, offset, size):
    /// their pages go back to the kernel once the merge has read this
    /// batch, the last that holds their events.
    pub(crate) done: Vec<(u16, usize, usize)>,
    /// Whether the part found its message events' shapes (else the merge's
    /// thread finds them): see [`Outlet::merge_behind`].
    pub(crate) shaped: bool,
    /// Whether the shapes the part finds carry the messages' kinds
    /// ([`Wanted::kinds`](crate::model::event::Wanted::kinds)).
    pub(crate) kinds: bool,
    /// The part's discarded counts so far.
    pub(crate) discarded: Discarded,
    /// With the part's end: the events it counted rather than sent, per
    /// class index of the part, and the first and last one's time.
    pub(crate) counted: Option<(Vec<u64>, i64, i64)>,
    /// The part's end: read to the end, or its error.
    pub(crate) end: Option<Result<(), String>>,
}

impl Batch {
    /// Adds `event` with a copy of `fields` (its `first` and `n` are set
    /// here).
    pub(crate) fn push(&mut self, mut event: CopiedEvent, fields: &[Field]) {
        debug_assert!(!self.sealed, "a sealed batch is written");
        event.first = self.fields.len() as u32;
        event.n = fields.len() as u32;
        self.events.push(event);
        for f in fields {
            self.fields.push(match *f {
                Field::Str(s) => {
                    let at = self.bytes.len() as u32;
                    self.bytes.extend_from_slice(s);
                    let i = self.fields.len() as u32;
                    self.unsealed.push((i, at, s.len() as u32));
                    Field::Other
                }
                Field::Int(v) => Field::Int(v),
                Field::Other => Field::Other,
            });
        }
    }

    /// Adds `event` with `fields` as they are, strings and all (its
    /// `first` and `n` are set here).
    ///
    /// # Safety
    ///
    /// Every string of `fields` lies in a stream file's mapping that this
    /// batch or one the part sent before lists in [`Batch::maps`] (the
    /// merge keeps those mapped until it ends).
    pub(crate) unsafe fn push_in_place(&mut self, mut event: CopiedEvent, fields: &[Field<'_>]) {
        debug_assert!(!self.sealed, "a sealed batch is written");
        event.first = self.fields.len() as u32;
        event.n = fields.len() as u32;
        self.events.push(event);
        // SAFETY: the caller's promise: the mapping outlives the batch's
        // reading, and the fields are only lent out borrowed from the
        // batch. `Field<'_>` and `Field<'static>` differ in lifetime only.
        let fields = unsafe {
            std::slice::from_raw_parts(fields.as_ptr().cast::<Field<'static>>(), fields.len())
        };
        self.fields.extend_from_slice(fields);
    }

    /// The fields of `event`, one of this batch's.
    pub(crate) fn fields(&self, event: &CopiedEvent) -> &[Field<'_>] {
        let first = event.first as usize;
        &self.fields[first..first + event.n as usize]
    }

    /// Makes room for `events` events of `fields` fields each and `bytes`
    /// string bytes, so that a batch is filled without growing by doubling.
    pub(crate) fn reserve(&mut self, events: usize, fields: usize, bytes: usize) {
        debug_assert!(!self.sealed, "a sealed batch is written");
        self.events.reserve(events);
        self.fields.reserve(events * fields);
        self.bytes.reserve(bytes);
    }

    /// The string bytes copied so far.
    pub(crate) fn bytes_len(&self) -> usize {
        self.bytes.len()
    }

    /// Points the fields copied into `bytes` at their bytes, which stay
    /// where they are until [`Batch::clear`].
    fn seal(&mut self) {
        self.sealed = true;
        let bytes = &self.bytes;
        for &(i, at, len) in &self.unsealed {
            let s = &bytes[at as usize..(at + len) as usize];
            // SAFETY: `bytes` is neither written nor freed before `clear`,
            // which empties `fields` too (a batch moved to the merge keeps
            // its heap buffers where they are); the fields are only lent
            // out borrowed from the batch.
            let s: &'static [u8] = unsafe { std::slice::from_raw_parts(s.as_ptr(), s.len()) };
            self.fields[i as usize] = Field::Str(s);
        }
        self.unsealed.clear();
    }

    pub(crate) fn clear(&mut self) {
        self.maps.clear();
        self.done.clear();
        self.classes.clear();
        self.traces.clear();
        self.events.clear();
        self.fields.clear();
        self.unsealed.clear();
        self.bytes.clear();
        self.end = None;
        self.counted = None;
        self.sealed = false;
    }
}

#[cfg(feature = "babeltrace2")]
/// A part's state in its thread, which the shim's callbacks write into.
struct Collector {
    /// The part's classes, per class index.
    classes: Vec<EventClass>,
    wanted: Wanted,
    batch: Batch,
    /// Views standing in for traces: (view, the trace's directory).
    renamed: Vec<(PathBuf, PathBuf)>,
}

#[cfg(feature = "babeltrace2")]
const COPYING: Callbacks = Callbacks {
    on_class: copy_class,
    on_event: copy_event,
    on_trace: copy_trace,
};

#[cfg(feature = "babeltrace2")]
unsafe extern "C" fn copy_class(
    ctx: *mut c_void,
    index: u32,
    name: *const c_char,
    n_fields: u32,
    field_names: *const *const c_char,
) -> c_int {
    // SAFETY: ctx is the part's `Collector` (see `decode`); the shim
    // passes a NUL-terminated name and `n_fields` valid name pointers.
    let c = unsafe { &mut *(ctx as *mut Collector) };
    // SAFETY: the shim's pointers, as above.
    let reading =
        unsafe { keep_class(&mut c.classes, c.wanted, index, name, n_fields, field_names) };
    let class = c.classes[index as usize].clone();
    c.batch.classes.push((index, class));
    reading as c_int
}

#[cfg(feature = "babeltrace2")]
unsafe extern "C" fn copy_event(ctx: *mut c_void, raw: *const RawEvent) {
    // SAFETY: ctx is the part's `Collector`; `raw` and its fields are
    // valid until this function returns.
    let c = unsafe { &mut *(ctx as *mut Collector) };
    let raw = unsafe { &*raw };
    // The shim hands on only our provider's events.
    let Some(class) = c.classes.get(raw.class_index as usize) else {
        return;
    };
    let mut fields = [Field::Other; MAX_FIELDS];
    // SAFETY: `raw` is the shim's event of this callback.
    let n = unsafe { raw.fields(&mut fields) };
    let shape = match c.batch.shaped {
        true if c.batch.kinds => kinded_message_shape(class, &fields[..n]),
        true => message_shape(class, &fields[..n]),
        false => Shape::Unknown,
    };
    c.batch.push(
        CopiedEvent {
            ts_ns: raw.ts_ns,
            cpu: i32::try_from(raw.cpu).unwrap_or(-1),
            vpid: i32::try_from(raw.vpid).unwrap_or(-1),
            class: raw.class_index,
            trace: raw.trace,
            first: 0,
            n: 0,
            shape,
        },
        &fields[..n],
    );
}

#[cfg(feature = "babeltrace2")]
unsafe extern "C" fn copy_trace(ctx: *mut c_void, index: u32, stream: *const c_char) {
    // SAFETY: ctx is the part's `Collector`; `stream` is NUL-terminated.
    let c = unsafe { &mut *(ctx as *mut Collector) };
    let stream = unsafe { CStr::from_ptr(stream) }.to_string_lossy();
    let dir = Path::new(&*stream)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let dir = c
        .renamed
        .iter()
        .find(|(view, _)| *view == dir)
        .map_or(dir, |(_, original)| original.clone());
    c.batch.traces.push((index, dir));
}

#[cfg(feature = "babeltrace2")]
/// Runs one part's graph to its end, sending full batches; stops early
/// when the merge is gone. Gives the graph back to be freed by the
/// thread that made it.
fn decode(
    mut graph: Graph,
    renamed: Vec<(PathBuf, PathBuf)>,
    wanted: Wanted,
    outlet: Outlet,
) -> Graph {
    let mut c = Collector {
        classes: Vec::new(),
        wanted,
        batch: Batch::default(),
        renamed,
    };
    loop {
        // SAFETY: the copying callbacks take a `Collector`, alive across
        // the run.
        let step = unsafe { graph.run_once(&mut c as *mut Collector as *mut c_void) };
        let end = match step {
            Ok(Step::Progress) | Ok(Step::Again) => None,
            Ok(Step::End) => Some(Ok(())),
            Err(e) => Some(Err(e)),
        };
        let full = c.batch.events.len() >= BATCH || c.batch.bytes_len() >= BATCH_BYTES;
        if !full && end.is_none() {
            continue;
        }
        let done = end.is_some();
        c.batch.discarded = graph.discarded();
        if done {
            c.batch.counted = Some(graph.counted());
        }
        c.batch.end = end;
        if !outlet.send(&mut c.batch) || done {
            return graph;
        }
    }
}

/// A part's end of its queue to the merge.
pub(crate) struct Outlet {
    send: SyncSender<Batch>,
    /// Batches the merge has read, for reuse.
    spare: Receiver<Batch>,
    /// Batches sent and not yet taken by the merge.
    backlog: Arc<AtomicUsize>,
    /// Whether the shapes it finds carry the messages' kinds.
    kinds: bool,
}

impl Outlet {
    /// Whether the merge's thread is behind the part (half its queue
    /// waiting): the part then finds the message events' shapes itself,
    /// else it leaves them to the merge's thread. Whichever thread has
    /// time to spare does that work, so that neither waits long for the
    /// other whatever the analyses cost.
    fn merge_behind(&self) -> bool {
        self.backlog.load(Ordering::Relaxed) >= QUEUE / 2
    }

    /// Sends `batch` and puts an empty one in its place (a read one back
    /// from the merge, when there is one); false when the merge is gone.
    pub(crate) fn send(&self, batch: &mut Batch) -> bool {
        let mut next = self.spare.try_recv().unwrap_or_default();
        next.clear();
        batch.seal();
        let full = std::mem::replace(batch, next);
        self.backlog.fetch_add(1, Ordering::Relaxed);
        if self.send.send(full).is_err() {
            return false;
        }
        batch.shaped = self.merge_behind();
        batch.kinds = self.kinds;
        true
    }
}

/// One part as the merge sees it.
struct Lane {
    recv: Receiver<Batch>,
    /// Read batches go back to the part for reuse.
    spare: SyncSender<Batch>,
    /// See [`Outlet::backlog`].
    backlog: Arc<AtomicUsize>,
    /// Declared before `maps`, so dropped before them: its fields may
    /// point into them.
    batch: Batch,
    /// The part's stream files read in place, by index.
    maps: Vec<Option<Arc<Map>>>,
    at: usize,
    classes: Vec<EventClass>,
    /// The part's trace indexes: their directory, and the merged index
    /// once the trace's first event is merged.
    traces: Vec<(PathBuf, Option<u32>)>,
    discarded: Discarded,
    /// Once the part ended: what it counted (see [`Batch::counted`]).
    counted: (Vec<u64>, i64, i64),
    ended: bool,
}

impl Lane {
    /// Makes the lane's next event readable; false once the part ended.
    fn fill(&mut self) -> Result<bool, String> {
        while self.at >= self.batch.events.len() {
            if self.ended {
                return Ok(false);
            }
            let Ok(next) = self.recv.recv() else {
                return Err("a decoding thread stopped".into());
            };
            self.backlog.fetch_sub(1, Ordering::Relaxed);
            let read = std::mem::replace(&mut self.batch, next);
            for &(m, at, len) in &read.done {
                if let Some(Some(map)) = self.maps.get(m as usize) {
                    map.done_with(at, len);
                }
            }
            let _ = self.spare.try_send(read);
            self.at = 0;
            let b = &mut self.batch;
            for (index, map) in b.maps.drain(..) {
                let index = index as usize;
                if self.maps.len() <= index {
                    self.maps.resize(index + 1, None);
                }
                self.maps[index] = Some(map);
            }
            for (index, class) in b.classes.drain(..) {
                let index = index as usize;
                if self.classes.len() <= index {
                    self.classes.resize_with(index + 1, EventClass::unknown);
                }
                self.classes[index] = class;
            }
            for (index, dir) in b.traces.drain(..) {
                let index = index as usize;
                if self.traces.len() <= index {
                    self.traces.resize(index + 1, (PathBuf::new(), None));
                }
                self.traces[index] = (dir, None);
            }
            self.discarded = b.discarded;
            if let Some(counted) = b.counted.take() {
                self.counted = counted;
            }
            match b.end.take() {
                Some(Err(e)) => return Err(e),
                Some(Ok(())) => self.ended = true,
                None => {}
            }
        }
        Ok(true)
    }

    /// Hands the lane's next event to `handler` (its answer), its trace
    /// numbered in `merged` at its first event. Its fields are the batch's
    /// as they are.
    #[inline(always)]
    fn hand<H>(
        &mut self,
        merged: &mut HashMap<PathBuf, u32>,
        handler: &mut H,
    ) -> Result<bool, String>
    where
        H: FnMut(&Event) -> bool + ?Sized,
    {
        let e = &self.batch.events[self.at];
        let trace = match self.traces.get_mut(e.trace as usize) {
            Some((_, Some(t))) => *t,
            Some((dir, slot)) => {
                let next = merged.len() as u32;
                let t = *merged.entry(dir.clone()).or_insert(next);
                *slot = Some(t);
                t
            }
            None => e.trace,
        };
        let Some(class) = self.classes.get(e.class as usize) else {
            return Err("an event of an undescribed class".into());
        };
        let fields = self.batch.fields(e);
        let mut event = Event {
            class,
            ts_ns: e.ts_ns,
            cpu: e.cpu.into(),
            trace,
            vpid: e.vpid.into(),
            node: trace,
            fields,
            shape: e.shape,
        };
        // Found here when the part did not: written in place, as the
        // one-thread reader does (see `set_message_shape`).
        if !self.batch.shaped {
            set_message_shape(&mut event.shape, class, fields);
        }
        Ok(handler(&event))
    }
}

/// What [`Chooser`] picks from: a stream of a part, or a part (a lane)
/// of the merge.
pub(crate) trait Head {
    /// The time of its next event; None once it has ended.
    fn head(&self) -> Option<i64>;
}

/// Picks the stream whose next event comes first (the first such of
/// equal times, as libbabeltrace2's muxer does): of a part's streams, or
/// of the merge's parts. The stream whose event was handed last stays the
/// one read while its next event comes before `rest`, the earliest of the
/// others' (time, index), which do not move meanwhile. A stream's events
/// come in runs (a CPU's, ~47 events on the bench trace), so this spares
/// the look at every stream per event.
pub(crate) struct Chooser {
    chosen: Option<usize>,
    rest: (i64, usize),
}

impl Default for Chooser {
    fn default() -> Chooser {
        Chooser {
            chosen: None,
            rest: (i64::MAX, usize::MAX),
        }
    }
}

impl Chooser {
    /// The stream of `streams` to read from next; None once every one has
    /// ended.
    #[inline(always)]
    pub(crate) fn next<S: Head>(&mut self, streams: &[S]) -> Option<usize> {
        match self.chosen {
            // Before `rest`: an equal time with a lower index is.
            Some(i) if streams[i].head().is_some_and(|ts| (ts, i) < self.rest) => Some(i),
            _ => self.choose(streams),
        }
    }

    /// The stream with the earliest next event, kept in `chosen` with the
    /// earliest of the others in `rest`.
    #[inline(never)]
    fn choose<S: Head>(&mut self, streams: &[S]) -> Option<usize> {
        let mut best: Option<(i64, usize)> = None;
        let mut rest = (i64::MAX, usize::MAX);
        for (i, s) in streams.iter().enumerate() {
            let Some(ts) = s.head() else {
                continue;
            };
            let this = (ts, i);
            match best {
                Some(b) if b <= this => rest = rest.min(this),
                _ => {
                    if let Some(b) = best {
                        rest = rest.min(b);
                    }
                    best = Some(this);
                }
            }
        }
        self.chosen = best.map(|(_, i)| i);
        self.rest = rest;
        self.chosen
    }
}

impl Head for Lane {
    /// Its batch's next event's (once [`Lane::fill`]ed, a lane holds an
    /// event unless its part ended).
    #[inline(always)]
    fn head(&self) -> Option<i64> {
        self.batch.events.get(self.at).map(|e| e.ts_ns)
    }
}

/// One part's decoder, run on a thread of its own: it sends full batches
/// (the last with its end) through its [`Outlet`], and gives back what is
/// to be freed on the merge's thread.
pub(crate) type Part = Box<dyn FnOnce(Outlet) -> Box<dyn Send> + Send>;

/// A part read on the merge's own thread, without batches: what a trace
/// read by one part is (one decoding thread would only hand its events
/// over to this one).
pub(crate) trait Local: Send {
    /// Hands up to [`STEP`] events to `handler` (which answers false to
    /// stop at once), each trace numbered in `traces` by its directory at
    /// its first event, as the merge numbers them.
    fn step(
        &mut self,
        handler: &mut dyn FnMut(&Event) -> bool,
        traces: &mut HashMap<PathBuf, u32>,
    ) -> Result<Step, String>;
    /// Adds the events it counted rather than handed on, once it ended.
    fn counted(&self, counted: &mut Counted);
    /// Discarded events reported so far.
    fn discarded(&self) -> Discarded;
}

/// Parts decoded on threads of their own, merged by timestamp; or one part
/// read on this thread.
pub struct Merge {
    local: Option<Box<dyn Local>>,
    lanes: Vec<Lane>,
    /// Each gives back what its decoder leaves to free on this thread.
    threads: Vec<JoinHandle<Box<dyn Send>>>,
    /// Merged trace indexes by directory, in order of first event.
    traces: HashMap<PathBuf, u32>,
    started: bool,
    /// The lane to hand on the next event of, where there are several.
    chooser: Chooser,
}

impl Merge {
    /// Builds one graph per part (each a list of trace directories) on
    /// this thread, and starts decoding each on a thread of its own.
    /// `renamed` maps each view to the trace it stands for.
    #[cfg(feature = "babeltrace2")]
    pub fn open(
        parts: &[Vec<String>],
        renamed: Vec<(PathBuf, PathBuf)>,
        wanted: Wanted,
    ) -> Result<Merge, String> {
        let graphs = parts
            .iter()
            .map(|inputs| Graph::open(inputs, false, &COPYING))
            .collect::<Result<Vec<_>, _>>()?;
        let parts: Vec<Part> = graphs
            .into_iter()
            .map(|graph| {
                let renamed = renamed.clone();
                let part: Part = Box::new(move |outlet| {
                    Box::new(decode(graph, renamed, wanted, outlet)) as Box<dyn Send>
                });
                part
            })
            .collect();
        Merge::spawn(parts, wanted.kinds())
    }

    /// Starts each part on a thread of its own; `kinds`: whether the
    /// shapes the parts find carry the messages' kinds.
    pub(crate) fn spawn(parts: Vec<Part>, kinds: bool) -> Result<Merge, String> {
        let mut merge = Merge {
            local: None,
            lanes: Vec::new(),
            threads: Vec::new(),
            traces: HashMap::new(),
            started: false,
            chooser: Chooser::default(),
        };
        for (i, part) in parts.into_iter().enumerate() {
            let (send, recv) = sync_channel(QUEUE);
            let (spare_send, spare) = sync_channel(SPARE);
            let backlog = Arc::new(AtomicUsize::new(0));
            let outlet = Outlet {
                send,
                spare,
                backlog: Arc::clone(&backlog),
                kinds,
            };
            let thread = std::thread::Builder::new()
                .name(format!("decode-{i}"))
                .spawn(move || part(outlet))
                .map_err(|e| format!("cannot start a decoding thread: {e}"))?;
            merge.threads.push(thread);
            merge.lanes.push(Lane {
                recv,
                spare: spare_send,
                backlog,
                maps: Vec::new(),
                batch: Batch::default(),
                at: 0,
                classes: Vec::new(),
                traces: Vec::new(),
                discarded: Discarded::default(),
                counted: (Vec::new(), i64::MAX, i64::MIN),
                ended: false,
            });
        }
        Ok(merge)
    }

    /// One part read on this thread.
    pub(crate) fn local(part: Box<dyn Local>) -> Merge {
        Merge {
            local: Some(part),
            lanes: Vec::new(),
            threads: Vec::new(),
            traces: HashMap::new(),
            started: false,
            chooser: Chooser::default(),
        }
    }

    /// Merges up to [`STEP`] events into `handler` (which answers false to
    /// stop at once).
    pub fn step<H>(&mut self, handler: &mut H) -> Result<Step, String>
    where
        H: FnMut(&Event) -> bool + ?Sized,
    {
        if let Some(local) = &mut self.local {
            return local.step(&mut |ev| handler(ev), &mut self.traces);
        }
        if !self.started {
            self.started = true;
            for lane in &mut self.lanes {
                lane.fill()?;
            }
        }
        // One part (a pipeline): its events in its order, no lanes to
        // choose from (the chooser would compare each event's time with
        // no other's: 25 M more instructions a million events here).
        if let [lane] = &mut self.lanes[..] {
            for _ in 0..STEP {
                if lane.at >= lane.batch.events.len() {
                    return Ok(Step::End);
                }
                if !lane.hand(&mut self.traces, handler)? {
                    return Ok(Step::End);
                }
                lane.at += 1;
                if lane.at >= lane.batch.events.len() {
                    lane.fill()?;
                }
            }
            return Ok(Step::Progress);
        }
        for _ in 0..STEP {
            let Some(i) = self.chooser.next(&self.lanes) else {
                return Ok(Step::End);
            };
            let lane = &mut self.lanes[i];
            if !lane.hand(&mut self.traces, handler)? {
                return Ok(Step::End);
            }
            lane.at += 1;
            if lane.at >= lane.batch.events.len() {
                lane.fill()?;
            }
        }
        Ok(Step::Progress)
    }

    /// Adds the events the parts counted rather than sent (once read to
    /// their end).
    pub fn counted(&self, counted: &mut Counted) {
        if let Some(local) = &self.local {
            local.counted(counted);
        }
        for l in &self.lanes {
            let (counts, first, last) = &l.counted;
            counted.add(&l.classes, counts, *first, *last);
        }
    }

    /// Discarded events the parts reported so far.
    pub fn discarded(&self) -> Discarded {
        if let Some(local) = &self.local {
            return local.discarded();
        }
        self.lanes
            .iter()
            .fold(Discarded::default(), |sum, l| Discarded {
                events: sum.events + l.discarded.events,
                reports_without_count: sum.reports_without_count
                    + l.discarded.reports_without_count,
            })
    }
}

impl Drop for Merge {
    fn drop(&mut self) {
        // Closing the queues stops the parts at their next batch.
        self.lanes.clear();
        for thread in self.threads.drain(..) {
            // The graph is freed here, on the thread that built it.
            drop(thread.join());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copied event stays small: every event of a batch is one (and
    /// its fields are as the analyses read them).
    #[test]
    fn copied_events_stay_small() {
        assert!(std::mem::size_of::<CopiedEvent>() <= 48);
        assert!(std::mem::size_of::<Field<'static>>() <= 24);
    }

    /// A batch's copied strings read back as they were pushed once sealed,
    /// however often its bytes grew (and moved) meanwhile.
    #[test]
    fn copied_strings_survive_growth() {
        let mut batch = Batch::default();
        let event = CopiedEvent {
            ts_ns: 0,
            cpu: 0,
            vpid: -1,
            class: 0,
            trace: 0,
            first: 0,
            n: 0,
            shape: Shape::Unknown,
        };
        let texts: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| i.to_string().repeat(7).into_bytes())
            .collect();
        for t in &texts {
            batch.push(event, &[Field::Int(7), Field::Str(t), Field::Other]);
        }
        batch.seal();
        for (e, t) in batch.events.iter().zip(&texts) {
            assert_eq!(
                batch.fields(e),
                &[Field::Int(7), Field::Str(t), Field::Other][..]
            );
        }
        batch.clear();
        batch.push(event, &[Field::Str(b"again")]);
    }

    /// Sorted runs of times, one per stream, as the chooser merges them.
    struct Run(Vec<i64>, usize);

    impl Head for Run {
        fn head(&self) -> Option<i64> {
            self.0.get(self.1).copied()
        }
    }

    /// The chooser hands on the streams' events by time, an equal time
    /// in stream order: as a stable sort of them all, whatever the runs
    /// (equal times, one stream, streams empty or ending early).
    #[test]
    fn the_chooser_merges_by_time_then_stream() {
        let mut seed = 7u64;
        let mut random = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..500 {
            let n = 1 + (round % 5) as usize;
            let mut streams: Vec<Run> = (0..n)
                .map(|_| {
                    let len = random(40) as usize;
                    let mut t = 0;
                    let times = (0..len)
                        .map(|_| {
                            t += random(4) as i64;
                            t
                        })
                        .collect();
                    Run(times, 0)
                })
                .collect();
            let mut want: Vec<(i64, usize)> = streams
                .iter()
                .enumerate()
                .flat_map(|(i, s)| s.0.iter().map(move |&t| (t, i)))
                .collect();
            want.sort();
            let mut got = Vec::new();
            let mut chooser = Chooser::default();
            while let Some(i) = chooser.next(&streams) {
                got.push((streams[i].0[streams[i].1], i));
                streams[i].1 += 1;
            }
            assert_eq!(got, want, "round {round}");
        }
    }

    /// A sealed batch is not written to until cleared (checked in debug
    /// builds).
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "a sealed batch is written")]
    fn a_sealed_batch_is_not_written() {
        let mut batch = Batch::default();
        batch.seal();
        batch.reserve(1, 1, 1);
    }
}
