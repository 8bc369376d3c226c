//! Which events the analyses see: the time window (`--from`/`--to`) and
//! the selection of processes (`--pid`, `--name`), with the calls whose
//! replies a selected process awaits.

use crate::engine::identity::{Identity, PID_SLOTS};
use crate::engine::names::Named;
use crate::model::event::{Event, Kind, Slot};

/// A point of the `--from`/`--to` selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// This long after the first event recorded (ns).
    After(u64),
    /// At this time (ns since the epoch).
    At(i64),
}

impl When {
    pub(crate) fn at(self, origin: i64) -> i64 {
        match self {
            When::After(ns) => origin.saturating_add(i64::try_from(ns).unwrap_or(i64::MAX)),
            When::At(t) => t,
        }
    }

    pub(crate) fn text(self) -> String {
        match self {
            When::After(ns) => format!("+{}", crate::model::table::format_ns(ns)),
            When::At(t) => crate::model::time::format_utc(t),
        }
    }
}

/// Which events the analyses see.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Skip events before this.
    pub from: Option<When>,
    /// Stop at events after this.
    pub to: Option<When>,
    /// Keep only events naming one of these processes (in `pid`, `from`,
    /// `to` or `parent`, or as the process a message goes to); empty keeps
    /// all.
    pub pids: Vec<Vec<u8>>,
    /// Keep only events naming a process of one of these names.
    pub names: Vec<Vec<u8>>,
}

/// Calls to a selected server whose reply the caller has not received yet
/// (the reply's receive names only the caller), at most.
const MAX_SELECTED_CALLS: usize = 65_536;

impl Filter {
    /// Contradictions known before reading: `--from` after `--to`.
    pub fn check(&self) -> Result<(), String> {
        if let (Some(from), Some(to)) = (self.from, self.to) {
            let later = match (from, to) {
                (When::After(f), When::After(t)) => f > t,
                (When::At(f), When::At(t)) => f > t,
                _ => false,
            };
            if later {
                return Err(format!(
                    "--from {} is after --to {}: the selection is empty",
                    from.text(),
                    to.text()
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn selects_processes(&self) -> bool {
        !(self.pids.is_empty() && self.names.is_empty())
    }

    /// Whether a process text (as node `node` writes it, at `ts`) is
    /// selected: by pid, or by a name it carries at any time in the trace
    /// (`named`, from a first pass), or has carried so far (live).
    pub(crate) fn is_selected(
        &self,
        who: &Identity,
        named: &mut Option<Named>,
        node: u32,
        text: &[u8],
        ts: i64,
    ) -> bool {
        if text.is_empty() {
            return false;
        }
        if self.pids.iter().any(|p| p[..] == *text) || self.names.iter().any(|n| n[..] == *text) {
            return true;
        }
        match named {
            Some(named) => named.carries(who.origin(node), text, ts),
            None => self.names.iter().any(|n| who.has_name(node, text, n)),
        }
    }

    pub(crate) fn keeps(
        &self,
        ev: &Event,
        node: u32,
        who: &Identity,
        named: &mut Option<Named>,
        calls: &mut SelectedCalls,
    ) -> bool {
        if !self.selects_processes() {
            return true;
        }
        if ev.kind() == Some(Kind::MessageReceive) {
            if let Some(r) = ev.reply() {
                if calls.take(node, r) {
                    return true;
                }
            }
        }
        let ts = ev.ts_ns;
        // Every slot is looked at (not only up to the first selected one):
        // a selected process's first event is noted wherever it shows.
        let in_slots = PID_SLOTS.iter().fold(false, |any, &s| {
            self.is_selected(who, named, node, ev.str(s), ts) | any
        });
        let to = ev.str(Slot::To);
        let target = in_slots
            || who
                .resolve(node, to)
                .is_some_and(|pid| self.is_selected(who, named, node, &pid, ts));
        if target && ev.kind() == Some(Kind::MessageSend) {
            // A call to a selected server: its reply's receive is the
            // caller's side of it.
            if let Some(r) = ev.call().and_then(|c| c.reference) {
                calls.put(node, r);
            }
        }
        target
    }

    /// What the selection asked for, in the options' words.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for p in &self.pids {
            parts.push(format!("--pid {}", String::from_utf8_lossy(p)));
        }
        for n in &self.names {
            parts.push(format!("--name {}", String::from_utf8_lossy(n)));
        }
        if let Some(f) = self.from {
            parts.push(format!("--from {}", f.text()));
        }
        if let Some(t) = self.to {
            parts.push(format!("--to {}", t.text()));
        }
        parts.join(" ")
    }

    pub(crate) fn is_empty(&self) -> bool {
        !self.selects_processes() && self.from.is_none() && self.to.is_none()
    }
}

/// References of calls to selected servers, bounded (the oldest dropped).
#[derive(Default)]
pub(crate) struct SelectedCalls {
    pub(crate) refs: hashbrown::HashSet<(u32, Box<[u8]>)>,
    pub(crate) order: std::collections::VecDeque<(u32, Box<[u8]>)>,
}

impl SelectedCalls {
    pub(crate) fn put(&mut self, node: u32, r: &[u8]) {
        let key = (node, Box::from(r));
        if self.refs.insert(key.clone()) {
            self.order.push_back(key);
        }
        while self.order.len() > MAX_SELECTED_CALLS {
            if let Some(old) = self.order.pop_front() {
                self.refs.remove(&old);
            }
        }
    }

    pub(crate) fn take(&mut self, node: u32, r: &[u8]) -> bool {
        self.refs.remove(&(node, Box::from(r)))
    }
}
