//! `export --timeline FILE`: the trace as a timeline in the Trace Event
//! Format (JSON), which Perfetto's UI, Chrome's trace viewer and speedscope
//! open. Written as the events are read: memory is bounded by processes,
//! functions and the messages awaiting their receive, never by the trace.
//!
//! - A process track (`pid`) per node, named by its `node_name`.
//! - Per Erlang process, named by the identity layer's label: a thread
//!   track with its calls (`function_call` to its return, matched by
//!   [`super::callstack`]), its GCs and its messages' ends, and a thread
//!   track beside it with its slices on a scheduler (`process_scheduled`
//!   in to out): a call outlives the slice it began in, and a track's
//!   slices must nest.
//! - A flow (`bind_id`, `flow_out` on the send, `flow_in` on its queued
//!   copy) per message whose `message_receive` was seen, paired as
//!   `delivery` pairs them: the oldest pending send of the same text to the
//!   same process. On a node whose name the trace does not give (one
//!   without distribution), its own messages are paired by their pids and
//!   texts as written.
//! - Counters: each process's queue length and memory from
//!   `process_memory`, the node's memory from `memory_sample`.
//!
//! Past `--max-events` the file is closed with what it holds and the
//! command fails, saying how many events were left out and how to select
//! fewer (`--from`/`--to`, `--name`, `--pid`): the viewers load a file of a
//! few hundred megabytes at most.
//!
//! `export --parquet DIR` (alone or beside the timeline) writes the trace
//! as Parquet tables for SQL engines: [`super::to_parquet`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use super::callstack::{CallStack, Frame, Functions, Popped};
use super::message_pairs::{MessagePairs, Sent};
use super::to_parquet::ToParquet;
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, ByText};
use crate::model::table::{col, Cell, Table, Unit};

/// Timeline events written by default before the file is closed (about
/// 150 MB of JSON: what the viewers load in a browser tab).
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000;

/// Bytes of a message's text written beside its send.
const MESSAGE_BYTES: usize = 120;

/// `export`'s options.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Write a timeline (Trace Event Format JSON: Perfetto UI, Chrome's
    /// trace viewer, speedscope) to FILE
    pub timeline: Option<PathBuf>,
    /// Write the trace as Parquet tables (events, messages, calls, slices,
    /// gc, samples, memory: one file each) into DIR, for SQL engines
    pub parquet: Option<PathBuf>,
    /// Timeline events written at most; past it the file ends there and
    /// the command fails, asking for a selection (--from/--to, --name, --pid)
    pub max_events: u64,
}

/// What the timeline holds, by kind.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Slices on a scheduler.
    pub slices: u64,
    /// Calls that returned (outermost and nested alike).
    pub calls: u64,
    /// Calls closed by an outer return, the process's exit or the end.
    pub calls_unfinished: u64,
    /// GCs, start to end.
    pub gcs: u64,
    /// Messages drawn from send to queued copy.
    pub flows: u64,
    /// Sends never seen queued (or dropped past the pending bound).
    pub sends_unpaired: u64,
    /// Receives with no pending send of the same text.
    pub receives_unpaired: u64,
    /// Counter samples (queue length and memory).
    pub counters: u64,
    /// Timeline events written in all.
    pub events: u64,
    /// Events left out past `--max-events`.
    pub left_out: u64,
}

/// One Erlang process's tracks and what is open on them.
struct Track {
    tid: u32,
    node: u32,
    /// Since when it is on a scheduler, and the function it came in at.
    since: Option<(i64, u32)>,
    stack: CallStack<()>,
    gc: [Option<i64>; 2],
}

/// A send waiting for its queued copy.
struct Pending {
    ts: i64,
    node: u32,
    tid: u32,
    id: u64,
}

/// The open timeline file.
struct Out {
    path: PathBuf,
    w: BufWriter<File>,
    first: bool,
    max: u64,
    failed: Option<String>,
}

/// The `export` state machine.
pub struct Export {
    out: Option<Out>,
    origin: Option<i64>,
    last_ns: i64,
    tracks: ByText<Track>,
    nodes: Vec<u32>,
    functions: Functions,
    pending: MessagePairs<Pending>,
    next_flow: u64,
    written: Written,
    line: String,
    /// `--parquet`: the tables being written.
    tables: Option<Box<ToParquet>>,
}

