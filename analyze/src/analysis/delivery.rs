//! Message delivery between nodes: each `message_send` matched to the
//! `message_receive` of the same message by its receiver, on whichever node
//! that receiver lives, and the time in between per (sending node,
//! receiving node) pair.
//!
//! Who is who comes from the identity layer: a send to `<8827.42.0>` on n1
//! goes to the process `<0.42.0>` of the node n1 numbers 8827
//! ([`Identity::process`]), and messages are compared by their text with
//! every pid renumbered the same whoever wrote it ([`Identity::renumbered`]:
//! `{ping,<n2.90.0>}` on both sides). Between one sender and one receiver
//! Erlang keeps message order, so a receive takes the oldest pending send of
//! the same text to the same process.
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

use crate::analysis::durations::{duration_cells, duration_columns};
use crate::engine::analysis::Analysis;
use crate::engine::identity::{self, split_qualified, unquoted, Identity, NodeNameId, Process};
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::stats::Durations;
use crate::model::table::{col, Cell, Table, Unit};

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
/// Bytes of renumbered message text compared: longer texts may be cut at
/// different places by the sender and the receiver (their pids differ in
/// length), so only this prefix decides.
pub const COMPARED_BYTES: usize = 48;

/// The `to` of the rows of sends whose receiver the trace does not say.
const UNRESOLVED: &str = "(unresolved)";

/// A message's text as matched: its renumbered start, hashed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TextKey {
    hash: u64,
    len: u32,
}

#[derive(Clone, Copy)]
struct Send {
    ts: i64,
    from: NodeNameId,
    key: TextKey,
}

#[derive(Clone, Copy)]
struct Receive {
    ts: i64,
    key: TextKey,
}

/// A send or receive of node `node` whose names are not known yet, with
/// the start of its message (enough for [`COMPARED_BYTES`] of key).
enum Unresolved {
    Send {
        node: u32,
        ts: i64,
        channel: u64,
        number: u64,
        serial: u64,
        message: Box<[u8]>,
    },
    Receive {
        node: u32,
        ts: i64,
        number: u64,
        serial: u64,
        message: Box<[u8]>,
    },
}

/// One (sending node, receiving node) pair's deliveries.
pub struct Pair {
    /// Send -> receive durations.
    pub latency: Durations,
    /// Sends dropped or never received.
    pub unmatched: u64,
    /// Receives timestamped before their send.
    pub skewed: u64,
    /// The least receive time minus send time (ns, may be negative).
    pub least_ns: Option<i64>,
}

/// The delivery state machine: the pairing.
#[derive(Default)]
pub struct Delivery {
    /// The identity layer's node names, by id, for the tables.
    names: Vec<Box<[u8]>>,
    /// Each sending node's name, for the rows of unresolved targets.
    own: FxHashMap<u32, NodeNameId>,
    sends: FxHashMap<Process, VecDeque<Send>>,
    early: FxHashMap<Process, VecDeque<Receive>>,
    unresolved: VecDeque<Unresolved>,
    pairs: FxHashMap<(NodeNameId, NodeNameId), Pair>,
    /// Sends per node to a name or alias no event of the trace resolves to
    /// a process.
    unresolved_targets: FxHashMap<u32, u64>,
    /// Receives that had pending sends of the same text from more than one
    /// node: matched to the oldest, which may be the wrong one.
    pub ambiguous: u64,
    /// Receives read before their send (live sources deliver each host's
    /// events a little apart), paired when the send came.
    pub early_receives: u64,
    /// Receives timestamped before their send (recorded as 0 ns): the
    /// hosts' clocks differ, or (one clock) the runtime wrote the receive
    /// first.
    pub skewed: u64,
    /// Receives no recorded send was paired with: dropped from the early
    /// ones kept ([`MAX_EARLY`]).
    pub early_dropped: u64,
    /// Whether the input's traces say they share one host and clock.
    one_clock: bool,
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

    /// A `message_send` of node `node` to `to`: a pid, or what the trace
    /// did not resolve to one (counted per sending node).
    fn send(&mut self, who: &Identity, node: u32, ts: i64, to: &[u8], message: &[u8]) {
        let Some((channel, number, serial)) = parse_pid(to) else {
            if !to.is_empty() && !to.starts_with(b"#Port") {
                *self.unresolved_targets.entry(node).or_default() += 1;
                self.note_own(who, node);
            }
            return;
        };
        let u = Unresolved::Send {
            node,
            ts,
            channel,
            number,
            serial,
            message: kept(message),
        };
        self.take(who, u);
    }

