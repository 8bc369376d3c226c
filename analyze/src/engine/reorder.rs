//! Live sources deliver each host's events in order but the hosts apart:
//! events are held back a while and handed on in timestamp order.

use std::collections::{BinaryHeap, HashMap};

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::model::event::{Event, EventClass, Field};
use crate::model::message::Shape;

/// How far (in trace time) a live reader may deliver one host's events
/// behind another's: twice LTTng's default live timer.
pub const LIVE_REORDER_NS: u64 = 2_000_000_000;
/// Events held back at most, live, whatever the window.
pub const MAX_HELD: usize = 1 << 18;

/// An owned copy of an event, held back for reordering.
struct Held {
    ts: i64,
    seq: u64,
    cpu: i64,
    trace: u32,
    vpid: i64,
    class: usize,
    fields: Vec<OwnedField>,
}

enum OwnedField {
    Str(Box<[u8]>),
    Int(i64),
    Other,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.ts, self.seq) == (other.ts, other.seq)
    }
}

impl Eq for Held {}

impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Held {
    // Reversed: BinaryHeap pops the oldest first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.ts, other.seq).cmp(&(self.ts, self.seq))
    }
}

/// Live, each host's events may be read a little apart from the others':
/// events are held back for a window of trace time and handed on in
/// timestamp order, and the wall clock lets them go when nothing more is
/// read.
pub struct Reorder {
    window_ns: i64,
    held: BinaryHeap<Held>,
    seq: u64,
    newest_ns: i64,
    classes: Vec<EventClass>,
    class_ids: HashMap<String, usize>,
}

impl Reorder {
    /// Holds events back for `window_ns` of trace time.
    pub fn new(window_ns: u64) -> Reorder {
        Reorder {
            window_ns: i64::try_from(window_ns).unwrap_or(i64::MAX),
            held: BinaryHeap::new(),
            seq: 0,
            newest_ns: i64::MIN,
            classes: Vec::new(),
            class_ids: HashMap::new(),
        }
    }

    /// Takes `ev`, and hands on the events older than the window.
    pub fn push(&mut self, ev: &Event, sink: &mut dyn FnMut(&Event)) {
        let class = match self.class_ids.get(&ev.class.name) {
            Some(&i) => i,
            None => {
                self.classes.push(ev.class.clone());
                self.class_ids
                    .insert(ev.class.name.clone(), self.classes.len() - 1);
                self.classes.len() - 1
            }
        };
        self.seq += 1;
        self.held.push(Held {
            ts: ev.ts_ns,
            seq: self.seq,
            cpu: ev.cpu,
            trace: ev.trace,
            vpid: ev.vpid,
            class,
            fields: ev
                .fields
                .iter()
                .map(|f| match f {
                    Field::Str(s) => OwnedField::Str((*s).into()),
                    Field::Int(i) => OwnedField::Int(*i),
                    Field::Other => OwnedField::Other,
                })
                .collect(),
        });
        self.release(ev.ts_ns, sink);
    }

    /// Live, between reads: the wall clock reads `now_ns`. A live reader
    /// gets events a live-timer period or so after they happen: no event
    /// older than the window is due before another window has passed.
    pub fn advance_to(&mut self, now_ns: i64, sink: &mut dyn FnMut(&Event)) {
        self.release(now_ns.saturating_sub(self.window_ns), sink);
    }

    /// The input has ended: hands on everything held.
    pub fn drain(&mut self, sink: &mut dyn FnMut(&Event)) {
        while let Some(h) = self.held.pop() {
            self.hand_on(&h, sink);
        }
    }

    fn release(&mut self, now_ns: i64, sink: &mut dyn FnMut(&Event)) {
        self.newest_ns = self.newest_ns.max(now_ns);
        while let Some(oldest) = self.held.peek() {
            if oldest.ts > self.newest_ns.saturating_sub(self.window_ns)
                && self.held.len() <= MAX_HELD
            {
                break;
            }
            let h = self.held.pop().expect("peeked");
            self.hand_on(&h, sink);
        }
    }

    fn hand_on(&self, h: &Held, sink: &mut dyn FnMut(&Event)) {
        let fields: Vec<Field> = h
            .fields
            .iter()
            .map(|f| match f {
                OwnedField::Str(s) => Field::Str(s),
                OwnedField::Int(i) => Field::Int(*i),
                OwnedField::Other => Field::Other,
            })
            .collect();
        sink(&Event {
            class: &self.classes[h.class],
            ts_ns: h.ts,
            cpu: h.cpu,
            trace: h.trace,
            vpid: h.vpid,
            node: h.trace,
            fields: &fields,
            shape: Shape::Unknown,
        });
    }
}

/// An analysis read as the run loop reads a live source: events put back
/// in timestamp order by a [`Reorder`], then through the identity layer
/// (for the analyses' tests).
pub struct Reordered<A: Analysis> {
    /// The analysis fed in timestamp order.
    pub inner: A,
    reorder: Reorder,
    who: Identity,
    scratch: Vec<u8>,
}

impl<A: Analysis> Reordered<A> {
    /// `inner` behind a reordering window of `window_ns`.
    pub fn new(inner: A, window_ns: u64) -> Reordered<A> {
        let mut who = Identity::default();
        if inner.keeps_calls() {
            who.keep_calls();
        }
        Reordered {
            inner,
            reorder: Reorder::new(window_ns),
            who,
            scratch: Vec::new(),
        }
    }

    /// Takes one event as read.
    pub fn push(&mut self, ev: &Event) {
        let (reorder, mut pass) = self.parts();
        reorder.push(ev, &mut pass);
    }

    /// See [`Reorder::advance_to`].
    pub fn advance_to(&mut self, now_ns: i64) {
        let (reorder, mut pass) = self.parts();
        reorder.advance_to(now_ns, &mut pass);
    }

    /// The input has ended: everything held is handed on, and the
    /// analysis finishes.
    pub fn finish(&mut self) {
        {
            let (reorder, mut pass) = self.parts();
            reorder.drain(&mut pass);
        }
        self.inner.finish(&self.who);
    }

    /// The window, and what hands an event on through the identity layer.
    fn parts(&mut self) -> (&mut Reorder, impl FnMut(&Event) + '_) {
        let (inner, who, scratch) = (&mut self.inner, &mut self.who, &mut self.scratch);
        let pass = move |ev: &Event| who.pass(ev, scratch, &mut |ev, who| inner.on_event(ev, who));
        (&mut self.reorder, pass)
    }
}