const GC_NAMES: [&str; 2] = ["gc_minor", "gc_major"];

impl Export {
    /// After the run: the timeline's write error, or that it was cut short
    /// at `--max-events` (the command fails, asking for a selection).
    pub fn check_written(&self) -> Result<(), String> {
        if let Some(e) = self.tables.as_ref().and_then(|t| t.failed()) {
            return Err(e);
        }
        let Some(out) = &self.out else {
            return Ok(());
        };
        if let Some(e) = &out.failed {
            return Err(e.clone());
        }
        if self.written.left_out > 0 {
            return Err(format!(
                "{}: the timeline holds the first {} events (--max-events) and leaves out {}: \
                 select a stretch or processes (--from/--to, --name, --pid) or raise --max-events",
                out.path.display(),
                self.written.events,
                self.written.left_out
            ));
        }
        Ok(())
    }

    /// An export writing what `o` names (nothing, without `--timeline`:
    /// it only counts).
    pub fn new(o: ExportOptions) -> Result<Export, String> {
        let tables = match &o.parquet {
            Some(dir) => Some(Box::new(ToParquet::create(dir)?)),
            None => None,
        };
        let out = match o.timeline {
            Some(path) => {
                let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let mut w = BufWriter::with_capacity(1 << 16, file);
                w.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Some(Out {
                    path,
                    w,
                    first: true,
                    max: o.max_events,
                    failed: None,
                })
            }
            None => None,
        };
        Ok(Export {
            out,
            origin: None,
            last_ns: 0,
            tracks: ByText::default(),
            nodes: Vec::new(),
            functions: Functions::default(),
            pending: MessagePairs::default(),
            next_flow: 1,
            written: Written::default(),
            line: String::new(),
            tables,
        })
    }

    /// What the timeline holds so far.
    pub fn written(&self) -> Written {
        self.written
    }

    /// Microseconds since the first event.
    fn us(&self, ts: i64) -> String {
        micros(ts.saturating_sub(self.origin.unwrap_or(ts)))
    }

