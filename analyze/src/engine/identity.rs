//! Who is who, for every analysis: the names of processes, the nodes the
//! events come from, the aliases replies are sent to, and how each node
//! numbers the others' pids.
//!
//! - **Nodes.** An event comes from a trace and, when the channel records
//!   LTTng's `vpid` context, from one OS process: each (trace, vpid) is a
//!   node, named by its `node_name` events. Without the context, the nodes
//!   of one session share a stream: when one stream names more than one
//!   node they cannot be told apart, and [`Identity::mixed`] says so.
//! - **Names.** `process_register` (register, unregister) and the
//!   `process_name` snapshot name a node's processes.
//! - **Calls and aliases.** A `'$gen_call'` message carries `{Pid,
//!   [alias|Ref]}` (or `{Pid, Ref}`): a message sent to that reference goes
//!   to that pid. One table keyed by the reference (and the node that wrote
//!   it) holds each outstanding call: its alias, which ends when the reply
//!   is sent (outstanding aliases are capped, [`MAX_ALIASES`], the oldest
//!   evicted and counted), and the call itself, which ends when the reply
//!   is received (at most [`MAX_CALLS`] open, the oldest whose alias ended
//!   dropped first). A message event of a call is looked up once: the
//!   analyses get the call's [`CallId`] ([`Identity::call`]) and keep what
//!   they know of it by its slot, not by its reference again.
//! - **Renumbering.** A node writes another node's pid with its own channel
//!   number for that node (`node_name`'s `channel` and `peer`): `<0.42.0>`
//!   at home is `<8827.42.0>` on a node that numbers home 8827. Node names
//!   are interned ([`NodeNameId`]), so a pid as any node writes it is one
//!   [`Process`] ([`Identity::process`]), a text's pids can be written the
//!   same whoever wrote them ([`Identity::renumbered`]), and a send to
//!   `{Name, Node}` resolves to `<C.N.S>` as the sender writes it.
//!
//! Memory is bounded by processes, nodes and the alias cap, never by the
//! number of calls.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Write;

use hashbrown::hash_table::Entry;
use rustc_hash::FxHashMap;

use crate::model::bytes::same;
use crate::model::event::{Event, Field, Kind, Slot, MAX_FIELDS};
use crate::model::keyed::{ends_hash, ByText};
pub use crate::model::message::{parse_call, parse_reply, reference, Call};
use crate::model::message::{Shape, ShortText};
use crate::model::table::{label_text, Cell, Table, Unit};

/// The fields that name processes.
pub const PID_SLOTS: [Slot; 4] = [Slot::Pid, Slot::From, Slot::To, Slot::Parent];

/// Outstanding aliases kept (calls whose reply has not been sent yet).
pub const MAX_ALIASES: usize = 65_536;

/// Calls kept open at once (their alias outstanding, or their reply sent
/// but not yet seen received): the aliases and as many calls again whose
/// reply is on its way.
pub const MAX_CALLS: usize = 2 * MAX_ALIASES;

/// An open call as the analyses see it: its slot in the call table (reused
/// once the call ends) and which use of the slot it is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CallId {
    /// The slot (below [`MAX_CALLS`] plus the slots ever free at once).
    pub slot: u32,
    /// Counts the slot's uses: an analysis holding an older one holds a
    /// call that ended without its reply's receive reaching it.
    pub generation: u32,
}

/// The name of a node without distribution, as the VM writes it.
pub const NOT_DISTRIBUTED: &[u8] = b"'nonode@nohost'";

/// The `process_name` snapshot event (a contract addition).
pub const PROCESS_NAME: &str = "process_name";

/// A node's name (as the VM writes the atom), interned: the same node
/// named by any trace is one id.
pub type NodeNameId = u32;

/// A process as every node means it: its home node, and its number and
/// serial there.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Process {
    /// The node the process lives on.
    pub home: NodeNameId,
    /// The pid's middle number.
    pub number: u64,
    /// The pid's last number.
    pub serial: u64,
}

/// What the trace says about one node.
#[derive(Default)]
struct Node {
    trace: u32,
    vpid: i64,
    /// Node names its `node_name` events gave (more than one: a stream
    /// shared by several nodes).
    own: Vec<NodeNameId>,
    /// The name its last `node_name` event gave.
    current: Option<NodeNameId>,
    /// Its channel numbers for the other nodes.
    channels: FxHashMap<u64, NodeNameId>,
    /// Names by pid.
    names: ByText<Box<[u8]>>,
    /// Registered pids by name.
    registered: ByText<Box<[u8]>>,
}

/// `to` made `text`: a short text kept in place is overwritten where it
/// is (its bytes past the new length are never read), not built anew and
/// copied over.
#[inline(always)]
fn rewrite(to: &mut ShortText, text: &[u8]) {
    match to {
        ShortText::Inline(len, bytes) if text.len() <= bytes.len() => {
            bytes[..text.len()].copy_from_slice(text);
            *len = text.len() as u8;
        }
        _ => *to = ShortText::new(text),
    }
}

/// A call in the table: its key, its alias's reply address, and which of
/// its ends have passed.
struct CallSlot {
    node: u32,
    reference: ShortText,
    hash: u64,
    caller: ShortText,
    generation: u32,
    /// The alias is outstanding (counted in [`MAX_ALIASES`]).
    alias: bool,
    /// The reply was seen received: the call ends with its alias.
    received: bool,
}

