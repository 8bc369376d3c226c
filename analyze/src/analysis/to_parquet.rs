//! `export --parquet DIR`: the trace as Parquet tables, for SQL engines
//! (DuckDB, pandas/polars, Spark, Trino, DataFusion). One file per table,
//! written as the events are read ([`super::parquet_file`]: a row group
//! at a time), the columns documented in docs/export.md:
//!
//! - `events`: every event, with the columns every event has;
//! - `messages`: each send with its queued copy where the trace holds it
//!   (paired by [`super::message_pairs`], as the timeline pairs them), and
//!   each receive whose send it does not hold;
//! - `calls`: each call to its return (matched by [`super::callstack`], as
//!   `calls` and `profile` match them), with its time on and off a
//!   scheduler when scheduling is traced;
//! - `slices`: each slice on a scheduler (`process_scheduled` in to out,
//!   as `sched` pairs them);
//! - `gc`: each collection, start to end (as `gc` pairs them);
//! - `samples`: each `stack_sample`;
//! - `memory`: each `process_memory` and `memory_sample`.
//!
//! Memory is bounded by the processes, the functions, a row group per
//! file and the sends awaiting their queued copy (as the timeline's).

use std::path::Path;

use super::callstack::{CallStack, Frame, Functions, Popped};
use super::mailbox::kind_of;
use super::message_pairs::{MessagePairs, Sent};
use super::parquet_file::{Column, ParquetFile, Type};
use crate::engine::identity::Identity;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, ByText};
use crate::model::table::{col, Cell, Table, Unit};

/// Bytes of a message's text written in `messages.message`.
pub const MESSAGE_BYTES: usize = 120;
/// Bytes of values held by all the files at once: past it, the file
/// holding the most writes its row group (a table of wide rows gets
/// row groups of fewer rows, never more memory).
pub const HELD_BYTES: usize = 64 << 20;

const EVENTS: &[Column] = &[
    ("time", Type::Time),
    ("event", Type::Text),
    ("cpu", Type::Int),
    ("", Type::Process),
];

const MESSAGES: &[Column] = &[
    ("send_time", Type::Time),
    ("queued_time", Type::Time),
    ("latency_ns", Type::Int),
    ("sender_", Type::Process),
    ("receiver_", Type::Process),
    ("kind", Type::Text),
    ("size_bytes", Type::Int),
    ("message", Type::Bytes),
];

const CALLS: &[Column] = &[
    ("start_time", Type::Time),
    ("end_time", Type::Time),
    ("duration_ns", Type::Int),
    ("", Type::Process),
    ("function", Type::Text),
    ("depth", Type::Int),
    ("recursive", Type::Bool),
    ("outcome", Type::Text),
    ("on_cpu_ns", Type::Int),
    ("off_cpu_ns", Type::Int),
];

const SLICES: &[Column] = &[
    ("start_time", Type::Time),
    ("end_time", Type::Time),
    ("duration_ns", Type::Int),
    ("", Type::Process),
    ("function", Type::Text),
    ("out_function", Type::Text),
    ("out_type", Type::Text),
    ("cpu", Type::Int),
];

const GC: &[Column] = &[
    ("start_time", Type::Time),
    ("end_time", Type::Time),
    ("duration_ns", Type::Int),
    ("", Type::Process),
    ("kind", Type::Text),
    ("need_words", Type::Int),
    ("reclaimed_words", Type::Int),
    ("heap_words_before", Type::Int),
    ("heap_words_after", Type::Int),
    ("old_heap_words_before", Type::Int),
    ("old_heap_words_after", Type::Int),
];

const SAMPLES: &[Column] = &[
    ("time", Type::Time),
    ("", Type::Process),
    ("status", Type::Text),
    ("function", Type::Text),
    ("stack", Type::Bytes),
];

const MEMORY: &[Column] = &[
    ("time", Type::Time),
    ("node", Type::Text),
    ("", Type::Process),
    ("memory_bytes", Type::Int),
    ("total_heap_words", Type::Int),
    ("bin_vheap_words", Type::Int),
    ("message_queue_len", Type::Int),
    ("total_bytes", Type::Int),
    ("processes_bytes", Type::Int),
    ("system_bytes", Type::Int),
    ("binary_bytes", Type::Int),
    ("ets_bytes", Type::Int),
    ("atom_bytes", Type::Int),
    ("code_bytes", Type::Int),
];

