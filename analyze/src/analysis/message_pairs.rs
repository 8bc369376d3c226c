//! Each `message_send` paired with the `message_receive` of its queued
//! copy, as `delivery` pairs them: the oldest pending send of the same
//! text to the same process, the process and the text as every node means
//! them (the identity layer renumbers pids). On a node whose name the
//! trace does not give (one without distribution), its own messages are
//! paired by their pids and texts as written. Shared by the exports (the
//! timeline's flows, the `messages` table), each keeping its own data per
//! send.
//!
//! Pending sends are bounded per receiver ([`MAX_PENDING`]): past it the
//! oldest is handed back, unpaired.

use std::collections::VecDeque;
use std::hash::Hasher;

use rustc_hash::FxHashMap;

use super::delivery::{text_key, TextKey, COMPARED_BYTES, MAX_PENDING};
use crate::engine::identity::{parse_pid, split_qualified, Identity, Process};

/// A message's receiver: the process every node means, or, while its
/// node is unnamed (a node without distribution names none), the pid as
/// that node writes it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Receiver {
    Named(Process),
    Local { node: u32, number: u64, serial: u64 },
}

/// A message's text as matched: renumbered as `delivery` matches it, or,
/// while a channel in it is unnamed, its first bytes as written (then
/// only a message of the same node can match it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Text {
    Renumbered(TextKey),
    Written(u64, usize),
}

/// What a send did.
pub enum Sent<T> {
    /// It waits for its queued copy.
    Pending,
    /// It waits, and the receiver's oldest pending send (given back) will
    /// never be paired.
    Evicted(T),
    /// Its receiver is no process the trace can pair (a name, an alias,
    /// another node's pid while the names are unknown): given back.
    NoReceiver(T),
}

/// Sends waiting for their queued copy, each with the caller's `T`.
pub struct MessagePairs<T> {
    pending: FxHashMap<Receiver, VecDeque<(Text, T)>>,
}

impl<T> Default for MessagePairs<T> {
    fn default() -> Self {
        MessagePairs {
            pending: FxHashMap::default(),
        }
    }
}

impl<T> MessagePairs<T> {
    /// A `message_send` of node `node` to `to` (as that node writes it).
    pub fn send(
        &mut self,
        who: &Identity,
        node: u32,
        to: &[u8],
        message: &[u8],
        data: T,
    ) -> Sent<T> {
        let Some(to) = receiver(who, node, to) else {
            return Sent::NoReceiver(data);
        };
        let key = text(who, node, message);
        let queue = self.pending.entry(to).or_default();
        let evicted = match queue.len() >= MAX_PENDING {
            true => queue.pop_front().map(|(_, d)| d),
            false => None,
        };
        queue.push_back((key, data));
        evicted.map_or(Sent::Pending, Sent::Evicted)
    }

    /// A `message_receive` of node `node` by `to`: the send it is the
    /// queued copy of, if one is pending.
    pub fn receive(&mut self, who: &Identity, node: u32, to: &[u8], message: &[u8]) -> Option<T> {
        let key = text(who, node, message);
        let queue = self.pending.get_mut(&receiver(who, node, to)?)?;
        let k = queue.iter().position(|(p, _)| *p == key)?;
        queue.remove(k).map(|(_, d)| d)
    }

    /// Every send still pending (the input has ended), forgotten.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.pending
            .drain()
            .flat_map(|(_, q)| q.into_iter().map(|(_, d)| d))
    }
}

/// The receiver a pid text (as node `node` writes it) stands for; None
/// when it is no pid, or another node's while the names are unknown.
fn receiver(who: &Identity, node: u32, to: &[u8]) -> Option<Receiver> {
    let (pid, _) = split_qualified(to);
    if let Some(p) = who.process(node, pid) {
        return Some(Receiver::Named(p));
    }
    match parse_pid(pid)? {
        (0, number, serial) => Some(Receiver::Local {
            node,
            number,
            serial,
        }),
        _ => None,
    }
}

/// A message's text as matched.
fn text(who: &Identity, node: u32, message: &[u8]) -> Text {
    text_key(who, node, message).map_or_else(
        || {
            let start = &message[..message.len().min(COMPARED_BYTES)];
            let mut h = rustc_hash::FxHasher::default();
            h.write(start);
            Text::Written(h.finish(), start.len())
        },
        Text::Renumbered,
    )
}