/// What a message event's message is to gen_server, as
/// [`Identity::learn`] read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Part {
    /// Neither a call with its tag's reference nor a reply (a call cut
    /// before its reference is one of these), or not a message event.
    #[default]
    Neither,
    /// A call, its tag's reference read.
    Call,
    /// A reply.
    Reply,
}

/// Names, nodes and aliases, learnt from every event read (whatever the
/// selection).
#[derive(Default)]
pub struct Identity {
    nodes: Vec<Node>,
    node_ids: FxHashMap<(u32, i64), u32>,
    node_names: Vec<Box<[u8]>>,
    node_name_ids: FxHashMap<Box<[u8]>, NodeNameId>,
    /// Open calls: their slots, found by (node, reference).
    calls: hashbrown::HashTable<u32>,
    slots: Vec<CallSlot>,
    free: Vec<u32>,
    /// Open calls, oldest first (some ended since).
    call_order: VecDeque<CallId>,
    outstanding: usize,
    /// Outstanding aliases, oldest first (some ended since).
    alias_order: VecDeque<CallId>,
    /// Whether an analysis keeps calls (`Analysis::keeps_calls`): they
    /// then stay in the table until their reply's receive, else only
    /// while their alias is outstanding.
    keeps_calls: bool,
    /// The call (or reply) of the event last learnt from, and the call
    /// whose alias it is sent to.
    current: Option<CallId>,
    current_to: Option<u32>,
    /// The event is a reply's receive: its call ends once the analyses saw
    /// it.
    replied: bool,
    /// What the message of the event last learnt from is to gen_server.
    part: Part,
    /// The last (trace, vpid) seen and its node: runs of events of one
    /// node skip the lookup.
    last_node: Option<((u32, i64), u32)>,
    /// Aliases dropped before their reply because [`MAX_ALIASES`] others
    /// were outstanding.
    pub aliases_evicted: u64,
    /// Whether any event carried the `vpid` context: pids are then told
    /// apart per node.
    pub keyed_by_vpid: bool,
    /// Whether every trace of the input says it was recorded on one host
    /// with one clock (None: not known, e.g. live).
    pub one_clock: Option<bool>,
}

/// Whether the event is a load-time identity row rather than something the
/// user recorded: it does not start the clock.
pub fn is_identity_row(ev: &Event) -> bool {
    matches!(ev.kind(), Some(Kind::NodeName | Kind::ProcessName))
}

/// `<C.N.S>` as numbers.
pub fn parse_pid(text: &[u8]) -> Option<(u64, u64, u64)> {
    let inner = text.strip_prefix(b"<")?.strip_suffix(b">")?;
    let mut parts = inner.split(|&b| b == b'.').map(parse_decimal);
    let pid = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(pid)
}

/// A decimal number of at most 19 digits.
pub fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
}

/// `{Name,Node}` as its two texts.
fn parse_remote_name(to: &[u8]) -> Option<(&[u8], &[u8])> {
    let inner = to.strip_prefix(b"{")?.strip_suffix(b"}")?;
    let comma = inner.iter().position(|&b| b == b',')?;
    Some((&inner[..comma], &inner[comma + 1..]))
}

/// A node's name without the quotes the VM puts around it.
pub fn unquoted(name: &[u8]) -> &[u8] {
    name.strip_prefix(b"'")
        .and_then(|n| n.strip_suffix(b"'"))
        .unwrap_or(name)
}

/// A pid text told apart per node (`<0.82.0>@2`, see
/// [`Identity::qualify`]): the pid and the node index.
pub fn split_qualified(text: &[u8]) -> (&[u8], Option<u32>) {
    match text.iter().rposition(|&b| b == b'@') {
        Some(at) if text[..at].ends_with(b">") => {
            let node = std::str::from_utf8(&text[at + 1..])
                .ok()
                .and_then(|n| n.parse().ok());
            (&text[..at], node)
        }
        _ => (text, None),
    }
}