    /// Writes `self.line` (one event object) unless past the bound.
    fn emit(&mut self) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        if self.written.events >= out.max {
            self.written.left_out += 1;
            return;
        }
        self.written.events += 1;
        let sep: &[u8] = if out.first { b"" } else { b",\n" };
        out.first = false;
        if let Err(e) = out
            .w
            .write_all(sep)
            .and_then(|_| out.w.write_all(self.line.as_bytes()))
        {
            out.failed
                .get_or_insert(format!("{}: {e}", out.path.display()));
        }
    }

    fn track(&mut self, node: u32, pid: &[u8]) -> &mut Track {
        let tid = 2 * self.tracks.len() as u32 + 1;
        if !self.nodes.contains(&node) {
            self.nodes.push(node);
        }
        entry(&mut self.tracks, pid, || Track {
            tid,
            node,
            since: None,
            stack: CallStack::default(),
            gc: [None, None],
        })
    }

    /// A complete event on `tid` (the process's track; `tid + 1` is its
    /// scheduler track).
    fn complete(&mut self, node: u32, tid: u32, cat: &str, name: &[u8], start: i64, end: i64) {
        let (ts, dur) = (self.us(start), micros(end.saturating_sub(start)));
        self.line.clear();
        self.line.push_str(&format!(
            "{{\"ph\":\"X\",\"cat\":\"{cat}\",\"name\":{},\"pid\":{node},\"tid\":{tid},\"ts\":{ts},\"dur\":{dur}}}",
            json(name)
        ));
        self.emit();
    }

    fn scheduled(&mut self, ev: &Event) {
        let entry_id = self.functions.id(ev.str(Slot::Entry));
        let t = self.track(ev.node, ev.str(Slot::Pid));
        let (node, tid) = (t.node, t.tid);
        match ev.str(Slot::Type) {
            b"in" | b"in_exiting" => t.since = Some((ev.ts_ns, entry_id)),
            b"out" | b"out_exiting" | b"out_exited" => {
                if let Some((since, at)) = t.since.take() {
                    self.written.slices += 1;
                    let name: Box<[u8]> = self.functions.name(at).into();
                    self.complete(node, tid + 1, "scheduled", &name, since, ev.ts_ns);
                }
            }
            _ => {}
        }
    }

    /// A frame closed at `end`: a call drawn from its start.
    fn close(&mut self, node: u32, tid: u32, f: &Frame<()>, end: i64, finished: bool) {
        match finished {
            true => self.written.calls += 1,
            false => self.written.calls_unfinished += 1,
        }
        let name: Box<[u8]> = self.functions.name(f.entry).into();
        self.complete(node, tid, "call", &name, f.start_ns, end);
    }

    fn call(&mut self, ev: &Event) {
        let entry_id = self.functions.id(ev.str(Slot::Entry));
        let t = self.track(ev.node, ev.str(Slot::Pid));
        let (node, tid) = (t.node, t.tid);
        let mut dropped = None;
        t.stack
            .call(entry_id, ev.ts_ns, |_| (), |f| dropped = Some(f));
        if let Some(f) = dropped {
            self.close(node, tid, &f, ev.ts_ns, false);
        }
    }

    fn ret(&mut self, ev: &Event, exception: bool) {
        let entry_id = self.functions.id(ev.str(Slot::Entry));
        let t = self.track(ev.node, ev.str(Slot::Pid));
        let (node, tid) = (t.node, t.tid);
        let mut above = Vec::new();
        let popped = t.stack.ret(entry_id, exception, false, |f| above.push(f));
        for f in &above {
            self.close(node, tid, f, ev.ts_ns, false);
        }
        if let Popped::Closed(f) = popped {
            self.close(node, tid, &f, ev.ts_ns, true);
        }
    }

    /// Every open call of the process closed at `ts`, unfinished.
    fn close_open(&mut self, pid: &[u8], ts: i64) {
        let Some(t) = self.tracks.get_mut(pid) else {
            return;
        };
        let (node, tid) = (t.node, t.tid);
        let frames: Vec<Frame<()>> = t.stack.drain().collect();
        for f in &frames {
            self.close(node, tid, f, ts, false);
        }
    }

    fn gc(&mut self, ev: &Event, kind: usize, start: bool) {
        let t = self.track(ev.node, ev.str(Slot::Pid));
        let (node, tid) = (t.node, t.tid);
        if start {
            t.gc[kind] = Some(ev.ts_ns);
            return;
        }
        if let Some(since) = t.gc[kind].take() {
            self.written.gcs += 1;
            self.complete(node, tid, "gc", GC_NAMES[kind].as_bytes(), since, ev.ts_ns);
        }
    }

    fn send(&mut self, ev: &Event, who: &Identity) {
        let t = self.track(ev.node, ev.str(Slot::From));
        let (node, tid) = (t.node, t.tid);
        let id = self.next_flow;
        self.next_flow += 1;
        let pending = Pending {
            ts: ev.ts_ns,
            node,
            tid,
            id,
        };
        let (to, message) = (ev.str(Slot::To), ev.str(Slot::Message));
        match self.pending.send(who, ev.node, to, message, pending) {
            Sent::Pending => {}
            Sent::Evicted(_) | Sent::NoReceiver(_) => self.written.sends_unpaired += 1,
        }
    }

    fn receive(&mut self, ev: &Event, who: &Identity) {
        let t = self.track(ev.node, ev.str(Slot::To));
        let (node, tid) = (t.node, t.tid);
        let message = ev.str(Slot::Message);
        let found = self
            .pending
            .receive(who, ev.node, ev.str(Slot::To), message);
        let Some(send) = found else {
            self.written.receives_unpaired += 1;
            return;
        };
        self.written.flows += 1;
        let text = json(&message[..message.len().min(MESSAGE_BYTES)]);
        for (name, end, n, t, ts) in [
            ("send", "flow_out", send.node, send.tid, send.ts),
            ("queued", "flow_in", node, tid, ev.ts_ns),
        ] {
            self.line.clear();
            self.line.push_str(&format!(
                "{{\"ph\":\"X\",\"cat\":\"message\",\"name\":\"{name}\",\"pid\":{n},\"tid\":{t},\
                 \"ts\":{},\"dur\":0,\"bind_id\":\"{:#x}\",\"{end}\":true,\"args\":{{\"message\":{text}}}}}",
                self.us(ts),
                send.id
            ));
            self.emit();
        }
    }

    fn counter(&mut self, node: u32, name: &str, ts: i64, values: &[(&str, i64)]) {
        self.written.counters += 1;
        let args: Vec<String> = values.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        self.line.clear();
        self.line.push_str(&format!(
            "{{\"ph\":\"C\",\"name\":{},\"pid\":{node},\"ts\":{},\"args\":{{{}}}}}",
            json(name.as_bytes()),
            self.us(ts),
            args.join(",")
        ));
        self.emit();
    }

    /// Names the tracks and closes the file.
    fn close_file(&mut self, who: &Identity) {
        let mut meta = Vec::new();
        for &node in &self.nodes {
            let name = who
                .node_name(node)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_else(|| format!("node {node}"));
            meta.push(format!(
                "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{node},\"args\":{{\"name\":{}}}}}",
                json(name.as_bytes())
            ));
        }
        for (pid, t) in self.tracks.iter() {
            let label = who.label(pid);
            for (tid, name) in [(t.tid, label.clone()), (t.tid + 1, label + " scheduled")] {
                meta.push(format!(
                    "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
                    t.node,
                    json(name.as_bytes())
                ));
                meta.push(format!(
                    "{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}",
                    t.node
                ));
            }
        }
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let mut text = String::new();
        for m in meta {
            if !out.first {
                text.push_str(",\n");
            }
            out.first = false;
            text.push_str(&m);
        }
        text.push_str("\n]}\n");
        if let Err(e) = out.w.write_all(text.as_bytes()).and_then(|_| out.w.flush()) {
            out.failed
                .get_or_insert(format!("{}: {e}", out.path.display()));
        }
    }
}

