//! `--name` over a process's whole life in the trace: which processes ever
//! carried a selected name, learnt by a first pass over the naming events
//! (`process_register`, `process_name`) before the events are analysed.
//!
//! A name is evidence about a process, not about the time after the event
//! that says it: a server registered before tracing began is named only by
//! a later snapshot, or by a later re-registration, yet every event of its
//! pid is its. The first pass reads only the naming events' fields (the
//! others are counted, not decoded into texts); memory is bounded by the
//! processes that carry a selected name.
//!
//! While the events are analysed, each such process's first event is
//! noted: where the trace names it only later, [`NamedLater`] says so.

use rustc_hash::FxHashMap;

use crate::input::reader::{Reader, Source};
use crate::input::step::Step;
use crate::model::event::{EventClass, Kind, Slot, Wanted};
use crate::model::keyed::ByText;

/// One process that carried a selected name.
struct Carrier {
    /// The selected name (index into the selection's names).
    name: usize,
    /// The earliest naming event's time.
    named_ns: i64,
    /// Its first event in the analysed stream, once seen.
    first_ns: Option<i64>,
}

/// The processes of the selected names, per node ((trace, vpid), as
/// [`crate::engine::identity::Identity::origin`] gives it).
#[derive(Default)]
pub struct Named {
    names: Vec<Vec<u8>>,
    by_node: FxHashMap<(u32, i64), ByText<Carrier>>,
}

/// A selected process the trace names later than its first event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedLater {
    /// The name selected.
    pub name: String,
    /// The process, as its node writes it.
    pub pid: String,
    /// Its first event analysed (ns since the epoch).
    pub first_ns: i64,
    /// The earliest event naming it.
    pub named_ns: i64,
}

impl Named {
    /// Reads the naming events of `source` (traces only: a live session
    /// cannot be read twice) and keeps the processes carrying one of
    /// `names`.
    pub fn scan(source: &Source, names: &[Vec<u8>]) -> Result<Named, String> {
        let mut named = Named {
            names: names.to_vec(),
            by_node: FxHashMap::default(),
        };
        let mut wanted = Wanted::none();
        wanted.add(Kind::ProcessRegister);
        wanted.add(Kind::ProcessName);
        wanted.count_the_rest();
        let mut reader = Reader::open(source, wanted)?;
        let mut classes: Vec<EventClass> = Vec::new();
        loop {
            let step = reader.step(&mut classes, &mut |ev| {
                if matches!(ev.kind(), Some(Kind::ProcessRegister | Kind::ProcessName)) {
                    named.learn(
                        ev.trace,
                        ev.vpid,
                        ev.ts_ns,
                        ev.str(Slot::Pid),
                        ev.str(Slot::Name),
                    );
                }
            })?;
            match step {
                Step::Progress => {}
                Step::Again => std::thread::sleep(std::time::Duration::from_millis(10)),
                Step::End => break,
            }
        }
        Ok(named)
    }

    /// One naming event: `pid` (of node (`trace`, `vpid`)) is `name` at
    /// `ts`.
    pub fn learn(&mut self, trace: u32, vpid: i64, ts: i64, pid: &[u8], name: &[u8]) {
        let Some(i) = self.names.iter().position(|n| n[..] == *name) else {
            return;
        };
        let node = self.by_node.entry((trace, vpid.max(-1))).or_default();
        let c = crate::model::keyed::entry(node, pid, || Carrier {
            name: i,
            named_ns: ts,
            first_ns: None,
        });
        c.named_ns = c.named_ns.min(ts);
    }

    /// Whether `pid` (as node `origin` writes it) carried a selected name
    /// at any time; notes its first event (at `ts`).
    pub fn carries(&mut self, origin: (u32, i64), pid: &[u8], ts: i64) -> bool {
        let Some(c) = self.by_node.get_mut(&origin).and_then(|n| n.get_mut(pid)) else {
            return false;
        };
        c.first_ns.get_or_insert(ts);
        true
    }

    /// The selected processes whose earliest naming event comes after
    /// their first event, by name and pid.
    pub fn later(&self) -> Vec<NamedLater> {
        let mut later: Vec<NamedLater> = self
            .by_node
            .values()
            .flat_map(|n| n.iter())
            .filter_map(|(pid, c)| {
                let first = c.first_ns?;
                (c.named_ns > first).then(|| NamedLater {
                    name: String::from_utf8_lossy(&self.names[c.name]).into_owned(),
                    pid: String::from_utf8_lossy(pid).into_owned(),
                    first_ns: first,
                    named_ns: c.named_ns,
                })
            })
            .collect();
        later.sort_by(|a, b| (&a.name, &a.pid).cmp(&(&b.name, &b.pid)));
        later
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process named after its first event is selected from that event,
    /// and said to be named later; a process of another node or name is
    /// not selected.
    #[test]
    fn a_name_holds_from_the_first_event() {
        let mut n = Named {
            names: vec![b"store".to_vec()],
            ..Named::default()
        };
        n.learn(0, 7, 500, b"<0.86.0>", b"store");
        n.learn(0, 7, 900, b"<0.86.0>", b"store");
        n.learn(0, 7, 100, b"<0.90.0>", b"other");
        assert!(n.carries((0, 7), b"<0.86.0>", 10));
        assert!(n.carries((0, 7), b"<0.86.0>", 20));
        assert!(!n.carries((0, 8), b"<0.86.0>", 10));
        assert!(!n.carries((0, 7), b"<0.90.0>", 10));
        assert_eq!(
            n.later(),
            vec![NamedLater {
                name: "store".into(),
                pid: "<0.86.0>".into(),
                first_ns: 10,
                named_ns: 500,
            }]
        );
    }
}