impl Identity {
    /// The node an event comes from (numbered in order of first event).
    pub fn node_of(&mut self, ev: &Event) -> u32 {
        let key = (ev.trace, ev.vpid.max(-1));
        if let Some((last, id)) = self.last_node {
            if last == key {
                return id;
            }
        }
        if ev.vpid >= 0 {
            self.keyed_by_vpid = true;
        }
        if let Some(&id) = self.node_ids.get(&key) {
            self.last_node = Some((key, id));
            return id;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            trace: key.0,
            vpid: key.1,
            ..Node::default()
        });
        self.node_ids.insert(key, id);
        self.last_node = Some((key, id));
        id
    }

    fn intern_node_name(&mut self, name: &[u8]) -> NodeNameId {
        if let Some(&id) = self.node_name_ids.get(name) {
            return id;
        }
        let id = self.node_names.len() as NodeNameId;
        self.node_names.push(name.into());
        self.node_name_ids.insert(name.into(), id);
        id
    }

    /// Learns from one event of node `node` (before the selection).
    pub fn learn(&mut self, node: u32, ev: &Event) {
        self.current = None;
        self.current_to = None;
        self.replied = false;
        self.part = Part::Neither;
        if ev.kind() == Some(Kind::NodeName) {
            let (own, peer) = (ev.str(Slot::Node), ev.str(Slot::Peer));
            // A node not (or no longer) distributed numbers no other node.
            if own == NOT_DISTRIBUTED {
                return;
            }
            let (own, peer) = (self.intern_node_name(own), self.intern_node_name(peer));
            let n = &mut self.nodes[node as usize];
            if !n.own.contains(&own) {
                n.own.push(own);
            }
            n.current = Some(own);
            n.channels.insert(ev.int(Slot::Channel) as u64, peer);
            return;
        }
        let n = &mut self.nodes[node as usize];
        match ev.kind() {
            Some(Kind::ProcessRegister) => {
                let (pid, name) = (ev.str(Slot::Pid), ev.str(Slot::Name));
                // A process keeps its last name in the results (it is
                // unregistered when it exits); only messages stop going to it.
                if ev.str(Slot::Type) == b"unregister" {
                    if n.registered.get(name).is_some_and(|p| &p[..] == pid) {
                        n.registered.remove(name);
                    }
                } else {
                    n.registered.insert(name.into(), pid.into());
                    n.names.insert(pid.into(), name.into());
                }
            }
            Some(kind @ (Kind::MessageSend | Kind::MessageReceive)) => {
                let mut reference = None;
                // The shape tells a reply from a call: a reply's is not
                // read as a call first.
                let call = match ev.shape {
                    Shape::Reply(_) | Shape::Neither | Shape::Other(_) => None,
                    _ => ev.call(),
                };
                if let Some(Call {
                    caller,
                    reference: Some(r),
                    ..
                }) = call
                {
                    self.part = Part::Call;
                    self.current = Some(self.remember_alias(node, r, caller));
                    reference = Some(r);
                } else if let Some(r) = ev.reply() {
                    self.part = Part::Reply;
                    self.replied = kind == Kind::MessageReceive;
                    // A reply's receive ends nothing nobody asked for.
                    if !self.replied || self.keeps_calls {
                        self.current = self.find(node, r).map(|i| self.id(i));
                    }
                    reference = Some(r);
                }
                if kind == Kind::MessageSend {
                    let to = ev.str(Slot::To);
                    if to.starts_with(b"#Ref<") {
                        // A reply is sent to its call's alias: the same
                        // reference, found once.
                        self.current_to = match reference {
                            Some(r) if same(r, to) => self.current.map(|c| c.slot),
                            _ => self.find(node, to),
                        };
                    }
                }
            }
            Some(Kind::ProcessName) => {
                let (pid, name) = (ev.str(Slot::Pid), ev.str(Slot::Name));
                // A registered name is an atom; an initial call is M:F/A.
                if !name.contains(&b'/') {
                    n.registered.insert(name.into(), pid.into());
                }
                n.names.insert(pid.into(), name.into());
            }
            _ => {}
        }
    }

    /// Forgets what the event ends (after the analyses saw it, with what
    /// [`Identity::learn`] found for it): an alias when a reply is sent to
    /// it, a call when its reply is received.
    pub fn forget(&mut self, _node: u32, _ev: &Event) {
        if let Some(i) = self.current_to.take() {
            if self.slots[i as usize].alias {
                self.end_alias(i);
            }
        }
        if let Some(c) = self.current.take() {
            if std::mem::take(&mut self.replied) {
                let s = &mut self.slots[c.slot as usize];
                s.received = true;
                if !s.alias {
                    self.end_call(c.slot);
                }
            }
        }
    }

    /// The open call of the event last learnt from (a call's send or
    /// receive, or its reply's), if the table holds it. Once an analysis
    /// asks, calls stay in the table until their reply's receive (else
    /// they end with their alias, at the reply's send).
    pub fn call(&self) -> Option<CallId> {
        self.current
    }

    /// Keeps each call in the table until its reply's receive, for the
    /// analyses that read its slot that long (`Analysis::keeps_calls`).
    pub fn keep_calls(&mut self) {
        self.keeps_calls = true;
    }

    /// What the message of the event last learnt from is to gen_server:
    /// its text is not read again to tell.
    pub fn part(&self) -> Part {
        self.part
    }

    fn id(&self, slot: u32) -> CallId {
        CallId {
            slot,
            generation: self.slots[slot as usize].generation,
        }
    }

    /// A call's key (node, reference) hashed to find its slot.
    fn hash(node: u32, reference: &[u8]) -> u64 {
        ends_hash(reference, u64::from(node))
    }

    /// The slot of the open call (node, reference).
    fn find(&self, node: u32, reference: &[u8]) -> Option<u32> {
        let slots = &self.slots;
        self.calls
            .find(Self::hash(node, reference), |&i| {
                let s = &slots[i as usize];
                s.node == node && same(reference, &s.reference)
            })
            .copied()
    }

    fn has_alias(&self, node: u32, reference: &[u8]) -> bool {
        self.find(node, reference)
            .is_some_and(|i| self.slots[i as usize].alias)
    }

    /// Whether the alias `c` was given is still outstanding.
    fn alias_of(&self, c: CallId) -> bool {
        let s = &self.slots[c.slot as usize];
        s.generation == c.generation && s.alias
    }

    /// The alias of slot `i` ends (its reply sent, or evicted); so does
    /// the call if its reply was received or nobody asked for calls.
    fn end_alias(&mut self, i: u32) {
        let s = &mut self.slots[i as usize];
        s.alias = false;
        self.outstanding -= 1;
        if s.received || !self.keeps_calls {
            self.end_call(i);
        }
    }

    /// Slot `i` leaves the table, for another call to use.
    fn end_call(&mut self, i: u32) {
        let s = &mut self.slots[i as usize];
        s.generation = s.generation.wrapping_add(1);
        if let Ok(entry) = self.calls.find_entry(s.hash, |&j| j == i) {
            entry.remove();
        }
        self.free.push(i);
    }

    /// At [`MAX_CALLS`] open calls: the oldest whose alias ended leaves
    /// the table (outstanding aliases are at most half of them).
    fn end_oldest_call(&mut self) {
        while let Some(c) = self.call_order.pop_front() {
            let s = &self.slots[c.slot as usize];
            if s.generation != c.generation {
                continue;
            }
            if s.alias {
                self.call_order.push_back(c);
                continue;
            }
            self.end_call(c.slot);
            return;
        }
    }

    fn remember_alias(&mut self, node: u32, r: &[u8], caller: &[u8]) -> CallId {
        // At the cap a new alias first evicts the oldest (one lookup more);
        // below it, one lookup finds a known call or makes room for a new
        // one.
        if self.outstanding >= MAX_ALIASES && !self.has_alias(node, r) {
            while self.outstanding >= MAX_ALIASES {
                let Some(oldest) = self.alias_order.pop_front() else {
                    break;
                };
                if self.alias_of(oldest) {
                    self.end_alias(oldest.slot);
                    self.aliases_evicted += 1;
                }
            }
        }
        // Aliases ended are gone from the table but not from the order:
        // drop those now and then, so the order stays within twice the cap.
        if self.alias_order.len() >= 2 * MAX_ALIASES {
            let mut order = std::mem::take(&mut self.alias_order);
            order.retain(|&c| self.alias_of(c));
            self.alias_order = order;
        }
        let open = self.calls.len();
        if open >= MAX_CALLS && self.find(node, r).is_none() {
            self.end_oldest_call();
        }
        if self.call_order.len() >= 2 * MAX_CALLS {
            let slots = &self.slots;
            self.call_order
                .retain(|c| slots[c.slot as usize].generation == c.generation);
        }
        let hash = Self::hash(node, r);
        let slots = &mut self.slots;
        let entry = self.calls.entry(
            hash,
            |&i| {
                let s = &slots[i as usize];
                s.node == node && same(r, &s.reference)
            },
            |&i| slots[i as usize].hash,
        );
        let i = match entry {
            Entry::Occupied(known) => {
                let i = *known.get();
                let s = &mut slots[i as usize];
                if s.alias {
                    return CallId {
                        slot: i,
                        generation: s.generation,
                    };
                }
                // Its alias ended (the reply sent, or evicted): the call's
                // text gives it again.
                s.alias = true;
                rewrite(&mut s.caller, caller);
                i
            }
            Entry::Vacant(new) => {
                let i = match self.free.pop() {
                    // A slot used before is written where it is: its texts
                    // overwritten in place, its generation kept.
                    Some(i) => {
                        let s = &mut slots[i as usize];
                        s.node = node;
                        rewrite(&mut s.reference, r);
                        s.hash = hash;
                        rewrite(&mut s.caller, caller);
                        s.alias = true;
                        s.received = false;
                        i
                    }
                    None => {
                        slots.push(CallSlot {
                            node,
                            reference: ShortText::new(r),
                            hash,
                            caller: ShortText::new(caller),
                            generation: 0,
                            alias: true,
                            received: false,
                        });
                        (slots.len() - 1) as u32
                    }
                };
                new.insert(i);
                let id = CallId {
                    slot: i,
                    generation: slots[i as usize].generation,
                };
                self.call_order.push_back(id);
                i
            }
        };
        self.outstanding += 1;
        let id = self.id(i);
        self.alias_order.push_back(id);
        id
    }

    /// Hands `ev` (of node `node`) to `sink` as the analyses read it:
    /// numbered by node, a message to a name or an alias addressed to the
    /// pid the trace says it is, and pids told apart per node when the
    /// events carry the `vpid` context. `scratch` holds the rewritten texts.
    pub fn present(
        &self,
        ev: &Event,
        node: u32,
        scratch: &mut Vec<u8>,
        sink: &mut impl FnMut(&Event),
    ) {
        let resolved = match ev.kind() {
            Some(Kind::MessageSend) => match self.current_to {
                // The alias learn found for this event.
                Some(i) => self.slots[i as usize]
                    .alias
                    .then(|| Cow::Borrowed(&self.slots[i as usize].caller[..])),
                None if ev.str(Slot::To).starts_with(b"#Ref<") => None,
                None => self.resolve(node, ev.str(Slot::To)),
            },
            _ => None,
        };
        if !self.keyed_by_vpid {
            let Some(pid) = resolved else {
                // One trace without the vpid context: the reader's node is
                // the run's.
                if ev.node == node {
                    return sink(ev);
                }
                return sink(&Event { node, ..*ev });
            };
            // Pids are written as they are: only the address changes.
            let mut fields = [Field::Other; MAX_FIELDS];
            let n = ev.fields.len().min(MAX_FIELDS);
            fields[..n].copy_from_slice(&ev.fields[..n]);
            if let Some(Field::Str(to)) = ev
                .class
                .slot_index(Slot::To)
                .and_then(|i| fields[..n].get_mut(i))
            {
                *to = &pid[..];
            }
            return sink(&Event {
                node,
                fields: &fields[..n],
                ..*ev
            });
        }
        scratch.clear();
        let mut spans: [Option<(usize, usize)>; MAX_FIELDS] = [None; MAX_FIELDS];
        for slot in PID_SLOTS {
            let Some(i) = ev.class.slot_index(slot).filter(|&i| i < MAX_FIELDS) else {
                continue;
            };
            let Some(Field::Str(text)) = ev.fields.get(i) else {
                continue;
            };
            let text = match (&resolved, slot) {
                (Some(pid), Slot::To) => &pid[..],
                _ => text,
            };
            let start = scratch.len();
            self.qualify(node, text, scratch);
            spans[i] = Some((start, scratch.len()));
        }
        let mut fields = [Field::Other; MAX_FIELDS];
        let n = ev.fields.len().min(MAX_FIELDS);
        for (i, f) in ev.fields.iter().enumerate().take(n) {
            fields[i] = match spans[i] {
                Some((a, b)) => Field::Str(&scratch[a..b]),
                None => *f,
            };
        }
        sink(&Event {
            node,
            fields: &fields[..n],
            ..*ev
        });
    }

    /// Hands `ev` (as read) to `sink` as the run loop does without a
    /// selection: learnt from, presented, then forgotten.
    pub fn pass(
        &mut self,
        ev: &Event,
        scratch: &mut Vec<u8>,
        sink: &mut dyn FnMut(&Event, &Identity),
    ) {
        let node = self.node_of(ev);
        self.learn(node, ev);
        self.present(ev, node, scratch, &mut |ev| sink(ev, self));
        self.forget(node, ev);
    }

    /// Outstanding aliases now.
    pub fn outstanding_aliases(&self) -> usize {
        self.outstanding
    }

    /// The pid a message to `to` (not a pid: a registered name, `{Name,
    /// Node}` or an alias) goes to, as node `node` writes it; None when
    /// the trace does not say.
    pub fn resolve(&self, node: u32, to: &[u8]) -> Option<Cow<'_, [u8]>> {
        let n = self.nodes.get(node as usize)?;
        if to.starts_with(b"<") {
            return None;
        }
        if to.starts_with(b"#Ref<") {
            let s = &self.slots[self.find(node, to)? as usize];
            return s.alias.then_some(Cow::Borrowed(&s.caller[..]));
        }
        if let Some((name, at)) = parse_remote_name(to) {
            let at = *self.node_name_ids.get(at)?;
            if n.own.contains(&at) {
                return n.registered.get(name).map(|p| Cow::Borrowed(&p[..]));
            }
            let home = self.nodes.iter().find(|m| m.own.contains(&at))?;
            let (_, number, serial) = parse_pid(home.registered.get(name)?)?;
            let channel = n.channels.iter().find(|(_, &p)| p == at)?.0;
            return Some(Cow::Owned(
                format!("<{channel}.{number}.{serial}>").into_bytes(),
            ));
        }
        n.registered.get(to).map(|p| Cow::Borrowed(&p[..]))
    }

    /// The name of `pid` on node `node`, or on any node when `node` is None.
    pub fn name_of(&self, node: Option<u32>, pid: &[u8]) -> Option<&[u8]> {
        match node {
            Some(n) => self.nodes.get(n as usize)?.names.get(pid).map(|n| &n[..]),
            None => self
                .nodes
                .iter()
                .find_map(|n| n.names.get(pid))
                .map(|n| &n[..]),
        }
    }

    /// Whether `pid` (as node `node` writes it) has the name `name`.
    pub fn has_name(&self, node: u32, pid: &[u8], name: &[u8]) -> bool {
        self.name_of(Some(node), pid) == Some(name)
    }

    /// The name of node `node` (its last `node_name`), if any.
    pub fn node_name(&self, node: u32) -> Option<&[u8]> {
        self.own_name(node)
            .map(|id| unquoted(self.node_name_text(id)))
    }

    /// The interned name of node `node` (its last `node_name`), if any.
    pub fn own_name(&self, node: u32) -> Option<NodeNameId> {
        self.nodes.get(node as usize)?.current
    }

    /// Every node name learnt so far, by id (ids are never reused).
    pub fn node_name_texts(&self) -> &[Box<[u8]>] {
        &self.node_names
    }

    /// A node name as the VM writes it (quoted when the atom needs it).
    pub fn node_name_text(&self, id: NodeNameId) -> &[u8] {
        &self.node_names[id as usize]
    }

    /// The node that node `node` numbers `channel` (0: itself), once its
    /// `node_name` events said.
    pub fn home(&self, node: u32, channel: u64) -> Option<NodeNameId> {
        let n = self.nodes.get(node as usize)?;
        match channel {
            0 => n.current,
            c => n.channels.get(&c).copied(),
        }
    }

    /// The process a pid text (as node `node` writes it, told apart per
    /// node or not) stands for; None when the text is no pid or the node's
    /// names are not known yet.
    pub fn process(&self, node: u32, pid: &[u8]) -> Option<Process> {
        let (channel, number, serial) = parse_pid(split_qualified(pid).0)?;
        Some(Process {
            home: self.home(node, channel)?,
            number,
            serial,
        })
    }

    /// `text` (as node `node` wrote it) with the channel number of every
    /// pid, port and reference in it (`<C.` outside quoted strings and
    /// atoms) replaced by the node it names (`<n3.`), into `buf` as far as
    /// it holds: a sender's `{ping,<0.90.0>}` and its receiver's
    /// `{ping,<8707.90.0>}` come out the same. The bytes written and
    /// whether all of `text` was read; None while a channel in it is
    /// unnamed.
    pub fn renumbered<'b>(
        &self,
        node: u32,
        text: &[u8],
        buf: &'b mut [u8],
    ) -> Option<(&'b [u8], bool)> {
        let mut out = Bounded { buf, len: 0 };
        let mut quote = None;
        let mut i = 0;
        while i < text.len() && out.len < out.buf.len() {
            let b = text[i];
            i += 1;
            match quote {
                Some(_) if b == b'\\' => {
                    out.push(b);
                    if let Some(&escaped) = text.get(i) {
                        out.push(escaped);
                        i += 1;
                    }
                    continue;
                }
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'"' || b == b'\'' => quote = Some(b),
                None if b == b'<' => {
                    let digits = text[i..].iter().take_while(|d| d.is_ascii_digit()).count();
                    if digits > 0 && text.get(i + digits) == Some(&b'.') {
                        let home = self.home(node, parse_decimal(&text[i..i + digits])?)?;
                        out.push(b'<');
                        out.push_all(format!("n{home}").as_bytes());
                        i += digits;
                        continue;
                    }
                }
                None => {}
            }
            out.push(b);
        }
        let len = out.len;
        Some((&out.buf[..len], i >= text.len()))
    }

    /// The names of the nodes the trace names, each once, in order.
    pub fn node_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for &id in self.nodes.iter().flat_map(|n| n.own.iter()) {
            let n = String::from_utf8_lossy(unquoted(self.node_name_text(id))).into_owned();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names
    }

    /// A pid text told apart per node when the events carry the `vpid`
    /// context: `<0.82.0>` of node 2 is `<0.82.0>@2` to the analyses.
    pub fn qualify(&self, node: u32, pid: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(pid);
        if self.keyed_by_vpid && pid.starts_with(b"<") {
            // Written in place: no text of its own per pid.
            let _ = write!(out, "@{node}");
        }
    }

    /// Streams that hold `node_name` rows of more than one node (no `vpid`
    /// context): each as the names of its nodes.
    pub fn mixed(&self) -> Vec<Vec<String>> {
        self.nodes
            .iter()
            .filter(|n| n.own.len() > 1 && n.vpid < 0)
            .map(|n| {
                n.own
                    .iter()
                    .map(|&o| {
                        String::from_utf8_lossy(unquoted(self.node_name_text(o))).into_owned()
                    })
                    .collect()
            })
            .collect()
    }

    /// Whether results carry a node per process (several nodes told apart).
    pub fn shows_nodes(&self) -> bool {
        self.keyed_by_vpid && self.nodes.iter().filter(|n| !n.own.is_empty()).count() > 1
    }

    /// Puts names (and nodes) beside the pids of every [`Unit::Pid`]
    /// column: a pid text (told apart per node or not) becomes a
    /// [`Cell::Proc`]; a [`Cell::Proc`] an analysis made keeps its own name
    /// where the trace names the process no other way.
    pub fn annotate(&self, tables: &mut [Table]) {
        let with_node = self.shows_nodes();
        for t in tables.iter_mut() {
            let pid_cols: Vec<usize> = (0..t.columns.len())
                .filter(|&i| t.columns[i].unit == Unit::Pid)
                .collect();
            if pid_cols.is_empty() {
                continue;
            }
            for row in t.rows.iter_mut() {
                for &i in &pid_cols {
                    let cell = match &row.cells[i] {
                        Cell::Text(text) => self.process_cell(text.as_bytes(), None, with_node),
                        Cell::Proc { pid, name, .. } => {
                            self.process_cell(pid.as_bytes(), name.as_deref(), with_node)
                        }
                        _ => continue,
                    };
                    row.cells[i] = cell;
                }
            }
            t.with_nodes = with_node;
        }
    }

    /// A pid text (told apart per node or not) as a [`Unit::Pid`] cell:
    /// the pid, its name (the trace's, else `own`), and its node when
    /// `with_node`.
    fn process_cell(&self, text: &[u8], own: Option<&str>, with_node: bool) -> Cell {
        let (pid, node) = split_qualified(text);
        let lossy = |s: &[u8]| String::from_utf8_lossy(s).into_owned();
        Cell::Proc {
            pid: lossy(pid),
            name: self
                .name_of(node, pid)
                .map(lossy)
                .or_else(|| own.filter(|n| !n.is_empty()).map(String::from)),
            node: node
                .filter(|_| with_node)
                .and_then(|n| self.node_name(n))
                .map(lossy),
        }
    }

    /// A process as every output writes it ([`label_text`]), from a pid
    /// text as the analyses see it (told apart per node or not).
    pub fn label(&self, text: &[u8]) -> String {
        self.label_named(text, None)
    }

    /// [`Identity::label`], with the name an event itself gave the process
    /// (`process_memory`'s) where the trace names it no other way.
    pub fn label_named(&self, text: &[u8], own: Option<&str>) -> String {
        match self.process_cell(text, own, self.shows_nodes()) {
            Cell::Proc { pid, name, node } => label_text(&pid, name.as_deref(), node.as_deref()),
            _ => String::from_utf8_lossy(text).into_owned(),
        }
    }

    /// The trace and vpid of node `node`, for messages.
    pub fn origin(&self, node: u32) -> (u32, i64) {
        self.nodes
            .get(node as usize)
            .map_or((0, -1), |n| (n.trace, n.vpid))
    }
}

