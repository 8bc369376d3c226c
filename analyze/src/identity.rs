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
//! - **Aliases.** A `'$gen_call'` message carries `{Pid, [alias|Ref]}` (or
//!   `{Pid, Ref}`): a message sent to that reference goes to that pid. The
//!   entry is dropped when the reply is sent; outstanding ones are capped
//!   ([`MAX_ALIASES`]), the oldest evicted and counted.
//! - **Renumbering.** A node writes another node's pid with its own channel
//!   number for that node (`node_name`'s `channel` and `peer`), so a send
//!   to `{Name, Node}` resolves to `<C.N.S>` as the sender writes it.
//!
//! Memory is bounded by processes, nodes and the alias cap, never by the
//! number of calls.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::analysis::ByText;
use crate::event::{Event, Field, Kind, Slot, MAX_FIELDS};
use crate::table::{Cell, Table, Unit};

/// The fields that name processes.
pub const PID_SLOTS: [Slot; 4] = [Slot::Pid, Slot::From, Slot::To, Slot::Parent];

/// Outstanding aliases kept (calls whose reply has not been sent yet).
pub const MAX_ALIASES: usize = 65_536;

/// The name of a node without distribution, as the VM writes it.
pub const NOT_DISTRIBUTED: &[u8] = b"'nonode@nohost'";

/// The `process_name` snapshot event (a contract addition).
pub const PROCESS_NAME: &str = "process_name";

/// What the trace says about one node.
#[derive(Default)]
struct Node {
    trace: u32,
    vpid: i64,
    /// Node names its `node_name` events gave (more than one: a stream
    /// shared by several nodes).
    own: Vec<Box<[u8]>>,
    /// Its channel numbers for the other nodes.
    channels: FxHashMap<u64, Box<[u8]>>,
    /// Names by pid.
    names: ByText<Box<[u8]>>,
    /// Registered pids by name.
    registered: ByText<Box<[u8]>>,
}

/// An outstanding call's reply address.
struct Alias {
    caller: Box<[u8]>,
}

/// Names, nodes and aliases, learnt from every event read (whatever the
/// selection).
#[derive(Default)]
pub struct Identity {
    nodes: Vec<Node>,
    node_ids: FxHashMap<(u32, i64), u32>,
    aliases: FxHashMap<(u32, Box<[u8]>), Alias>,
    alias_order: VecDeque<(u32, Box<[u8]>)>,
    /// Aliases dropped before their reply because [`MAX_ALIASES`] others
    /// were outstanding.
    pub aliases_evicted: u64,
    /// Whether any event carried the `vpid` context: pids are then told
    /// apart per node.
    pub keyed_by_vpid: bool,
}

/// Whether the event is a load-time identity row rather than something the
/// user recorded: it does not start the clock.
pub fn is_identity_row(ev: &Event) -> bool {
    ev.kind() == Some(Kind::NodeName) || ev.class.name.rsplit(':').next() == Some(PROCESS_NAME)
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

/// The reference inside a call's tag or a reply: `#Ref<...>` up to its `>`.
pub fn reference(text: &[u8]) -> Option<&[u8]> {
    let start = text.windows(5).position(|w| w == b"#Ref<")?;
    let len = text[start..].iter().position(|&b| b == b'>')?;
    Some(&text[start..=start + len])
}

const CALL_PREFIX: &[u8] = b"{'$gen_call',{";

/// A gen_server call's message: `{'$gen_call',{From,Tag},Request}`.
#[derive(Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// From's pid.
    pub caller: &'a [u8],
    /// The tag's reference; None when the text was cut before it.
    pub reference: Option<&'a [u8]>,
    /// The request's text.
    pub request: &'a [u8],
}

/// A call's parts, if the message is a call.
pub fn parse_call(message: &[u8]) -> Option<Call<'_>> {
    let rest = message.strip_prefix(CALL_PREFIX)?;
    let caller_end = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
    let caller = &rest[..caller_end];
    // From is a pid (no braces); the tag has no braces either.
    let Some(close) = rest.iter().position(|&b| b == b'}') else {
        return Some(Call {
            caller,
            reference: None,
            request: b"",
        });
    };
    let request = rest[close + 1..].strip_prefix(b",").unwrap_or(b"");
    Some(Call {
        caller,
        reference: reference(&rest[..close]),
        request: request.strip_suffix(b"}").unwrap_or(request),
    })
}

