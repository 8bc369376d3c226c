//! Message delivery between nodes: each `message_send` matched to the
//! `message_receive` of the same message by its receiver, on whichever node
//! that receiver lives, and the time in between per (sending node,
//! receiving node) pair.
//!
//! A pid is written as the node that writes it numbers it: `<0.42.0>` at
//! home, `<8827.42.0>` elsewhere, where 8827 is the writing node's channel
//! number for the pid's home node. The `node_name` events of each node's
//! trace map its channel numbers to node names (and name the node), so a
//! send to `<8827.42.0>` on n1 goes to `<0.42.0>` on the node n1 calls
//! 8827. Messages are compared by text with every channel number masked
//! (`{ping,<*.90.0>}` on both sides), as a pid inside a message is written
//! differently by the sender and the receiver. Between one sender and one
//! receiver Erlang keeps message order, so a receive takes the oldest
//! pending send of the same text to the same process.
//!
//! Read live, each host's events may come a little apart from the others':
//! the run loop puts them back in timestamp order before they come here.
//!
//! A send or receive seen before its node's `node_name` events waits, in
//! order, until they come: a node writes them up to a second after the
//! event is enabled, and again every 10 s, so a live reader that attached
//! after the first ones has them within about 11 s. The wait is bounded in
//! time ([`NAMES_WAIT_NS`], so that a node that never names itself does not
//! hold back every other pair) and in count ([`MAX_UNRESOLVED`]). Memory is
//! bounded per receiver; what is dropped, never paired or never resolved is
//! counted. Local sends are paired too (a node's pair
//! with itself), so that a local message is never taken for a remote one
//! of the same text.

use std::collections::VecDeque;
use std::hash::Hasher;

use rustc_hash::FxHashMap;

use super::{duration_cells, duration_columns, Analysis, NoOptions, Registered};
use crate::event::{Event, Kind, Slot};
use crate::identity::{self, parse_decimal, split_qualified, unquoted, NOT_DISTRIBUTED};
use crate::stats::Durations;
use crate::table::{col, Cell, Summary, Table, Unit};

/// Pending sends kept per receiver before the oldest is dropped.
pub const MAX_PENDING: usize = 4096;
/// Receives seen before their send (clocks of different hosts disagree by
/// a little), kept per receiver.
pub const MAX_EARLY: usize = 256;
/// Sends and receives kept while their node's names are unknown (at most
/// [`KEPT_BYTES`] of message and 64 bytes each: 20 MiB): at 6,000 a second
/// across the cluster, the 11 s until a node's next `node_name` refresh.
pub const MAX_UNRESOLVED: usize = 65536;
/// Trace time a send or receive waits for its node's names: three of the
/// nodes' 10-s refresh periods, so that one refresh lost (a full buffer)
/// drops nothing.
pub const NAMES_WAIT_NS: i64 = 30_000_000_000;
/// Bytes of a message kept while its node's names are unknown.
pub const KEPT_BYTES: usize = 256;
/// Bytes of masked message text compared: longer texts may be cut at
/// different places by the sender and the receiver (their pids differ in
/// length), so only this prefix decides.
pub const COMPARED_BYTES: usize = 48;


/// The `to` of the rows of sends whose receiver the trace does not say.
const UNRESOLVED: &str = "(unresolved)";

