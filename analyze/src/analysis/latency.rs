//! `latency`: how long a message waits. For each `message_send` to P, the
//! time until P's next `process_scheduled` `in` (send -> scheduled), and,
//! when receives are traced, until P's `message_receive` of the same text
//! (send -> queued: `message_receive` is written when the message is put
//! in P's queue, not when a `receive` takes it out, so a queue that grows
//! does not show here; `mailbox` shows it). Sends to registered names and replies to call
//! aliases come addressed to their process (the identity layer); an alias
//! the trace does not explain counts in one `(unresolved alias)` row, so
//! rows stay per process, never per reference. Pending sends are bounded
//! per receiver; what is dropped or never paired is counted.

use std::collections::VecDeque;
use std::hash::Hasher;

use crate::analysis::durations::{duration_cells, duration_columns};
use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{entry, get_mut, sorted_keys, ByText};
use crate::model::stats::Durations;
use crate::model::table::{col, Cell, Table, Unit};

/// Pending sends kept per receiver before the oldest is dropped.
pub const MAX_PENDING: usize = 4096;
/// What the send -> queued table means.
const QUEUED_NOTE: &str = "message_receive is written when a message is put in the receiver's \
     queue, not when a receive takes it out: this is the time to the queue, and unpaired counts \
     only sends without a queued copy; a queue that grows shows in `dyntrace-analyze mailbox`";
/// The row of replies to aliases the trace does not explain.
const UNRESOLVED_ALIAS: &[u8] = b"(unresolved alias)";

struct Receiver {
    until_scheduled: VecDeque<i64>,
    until_received: VecDeque<(i64, u64)>,
    scheduled: Durations,
    received: Durations,
    dropped: u64,
}

impl Receiver {
    fn new() -> Receiver {
        Receiver {
            until_scheduled: VecDeque::new(),
            until_received: VecDeque::new(),
            scheduled: Durations::new(2),
            received: Durations::new(2),
            dropped: 0,
        }
    }
}

/// The `latency` state machine.
pub struct Latency {
    receivers: ByText<Receiver>,
    all_scheduled: Durations,
    all_received: Durations,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            receivers: ByText::default(),
            all_scheduled: Durations::new(3),
            all_received: Durations::new(3),
        }
    }
}

fn text_hash(b: &[u8]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.finish()
}

impl Latency {
    fn send(&mut self, ev: &Event) {
        let to = ev.str(Slot::To);
        if to.starts_with(b"#Port") || to.is_empty() {
            return;
        }
        let to = if to.starts_with(b"#Ref<") {
            UNRESOLVED_ALIAS
        } else {
            to
        };
        let hash = text_hash(ev.str(Slot::Message));
        let r = entry(&mut self.receivers, to, Receiver::new);
        if r.until_scheduled.len() >= MAX_PENDING {
            r.until_scheduled.pop_front();
            r.dropped += 1;
        }
        r.until_scheduled.push_back(ev.ts_ns);
        if r.until_received.len() >= MAX_PENDING {
            r.until_received.pop_front();
        }
        r.until_received.push_back((ev.ts_ns, hash));
    }

    fn scheduled(&mut self, ev: &Event) {
        if !ev.scheduled_in() {
            return;
        }
        let Some(r) = get_mut(&mut self.receivers, ev.str(Slot::Pid)) else {
            return;
        };
        for sent in r.until_scheduled.drain(..) {
            let ns = ev.ts_ns.saturating_sub(sent).max(0) as u64;
            r.scheduled.record(ns);
            self.all_scheduled.record(ns);
        }
    }

    fn received(&mut self, ev: &Event) {
        let Some(r) = get_mut(&mut self.receivers, ev.str(Slot::To)) else {
            return;
        };
        let hash = text_hash(ev.str(Slot::Message));
        if let Some(i) = r.until_received.iter().position(|&(_, h)| h == hash) {
            let (sent, _) = r.until_received.remove(i).unwrap_or_default();
            let ns = ev.ts_ns.saturating_sub(sent).max(0) as u64;
            r.received.record(ns);
            self.all_received.record(ns);
        }
    }

    fn exit(&mut self, ev: &Event) {
        if let Some(r) = get_mut(&mut self.receivers, ev.str(Slot::Pid)) {
            r.dropped += r.until_scheduled.len() as u64;
            r.until_scheduled.clear();
            r.until_received.clear();
        }
    }
}

fn latency_columns(first: &'static str) -> Vec<crate::model::table::Column> {
    [col("to", first, Unit::Pid)]
        .into_iter()
        .chain(duration_columns())
        .chain([col("unpaired", "unpaired", Unit::Count)])
        .collect()
}

fn latency_cells(to: &[u8], d: &Durations, unpaired: u64) -> Vec<Cell> {
    [Cell::bytes(to)]
        .into_iter()
        .chain(duration_cells(d))
        .chain([Cell::Num(unpaired)])
        .collect()
}