/// The tables, in the order of the summary.
const TABLES: [(&str, &[Column]); 7] = [
    ("events", EVENTS),
    ("messages", MESSAGES),
    ("calls", CALLS),
    ("slices", SLICES),
    ("gc", GC),
    ("samples", SAMPLES),
    ("memory", MEMORY),
];

const GC_KINDS: [&[u8]; 2] = [b"minor", b"major"];

/// A process's time on and off a scheduler so far (while its scheduling
/// is known).
#[derive(Default)]
struct Cpu {
    running: Option<bool>,
    since: i64,
    on: i64,
    off: i64,
}

impl Cpu {
    fn advance(&mut self, ts: i64) {
        let dt = ts.saturating_sub(self.since).max(0);
        match self.running {
            Some(true) => self.on += dt,
            Some(false) => self.off += dt,
            None => {}
        }
        self.since = ts;
    }

    /// The on and off times so far, when the scheduling is known.
    fn at(&mut self, ts: i64) -> Option<(i64, i64)> {
        self.advance(ts);
        self.running.map(|_| (self.on, self.off))
    }
}

/// A call's frame: its depth and its process's on/off times at its start.
#[derive(Clone, Copy)]
struct Opened {
    depth: usize,
    cpu: Option<(i64, i64)>,
}

/// What a GC's start said.
#[derive(Clone, Copy)]
struct GcStart {
    ts: i64,
    need: i64,
    heap: i64,
    old_heap: i64,
}

/// One process's open calls, slice and GCs.
struct Proc {
    node: u32,
    stack: CallStack<Opened>,
    cpu: Cpu,
    /// Since when on a scheduler: time, function, CPU.
    slice: Option<(i64, u32, i64)>,
    gc: [Option<GcStart>; 2],
}

/// A send awaiting its queued copy.
struct SendRow {
    ts: i64,
    node: u32,
    from: Box<[u8]>,
    to: Box<[u8]>,
    size: usize,
    kind: String,
    text: Box<[u8]>,
}

/// The tables being written.
pub struct ToParquet {
    files: Vec<ParquetFile>,
    procs: ByText<Proc>,
    functions: Functions,
    pending: MessagePairs<SendRow>,
    last_ns: i64,
}

/// Which file a table is.
#[derive(Clone, Copy)]
enum File {
    Events,
    Messages,
    Calls,
    Slices,
    Gc,
    Samples,
    Memory,
}

/// How a call ended.
#[derive(Clone, Copy)]
enum Outcome {
    Return,
    Exception,
    Unfinished,
}