    /// A `message_receive` of node `node` by `to`.
    fn receive(&mut self, who: &Identity, node: u32, ts: i64, to: &[u8], message: &[u8]) {
        let Some((0, number, serial)) = parse_pid(to) else {
            return;
        };
        self.take(
            who,
            Unresolved::Receive {
                node,
                ts,
                number,
                serial,
                message: kept(message),
            },
        );
    }

    /// The name of a node, as written in the trace (an atom's text).
    fn node_name_of(&self, id: NodeNameId) -> &[u8] {
        self.names.get(id as usize).map_or(b"?", |n| &n[..])
    }

    /// Per (from, to) pair, in name order; pending sends count as
    /// unmatched.
    pub fn pairs(&self) -> Vec<(&[u8], &[u8], u64, &Durations)> {
        let mut pending: FxHashMap<(NodeNameId, NodeNameId), u64> = FxHashMap::default();
        for (to, sends) in &self.sends {
            for s in sends {
                *pending.entry((s.from, to.home)).or_default() += 1;
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

    /// Copies the node names the identity layer learnt since last time.
    fn sync_names(&mut self, who: &Identity) {
        let known = who.node_name_texts();
        if self.names.len() < known.len() {
            self.names.extend_from_slice(&known[self.names.len()..]);
        }
    }

    fn note_own(&mut self, who: &Identity, node: u32) {
        if let Some(id) = who.own_name(node) {
            self.own.insert(node, id);
        }
    }

    fn pair(&mut self, from: NodeNameId, to: NodeNameId) -> &mut Pair {
        self.pairs.entry((from, to)).or_insert_with(|| Pair {
            latency: Durations::new(3),
            unmatched: 0,
            skewed: 0,
            least_ns: None,
        })
    }

    /// Handles a send or receive now if nothing waits before it and its
    /// names are known; otherwise it waits, in order.
    fn take(&mut self, who: &Identity, u: Unresolved) {
        let now = u.ts();
        if self.unresolved.is_empty() {
            if let Err(u) = self.resolve(who, u) {
                self.unresolved.push_back(u);
            }
            return;
        }
        if self.unresolved.len() >= MAX_UNRESOLVED {
            self.drop_oldest_unresolved(who);
            self.unresolved_over_cap += 1;
        }
        self.unresolved.push_back(u);
        self.retry_unresolved(who);
        while self
            .unresolved
            .front()
            .is_some_and(|oldest| now.saturating_sub(oldest.ts()) > NAMES_WAIT_NS)
        {
            self.drop_oldest_unresolved(who);
        }
    }

    /// Gives up on the oldest waiting event, and handles those behind it
    /// that can be.
    fn drop_oldest_unresolved(&mut self, who: &Identity) {
        if self.unresolved.pop_front().is_some() {
            self.unresolved_dropped += 1;
        }
        self.retry_unresolved(who);
    }

    /// Handles the waiting events from the oldest, up to the first whose
    /// names are still unknown: events are always paired in the order they
    /// came, whatever order the names come in.
    fn retry_unresolved(&mut self, who: &Identity) {
        while let Some(u) = self.unresolved.pop_front() {
            if let Err(u) = self.resolve(who, u) {
                self.unresolved.push_front(u);
                break;
            }
        }
    }

    fn resolve(&mut self, who: &Identity, u: Unresolved) -> Result<(), Unresolved> {
        match u {
            Unresolved::Send {
                node,
                ts,
                channel,
                number,
                serial,
                ref message,
            } => {
                let (Some(from), Some(home), Some(key)) = (
                    who.own_name(node),
                    who.home(node, channel),
                    text_key(who, node, message),
                ) else {
                    return Err(u);
                };
                self.paired_send(
                    from,
                    ts,
                    Process {
                        home,
                        number,
                        serial,
                    },
                    key,
                    who.one_clock == Some(true),
                );
            }
            Unresolved::Receive {
                node,
                ts,
                number,
                serial,
                ref message,
            } => {
                let (Some(home), Some(key)) = (who.own_name(node), text_key(who, node, message))
                else {
                    return Err(u);
                };
                self.paired_receive(
                    ts,
                    Process {
                        home,
                        number,
                        serial,
                    },
                    key,
                );
            }
        }
        Ok(())
    }

    fn paired_send(
        &mut self,
        from: NodeNameId,
        ts: i64,
        to: Process,
        key: TextKey,
        one_clock: bool,
    ) {
        // On one clock, read in timestamp order, a receive kept before
        // this send is another copy of the same text (its own send not
        // recorded: an untraced sender): pairing them would make a
        // negative time of two messages.
        if let Some(early) = self.early.get_mut(&to).filter(|_| !one_clock) {
            if let Some(i) = early.iter().position(|r| r.key == key) {
                let r = early.remove(i).expect("position is in range");
                self.early_receives += 1;
                self.record(from, to.home, r.ts - ts);
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
            self.pair(dropped.from, to.home).unmatched += 1;
        }
        self.pair(from, to.home);
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
        self.record(send.from, to.home, ts - send.ts);
    }

    fn record(&mut self, from: NodeNameId, to: NodeNameId, ns: i64) {
        let pair = self.pair(from, to);
        if ns < 0 {
            pair.skewed += 1;
            self.skewed += 1;
        }
        let pair = self.pair(from, to);
        pair.least_ns = Some(pair.least_ns.map_or(ns, |l| l.min(ns)));
        pair.latency.record(u64::try_from(ns).unwrap_or(0));
    }

    fn keep_early(&mut self, to: Process, r: Receive) {
        let queue = self.early.entry(to).or_default();
        if queue.len() >= MAX_EARLY {
            queue.pop_front();
            self.early_dropped += 1;
        }
        queue.push_back(r);
    }
}

impl Unresolved {
    fn ts(&self) -> i64 {
        match self {
            Unresolved::Send { ts, .. } | Unresolved::Receive { ts, .. } => *ts,
        }
    }
}

impl Analysis for Delivery {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::MessageSend | Kind::MessageReceive | Kind::NodeName
        )
    }

    fn on_event(&mut self, ev: &Event, who: &Identity) {
        self.sync_names(who);
        self.one_clock = who.one_clock == Some(true);
        match ev.kind() {
            // The identity layer has learnt the names: what waited for
            // them may go on.
            Some(Kind::NodeName) => {
                self.note_own(who, ev.node);
                self.retry_unresolved(who);
            }
            Some(Kind::MessageSend) => self.send(
                who,
                ev.node,
                ev.ts_ns,
                ev.str(Slot::To),
                ev.str(Slot::Message),
            ),
            Some(Kind::MessageReceive) => self.receive(
                who,
                ev.node,
                ev.ts_ns,
                ev.str(Slot::To),
                ev.str(Slot::Message),
            ),
            _ => {}
        }
    }

    fn finish(&mut self, who: &Identity) {
        // What never got its names is dropped, so that what follows it is
        // paired.
        self.retry_unresolved(who);
        while !self.unresolved.is_empty() {
            self.drop_oldest_unresolved(who);
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
            .map(|(node, &n)| {
                let own = self.own.get(node);
                (own.map_or(&b"?"[..], |&id| self.node_name_of(id)), n)
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
        let without_send = self.receives_without_send();
        if without_send > 0 {
            table.notes.push(format!(
                "{without_send} receives of messages whose send the trace does not hold \
                 (a sender not traced, or its events lost): not paired"
            ));
        }
        let clocks = self.clocks();
        for c in clocks.iter().filter(|c| c.skewed > 0) {
            table.notes.push(match (self.one_clock, c.offset_ns) {
                (true, _) => format!(
                    "{} -> {}: {} receives are timestamped before their send on one clock \
                     (counted as 0 ns): the runtime wrote the receive's event first",
                    c.from, c.to, c.skewed
                ),
                (false, Some(off)) => format!(
                    "{} -> {}: {} receives are timestamped before their send (counted as 0 ns): \
                     the hosts' clocks differ, {}'s by about {}{} against {}'s \
                     (from the fastest delivery each way)",
                    c.from,
                    c.to,
                    c.skewed,
                    c.to,
                    if off < 0 { "-" } else { "+" },
                    crate::model::table::format_ns(off.unsigned_abs()),
                    c.from
                ),
                (false, None) => format!(
                    "{} -> {}: {} receives are timestamped before their send (counted as 0 ns): \
                     the hosts' clocks differ, {}'s by at least -{} against {}'s",
                    c.from,
                    c.to,
                    c.skewed,
                    c.to,
                    crate::model::table::format_ns(c.least_ns.unwrap_or(0).unsigned_abs()),
                    c.from
                ),
            });
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
                col("without_send", "receives without send", Unit::Count),
                col("one_clock", "one clock", Unit::Text),
            ],
        );
        summary.shown = crate::model::table::Shown::JsonOnly;
        summary.push(
            vec![
                Cell::Num(self.unresolved()),
                Cell::Num(self.unresolved_over_cap),
                Cell::Num(self.waiting_for_names()),
                Cell::Num(self.ambiguous),
                Cell::Num(self.early_receives),
                Cell::Num(self.skewed),
                Cell::Num(without_send),
                Cell::Text(self.one_clock.to_string()),
            ],
            None,
        );
        let mut skew = Table::new(
            "delivery_clocks",
            "Receives before their send, per pair of nodes",
            vec![
                col("from", "from", Unit::Text),
                col("to", "to", Unit::Text),
                col("skewed", "skewed", Unit::Count),
                col("least_ns", "least", Unit::Value),
                col("offset_ns", "offset", Unit::Value),
            ],
        );
        skew.shown = crate::model::table::Shown::JsonOnly;
        for c in clocks {
            skew.push(
                vec![
                    Cell::Text(c.from),
                    Cell::Text(c.to),
                    Cell::Num(c.skewed),
                    c.least_ns.map_or(Cell::Null, Cell::Int),
                    c.offset_ns.map_or(Cell::Null, Cell::Int),
                ],
                None,
            );
        }
        vec![table, summary, skew]
    }
}

/// One pair of nodes' clocks as the deliveries show them.
struct PairClock {
    from: String,
    to: String,
    skewed: u64,
    least_ns: Option<i64>,
    /// The receiving node's clock against the sender's, estimated from the
    /// fastest delivery each way (half their difference); None unless
    /// both ways were paired.
    offset_ns: Option<i64>,
}

impl Delivery {
    /// Receives no send was paired with: those still kept and those
    /// dropped from the kept ones.
    fn receives_without_send(&self) -> u64 {
        self.early_dropped + self.early.values().map(|q| q.len() as u64).sum::<u64>()
    }

    /// Per pair of distinct nodes, in name order: receives before their
    /// send, the least delivery time, and the clocks' offset estimated.
    fn clocks(&self) -> Vec<PairClock> {
        let mut rows: Vec<PairClock> = self
            .pairs
            .iter()
            .filter(|((from, to), _)| from != to)
            .map(|(&(from, to), p)| {
                let back = self.pairs.get(&(to, from)).and_then(|b| b.least_ns);
                let name =
                    |id| String::from_utf8_lossy(unquoted(self.node_name_of(id))).into_owned();
                PairClock {
                    from: name(from),
                    to: name(to),
                    skewed: p.skewed,
                    least_ns: p.least_ns,
                    offset_ns: p.least_ns.zip(back).map(|(there, back)| (there - back) / 2),
                }
            })
            .collect();
        rows.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
        rows
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

/// The message's identity for matching: its first [`COMPARED_BYTES`] with
/// every pid renumbered as the identity layer names its node. None while a
/// channel in it is unnamed.
pub(crate) fn text_key(who: &Identity, node: u32, message: &[u8]) -> Option<TextKey> {
    let mut buf = [0; COMPARED_BYTES];
    let (masked, read_all) = who.renumbered(node, message, &mut buf)?;
    let whole = read_all && !message.ends_with(b"...");
    let mut h = rustc_hash::FxHasher::default();
    h.write(masked);
    Some(TextKey {
        hash: h.finish(),
        len: if whole { masked.len() as u32 } else { u32::MAX },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;
    use crate::engine::reorder::Reordered;

    const N1: &[u8] = b"'n1@10.99.0.11'";
    const N2: &[u8] = b"'n2@10.99.0.12'";
    const N3: &[u8] = b"'n3@10.99.0.13'";

    fn text(name: &[u8]) -> &str {
        std::str::from_utf8(name).expect("ASCII")
    }

    /// Three traces (0, 1, 2 = n1, n2, n3), each numbering the others its
    /// own way, as the VM does (atom indexes differ per node).
    fn cluster() -> Script {
        let mut s = Script::default();
        for (t, own, others) in [
            (0, N1, [(3002, N2), (3003, N3)]),
            (1, N2, [(8707, N1), (8800, N3)]),
            (2, N3, [(8707, N1), (9100, N2)]),
        ] {
            s.in_trace(t).ev_node(0, text(own), 0, text(own));
            for (c, peer) in others {
                s.ev_node(0, text(own), c, text(peer));
            }
        }
        s
    }

    /// A send of trace `trace` to `to`.
    fn send(s: &mut Script, trace: u32, ts: i64, to: &str, message: &str) {
        s.in_trace(trace)
            .ev(ts, Kind::MessageSend, &["<0.1.0>", to, message]);
    }

    /// A receive of trace `trace` by `to`.
    fn receive(s: &mut Script, trace: u32, ts: i64, to: &str, message: &str) {
        s.in_trace(trace)
            .ev(ts, Kind::MessageReceive, &[to, message]);
    }

    /// Feeds the script's events (appended since the last call), through
    /// the same identity layer each time.
    struct Fed {
        d: Delivery,
        who: Identity,
        done: usize,
    }

    impl Fed {
        fn new() -> Fed {
            Fed {
                d: Delivery::new(),
                who: Identity::default(),
                done: 0,
            }
        }

        fn feed(&mut self, s: &Script) -> &Delivery {
            self.done = s.feed_from(self.done, &mut self.who, &mut self.d);
            &self.d
        }
    }

    fn row(d: &Delivery, from: &[u8], to: &[u8]) -> (u64, u64, u64) {
        d.pairs()
            .into_iter()
            .find(|r| r.0 == from && r.1 == to)
            .map(|(_, _, unmatched, lat)| (lat.count(), unmatched, lat.max()))
            .unwrap_or((0, 0, 0))
    }

    #[test]
    fn pids_parse_and_texts_name_their_nodes() {
        assert_eq!(parse_pid(b"<8827.42.0>"), Some((8827, 42, 0)));
        assert_eq!(parse_pid(b"<0.42.0>@2"), Some((0, 42, 0)));
        assert_eq!(parse_pid(b"{reg,'n2@h'}"), None);
        assert_eq!(parse_pid(b"<0.42>"), None);
        // Node 0 (n1) calls n2 3002; node 1 (n2) calls n1 8707.
        let mut s = Script::default();
        s.ev_node(0, "'n1@h'", 0, "'n1@h'")
            .ev_node(0, "'n1@h'", 3002, "'n2@h'")
            .in_trace(1)
            .ev_node(0, "'n2@h'", 0, "'n2@h'")
            .ev_node(0, "'n2@h'", 8707, "'n1@h'");
        let who = s.feed(&mut Delivery::new());
        let key = |node: u32, text: &[u8]| text_key(&who, node, text).expect("named");
        assert_eq!(key(0, b"{ping,<0.90.0>}"), key(1, b"{ping,<8707.90.0>}"));
        assert_eq!(
            key(0, b"{#Ref<0.1.2.3>,#Port<0.7>}"),
            key(1, b"{#Ref<8707.1.2.3>,#Port<8707.7>}")
        );
        // The same text written on two nodes is two different pids.
        assert_ne!(key(0, b"{ping,<0.90.0>}"), key(1, b"{ping,<0.90.0>}"));
        assert_ne!(key(0, b"{ping,<0.90.0>}"), key(0, b"{ping,<0.91.0>}"));
        // A channel no event named yet: no key until it is.
        assert_eq!(text_key(&who, 0, b"{x,<5.1.2>}"), None);
        // A string that looks like a pid is text, not a pid.
        assert_ne!(key(0, b"\"<0.1.2>\""), key(0, b"\"<3002.1.2>\""));
        assert_ne!(key(0, b"<<1,2>>"), key(0, b"<<1,3>>"));
        // Cut texts compare on their prefix, whoever cut them where.
        let long = [b'x'; 80];
        let mut cut = long[..60].to_vec();
        cut.extend_from_slice(b"...");
        assert_eq!(key(0, &long).hash, key(1, &cut).hash);
    }

    /// Two senders of the same local pid number on two nodes send the same
    /// text to one receiver at once: each receive pairs with its own
    /// node's send, as the pid in the message says.
    #[test]
    fn pids_inside_messages_tell_senders_apart() {
        let mut s = cluster();
        send(&mut s, 1, 100, "<8707.50.0>", "{ping,<0.95.0>}");
        send(&mut s, 2, 101, "<8707.50.0>", "{ping,<0.95.0>}");
        receive(&mut s, 0, 300, "<0.50.0>", "{ping,<3003.95.0>}");
        receive(&mut s, 0, 400, "<0.50.0>", "{ping,<3002.95.0>}");
        let mut f = Fed::new();
        let d = f.feed(&s);
        assert_eq!(row(d, N3, N1), (1, 0, 199));
        assert_eq!(row(d, N2, N1), (1, 0, 300));
        assert_eq!(d.ambiguous, 0);
    }

    /// The same text to the "same" pid number on two nodes goes to the node
    /// that the sender's channel number names.
    #[test]
    fn sends_go_to_the_node_their_channel_names() {
        let mut s = cluster();
        send(&mut s, 0, 100, "<3002.90.0>", "ping");
        send(&mut s, 0, 110, "<3003.90.0>", "ping");
        receive(&mut s, 2, 150, "<0.90.0>", "ping");
        receive(&mut s, 1, 400, "<0.90.0>", "ping");
        let mut f = Fed::new();
        let d = f.feed(&s);
        assert_eq!(row(d, N1, N2), (1, 0, 300));
        assert_eq!(row(d, N1, N3), (1, 0, 40));
        assert_eq!(d.ambiguous, 0);
    }

    /// Repeated texts pair in order, and a pid inside the message matches
    /// though each side writes it differently.
    #[test]
    fn repeated_texts_pair_in_order() {
        let mut s = cluster();
        for i in 0..3 {
            send(&mut s, 1, 1000 * i, "<8707.50.0>", "{ok,<0.60.0>}");
        }
        for i in 0..3 {
            receive(
                &mut s,
                0,
                1000 * i + 10 * (i + 1),
                "<0.50.0>",
                "{ok,<3002.60.0>}",
            );
        }
        let mut f = Fed::new();
        assert_eq!(row(f.feed(&s), N2, N1), (3, 0, 30));
        send(&mut s, 1, 5000, "<8707.50.0>", "{ok,<0.60.0>}");
        assert_eq!(row(f.feed(&s), N2, N1), (3, 1, 30));
    }

    /// Events before their node's names wait for them, also for the names
    /// of the pids inside their message.
    #[test]
    fn events_wait_for_names() {
        let mut s = Script::default();
        let mut f = Fed::new();
        send(&mut s, 0, 100, "<3002.90.0>", "{hello,<0.5.0>}");
        receive(&mut s, 1, 250, "<0.90.0>", "{hello,<8707.5.0>}");
        assert_eq!(f.feed(&s).waiting_for_names(), 2);
        s.in_trace(1).ev_node(300, text(N2), 0, text(N2));
        s.in_trace(0)
            .ev_node(300, text(N1), 0, text(N1))
            .ev_node(300, text(N1), 3002, text(N2));
        assert_eq!(f.feed(&s).waiting_for_names(), 1);
        s.in_trace(1).ev_node(300, text(N2), 8707, text(N1));
        let d = f.feed(&s);
        assert_eq!((d.waiting_for_names(), d.unresolved()), (0, 0));
        assert_eq!(row(d, N1, N2), (1, 0, 150));
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
        s.feed_raw(&mut |ev| r.push(ev));
        let d = &r.inner;
        assert_eq!(row(d, b"'n1@h'", b"'n2@h'"), (1, 0, 100_000_000));
        assert_eq!((d.waiting_for_names(), d.unresolved()), (0, 0));
    }

    /// A node that never names itself holds the others' pairs back for
    /// NAMES_WAIT_NS at most; its events are then counted unresolved.
    #[test]
    fn an_unnamed_node_stops_holding_back_the_others() {
        let mut s = cluster();
        let mut f = Fed::new();
        send(&mut s, 3, 0, "<4000.90.0>", "lost");
        send(&mut s, 0, 1_000, "<3002.90.0>", "ping");
        receive(&mut s, 1, 2_000, "<0.90.0>", "ping");
        let d = f.feed(&s);
        assert_eq!((row(d, N1, N2), d.waiting_for_names()), ((0, 0, 0), 3));
        send(&mut s, 0, NAMES_WAIT_NS + 1, "<3002.91.0>", "next");
        let d = f.feed(&s);
        assert_eq!(row(d, N1, N2), (1, 1, 1_000));
        assert_eq!((d.waiting_for_names(), d.unresolved()), (0, 1));
    }

    /// At most MAX_UNRESOLVED events wait; the oldest beyond are dropped
    /// and counted apart.
    #[test]
    fn waiting_events_are_capped() {
        let mut s = Script::default();
        for i in 0..MAX_UNRESOLVED as i64 + 5 {
            send(&mut s, 0, i, "<3002.90.0>", "ping");
        }
        let mut f = Fed::new();
        let d = f.feed(&s);
        assert_eq!(d.waiting_for_names(), MAX_UNRESOLVED as u64);
        assert_eq!((d.unresolved(), d.unresolved_over_cap), (5, 5));
        let t = &d.tables(&Summary::default())[1];
        assert_eq!(
            t.value(&t.rows[0], "unresolved_over_cap"),
            Some(&Cell::Num(5))
        );
        f.d.finish(&f.who);
        assert_eq!(f.d.unresolved(), MAX_UNRESOLVED as u64 + 5);
    }

    /// Local sends are pairs too, so a local message of the same text is
    /// not taken for a remote one.
    #[test]
    fn local_sends_take_their_receives() {
        let mut s = cluster();
        send(&mut s, 1, 100, "<0.90.0>", "go");
        send(&mut s, 0, 105, "<3002.90.0>", "go");
        receive(&mut s, 1, 120, "<0.90.0>", "go");
        receive(&mut s, 1, 300, "<0.90.0>", "go");
        let mut f = Fed::new();
        let d = f.feed(&s);
        assert_eq!(row(d, N2, N2), (1, 0, 20));
        assert_eq!(row(d, N1, N2), (1, 0, 195));
        assert_eq!(d.ambiguous, 1);
    }

    /// Across hosts, receives before their send name their pair of nodes
    /// and the offset estimated from the fastest delivery each way; on one
    /// clock, a receive is never paired with a later send (another copy of
    /// its text), and it counts as a receive without a send.
    #[test]
    fn skew_names_the_pair_and_one_clock_has_none() {
        let mut s = cluster();
        // n2's clock 300 ns behind n1's; 100 ns on the wire each way.
        send(&mut s, 0, 1_000, "<3002.90.0>", "ping");
        receive(&mut s, 1, 800, "<0.90.0>", "ping");
        send(&mut s, 1, 2_000, "<8707.5.0>", "pong");
        receive(&mut s, 0, 2_400, "<0.5.0>", "pong");
        let mut f = Fed::new();
        let d = f.feed(&s);
        assert_eq!(d.skewed, 1);
        let t = &d.tables(&Summary::default())[0];
        assert!(
            t.notes.iter().any(|n| n.contains(
                "n1@10.99.0.11 -> n2@10.99.0.12: 1 receives are timestamped before their send"
            ) && n
                .contains("n2@10.99.0.12's by about -300 ns against n1@10.99.0.11's")),
            "{:?}",
            t.notes
        );
        let clocks = &d.tables(&Summary::default())[2];
        assert_eq!(
            clocks.value(&clocks.rows[0], "offset_ns"),
            Some(&Cell::Int(-300))
        );
        // One clock: an untraced sender's copy received first stays
        // unpaired; the later send takes its own receive.
        let mut s = cluster();
        receive(&mut s, 1, 500, "<0.90.0>", "hello");
        send(&mut s, 0, 1_000, "<3002.90.0>", "hello");
        receive(&mut s, 1, 1_100, "<0.90.0>", "hello");
        let mut f = Fed::new();
        f.who.one_clock = Some(true);
        let d = f.feed(&s);
        assert_eq!((d.skewed, d.receives_without_send()), (0, 1));
        assert_eq!(row(d, N1, N2), (1, 0, 100));
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
        s.feed_raw(&mut |ev| r.push(ev));
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
        s.feed_raw(&mut |ev| r.push(ev));
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

    /// Sends to a name no event resolves are counted per sending node, in
    /// a row of their own.
    #[test]
    fn unresolved_targets_are_counted_per_node() {
        let mut s = cluster();
        send(&mut s, 0, 100, "shop", "x");
        send(&mut s, 0, 110, "{shop,'n9@h'}", "x");
        let mut f = Fed::new();
        let t = f.feed(&s).tables(&Summary::default()).remove(0);
        let row = &t.rows[0];
        assert_eq!(
            t.value(row, "from"),
            Some(&Cell::Text("n1@10.99.0.11".into()))
        );
        assert_eq!(t.value(row, "to"), Some(&Cell::Text(UNRESOLVED.into())));
        assert_eq!(t.value(row, "unresolved_target"), Some(&Cell::Num(2)));
    }
}