/// A buffer written up to its size; what does not fit is left out.
struct Bounded<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl Bounded<'_> {
    fn push(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
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
    use crate::model::event::{EventClass, Field, PROVIDER};
    use crate::model::message::Shape;

    fn event<'a>(class: &'a EventClass, fields: &'a [Field<'a>], vpid: i64) -> Event<'a> {
        Event {
            class,
            ts_ns: 0,
            cpu: 0,
            trace: 0,
            vpid,
            node: 0,
            shape: Shape::Unknown,
            fields,
        }
    }

    fn class(kind: &str) -> EventClass {
        let k = Kind::ALL
            .iter()
            .find(|k| k.name() == kind)
            .map(|k| k.fields().iter().map(|f| f.to_string()).collect())
            .unwrap_or_else(|| vec!["pid".into(), "name".into()]);
        EventClass::new(&format!("{PROVIDER}:{kind}"), k)
    }

    /// Names from register events and the snapshot; aliases resolve to
    /// their caller until the reply is sent; `{Name, Node}` resolves to the
    /// pid as the sender numbers the node.
    #[test]
    fn names_aliases_and_remote_names_resolve() {
        let mut id = Identity::default();
        let reg = class("process_register");
        let snap = class(PROCESS_NAME);
        let send = class("message_send");
        let node = class("node_name");
        let f = [
            Field::Str(b"<0.82.0>"),
            Field::Str(b"shop"),
            Field::Str(b"register"),
        ];
        let n = id.node_of(&event(&reg, &f, 10));
        id.learn(n, &event(&reg, &f, 10));
        let f = [Field::Str(b"<0.90.0>"), Field::Str(b"cowboy:init/2")];
        id.learn(n, &event(&snap, &f, 10));
        assert_eq!(id.resolve(n, b"shop").as_deref(), Some(&b"<0.82.0>"[..]));
        assert_eq!(
            id.name_of(Some(n), b"<0.90.0>"),
            Some(&b"cowboy:init/2"[..])
        );
        assert_eq!(id.resolve(n, b"cowboy:init/2"), None);
        let call = b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1.2.3>]},{get,1}}";
        let f = [
            Field::Str(b"<0.90.0>"),
            Field::Str(b"shop"),
            Field::Str(call),
        ];
        id.learn(n, &event(&send, &f, 10));
        assert_eq!(
            id.resolve(n, b"#Ref<0.1.2.3>").as_deref(),
            Some(&b"<0.90.0>"[..])
        );
        let f = [
            Field::Str(b"<0.82.0>"),
            Field::Str(b"#Ref<0.1.2.3>"),
            Field::Str(b"{[alias|#Ref<0.1.2.3>],1}"),
        ];
        id.learn(n, &event(&send, &f, 10));
        id.forget(n, &event(&send, &f, 10));
        assert_eq!(id.resolve(n, b"#Ref<0.1.2.3>"), None);
        assert_eq!(id.outstanding_aliases(), 0);
        // A second node (another vpid) with its own name and a channel
        // for the first.
        let f = [
            Field::Str(b"'n1@h'"),
            Field::Int(0),
            Field::Str(b"'n1@h'"),
            Field::Str(b"load"),
        ];
        id.learn(n, &event(&node, &f, 10));
        let f = [
            Field::Str(b"'n2@h'"),
            Field::Int(0),
            Field::Str(b"'n2@h'"),
            Field::Str(b"load"),
        ];
        let m = id.node_of(&event(&node, &f, 20));
        id.learn(m, &event(&node, &f, 20));
        let f = [
            Field::Str(b"'n2@h'"),
            Field::Int(4711),
            Field::Str(b"'n1@h'"),
            Field::Str(b"load"),
        ];
        id.learn(m, &event(&node, &f, 20));
        assert_eq!(
            id.resolve(m, b"{shop,'n1@h'}").as_deref(),
            Some(&b"<4711.82.0>"[..])
        );
        assert_eq!(id.resolve(m, b"{shop,'n3@h'}"), None);
        assert!(id.shows_nodes());
        assert!(id.mixed().is_empty());
    }

    /// A pid as any node writes it is one process, and texts holding pids
    /// come out the same from either side, once the nodes' names are read.
    #[test]
    fn pids_are_renumbered_across_nodes() {
        let mut id = Identity::default();
        let node = class("node_name");
        let name = |id: &mut Identity, vpid: i64, own: &[u8], channel: i64, peer: &[u8]| {
            let f = [
                Field::Str(own),
                Field::Int(channel),
                Field::Str(peer),
                Field::Str(b"load"),
            ];
            let n = id.node_of(&event(&node, &f, vpid));
            id.learn(n, &event(&node, &f, vpid));
            n
        };
        let a = name(&mut id, 1, b"'a@h'", 0, b"'a@h'");
        assert_eq!(id.process(a, b"<3002.9.0>"), None);
        name(&mut id, 1, b"'a@h'", 3002, b"'b@h'");
        let b = name(&mut id, 2, b"'b@h'", 0, b"'b@h'");
        name(&mut id, 2, b"'b@h'", 8707, b"'a@h'");
        let home = id.process(b, b"<0.9.0>@1").expect("named");
        assert_eq!(id.process(a, b"<3002.9.0>@0"), Some(home));
        assert_eq!(id.node_name_text(home.home), b"'b@h'");
        assert_eq!(id.process(a, b"{shop,'b@h'}"), None);
        let mut buf = [0; 64];
        let text = |node, t: &[u8], buf: &mut [u8; 64]| {
            id.renumbered(node, t, buf)
                .map(|(t, all)| (t.to_vec(), all))
        };
        let mine = text(b, b"{ping,<0.9.0>,\"<0.1.2>\"}", &mut buf);
        assert_eq!(mine, text(a, b"{ping,<3002.9.0>,\"<0.1.2>\"}", &mut buf));
        assert_eq!(mine.map(|m| m.1), Some(true));
        assert_eq!(text(a, b"{x,<77.1.0>}", &mut buf), None);
        let mut short = [0; 4];
        assert_eq!(
            id.renumbered(a, b"<0.9.0>", &mut short),
            Some((&b"<n0."[..], false))
        );
    }

    /// Outstanding aliases are capped; the evicted are counted.
    #[test]
    fn aliases_are_bounded() {
        let mut id = Identity::default();
        let send = class("message_send");
        let f = [Field::Str(b"<0.1.0>")];
        let n = id.node_of(&event(&send, &f, -1));
        for i in 0..MAX_ALIASES + 10 {
            let call = format!("{{'$gen_call',{{<0.9.0>,[alias|#Ref<0.0.0.{i}>]}},x}}");
            let f = [
                Field::Str(b"<0.9.0>"),
                Field::Str(b"<0.1.0>"),
                Field::Str(call.as_bytes()),
            ];
            id.learn(n, &event(&send, &f, -1));
        }
        assert_eq!(id.outstanding_aliases(), MAX_ALIASES);
        assert_eq!(id.aliases_evicted, 10);
        assert!(id.alias_order.len() <= 2 * MAX_ALIASES);
    }

    /// A call's alias ends when its reply is sent, the call when its reply
    /// is received, whichever comes first in the trace; calls whose reply
    /// is never seen received are capped, the oldest dropped first.
    #[test]
    fn calls_end_at_the_reply_receive_and_are_bounded() {
        let mut id = Identity::default();
        id.keep_calls();
        let send = class("message_send");
        let receive = class("message_receive");
        let f = [Field::Str(b"<0.1.0>")];
        let n = id.node_of(&event(&send, &f, -1));
        let call = |i: usize| format!("{{'$gen_call',{{<0.9.0>,[alias|#Ref<0.0.0.{i}>]}},x}}");
        let reply = |i: usize| format!("{{[alias|#Ref<0.0.0.{i}>],ok}}");
        let to = |i: usize| format!("#Ref<0.0.0.{i}>");
        let step = |id: &mut Identity, class: &EventClass, f: &[Field]| {
            let ev = event(class, f, -1);
            id.learn(n, &ev);
            let seen = id.call();
            id.forget(n, &ev);
            seen
        };
        // The reply read as received before it is sent: the alias stays
        // until the send.
        let (c, r, t) = (call(1), reply(1), to(1));
        let first = step(
            &mut id,
            &send,
            &[
                Field::Str(b"<0.9.0>"),
                Field::Str(b"<0.1.0>"),
                Field::Str(c.as_bytes()),
            ],
        );
        let received = [Field::Str(b"<0.9.0>"), Field::Str(r.as_bytes())];
        assert_eq!(step(&mut id, &receive, &received), first);
        assert_eq!(
            id.resolve(n, t.as_bytes()).as_deref(),
            Some(&b"<0.9.0>"[..])
        );
        let sent = [
            Field::Str(b"<0.1.0>"),
            Field::Str(t.as_bytes()),
            Field::Str(r.as_bytes()),
        ];
        assert_eq!(step(&mut id, &send, &sent), first);
        assert_eq!((id.outstanding_aliases(), id.calls.len()), (0, 0));
        assert_eq!(step(&mut id, &receive, &received), None);
        // Replies sent, never seen received.
        for i in 0..MAX_CALLS + 10 {
            let (c, r, t) = (call(i), reply(i), to(i));
            let f = [
                Field::Str(b"<0.9.0>"),
                Field::Str(b"<0.1.0>"),
                Field::Str(c.as_bytes()),
            ];
            let opened = step(&mut id, &send, &f).expect("a call");
            let f = [
                Field::Str(b"<0.1.0>"),
                Field::Str(t.as_bytes()),
                Field::Str(r.as_bytes()),
            ];
            assert_eq!(step(&mut id, &send, &f), Some(opened));
        }
        assert_eq!(id.outstanding_aliases(), 0);
        assert_eq!(id.calls.len(), MAX_CALLS);
        assert!(id.slots.len() <= MAX_CALLS + 1);
        assert!(id.call_order.len() <= 2 * MAX_CALLS);
        assert_eq!(id.aliases_evicted, 0);
        let last = reply(MAX_CALLS + 9);
        let f = [Field::Str(b"<0.9.0>"), Field::Str(last.as_bytes())];
        assert!(step(&mut id, &receive, &f).is_some());
        assert_eq!(id.calls.len(), MAX_CALLS - 1);
        let oldest = reply(0);
        let f = [Field::Str(b"<0.9.0>"), Field::Str(oldest.as_bytes())];
        assert_eq!(step(&mut id, &receive, &f), None);
    }

    /// One stream naming two nodes (no vpid context) is mixed.
    #[test]
    fn one_stream_of_two_nodes_is_mixed() {
        let mut id = Identity::default();
        let node = class("node_name");
        for own in [&b"'n1@h'"[..], b"'n2@h'", NOT_DISTRIBUTED] {
            let f = [
                Field::Str(own),
                Field::Int(0),
                Field::Str(own),
                Field::Str(b"load"),
            ];
            let n = id.node_of(&event(&node, &f, -1));
            id.learn(n, &event(&node, &f, -1));
        }
        assert_eq!(
            id.mixed(),
            vec![vec!["n1@h".to_string(), "n2@h".to_string()]]
        );
    }

    #[test]
    fn a_text_rewritten_reads_as_the_new_one() {
        let long = [b'x'; 60];
        let mut t = ShortText::new(b"#Ref<0.1.2.3>");
        for text in [&b"<0.9.0>"[..], &long, b"", b"#Ref<0.4.5.6>", &long] {
            rewrite(&mut t, text);
            assert_eq!(&*t, text);
            assert!(t == ShortText::new(text));
        }
    }
}