impl ToParquet {
    /// The tables' files in `dir` (made if missing).
    pub fn create(dir: &Path) -> Result<ToParquet, String> {
        if dir.exists() && !dir.is_dir() {
            return Err(format!("{}: not a directory", dir.display()));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot make the directory: {e}", dir.display()))?;
        let files = TABLES
            .iter()
            .map(|&(name, columns)| ParquetFile::create(dir, name, columns))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(ToParquet {
            files,
            procs: ByText::default(),
            functions: Functions::default(),
            pending: MessagePairs::default(),
            last_ns: 0,
        })
    }

    fn file(&mut self, f: File) -> &mut ParquetFile {
        &mut self.files[f as usize]
    }

    fn proc(&mut self, node: u32, pid: &[u8]) -> &mut Proc {
        entry(&mut self.procs, pid, || Proc {
            node,
            stack: CallStack::default(),
            cpu: Cpu::default(),
            slice: None,
            gc: [None, None],
        })
    }

    /// One event.
    pub fn on_event(&mut self, ev: &Event, who: &Identity) {
        self.last_ns = self.last_ns.max(ev.ts_ns);
        self.event_row(ev, who);
        match ev.kind() {
            Some(Kind::ProcessScheduled) => self.scheduled(ev, who),
            Some(Kind::FunctionCall) => self.call(ev, who),
            Some(Kind::FunctionReturn) => self.ret(ev, who, Outcome::Return),
            Some(Kind::FunctionException) => self.ret(ev, who, Outcome::Exception),
            Some(Kind::ProcessExit) => self.close_open(ev.str(Slot::Pid), ev.ts_ns, who),
            Some(Kind::GcMinorStart) => self.gc_start(ev, 0),
            Some(Kind::GcMajorStart) => self.gc_start(ev, 1),
            Some(Kind::GcMinorEnd) => self.gc_end(ev, who, 0),
            Some(Kind::GcMajorEnd) => self.gc_end(ev, who, 1),
            Some(Kind::MessageSend) => self.send(ev, who),
            Some(Kind::MessageReceive) => self.receive(ev, who),
            Some(Kind::StackSample) => self.sample(ev, who),
            Some(Kind::ProcessMemory | Kind::MemorySample) => self.memory(ev, who),
            _ => {}
        }
        self.within_budget(who);
    }

    /// Past [`HELD_BYTES`], the file holding the most writes its rows.
    fn within_budget(&mut self, who: &Identity) {
        if self.files.iter().map(ParquetFile::held).sum::<usize>() < HELD_BYTES {
            return;
        }
        if let Some(f) = self.files.iter_mut().max_by_key(|f| f.held()) {
            f.flush(who);
        }
    }

    fn event_row(&mut self, ev: &Event, who: &Identity) {
        let name = ev
            .kind()
            .map_or(ev.class.name.as_bytes(), |k| k.name().as_bytes());
        let pid = [Slot::Pid, Slot::From, Slot::To]
            .into_iter()
            .map(|s| ev.str(s))
            .find(|p| !p.is_empty());
        self.file(File::Events)
            .int(Some(ev.ts_ns))
            .text(Some(name))
            .int((ev.cpu >= 0).then_some(ev.cpu))
            .process(pid.map(|p| (ev.node, p)))
            .end_row(who);
    }

    fn scheduled(&mut self, ev: &Event, who: &Identity) {
        let function = self.functions.id(ev.str(Slot::Entry));
        let p = self.proc(ev.node, ev.str(Slot::Pid));
        p.cpu.advance(ev.ts_ns);
        let (out, running) = match ev.str(Slot::Type) {
            b"in" | b"in_exiting" => (None, true),
            t @ (b"out" | b"out_exiting" | b"out_exited") => (Some(t), false),
            _ => return,
        };
        p.cpu.running = Some(running);
        let Some(out) = out else {
            p.slice = Some((ev.ts_ns, function, ev.cpu));
            return;
        };
        let Some((since, at, cpu)) = p.slice.take() else {
            return;
        };
        let node = p.node;
        let [at, function] = [at, function].map(|f| Box::<[u8]>::from(self.functions.name(f)));
        self.file(File::Slices)
            .int(Some(since))
            .int(Some(ev.ts_ns))
            .int(Some(ev.ts_ns.saturating_sub(since).max(0)))
            .process(Some((node, ev.str(Slot::Pid))))
            .text(Some(&at))
            .text(Some(&function))
            .text(Some(out))
            .int((cpu >= 0).then_some(cpu))
            .end_row(who);
    }

    fn call(&mut self, ev: &Event, who: &Identity) {
        let function = self.functions.id(ev.str(Slot::Entry));
        let pid = ev.str(Slot::Pid);
        let p = self.proc(ev.node, pid);
        let cpu = p.cpu.at(ev.ts_ns);
        let mut dropped = None;
        p.stack.call(
            function,
            ev.ts_ns,
            |below| Opened {
                depth: below.len(),
                cpu,
            },
            |f| dropped = Some(f),
        );
        if let Some(f) = dropped {
            self.call_row(pid, &f, ev.ts_ns, Outcome::Unfinished, who);
        }
    }

    fn ret(&mut self, ev: &Event, who: &Identity, outcome: Outcome) {
        let function = self.functions.id(ev.str(Slot::Entry));
        let pid = ev.str(Slot::Pid);
        let p = self.proc(ev.node, pid);
        let mut above = Vec::new();
        let exception = matches!(outcome, Outcome::Exception);
        let popped = p.stack.ret(function, exception, false, |f| above.push(f));
        for f in &above {
            self.call_row(pid, f, ev.ts_ns, Outcome::Unfinished, who);
        }
        if let Popped::Closed(f) = popped {
            self.call_row(pid, &f, ev.ts_ns, outcome, who);
        }
    }

    /// Every open call of `pid` closed at `ts`, unfinished.
    fn close_open(&mut self, pid: &[u8], ts: i64, who: &Identity) {
        let Some(p) = self.procs.get_mut(pid) else {
            return;
        };
        let frames: Vec<Frame<Opened>> = p.stack.drain().collect();
        for f in &frames {
            self.call_row(pid, f, ts, Outcome::Unfinished, who);
        }
    }

    fn call_row(
        &mut self,
        pid: &[u8],
        f: &Frame<Opened>,
        end: i64,
        outcome: Outcome,
        who: &Identity,
    ) {
        let p = self.procs.get_mut(pid).expect("a call's process is known");
        let node = p.node;
        let cpu_now = p.cpu.at(end);
        let on_off = f
            .data
            .cpu
            .zip(cpu_now)
            .map(|((on0, off0), (on1, off1))| (on1 - on0, off1 - off0));
        let function: Box<[u8]> = self.functions.name(f.entry).into();
        let outcome: &[u8] = match outcome {
            Outcome::Return => b"return",
            Outcome::Exception => b"exception",
            Outcome::Unfinished => b"unfinished",
        };
        self.file(File::Calls)
            .int(Some(f.start_ns))
            .int(Some(end))
            .int(Some(end.saturating_sub(f.start_ns).max(0)))
            .process(Some((node, pid)))
            .text(Some(&function))
            .int(Some(f.data.depth as i64))
            .bool(Some(!f.outer))
            .text(Some(outcome))
            .int(on_off.map(|c| c.0))
            .int(on_off.map(|c| c.1))
            .end_row(who);
    }

    fn gc_start(&mut self, ev: &Event, kind: usize) {
        let p = self.proc(ev.node, ev.str(Slot::Pid));
        p.gc[kind] = Some(GcStart {
            ts: ev.ts_ns,
            need: ev.int(Slot::Need),
            heap: ev.int(Slot::Heap),
            old_heap: ev.int(Slot::OldHeap),
        });
    }

    fn gc_end(&mut self, ev: &Event, who: &Identity, kind: usize) {
        let pid = ev.str(Slot::Pid);
        let p = self.proc(ev.node, pid);
        let node = p.node;
        let Some(start) = p.gc[kind].take() else {
            return;
        };
        self.file(File::Gc)
            .int(Some(start.ts))
            .int(Some(ev.ts_ns))
            .int(Some(ev.ts_ns.saturating_sub(start.ts).max(0)))
            .process(Some((node, pid)))
            .text(Some(GC_KINDS[kind]))
            .int(Some(start.need))
            .int(Some(ev.int(Slot::Reclaimed)))
            .int(Some(start.heap))
            .int(Some(ev.int(Slot::Heap)))
            .int(Some(start.old_heap))
            .int(Some(ev.int(Slot::OldHeap)))
            .end_row(who);
    }

    fn send(&mut self, ev: &Event, who: &Identity) {
        let (to, message) = (ev.str(Slot::To), ev.str(Slot::Message));
        let to = who
            .resolve(ev.node, to)
            .map_or_else(|| to.into(), |p| p.into_owned().into());
        let row = SendRow {
            ts: ev.ts_ns,
            node: ev.node,
            from: ev.str(Slot::From).into(),
            to: Box::clone(&to),
            size: message.len(),
            kind: kind_of(message),
            text: message[..cut(message, MESSAGE_BYTES)].into(),
        };
        match self.pending.send(who, ev.node, &to, message, row) {
            Sent::Pending => {}
            Sent::Evicted(s) | Sent::NoReceiver(s) => self.message_row(Some(&s), None, who),
        }
    }

    fn receive(&mut self, ev: &Event, who: &Identity) {
        let (to, message) = (ev.str(Slot::To), ev.str(Slot::Message));
        let send = self.pending.receive(who, ev.node, to, message);
        self.message_row(send.as_ref(), Some(ev), who);
    }

    /// A message: its send, its queued copy, or both.
    fn message_row(&mut self, send: Option<&SendRow>, queued: Option<&Event>, who: &Identity) {
        let queued_ts = queued.map(|e| e.ts_ns);
        let latency = send.zip(queued_ts).map(|(s, q)| q.saturating_sub(s.ts));
        let receiver = match queued {
            Some(e) => Some((e.node, e.str(Slot::To))),
            None => send.map(|s| (s.node, &s.to[..])),
        };
        let (kind, size, text) = match (send, queued) {
            (Some(s), _) => (s.kind.clone(), s.size, &s.text[..]),
            (None, Some(e)) => {
                let m = e.str(Slot::Message);
                (kind_of(m), m.len(), &m[..cut(m, MESSAGE_BYTES)])
            }
            (None, None) => return,
        };
        self.file(File::Messages)
            .int(send.map(|s| s.ts))
            .int(queued_ts)
            .int(latency)
            .process(send.map(|s| (s.node, &s.from[..])))
            .process(receiver)
            .text(Some(kind.as_bytes()))
            .int(Some(size as i64))
            .bytes(Some(text))
            .end_row(who);
    }

    fn sample(&mut self, ev: &Event, who: &Identity) {
        let stack = ev.str(Slot::Stack);
        let innermost = stack.split(|&b| b == b';').next().filter(|f| !f.is_empty());
        self.file(File::Samples)
            .int(Some(ev.ts_ns))
            .process(Some((ev.node, ev.str(Slot::Pid))))
            .text(Some(ev.str(Slot::Status)))
            .text(innermost)
            .bytes(Some(stack))
            .end_row(who);
    }

    fn memory(&mut self, ev: &Event, who: &Identity) {
        let of_process = ev.kind() == Some(Kind::ProcessMemory);
        let node = who.node_name(ev.node);
        let int = |slot: Slot, here: bool| here.then(|| ev.int(slot));
        let f = &mut self.files[File::Memory as usize];
        f.int(Some(ev.ts_ns))
            .text(node)
            .process(of_process.then(|| (ev.node, ev.str(Slot::Pid))));
        for slot in [
            Slot::Memory,
            Slot::TotalHeap,
            Slot::BinVheap,
            Slot::MessageQueueLen,
        ] {
            f.int(int(slot, of_process));
        }
        for slot in [
            Slot::Total,
            Slot::Processes,
            Slot::System,
            Slot::Binary,
            Slot::Ets,
            Slot::Atom,
            Slot::Code,
        ] {
            f.int(int(slot, !of_process));
        }
        f.end_row(who);
    }

    /// The input has ended: open calls and pending sends written, the
    /// files closed.
    pub fn finish(&mut self, who: &Identity) {
        let open: Vec<Box<[u8]>> = self
            .procs
            .iter()
            .filter(|(_, p)| !p.stack.frames().is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        for pid in open {
            self.close_open(&pid, self.last_ns, who);
        }
        let pending: Vec<SendRow> = self.pending.drain().collect();
        for s in &pending {
            self.message_row(Some(s), None, who);
        }
        for f in self.files.iter_mut() {
            f.close(who);
        }
    }

    /// The rows each file holds, and where they are.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "parquet",
            "What the Parquet files hold",
            vec![
                col("table", "table", Unit::Text),
                col("rows", "rows", Unit::Count),
            ],
        );
        for (f, (name, _)) in self.files.iter().zip(TABLES) {
            t.push(vec![Cell::Text(name.into()), Cell::Num(f.written)], None);
        }
        t
    }

    /// The first error writing a file, if any.
    pub fn failed(&self) -> Option<String> {
        self.files.iter().find_map(|f| f.failed().map(String::from))
    }
}

/// The length of `text`'s first `max` bytes, cut on a character boundary.
fn cut(text: &[u8], max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    let mut n = max;
    while n > 0 && (text[n] & 0xC0) == 0x80 {
        n -= 1;
    }
    n
}