/// A node, interned: an index into [`Delivery::node_names`].
pub type NodeId = u32;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Process {
    node: NodeId,
    number: u64,
    serial: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct TextKey {
    hash: u64,
    len: u32,
}

#[derive(Clone, Copy)]
struct Send {
    ts: i64,
    from: NodeId,
    key: TextKey,
}

#[derive(Clone, Copy)]
struct Receive {
    ts: i64,
    key: TextKey,
}

/// A send or receive whose node's channel numbers are not known yet, with
/// the start of its message (enough for [`COMPARED_BYTES`] of key).
enum Unresolved {
    Send {
        trace: usize,
        ts: i64,
        channel: u64,
        number: u64,
        serial: u64,
        message: Box<[u8]>,
    },
    Receive {
        trace: usize,
        ts: i64,
        number: u64,
        serial: u64,
        message: Box<[u8]>,
    },
}

/// What one node's trace says about names.
#[derive(Default)]
struct TraceNames {
    own: Option<NodeId>,
    channels: FxHashMap<u64, NodeId>,
}

/// One (sending node, receiving node) pair's deliveries.
pub struct Pair {
    /// Send -> receive durations.
    pub latency: Durations,
    /// Sends dropped or never received.
    pub unmatched: u64,
}

impl Registered for Delivery {
    const NAME: &'static str = "delivery";
    const ABOUT: &'static str =
        "Message delivery between nodes (send on one -> receive on another), \
        per pair of nodes; give every node's trace (a relay's output directory holds them all, or \
        one live URL per node)";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Delivery, String> {
        Ok(Delivery::new())
    }
    fn for_report(_: NoOptions) -> Option<Result<Delivery, String>> {
        None
    }
}

/// The delivery state machine. Traces (nodes) are numbered by the caller.
#[derive(Default)]
pub struct Delivery {
    names: Vec<Box<[u8]>>,
    name_ids: FxHashMap<Box<[u8]>, NodeId>,
    traces: Vec<TraceNames>,
    sends: FxHashMap<Process, VecDeque<Send>>,
    early: FxHashMap<Process, VecDeque<Receive>>,
    unresolved: VecDeque<Unresolved>,
    pairs: FxHashMap<(NodeId, NodeId), Pair>,
    /// Sends per node (trace) to a name or alias no event of the trace
    /// resolves to a process.
    unresolved_targets: FxHashMap<usize, u64>,
    /// Receives that had pending sends of the same text from more than one
    /// node: matched to the oldest, which may be the wrong one.
    pub ambiguous: u64,
    /// Receives read before their send (live sources deliver each host's
    /// events a little apart), paired when the send came.
    pub early_receives: u64,
    /// Receives timestamped before their send: the hosts' clocks differ
    /// (recorded as 0 ns).
    pub skewed: u64,
    /// Sends and receives dropped because their node was not named within
    /// [`NAMES_WAIT_NS`], by the end of the input, or while
    /// [`MAX_UNRESOLVED`] others waited.
    pub unresolved_dropped: u64,
    /// Those of [`Delivery::unresolved_dropped`] dropped because
    /// [`MAX_UNRESOLVED`] others waited.
    pub unresolved_over_cap: u64,
}

impl Delivery {
    /// An empty state, for events read in timestamp order.
    pub fn new() -> Delivery {
        Delivery::default()
    }

    /// A `node_name` event of trace `trace`: `node` names the trace's node,
    /// `peer` is the node it numbers `channel` (0: itself).
    pub fn node_name(&mut self, trace: usize, node: &[u8], channel: u64, peer: &[u8]) {
        // A node not (or no longer) distributed has no cross-node traffic.
        if node == NOT_DISTRIBUTED {
            return;
        }
        let own = self.intern(node);
        let peer = self.intern(peer);
        let names = self.trace(trace);
        let changed = names.own != Some(own) || names.channels.get(&channel) != Some(&peer);
        names.own = Some(own);
        names.channels.insert(channel, peer);
        if changed {
            self.retry_unresolved();
        }
    }

    /// A `message_send` in trace `trace` to `to`: a pid, or what the trace
    /// did not resolve to one (counted per sending node).
    pub fn send(&mut self, trace: usize, ts: i64, to: &[u8], message: &[u8]) {
        let Some((channel, number, serial)) = parse_pid(to) else {
            if !to.is_empty() && !to.starts_with(b"#Port") {
                *self.unresolved_targets.entry(trace).or_default() += 1;
            }
            return;
        };
        self.trace(trace);
        let u = Unresolved::Send {
            trace,
            ts,
            channel,
            number,
            serial,
            message: kept(message),
        };
        self.take(u);
    }

    /// A `message_receive` in trace `trace` by `to`.
    pub fn receive(&mut self, trace: usize, ts: i64, to: &[u8], message: &[u8]) {
        let Some((0, number, serial)) = parse_pid(to) else {
            return;
        };
        self.trace(trace);
        self.take(Unresolved::Receive {
            trace,
            ts,
            number,
            serial,
            message: kept(message),
        });
    }

    /// The name of a node id, as written in the trace (an atom's text).
    pub fn node_name_of(&self, id: NodeId) -> &[u8] {
        &self.names[id as usize]
    }

    /// Per (from, to) pair, in name order; pending sends count as
    /// unmatched.
    pub fn pairs(&self) -> Vec<(&[u8], &[u8], u64, &Durations)> {
        let mut pending: FxHashMap<(NodeId, NodeId), u64> = FxHashMap::default();
        for (to, sends) in &self.sends {
            for s in sends {
                *pending.entry((s.from, to.node)).or_default() += 1;
            }
        }
        let mut rows: Vec<_> = self
            .pairs
            .iter()
            .map(|(&(from, to), pair)| {
                let unmatched = pair.unmatched + pending.get(&(from, to)).copied().unwrap_or(0);
                (
                    self.node_name_of(from),
                    self.node_name_of(to),
                    unmatched,
                    &pair.latency,
                )
            })
            .collect();
        rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        rows
    }

    /// Sends and receives dropped for want of their node's names.
    pub fn unresolved(&self) -> u64 {
        self.unresolved_dropped
    }

    /// Sends and receives waiting for their node's names now.
    pub fn waiting_for_names(&self) -> u64 {
        self.unresolved.len() as u64
    }

    fn intern(&mut self, name: &[u8]) -> NodeId {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let id = self.names.len() as NodeId;
        self.names.push(name.into());
        self.name_ids.insert(name.into(), id);
        id
    }

    fn trace(&mut self, trace: usize) -> &mut TraceNames {
        if self.traces.len() <= trace {
            self.traces.resize_with(trace + 1, TraceNames::default);
        }
        &mut self.traces[trace]
    }

    fn pair(&mut self, from: NodeId, to: NodeId) -> &mut Pair {
        self.pairs.entry((from, to)).or_insert_with(|| Pair {
            latency: Durations::new(3),
            unmatched: 0,
        })
    }

    /// Handles a send or receive now if nothing waits before it and its
    /// names are known; otherwise it waits, in order.
    fn take(&mut self, u: Unresolved) {
        let now = u.ts();
        if self.unresolved.is_empty() {
            if let Err(u) = self.resolve(u) {
                self.unresolved.push_back(u);
            }
            return;
        }
        if self.unresolved.len() >= MAX_UNRESOLVED {
            self.drop_oldest_unresolved();
            self.unresolved_over_cap += 1;
        }
        self.unresolved.push_back(u);
        self.retry_unresolved();
        while self
            .unresolved
            .front()
            .is_some_and(|oldest| now.saturating_sub(oldest.ts()) > NAMES_WAIT_NS)
        {
            self.drop_oldest_unresolved();
        }
    }

    /// Gives up on the oldest waiting event, and handles those behind it
    /// that can be.
    fn drop_oldest_unresolved(&mut self) {
        if self.unresolved.pop_front().is_some() {
            self.unresolved_dropped += 1;
        }
        self.retry_unresolved();
    }

    /// Handles the waiting events from the oldest, up to the first whose
    /// names are still unknown: events are always paired in the order they
    /// came, whatever order the names come in.
    fn retry_unresolved(&mut self) {
        while let Some(u) = self.unresolved.pop_front() {
            if let Err(u) = self.resolve(u) {
                self.unresolved.push_front(u);
                break;
            }
        }
    }

    fn resolve(&mut self, u: Unresolved) -> Result<(), Unresolved> {
        let names = &self.traces[u.trace()];
        match u {
            Unresolved::Send {
                ts,
                channel,
                number,
                serial,
                ref message,
                ..
            } => {
                let (Some(from), Some(&node), Some(key)) = (
                    names.own,
                    names.channels.get(&channel),
                    text_key(message, names),
                ) else {
                    return Err(u);
                };
                self.paired_send(
                    from,
                    ts,
                    Process {
                        node,
                        number,
                        serial,
                    },
                    key,
                );
            }
            Unresolved::Receive {
                ts,
                number,
                serial,
                ref message,
                ..
            } => {
                let (Some(node), Some(key)) = (names.own, text_key(message, names)) else {
                    return Err(u);
                };
                self.paired_receive(
                    ts,
                    Process {
                        node,
                        number,
                        serial,
                    },
                    key,
                );
            }
        }
        Ok(())
    }

    fn paired_send(&mut self, from: NodeId, ts: i64, to: Process, key: TextKey) {
        if let Some(early) = self.early.get_mut(&to) {
            if let Some(i) = early.iter().position(|r| r.key == key) {
                let r = early.remove(i).expect("position is in range");
                self.early_receives += 1;
                self.record(from, to.node, r.ts - ts);
                return;
            }
        }
        let queue = self.sends.entry(to).or_default();
        let dropped = if queue.len() >= MAX_PENDING {
            queue.pop_front()
        } else {
            None
        };
        queue.push_back(Send { ts, from, key });
        if let Some(dropped) = dropped {
            self.pair(dropped.from, to.node).unmatched += 1;
        }
        self.pair(from, to.node);
    }

    fn paired_receive(&mut self, ts: i64, to: Process, key: TextKey) {
        let Some(queue) = self.sends.get_mut(&to) else {
            return self.keep_early(to, Receive { ts, key });
        };
        let Some(i) = queue.iter().position(|s| s.key == key) else {
            return self.keep_early(to, Receive { ts, key });
        };
        let send = queue.remove(i).expect("position is in range");
        if queue
            .iter()
            .skip(i)
            .any(|s| s.key == key && s.from != send.from)
        {
            self.ambiguous += 1;
        }
        self.record(send.from, to.node, ts - send.ts);
    }

    fn record(&mut self, from: NodeId, to: NodeId, ns: i64) {
        if ns < 0 {
            self.skewed += 1;
        }
        self.pair(from, to)
            .latency
            .record(u64::try_from(ns).unwrap_or(0));
    }

    fn keep_early(&mut self, to: Process, r: Receive) {
        let queue = self.early.entry(to).or_default();
        if queue.len() >= MAX_EARLY {
            queue.pop_front();
        }
        queue.push_back(r);
    }
}

impl Unresolved {
    fn trace(&self) -> usize {
        match self {
            Unresolved::Send { trace, .. } | Unresolved::Receive { trace, .. } => *trace,
        }
    }

    fn ts(&self) -> i64 {
        match self {
            Unresolved::Send { ts, .. } | Unresolved::Receive { ts, .. } => *ts,
        }
    }
}

impl Analysis for Delivery {
    fn on_event(&mut self, ev: &Event) {
        let trace = ev.node as usize;
        match ev.kind() {
            Some(Kind::NodeName) => self.node_name(
                trace,
                ev.str(Slot::Node),
                ev.int(Slot::Channel) as u64,
                ev.str(Slot::Peer),
            ),
            Some(Kind::MessageSend) => {
                self.send(trace, ev.ts_ns, ev.str(Slot::To), ev.str(Slot::Message))
            }
            Some(Kind::MessageReceive) => {
                self.receive(trace, ev.ts_ns, ev.str(Slot::To), ev.str(Slot::Message))
            }
            _ => {}
        }
    }

    fn finish(&mut self) {
        // What never got its names is dropped, so that what follows it is
        // paired.
        self.retry_unresolved();
        while !self.unresolved.is_empty() {
            self.drop_oldest_unresolved();
        }
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let columns = [col("from", "from", Unit::Text), col("to", "to", Unit::Text)]
            .into_iter()
            .chain(duration_columns())
            .chain([
                col("unmatched", "unmatched", Unit::Count),
                col("unresolved_target", "unresolved target", Unit::Count),
            ])
            .collect();
        let mut table = Table::new(
            "delivery",
            "Message delivery, send -> receive, per pair of nodes",
            columns,
        );
        for (from, to, unmatched, latency) in self.pairs() {
            let cells = [Cell::bytes(unquoted(from)), Cell::bytes(unquoted(to))]
                .into_iter()
                .chain(duration_cells(latency))
                .chain([Cell::Num(unmatched), Cell::Num(0)])
                .collect();
            table.push(cells, Some(latency.log2()));
        }
        let mut unresolved: Vec<(&[u8], u64)> = self
            .unresolved_targets
            .iter()
            .map(|(&trace, &n)| {
                let own = self.traces.get(trace).and_then(|t| t.own);
                (own.map_or(&b"?"[..], |id| self.node_name_of(id)), n)
            })
            .collect();
        unresolved.sort();
        for (from, n) in unresolved {
            let cells = [Cell::bytes(unquoted(from)), Cell::Text(UNRESOLVED.into())]
                .into_iter()
                .chain(duration_cells(&Durations::new(1)))
                .chain([Cell::Num(0), Cell::Num(n)])
                .collect();
            table.push(cells, None);
        }
        if !self.unresolved_targets.is_empty() {
            table.notes.push(format!(
                "{} sends to a name or alias the trace does not resolve to a process \
                 (unresolved target): trace process_register or record the process_name \
                 snapshot (dyntrace:announce_processes()), and the calls' messages",
                self.unresolved_targets.values().sum::<u64>()
            ));
        }
        if self.waiting_for_names() > 0 {
            table.notes.push(format!(
                "{} sends and receives wait for their nodes' names: each node writes them \
                 every 10 s (dyntrace:announce_nodes() writes them at once)",
                self.waiting_for_names()
            ));
        }
        if self.unresolved() > 0 {
            table.notes.push(format!(
                "{} sends and receives of nodes (or channels) no node_name event named \
                 in time ({} of them dropped while {MAX_UNRESOLVED} others waited): \
                 enable org_erlang_dyntrace:node_name, or call dyntrace:announce_nodes()",
                self.unresolved(),
                self.unresolved_over_cap
            ));
        }
        if self.ambiguous > 0 {
            table.notes.push(format!(
                "{} receives had the same text pending from several nodes: paired with the oldest send",
                self.ambiguous
            ));
        }
        if self.skewed > 0 {
            table.notes.push(format!(
                "{} receives are timestamped before their send (counted as 0 ns): the hosts' clocks differ",
                self.skewed
            ));
        }
        let mut summary = Table::new(
            "delivery_summary",
            "Unpaired",
            vec![
                col("unresolved", "unresolved", Unit::Count),
                col("unresolved_over_cap", "unresolved over cap", Unit::Count),
                col("waiting_for_names", "waiting for names", Unit::Count),
                col("ambiguous", "ambiguous", Unit::Count),
                col("early_receives", "early receives", Unit::Count),
                col("skewed", "skewed", Unit::Count),
            ],
        );
        summary.shown = crate::table::Shown::JsonOnly;
        summary.push(
            vec![
                Cell::Num(self.unresolved()),
                Cell::Num(self.unresolved_over_cap),
                Cell::Num(self.waiting_for_names()),
                Cell::Num(self.ambiguous),
                Cell::Num(self.early_receives),
                Cell::Num(self.skewed),
            ],
            None,
        );
        vec![table, summary]
    }
}

/// A pid as the analyses see it (told apart per node or not) as numbers.
fn parse_pid(text: &[u8]) -> Option<(u64, u64, u64)> {
    identity::parse_pid(split_qualified(text).0)
}

/// The start of a message kept while its node is unnamed: a channel
/// number may shrink to a node id, so more than [`COMPARED_BYTES`].
fn kept(message: &[u8]) -> Box<[u8]> {
    message[..message.len().min(KEPT_BYTES)].into()
}

/// The message's identity for matching: its text, outside quoted strings
/// and atoms, with every channel number (`<C.` of pids, ports and refs)
/// replaced by the node it names in `names`, over its first
/// [`COMPARED_BYTES`] bytes: the sender's `{ping,<0.90.0>}` and the
/// receiver's `{ping,<8707.90.0>}` are the same message. None while a
/// channel in it is unnamed (its node's table is not read yet).
fn text_key(message: &[u8], names: &TraceNames) -> Option<TextKey> {
    let mut masked = Masked::default();
    let mut quote = None;
    let mut i = 0;
    while i < message.len() && masked.len < COMPARED_BYTES {
        let b = message[i];
        i += 1;
        match quote {
            Some(_) if b == b'\\' => {
                masked.push(b);
                if let Some(&escaped) = message.get(i) {
                    masked.push(escaped);
                    i += 1;
                }
                continue;
            }
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'<' => {
                let digits = message[i..]
                    .iter()
                    .take_while(|d| d.is_ascii_digit())
                    .count();
                if digits > 0 && message.get(i + digits) == Some(&b'.') {
                    let channel = parse_decimal(&message[i..i + digits]);
                    let node = match channel {
                        Some(0) => names.own,
                        Some(c) => names.channels.get(&c).copied(),
                        None => None,
                    };
                    masked.push(b'<');
                    masked.push_all(format!("n{}", node?).as_bytes());
                    i += digits;
                    continue;
                }
            }
            None => {}
        }
        masked.push(b);
    }
    let whole = i >= message.len() && !message.ends_with(b"...");
    let mut h = rustc_hash::FxHasher::default();
    h.write(&masked.bytes[..masked.len]);
    Some(TextKey {
        hash: h.finish(),
        len: if whole { masked.len as u32 } else { u32::MAX },
    })
}

struct Masked {
    bytes: [u8; COMPARED_BYTES],
    len: usize,
}

impl Default for Masked {
    fn default() -> Self {
        Masked {
            bytes: [0; COMPARED_BYTES],
            len: 0,
        }
    }
}

impl Masked {
    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    fn push_all(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.push(b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;
    use crate::run::Reordered;

    const N1: &[u8] = b"'n1@10.99.0.11'";
    const N2: &[u8] = b"'n2@10.99.0.12'";
    const N3: &[u8] = b"'n3@10.99.0.13'";

    /// Three traces (0, 1, 2 = n1, n2, n3), each numbering the others its
    /// own way, as the VM does (atom indexes differ per node).
    fn cluster() -> Delivery {
        let mut d = Delivery::new();
        for (t, own, others) in [
            (0, N1, [(3002, N2), (3003, N3)]),
            (1, N2, [(8707, N1), (8800, N3)]),
            (2, N3, [(8707, N1), (9100, N2)]),
        ] {
            d.node_name(t, own, 0, own);
            for (c, peer) in others {
                d.node_name(t, own, c, peer);
            }
        }
        d
    }

    fn row(d: &Delivery, from: &[u8], to: &[u8]) -> (u64, u64, u64) {
        d.pairs()
            .into_iter()
            .find(|r| r.0 == from && r.1 == to)
            .map(|(_, _, unmatched, lat)| (lat.count(), unmatched, lat.max()))
            .unwrap_or((0, 0, 0))
    }

    /// Node 0 calls node 1 3002; node 1 calls node 0 8707.
    fn names(own: NodeId, channel: u64, peer: NodeId) -> TraceNames {
        let mut names = TraceNames {
            own: Some(own),
            ..TraceNames::default()
        };
        names.channels.insert(channel, peer);
        names
    }

    #[test]
    fn pids_parse_and_texts_name_their_nodes() {
        assert_eq!(parse_pid(b"<8827.42.0>"), Some((8827, 42, 0)));
        assert_eq!(parse_pid(b"<0.42.0>"), Some((0, 42, 0)));
        assert_eq!(parse_pid(b"{reg,'n2@h'}"), None);
        assert_eq!(parse_pid(b"<0.42>"), None);
        let (n1, n2) = (names(0, 3002, 1), names(1, 8707, 0));
        let key = |text: &[u8], names: &TraceNames| text_key(text, names).expect("named");
        assert_eq!(
            key(b"{ping,<0.90.0>}", &n1),
            key(b"{ping,<8707.90.0>}", &n2)
        );
        assert_eq!(
            key(b"{#Ref<0.1.2.3>,#Port<0.7>}", &n1),
            key(b"{#Ref<8707.1.2.3>,#Port<8707.7>}", &n2)
        );
        // The same text written on two nodes is two different pids.
        assert_ne!(key(b"{ping,<0.90.0>}", &n1), key(b"{ping,<0.90.0>}", &n2));
        assert_ne!(key(b"{ping,<0.90.0>}", &n1), key(b"{ping,<0.91.0>}", &n1));
        // A channel no event named yet: no key until it is.
        assert_eq!(text_key(b"{x,<5.1.2>}", &n1), None);
        // A string that looks like a pid is text, not a pid.
        assert_ne!(key(b"\"<0.1.2>\"", &n1), key(b"\"<3002.1.2>\"", &n1));
        assert_ne!(key(b"<<1,2>>", &n1), key(b"<<1,3>>", &n1));
        // Cut texts compare on their prefix, whoever cut them where.
        let long = [b'x'; 80];
        let mut cut = long[..60].to_vec();
        cut.extend_from_slice(b"...");
        assert_eq!(key(&long, &n1).hash, key(&cut, &n2).hash);
    }

    /// Two senders of the same local pid number on two nodes send the same
    /// text to one receiver at once: each receive pairs with its own
    /// node's send, as the pid in the message says.
    #[test]
    fn pids_inside_messages_tell_senders_apart() {
        let mut d = cluster();
        d.send(1, 100, b"<8707.50.0>", b"{ping,<0.95.0>}");
        d.send(2, 101, b"<8707.50.0>", b"{ping,<0.95.0>}");
        d.receive(0, 300, b"<0.50.0>", b"{ping,<3003.95.0>}");
        d.receive(0, 400, b"<0.50.0>", b"{ping,<3002.95.0>}");
        assert_eq!(row(&d, N3, N1), (1, 0, 199));
        assert_eq!(row(&d, N2, N1), (1, 0, 300));
        assert_eq!(d.ambiguous, 0);
    }

    /// The same text to the "same" pid number on two nodes goes to the node
    /// that the sender's channel number names.
    #[test]
    fn sends_go_to_the_node_their_channel_names() {
        let mut d = cluster();
        d.send(0, 100, b"<3002.90.0>", b"ping");
        d.send(0, 110, b"<3003.90.0>", b"ping");
        d.receive(2, 150, b"<0.90.0>", b"ping");
        d.receive(1, 400, b"<0.90.0>", b"ping");
        assert_eq!(row(&d, N1, N2), (1, 0, 300));
        assert_eq!(row(&d, N1, N3), (1, 0, 40));
        assert_eq!(d.ambiguous, 0);
    }

    /// Repeated texts pair in order, and a pid inside the message matches
    /// though each side writes it differently.
    #[test]
    fn repeated_texts_pair_in_order() {
        let mut d = cluster();
        for i in 0..3 {
            d.send(1, 1000 * i, b"<8707.50.0>", b"{ok,<0.60.0>}");
        }
        for i in 0..3 {
            d.receive(0, 1000 * i + 10 * (i + 1), b"<0.50.0>", b"{ok,<3002.60.0>}");
        }
        assert_eq!(row(&d, N2, N1), (3, 0, 30));
        d.send(1, 5000, b"<8707.50.0>", b"{ok,<0.60.0>}");
        assert_eq!(row(&d, N2, N1), (3, 1, 30));
    }

    /// Events before their node's names wait for them, also for the names
    /// of the pids inside their message.
    #[test]
    fn events_wait_for_names() {
        let mut d = Delivery::new();
        d.send(0, 100, b"<3002.90.0>", b"{hello,<0.5.0>}");
        d.receive(1, 250, b"<0.90.0>", b"{hello,<8707.5.0>}");
        assert_eq!(d.waiting_for_names(), 2);
        d.node_name(1, N2, 0, N2);
        d.node_name(0, N1, 0, N1);
        d.node_name(0, N1, 3002, N2);
        assert_eq!(d.waiting_for_names(), 1);
        d.node_name(1, N2, 8707, N1);
        assert_eq!((d.waiting_for_names(), d.unresolved()), (0, 0));
        assert_eq!(row(&d, N1, N2), (1, 0, 150));
    }

    /// Live, a reader that attached after the nodes wrote their names gets
    /// them with the next refresh, seconds later (here 9 s): the send
    /// waits for them past the reordering window, and is paired.
    #[test]
    fn events_wait_past_the_window_for_a_refresh() {
        let mut r = Reordered::new(Delivery::new(), 2_000_000_000);
        let mut s = Script::default();
        s.in_trace(1)
            .ev_node(0, "'n2@h'", 0, "'n2@h'")
            .ev_node(0, "'n2@h'", 8707, "'n1@h'")
            .in_trace(0)
            .ev(
                500_000_000,
                Kind::MessageSend,
                &["<0.5.0>", "<3002.90.0>", "ping"],
            )
            .in_trace(1)
            .ev(600_000_000, Kind::MessageReceive, &["<0.90.0>", "ping"])
            .in_trace(0)
            .ev_node(9_500_000_000, "'n1@h'", 0, "'n1@h'")
            .ev_node(9_500_000_000, "'n1@h'", 3002, "'n2@h'")
            .in_trace(1)
            .ev(12_000_000_000, Kind::MessageReceive, &["<0.91.0>", "later"]);
        s.feed(&mut r);
        let d = &r.inner;
        assert_eq!(row(d, b"'n1@h'", b"'n2@h'"), (1, 0, 100_000_000));
        assert_eq!((d.waiting_for_names(), d.unresolved()), (0, 0));
    }

    /// A node that never names itself holds the others' pairs back for
    /// NAMES_WAIT_NS at most; its events are then counted unresolved.
    #[test]
    fn an_unnamed_node_stops_holding_back_the_others() {
        let mut d = cluster();
        d.send(3, 0, b"<4000.90.0>", b"lost");
        d.send(0, 1_000, b"<3002.90.0>", b"ping");
        d.receive(1, 2_000, b"<0.90.0>", b"ping");
        assert_eq!((row(&d, N1, N2), d.waiting_for_names()), ((0, 0, 0), 3));
        d.send(0, NAMES_WAIT_NS + 1, b"<3002.91.0>", b"next");
        assert_eq!(row(&d, N1, N2), (1, 1, 1_000));
        assert_eq!((d.waiting_for_names(), d.unresolved()), (0, 1));
    }

    /// At most MAX_UNRESOLVED events wait; the oldest beyond are dropped
    /// and counted apart.
    #[test]
    fn waiting_events_are_capped() {
        let mut d = Delivery::new();
        for i in 0..MAX_UNRESOLVED as i64 + 5 {
            d.send(0, i, b"<3002.90.0>", b"ping");
        }
        assert_eq!(d.waiting_for_names(), MAX_UNRESOLVED as u64);
        assert_eq!((d.unresolved(), d.unresolved_over_cap), (5, 5));
        let t = &d.tables(&Summary::default())[1];
        assert_eq!(
            t.value(&t.rows[0], "unresolved_over_cap"),
            Some(&Cell::Num(5))
        );
        d.finish();
        assert_eq!(d.unresolved(), MAX_UNRESOLVED as u64 + 5);
    }

    /// Local sends are pairs too, so a local message of the same text is
    /// not taken for a remote one.
    #[test]
    fn local_sends_take_their_receives() {
        let mut d = cluster();
        d.send(1, 100, b"<0.90.0>", b"go");
        d.send(0, 105, b"<3002.90.0>", b"go");
        d.receive(1, 120, b"<0.90.0>", b"go");
        d.receive(1, 300, b"<0.90.0>", b"go");
        assert_eq!(row(&d, N2, N2), (1, 0, 20));
        assert_eq!(row(&d, N1, N2), (1, 0, 195));
        assert_eq!(d.ambiguous, 1);
    }

    /// Live, a host's events read late are put back in timestamp order.
    #[test]
    fn a_window_reorders_hosts() {
        let mut r = Reordered::new(Delivery::new(), 1_000);
        let mut s = Script::default();
        s.in_trace(1)
            .ev_node(1, "'n2@h'", 0, "'n2@h'")
            .ev(20, Kind::MessageReceive, &["<0.90.0>", "pong"])
            .ev(40, Kind::MessageReceive, &["<0.90.0>", "pong"])
            .in_trace(0)
            .ev_node(3, "'n1@h'", 0, "'n1@h'")
            .ev_node(3, "'n1@h'", 3002, "'n2@h'")
            .ev(30, Kind::MessageSend, &["<0.5.0>", "<3002.90.0>", "pong"])
            .in_trace(2)
            .ev_node(2, "'n3@h'", 0, "'n3@h'")
            .ev_node(2, "'n3@h'", 9100, "'n2@h'")
            .ev(10, Kind::MessageSend, &["<0.5.0>", "<9100.90.0>", "pong"]);
        // Without the window, n1's send would take the receive at 20.
        let mut unordered = Delivery::new();
        s.feed(&mut unordered);
        assert_eq!(unordered.skewed, 1);
        s.feed(&mut r);
        r.finish();
        let d = &r.inner;
        assert_eq!(row(d, b"'n3@h'", b"'n2@h'"), (1, 0, 10));
        assert_eq!(row(d, b"'n1@h'", b"'n2@h'"), (1, 0, 10));
        assert_eq!((d.ambiguous, d.skewed), (0, 0));
    }

    /// Live, when nothing more is read, the wall clock lets the held events
    /// go two windows after their time.
    #[test]
    fn the_wall_clock_releases_held_events() {
        let mut r = Reordered::new(Delivery::new(), 1_000);
        let mut s = Script::default();
        s.ev_node(0, "'n1@h'", 0, "'n1@h'")
            .ev(10, Kind::MessageSend, &["<0.5.0>", "<0.90.0>", "go"])
            .ev(20, Kind::MessageReceive, &["<0.90.0>", "go"]);
        s.feed(&mut r);
        assert_eq!(row(&r.inner, b"'n1@h'", b"'n1@h'"), (0, 0, 0));
        r.advance_to(1_500);
        assert_eq!(row(&r.inner, b"'n1@h'", b"'n1@h'"), (0, 0, 0));
        r.advance_to(2_020);
        assert_eq!(row(&r.inner, b"'n1@h'", b"'n1@h'"), (1, 0, 10));
    }

    /// Through the events: each trace's node_name events name it.
    #[test]
    fn events_of_three_traces() {
        let mut d = Delivery::new();
        let mut s = Script::default();
        s.in_trace(1)
            .ev_node(1, "'n2@h'", 0, "'n2@h'")
            .ev(20, Kind::MessageReceive, &["<0.90.0>", "ping"])
            .in_trace(0)
            .ev_node(2, "'n1@h'", 0, "'n1@h'")
            .ev_node(3, "'n1@h'", 3002, "'n2@h'")
            .ev(10, Kind::MessageSend, &["<0.5.0>", "<3002.90.0>", "ping"]);
        s.feed(&mut d);
        let tables = d.tables(&Summary::default());
        let row = &tables[0].rows[0];
        assert_eq!(
            tables[0].value(row, "from"),
            Some(&Cell::Text("n1@h".into()))
        );
        assert_eq!(tables[0].value(row, "to"), Some(&Cell::Text("n2@h".into())));
        assert_eq!(tables[0].value(row, "count"), Some(&Cell::Num(1)));
        assert_eq!(tables[0].value(row, "max_ns"), Some(&Cell::Num(10)));
    }
}