/// A reply's reference: the message is `{#Ref<...>,...}` or
/// `{[alias|#Ref<...>],...}`.
pub fn parse_reply(message: &[u8]) -> Option<&[u8]> {
    let rest = message.strip_prefix(b"{")?;
    if rest.starts_with(b"#Ref<") || rest.starts_with(b"[alias|#Ref<") {
        reference(rest)
    } else {
        None
    }
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
        if ev.vpid >= 0 {
            self.keyed_by_vpid = true;
        }
        if let Some(&id) = self.node_ids.get(&key) {
            return id;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            trace: key.0,
            vpid: key.1,
            ..Node::default()
        });
        self.node_ids.insert(key, id);
        id
    }

    /// Learns from one event of node `node` (before the selection).
    pub fn learn(&mut self, node: u32, ev: &Event) {
        let n = &mut self.nodes[node as usize];
        match ev.kind() {
            Some(Kind::NodeName) => {
                let own = ev.str(Slot::Node);
                let channel = ev.int(Slot::Channel) as u64;
                if own != NOT_DISTRIBUTED && !n.own.iter().any(|o| &o[..] == own) {
                    n.own.push(own.into());
                }
                n.channels.insert(channel, ev.str(Slot::Peer).into());
            }
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
            Some(Kind::MessageSend) | Some(Kind::MessageReceive) => {
                if let Some(Call {
                    caller,
                    reference: Some(r),
                    ..
                }) = parse_call(ev.str(Slot::Message))
                {
                    self.remember_alias(node, r, caller);
                }
            }
            _ if ev.class.name.rsplit(':').next() == Some(PROCESS_NAME) => {
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

    /// Forgets what the event ends (after the analyses saw it): a reply
    /// sent to an alias.
    pub fn forget(&mut self, node: u32, ev: &Event) {
        if ev.kind() == Some(Kind::MessageSend) {
            let to = ev.str(Slot::To);
            if to.starts_with(b"#Ref<") {
                self.aliases.remove(&(node, Box::from(to)));
            }
        }
    }

    fn remember_alias(&mut self, node: u32, r: &[u8], caller: &[u8]) {
        let key = (node, Box::from(r));
        if self.aliases.contains_key(&key) {
            return;
        }
        while self.aliases.len() >= MAX_ALIASES {
            let Some(oldest) = self.alias_order.pop_front() else {
                break;
            };
            if self.aliases.remove(&oldest).is_some() {
                self.aliases_evicted += 1;
            }
        }
        // Entries answered are gone from the map but not from the order:
        // drop those now and then, so the order stays within twice the cap.
        if self.alias_order.len() >= 2 * MAX_ALIASES {
            let aliases = &self.aliases;
            self.alias_order.retain(|k| aliases.contains_key(k));
        }
        self.alias_order.push_back(key.clone());
        self.aliases.insert(
            key,
            Alias {
                caller: caller.into(),
            },
        );
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
        sink: &mut dyn FnMut(&Event),
    ) {
        let resolved = match ev.kind() {
            Some(Kind::MessageSend) => self.resolve(node, ev.str(Slot::To)),
            _ => None,
        };
        if resolved.is_none() && !self.keyed_by_vpid {
            return sink(&Event { node, ..*ev });
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

    /// Outstanding aliases now.
    pub fn outstanding_aliases(&self) -> usize {
        self.aliases.len()
    }

    /// The pid a message to `to` (not a pid: a registered name, `{Name,
    /// Node}` or an alias) goes to, as node `node` writes it; None when
    /// the trace does not say.
    pub fn resolve(&self, node: u32, to: &[u8]) -> Option<Box<[u8]>> {
        let n = self.nodes.get(node as usize)?;
        if to.starts_with(b"<") {
            return None;
        }
        if to.starts_with(b"#Ref<") {
            return self
                .aliases
                .get(&(node, Box::from(to)))
                .map(|a| a.caller.clone());
        }
        if let Some((name, at)) = parse_remote_name(to) {
            if n.own.iter().any(|o| &o[..] == at) {
                return n.registered.get(name).cloned();
            }
            let home = self
                .nodes
                .iter()
                .find(|m| m.own.iter().any(|o| &o[..] == at))?;
            let (_, number, serial) = parse_pid(home.registered.get(name)?)?;
            let channel = n.channels.iter().find(|(_, p)| &p[..] == at)?.0;
            return Some(format!("<{channel}.{number}.{serial}>").into_bytes().into());
        }
        n.registered.get(to).cloned()
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
        self.nodes
            .get(node as usize)?
            .own
            .last()
            .map(|n| unquoted(n))
    }

    /// The names of the nodes the trace names, each once, in order.
    pub fn node_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for n in self.nodes.iter().flat_map(|n| n.own.iter()) {
            let n = String::from_utf8_lossy(unquoted(n)).into_owned();
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
            out.push(b'@');
            out.extend_from_slice(node.to_string().as_bytes());
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
                    .map(|o| String::from_utf8_lossy(unquoted(o)).into_owned())
                    .collect()
            })
            .collect()
    }

    /// Whether results carry a node per process (several nodes told apart).
    pub fn shows_nodes(&self) -> bool {
        self.keyed_by_vpid && self.nodes.iter().filter(|n| !n.own.is_empty()).count() > 1
    }

    /// Puts names (and nodes) beside the pids of every [`Unit::Pid`]
    /// column.
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
                    let Cell::Text(text) = &row.cells[i] else {
                        continue;
                    };
                    let (pid, node) = split_qualified(text.as_bytes());
                    let name = self
                        .name_of(node, pid)
                        .map(|n| String::from_utf8_lossy(n).into_owned());
                    let node_name = match (with_node, node) {
                        (true, Some(n)) => self
                            .node_name(n)
                            .map(|s| String::from_utf8_lossy(s).into_owned()),
                        _ => None,
                    };
                    row.cells[i] = Cell::Proc {
                        pid: String::from_utf8_lossy(pid).into_owned(),
                        name,
                        node: node_name,
                    };
                }
            }
            t.with_nodes = with_node;
        }
    }

    /// The trace and vpid of node `node`, for messages.
    pub fn origin(&self, node: u32) -> (u32, i64) {
        self.nodes
            .get(node as usize)
            .map_or((0, -1), |n| (n.trace, n.vpid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventClass, Field, PROVIDER};

    fn event<'a>(class: &'a EventClass, fields: &'a [Field<'a>], vpid: i64) -> Event<'a> {
        Event {
            class,
            ts_ns: 0,
            cpu: 0,
            trace: 0,
            vpid,
            node: 0,
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
}