/// Nanoseconds (none below 0) as the format's microseconds, to the
/// nanosecond.
fn micros(ns: i64) -> String {
    let ns = ns.max(0);
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// A JSON string of bytes (UTF-8 by the contract; anything else replaced).
fn json(bytes: &[u8]) -> String {
    serde_json::to_string(&String::from_utf8_lossy(bytes)).unwrap_or_else(|_| "\"\"".into())
}

impl Analysis for Export {
    fn needs_fields(&self, kind: Kind) -> bool {
        self.tables.is_some()
            || matches!(
                kind,
                Kind::ProcessScheduled
                    | Kind::FunctionCall
                    | Kind::FunctionReturn
                    | Kind::FunctionException
                    | Kind::ProcessExit
                    | Kind::GcMinorStart
                    | Kind::GcMinorEnd
                    | Kind::GcMajorStart
                    | Kind::GcMajorEnd
                    | Kind::MessageSend
                    | Kind::MessageReceive
                    | Kind::ProcessMemory
                    | Kind::MemorySample
            )
    }

    fn ignores_other_kinds(&self) -> bool {
        self.tables.is_none()
    }

    fn on_event(&mut self, ev: &Event, who: &Identity) {
        if let Some(t) = self.tables.as_mut() {
            t.on_event(ev, who);
            if self.out.is_none() {
                // Parquet alone: no timeline to count for.
                return;
            }
        }
        let Some(kind) = ev.kind() else {
            return;
        };
        if !self.needs_fields(kind) {
            return;
        }
        self.origin.get_or_insert(ev.ts_ns);
        self.last_ns = self.last_ns.max(ev.ts_ns);
        match kind {
            Kind::ProcessScheduled => self.scheduled(ev),
            Kind::FunctionCall => self.call(ev),
            Kind::FunctionReturn => self.ret(ev, false),
            Kind::FunctionException => self.ret(ev, true),
            Kind::ProcessExit => self.close_open(ev.str(Slot::Pid), ev.ts_ns),
            Kind::GcMinorStart => self.gc(ev, 0, true),
            Kind::GcMinorEnd => self.gc(ev, 0, false),
            Kind::GcMajorStart => self.gc(ev, 1, true),
            Kind::GcMajorEnd => self.gc(ev, 1, false),
            Kind::MessageSend => self.send(ev, who),
            Kind::MessageReceive => self.receive(ev, who),
            Kind::ProcessMemory => {
                let pid = ev.str(Slot::Pid);
                self.track(ev.node, pid);
                let values = [
                    ("message_queue_len", ev.int(Slot::MessageQueueLen)),
                    ("memory", ev.int(Slot::Memory)),
                ];
                self.counter(ev.node, &who.label(pid), ev.ts_ns, &values);
            }
            Kind::MemorySample => {
                if !self.nodes.contains(&ev.node) {
                    self.nodes.push(ev.node);
                }
                let values = [
                    ("total", ev.int(Slot::Total)),
                    ("processes", ev.int(Slot::Processes)),
                    ("system", ev.int(Slot::System)),
                    ("binary", ev.int(Slot::Binary)),
                    ("ets", ev.int(Slot::Ets)),
                ];
                self.counter(ev.node, "memory", ev.ts_ns, &values);
            }
            _ => {}
        }
    }

    fn finish(&mut self, who: &Identity) {
        if let Some(t) = self.tables.as_mut() {
            t.finish(who);
        }
        let open: Vec<Box<[u8]>> = self
            .tracks
            .iter()
            .filter(|(_, t)| !t.stack.frames().is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        for pid in open {
            self.close_open(&pid, self.last_ns);
        }
        self.written.sends_unpaired += self.pending.drain().count() as u64;
        self.close_file(who);
    }

    /// One run, one file: windows do not start it again.
    fn carries_over(&self) -> bool {
        true
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let parquet = self.tables.as_ref().map(|t| t.table());
        if self.out.is_none() && parquet.is_some() {
            return parquet.into_iter().collect();
        }
        let w = &self.written;
        let mut t = Table::new(
            "export",
            "What the timeline holds",
            vec![
                col("slices", "slices", Unit::Count),
                col("calls", "calls", Unit::Count),
                col("calls_unfinished", "unfinished calls", Unit::Count),
                col("gcs", "GCs", Unit::Count),
                col("flows", "messages", Unit::Count),
                col("sends_unpaired", "sends unpaired", Unit::Count),
                col("receives_unpaired", "receives unpaired", Unit::Count),
                col("counters", "counter samples", Unit::Count),
                col("events", "events written", Unit::Count),
                col("left_out", "left out", Unit::Count),
            ],
        );
        t.push(
            [
                w.slices,
                w.calls,
                w.calls_unfinished,
                w.gcs,
                w.flows,
                w.sends_unpaired,
                w.receives_unpaired,
                w.counters,
                w.events,
                w.left_out,
            ]
            .into_iter()
            .map(Cell::Num)
            .collect(),
            None,
        );
        if w.left_out > 0 {
            t.notes.push(format!(
                "{} events past --max-events left out of the timeline",
                w.left_out
            ));
        }
        vec![t]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;
    use serde_json::Value;

    /// `s` exported to a file of the test's own (`test` names it).
    fn export_of(s: &Script, test: &str, max_events: u64) -> (Export, Value, Result<(), String>) {
        let path = std::env::temp_dir().join(format!(
            "dyntrace_export_{test}_{}.json",
            std::process::id()
        ));
        let mut a = Export::new(ExportOptions {
            timeline: Some(path.clone()),
            parquet: None,
            max_events,
        })
        .expect("created");
        let who = s.feed(&mut a);
        a.finish(&who);
        let written = a.check_written();
        let text = std::fs::read_to_string(&path).expect("written");
        std::fs::remove_file(&path).expect("removed");
        (a, serde_json::from_str(&text).expect("JSON"), written)
    }

    fn events<'v>(v: &'v Value, ph: &str) -> Vec<&'v Value> {
        let all = v["traceEvents"].as_array().expect("array");
        all.iter().filter(|e| e["ph"] == ph).collect()
    }

    /// A node, two processes: one scheduled, calling and collecting, the
    /// other queued a message and sampled.
    fn workload(node: Option<&str>) -> Script {
        let mut s = Script::default();
        if let Some(n) = node {
            s.ev_node(0, n, 0, n);
        }
        s.snapshot(0, "<0.5.0>", "shop");
        s.sched(1000, "<0.5.0>", "in");
        s.call(1500, "<0.5.0>", "m:outer/0");
        s.call(2000, "<0.5.0>", "m:inner/1");
        s.ev_int(2100, Kind::GcMinorStart, "<0.5.0>", &[0, 0, 0]);
        s.ev_int(2600, Kind::GcMinorEnd, "<0.5.0>", &[10, 0, 0]);
        s.ev(
            2700,
            Kind::MessageSend,
            &["<0.5.0>", "<0.6.0>", "{hello,1}"],
        );
        s.ret(3000, "<0.5.0>", "m:inner/1");
        s.ret(4000, "<0.5.0>", "m:outer/0");
        s.sched(5000, "<0.5.0>", "out");
        s.ev(5500, Kind::MessageReceive, &["<0.6.0>", "{hello,1}"]);
        s.ev(5600, Kind::MessageReceive, &["<0.6.0>", "{never,sent}"]);
        s.ev_int(6000, Kind::ProcessMemory, "<0.6.0>", &[]);
        s
    }

    #[test]
    fn tracks_slices_calls_gcs_flows_and_counters() {
        let (a, v, written) = export_of(&workload(Some("n1@h")), "tracks", DEFAULT_MAX_EVENTS);
        assert_eq!(written, Ok(()));
        let w = a.written();
        assert_eq!(
            (
                w.slices,
                w.calls,
                w.gcs,
                w.flows,
                w.receives_unpaired,
                w.counters
            ),
            (1, 2, 1, 1, 1, 1)
        );
        let names: Vec<&str> = events(&v, "M")
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"shop <0.5.0>"), "{names:?}");
        assert!(names.contains(&"<0.6.0>"), "{names:?}");
        let node = events(&v, "M")
            .into_iter()
            .find(|e| e["name"] == "process_name")
            .unwrap();
        assert_eq!(node["args"]["name"], "n1@h");
        let x = events(&v, "X");
        let find = |name: &str| x.iter().find(|e| e["name"] == name).copied().unwrap();
        // Times are microseconds from the first event (the slice's in).
        assert_eq!(
            (
                find("m:outer/0")["ts"].as_f64(),
                find("m:outer/0")["dur"].as_f64()
            ),
            (Some(0.5), Some(2.5))
        );
        assert_eq!(find("m:inner/1")["dur"].as_f64(), Some(1.0));
        assert_eq!(find("gc_minor")["dur"].as_f64(), Some(0.5));
        let slice = x.iter().find(|e| e["cat"] == "scheduled").unwrap();
        assert_eq!(
            slice["tid"].as_u64(),
            find("m:outer/0")["tid"].as_u64().map(|t| t + 1)
        );
        assert_eq!(slice["dur"].as_f64(), Some(4.0));
        let (send, queued) = (find("send"), find("queued"));
        assert_eq!(send["bind_id"], queued["bind_id"]);
        assert_eq!(
            (send["flow_out"].as_bool(), queued["flow_in"].as_bool()),
            (Some(true), Some(true))
        );
        assert_ne!(send["tid"], queued["tid"]);
        assert_eq!(events(&v, "C").len(), 1);
    }

    #[test]
    fn a_node_without_a_name_pairs_its_own_messages() {
        let (a, _, _) = export_of(&workload(None), "unnamed", DEFAULT_MAX_EVENTS);
        let w = a.written();
        assert_eq!((w.flows, w.sends_unpaired, w.receives_unpaired), (1, 0, 1));
    }

    #[test]
    fn past_max_events_the_file_closes_and_the_command_fails() {
        let (a, v, written) = export_of(&workload(Some("n1@h")), "guard", 3);
        assert_eq!(events(&v, "X").len() + events(&v, "C").len(), 3);
        assert_eq!(a.written().left_out, 4);
        let e = written.unwrap_err();
        assert!(
            e.contains("leaves out 4") && e.contains("--from/--to"),
            "{e}"
        );
    }
}