impl Analysis for Latency {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::MessageSend
                | Kind::MessageReceive
                | Kind::ProcessExit
                | Kind::ProcessRegister
                | Kind::ProcessScheduled
        )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        match ev.kind() {
            Some(Kind::MessageSend) => self.send(ev),
            Some(Kind::ProcessScheduled) => self.scheduled(ev),
            Some(Kind::MessageReceive) => self.received(ev),
            Some(Kind::ProcessExit) => self.exit(ev),
            _ => {}
        }
    }

    fn carries_over(&self) -> bool {
        true
    }

    fn next_window(&mut self) {
        for r in self.receivers.values_mut() {
            r.scheduled = Durations::new(2);
            r.received = Durations::new(2);
            r.dropped = 0;
        }
        self.all_scheduled = Durations::new(3);
        self.all_received = Durations::new(3);
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut keys = sorted_keys(&self.receivers);
        keys.sort_by_key(|k| std::cmp::Reverse(self.receivers[*k].scheduled.quantile(0.99)));
        let mut per = Table::new(
            "latency",
            "Send -> scheduled in, per receiver (worst p99 first)",
            latency_columns("to"),
        );
        let mut recv = Table::new(
            "receive_latency",
            "Send -> queued (message_receive), per receiver",
            latency_columns("to"),
        );
        let mut unpaired_all = 0;
        for k in keys {
            let r = &self.receivers[k];
            let unpaired = r.dropped + r.until_scheduled.len() as u64;
            unpaired_all += unpaired;
            // Nothing of it in this --window.
            if r.scheduled.count() == 0 && unpaired == 0 {
                continue;
            }
            per.push(
                latency_cells(k, &r.scheduled, unpaired),
                Some(r.scheduled.log2()),
            );
            if r.received.count() > 0 {
                recv.push(
                    latency_cells(k, &r.received, r.until_received.len() as u64),
                    Some(r.received.log2()),
                );
            }
        }
        let mut all = Table::new(
            "latency_all",
            "Send -> scheduled in, all receivers",
            latency_columns("to"),
        );
        all.push(
            latency_cells(b"all", &self.all_scheduled, unpaired_all),
            Some(self.all_scheduled.log2()),
        );
        per.notes.push(
            "unpaired: sends whose receiver was not scheduled in after them (or dropped past the \
             pending bound)"
                .into(),
        );
        let mut tables = vec![all, per];
        if self.all_received.count() > 0 {
            let mut all_recv = Table::new(
                "receive_latency_all",
                "Send -> queued (message_receive), all receivers",
                latency_columns("to"),
            );
            all_recv.push(
                latency_cells(b"all", &self.all_received, 0),
                Some(self.all_received.log2()),
            );
            recv.notes.push(QUEUED_NOTE.into());
            tables.push(all_recv);
            tables.push(recv);
        }
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    #[test]
    fn every_send_pairs_with_the_next_schedule_in() {
        let mut s = Script::default();
        s.ev(0, Kind::MessageSend, &["<0.1.0>", "<0.2.0>", "a"]);
        s.ev(10, Kind::MessageSend, &["<0.1.0>", "srv", "b"]);
        s.ev(20, Kind::ProcessRegister, &["<0.2.0>", "srv", "register"]);
        s.ev(30, Kind::MessageSend, &["<0.1.0>", "srv", "c"]);
        s.ev(100, Kind::ProcessScheduled, &["<0.2.0>", "m:f/0", "in"]);
        s.ev(150, Kind::MessageReceive, &["<0.2.0>", "c"]);
        s.ev(200, Kind::MessageSend, &["<0.1.0>", "<0.2.0>", "d"]);
        let mut l = Latency::default();
        s.feed(&mut l);
        let t = l.tables(&Summary::default());
        // "b" went to a name not yet registered: its own receiver, unpaired.
        assert_eq!(t[0].value(&t[0].rows[0], "count"), Some(&Cell::Num(2)));
        assert_eq!(t[0].value(&t[0].rows[0], "max_ns"), Some(&Cell::Num(100)));
        assert_eq!(t[0].value(&t[0].rows[0], "unpaired"), Some(&Cell::Num(2)));
        assert_eq!(t[2].value(&t[2].rows[0], "max_ns"), Some(&Cell::Num(120)));
    }

    /// Replies to call aliases are rows of the caller, never of the
    /// reference; an alias the trace does not explain has one row.
    #[test]
    fn replies_to_aliases_are_per_process() {
        let call = "{'$gen_call',{<0.1.0>,[alias|#Ref<0.0.0.7>]},{get,k}}";
        let mut s = Script::default();
        s.ev(0, Kind::ProcessRegister, &["<0.2.0>", "srv", "register"]);
        s.ev(10, Kind::MessageSend, &["<0.1.0>", "srv", call]);
        s.ev(20, Kind::ProcessScheduled, &["<0.2.0>", "m:f/0", "in"]);
        s.ev(
            30,
            Kind::MessageSend,
            &["<0.2.0>", "#Ref<0.0.0.7>", "{[alias|#Ref<0.0.0.7>],v}"],
        );
        s.ev(
            40,
            Kind::MessageSend,
            &["<0.2.0>", "#Ref<0.0.0.9>", "{[alias|#Ref<0.0.0.9>],v}"],
        );
        s.ev(70, Kind::ProcessScheduled, &["<0.1.0>", "m:f/0", "in"]);
        let mut l = Latency::default();
        let who = s.feed(&mut l);
        let mut t = l.tables(&Summary::default());
        who.annotate(&mut t);
        let rows: Vec<(String, u64)> = t[1]
            .rows
            .iter()
            .map(|r| match (&r.cells[0], &r.cells[1]) {
                (c, Cell::Num(n)) => (crate::model::table::text_of(c, Unit::Pid, 0), *n),
                _ => panic!("row"),
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("<0.1.0>".to_string(), 1),
                ("srv <0.2.0>".to_string(), 1),
                ("(unresolved alias)".to_string(), 0)
            ]
        );
    }
}
