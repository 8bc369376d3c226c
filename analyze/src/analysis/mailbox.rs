//! `mailbox`: what arrives in each process's message queue and whether it
//! is taken out. Per receiver: messages in by kind (a tuple's first
//! element, an atom, else the term's shape; a gen_server cast or call by
//! its request's kind, `cast note`, `call get`) from `message_receive` (a
//! message was queued) or, where only sends were traced, from
//! `message_send`; by sender from `message_send`; the queue length over
//! time from the memory sampler's `process_memory` samples and its growth
//! per second; each kind's arrival rate beside that growth, marking the
//! kinds whose arrivals account for it; and, from scheduling slices, the
//! CPU spent per message handled by queue length (a `receive` that scans a
//! long queue spends more per message as the queue grows).
//!
//! Rates are over the time the receiver was traced: the runs of its
//! message events at most [`TRACED_GAP_NS`] apart (a trace that follows a
//! process only in windows counts only those), each run widened by the
//! mean gap inside runs. Kinds and senders are capped per receiver
//! ([`MAX_KINDS`], [`MAX_SENDERS`]), the rest summed as `(other)`: memory
//! is bounded by the number of processes.

use crate::analysis::memory::{uint, Series};
use crate::engine::analysis::Analysis;
use crate::engine::identity::{CallId, Identity, Part};
use crate::engine::summary::Summary;
use crate::model::bytes::same;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::{get_mut, ById, ByText, Pids};
use crate::model::message::{kind_parts, kind_prefixed, KindBody, Shape, PREFIXES, WORDS};
use crate::model::table::{col, Cell, Table, Unit};
use rustc_hash::FxHashMap;

/// Kinds counted per receiver; the rest are summed as `(other)`.
pub const MAX_KINDS: usize = 64;
/// Senders counted per receiver; the rest are summed as `(other)`.
pub const MAX_SENDERS: usize = 64;
/// Message events of one receiver further apart than this are in two runs
/// of tracing: the gap between them is not counted as traced time.
pub const TRACED_GAP_NS: i64 = 1_000_000_000;
/// A queue at least this long shows its CPU per message by queue length.
pub const LONG_QUEUE: u64 = 100;
/// What is beyond the caps.
pub const OTHER: &str = "(other)";
/// A kind's text is cut to this many bytes.
const MAX_KIND_BYTES: usize = 60;
/// Queue-length buckets (powers of two).
const QUEUE_BUCKETS: usize = 40;

/// When a receiver's events were seen: runs of events at most
/// [`TRACED_GAP_NS`] apart.
#[derive(Default, Clone, Debug)]
pub struct Traced {
    count: u64,
    runs: u64,
    closed_ns: i64,
    run_start: i64,
    last: i64,
}

impl Traced {
    /// An event at `ts`.
    pub fn see(&mut self, ts: i64) {
        if self.count == 0 || ts - self.last > TRACED_GAP_NS {
            if self.count > 0 {
                self.closed_ns += self.last - self.run_start;
            }
            self.runs += 1;
            self.run_start = ts;
        }
        self.last = ts.max(self.last);
        self.count += 1;
    }

    /// Events seen.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The time traced in seconds: the runs' spans, each widened by the
    /// mean gap between events inside runs (so `count / seconds` is the
    /// rate inside runs). None when no run holds two events.
    pub fn seconds(&self) -> Option<f64> {
        let span = self.closed_ns + (self.last - self.run_start);
        let inner = self.count.saturating_sub(self.runs);
        if inner == 0 || span <= 0 {
            return None;
        }
        Some(span as f64 * self.count as f64 / inner as f64 / 1e9)
    }

    /// `n` events per traced second.
    pub fn rate(&self, n: u64) -> Option<f64> {
        self.seconds().map(|s| n as f64 / s)
    }
}

/// Texts a [`Capped`] compares one by one before it hashes: a receiver's
/// first few kinds and senders (most have no more) are found without a
/// hash lookup.
const NEAR: usize = 8;

/// Counts per text, at most `max` texts; the rest summed. Texts are told
/// apart by their ids ([`Kinds`], [`Pids`]: one id per text from an id
/// on), kept with their text when first seen.
#[derive(Default)]
pub struct Capped {
    /// The texts' ids in the order first seen ([`FORGOTTEN`] for those
    /// given before `first`), with their counts.
    slots: Vec<(u64, u64)>,
    /// Each slot's text.
    texts: Vec<Box<[u8]>>,
    /// The slot of each id past the first [`NEAR`].
    index: FxHashMap<u64, u32>,
    /// The first id given since the texts' ids were last given anew.
    first: u64,
    /// Slots whose id is [`FORGOTTEN`].
    forgotten: usize,
    other: u64,
}

/// The id of a [`Capped`] slot whose text has a new id, not met yet.
const FORGOTTEN: u64 = u64::MAX;

impl Capped {
    /// One more of the text `text` whose id is `id`, of the ids given
    /// anew from `first` on (a text's older id is forgotten then).
    #[inline(always)]
    fn add(&mut self, id: u64, text: &[u8], first: u64, max: usize) {
        if first == self.first {
            let near = self.slots.len().min(NEAR);
            if let Some(s) = self.slots[..near].iter_mut().find(|s| s.0 == id) {
                s.1 += 1;
                return;
            }
        }
        self.add_far(id, text, first, max);
    }

    /// [`Capped::add`] past the first [`NEAR`] texts (all of them when
    /// the ids were given anew).
    #[inline(never)]
    fn add_far(&mut self, id: u64, text: &[u8], first: u64, max: usize) {
        if first != self.first {
            self.first = first;
            self.slots.iter_mut().for_each(|s| s.0 = FORGOTTEN);
            self.forgotten = self.slots.len();
            self.index.clear();
        }
        if self.slots.len() > NEAR {
            if let Some(&i) = self.index.get(&id) {
                self.slots[i as usize].1 += 1;
                return;
            }
        }
        if self.forgotten > 0 {
            let forgotten = |&i: &usize| self.slots[i].0 == FORGOTTEN && *self.texts[i] == *text;
            if let Some(i) = (0..self.slots.len()).find(forgotten) {
                self.forgotten -= 1;
                self.slots[i] = (id, self.slots[i].1 + 1);
                if i >= NEAR {
                    self.index.insert(id, i as u32);
                }
                return;
            }
        }
        if self.slots.len() < max {
            if self.slots.len() >= NEAR {
                self.index.insert(id, self.slots.len() as u32);
            }
            self.slots.push((id, 1));
            self.texts.push(text.into());
        } else {
            self.other += 1;
        }
    }

    /// The texts, most first, then `(other)` when anything was beyond the
    /// cap.
    pub fn sorted(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self
            .texts
            .iter()
            .zip(&self.slots)
            .map(|(k, (_, n))| (String::from_utf8_lossy(k).into_owned(), *n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if self.other > 0 {
            v.push((OTHER.to_string(), self.other));
        }
        v
    }
}

/// CPU and messages handled while the queue was in one length bucket.
#[derive(Default, Clone, Copy, Debug, PartialEq)]
pub struct QueueBucket {
    /// Sample intervals that started in the bucket.
    pub intervals: u64,
    /// Messages taken out (in, less the queue's growth).
    pub handled: u64,
    /// Time on a scheduler.
    pub cpu_ns: u64,
    /// Reductions spent (counted windows only: their marks give them).
    pub reductions: u64,
    /// The intervals' queue lengths (the mean of each interval's first
    /// and last), summed.
    pub queue_sum: u64,
}

impl QueueBucket {
    /// The mean queue length over its intervals.
    pub fn mean_queue(&self) -> u64 {
        self.queue_sum / self.intervals.max(1)
    }

    /// Reductions per message handled.
    pub fn reductions_per_message(&self) -> u64 {
        self.reductions / self.handled.max(1)
    }

    fn add(&mut self, handled: u64, cpu_ns: u64, reductions: u64, queue: u64) {
        self.intervals += 1;
        self.handled += handled;
        self.cpu_ns = self.cpu_ns.saturating_add(cpu_ns);
        self.reductions = self.reductions.saturating_add(reductions);
        self.queue_sum = self.queue_sum.saturating_add(queue);
    }
}

/// One counted window: its queue length (the mean of its two marks'),
/// the messages handled in it, the reductions and CPU spent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counted {
    /// The mean of the queue lengths at its two marks.
    pub queue: u64,
    /// Messages taken out (in, less the queue's growth).
    pub handled: u64,
    /// Reductions spent between the marks.
    pub reductions: u64,
    /// Time on a scheduler between the marks.
    pub cpu_ns: u64,
}

impl Counted {
    /// Reductions per message handled.
    pub fn reductions_per_message(&self) -> u64 {
        self.reductions / self.handled.max(1)
    }
}

/// Counted windows with fewer messages handled than this are left out of
/// the shortest and longest queue's (a message or two queued on either
/// side of a mark would weigh too much).
pub const COUNTED_MIN_HANDLED: u64 = 10;

/// A counted window open: triage's `dyntrace_focus count_from` mark, with
/// the process's exact queue length and reductions.
#[derive(Clone, Copy, Debug)]
struct Counting {
    ts: i64,
    queue: u64,
    reductions: u64,
    received: u64,
    cpu_ns: u64,
}

/// The marks a focus window's counting starts and ends with.
const COUNT_FROM: &[u8] = b"dyntrace_focus count_from ";
const COUNT_TO: &[u8] = b"dyntrace_focus count_to ";
const FOCUS_START: &[u8] = b"dyntrace_focus start";

/// `key=N` in a mark's text.
fn mark_value(text: &[u8], key: &str) -> Option<u64> {
    text.split(|&b| b == b' ').find_map(|w| {
        let v = w.strip_prefix(key.as_bytes())?.strip_prefix(b"=")?;
        std::str::from_utf8(v).ok()?.parse().ok()
    })
}

/// One receiver.
#[derive(Default)]
pub struct Receiver {
    kinds: Capped,
    kinds_sent: Capped,
    senders: Capped,
    received: Traced,
    sent: Traced,
    /// The queue length from `process_memory`.
    pub queue: Series,
    on_cpu_since: Option<i64>,
    cpu_ns: u64,
    scheduled: bool,
    received_since: u64,
    last_sample: Option<(i64, u64)>,
    by_queue: Vec<QueueBucket>,
    /// The counted window open, if any.
    counting: Option<Counting>,
    /// Counted windows (triage's focus windows) by queue length: where
    /// there are any, they replace `by_queue`, whose samples a second
    /// apart see only the windows' arrivals.
    by_window: Vec<QueueBucket>,
    /// The counted windows (of [`COUNTED_MIN_HANDLED`] or more) with the
    /// shortest and the longest queue.
    shortest: Option<Counted>,
    longest: Option<Counted>,
}

/// A kind's arrivals beside the queue's growth.
#[derive(Debug, Clone, PartialEq)]
pub struct KindRate {
    /// The kind.
    pub kind: String,
    /// Messages of the kind.
    pub count: u64,
    /// Per traced second.
    pub per_s: Option<f64>,
    /// Whether its arrivals account for the queue's growth.
    pub accounts: bool,
}

/// The low bound of queue bucket `i`.
pub fn bucket_floor(i: usize) -> u64 {
    match i {
        0 => 0,
        i => 1u64 << (i - 1),
    }
}

fn bucket_of(q: u64) -> usize {
    ((64 - q.leading_zeros()) as usize).min(QUEUE_BUCKETS - 1)
}

impl Receiver {
    /// Where its arrivals are counted: its `message_receive` events when
    /// it had any, else the sends to it.
    pub fn arrivals(&self) -> (&Capped, &Traced) {
        match self.received.count > 0 {
            true => (&self.kinds, &self.received),
            false => (&self.kinds_sent, &self.sent),
        }
    }

    /// Messages in.
    pub fn count_in(&self) -> u64 {
        self.arrivals().1.count
    }

    /// Messages in per traced second.
    pub fn rate_in(&self) -> Option<f64> {
        let (_, t) = self.arrivals();
        t.rate(t.count)
    }

    /// Whether any `process_memory` sample gave its queue.
    pub fn has_queue(&self) -> bool {
        self.queue.first().is_some()
    }

    /// The queue's growth per second, first sample to last.
    pub fn growth_per_s(&self) -> f64 {
        self.queue.growth_per_s()
    }

    /// Each kind's arrivals, most first, marking those that account for
    /// the queue's growth: each kind arriving at half the growth or more,
    /// else the most frequent ones until their sum reaches it. `timeout`
    /// never does: the runtime writes it when a `receive ... after`
    /// expires (erl_tracer cannot tell that from a `timeout` message), and
    /// such an expiry queues nothing.
    pub fn kind_rates(&self) -> Vec<KindRate> {
        let (kinds, traced) = self.arrivals();
        let mut rates: Vec<KindRate> = kinds
            .sorted()
            .into_iter()
            .map(|(kind, count)| KindRate {
                per_s: traced.rate(count),
                kind,
                count,
                accounts: false,
            })
            .collect();
        let growth = self.growth_per_s();
        if growth < 1.0 || self.queue.last().1 <= self.queue.first().map_or(0, |f| f.1) {
            return rates;
        }
        let mut any = false;
        let queued = |r: &KindRate| r.kind != RECEIVE_EXPIRED;
        for r in rates.iter_mut().filter(|r| queued(r)) {
            if r.per_s.is_some_and(|p| p >= growth / 2.0) {
                r.accounts = true;
                any = true;
            }
        }
        if !any {
            let mut sum = 0.0;
            for r in rates.iter_mut().filter(|r| queued(r)) {
                if sum >= growth {
                    break;
                }
                if let Some(p) = r.per_s {
                    sum += p;
                    r.accounts = true;
                }
            }
        }
        rates
    }

    /// CPU per message handled by queue length: (bucket's low bound, its
    /// figures), buckets with messages handled, shortest queue first.
    pub fn cpu_by_queue(&self) -> Vec<(u64, QueueBucket)> {
        let buckets = match self.by_window.is_empty() {
            true => &self.by_queue,
            false => &self.by_window,
        };
        buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.handled > 0)
            .map(|(i, b)| (bucket_floor(i), *b))
            .collect()
    }

    /// Whether its CPU per message comes from counted windows (triage's
    /// marks, which give reductions too).
    pub fn counted_windows(&self) -> bool {
        !self.by_window.is_empty()
    }

    /// The counted windows (of [`COUNTED_MIN_HANDLED`] messages handled
    /// or more) with the shortest and the longest queue.
    pub fn counted_extremes(&self) -> Option<(Counted, Counted)> {
        Some((self.shortest?, self.longest?))
    }

    /// Triage's marks: a counted window opens or closes.
    fn mark(&mut self, ts: i64, text: &[u8]) {
        if text.starts_with(FOCUS_START) {
            self.counting = None;
            return;
        }
        let from = text.starts_with(COUNT_FROM);
        if !from && !text.starts_with(COUNT_TO) {
            return;
        }
        let (Some(queue), Some(reductions)) =
            (mark_value(text, "queue"), mark_value(text, "reductions"))
        else {
            return;
        };
        if from {
            self.counting = Some(Counting {
                ts,
                queue,
                reductions,
                received: 0,
                cpu_ns: 0,
            });
            return;
        }
        let Some(mut c) = self.counting.take() else {
            return;
        };
        // A slice under way counts up to the mark.
        if let Some(since) = self.on_cpu_since {
            c.cpu_ns = c
                .cpu_ns
                .saturating_add(ts.saturating_sub(since.max(c.ts)).max(0) as u64);
        }
        let handled = c.received as i64 - (queue as i64 - c.queue as i64);
        if handled <= 0 || ts <= c.ts {
            return;
        }
        if self.by_window.is_empty() {
            self.by_window = vec![QueueBucket::default(); QUEUE_BUCKETS];
        }
        let w = Counted {
            queue: (c.queue + queue) / 2,
            handled: handled as u64,
            reductions: reductions.saturating_sub(c.reductions),
            cpu_ns: c.cpu_ns,
        };
        self.by_window[bucket_of(w.queue)].add(w.handled, w.cpu_ns, w.reductions, w.queue);
        if w.handled >= COUNTED_MIN_HANDLED {
            if self.shortest.is_none_or(|s| w.queue < s.queue) {
                self.shortest = Some(w);
            }
            if self.longest.is_none_or(|l| w.queue > l.queue) {
                self.longest = Some(w);
            }
        }
    }

    /// The senders, most first.
    pub fn senders(&self) -> Vec<(String, u64)> {
        self.senders.sorted()
    }

    /// Sends to it seen.
    pub fn sends_seen(&self) -> u64 {
        self.sent.count
    }

    fn sample(&mut self, ts: i64, q: u64) {
        self.queue.push(ts, q);
        if let Some((t0, q0)) = self.last_sample {
            if self.scheduled && self.received_since > 0 && ts > t0 {
                let handled = self.received_since as i64 - (q as i64 - q0 as i64);
                if handled > 0 {
                    if self.by_queue.is_empty() {
                        self.by_queue = vec![QueueBucket::default(); QUEUE_BUCKETS];
                    }
                    self.by_queue[bucket_of(q0.max(q))].add(
                        handled as u64,
                        self.cpu_ns,
                        0,
                        (q0 + q) / 2,
                    );
                }
            }
        }
        self.last_sample = Some((ts, q));
        self.cpu_ns = 0;
        self.scheduled = false;
        self.received_since = 0;
    }
}

/// The message text the runtime writes for a `receive ... after` that
/// expired.
const RECEIVE_EXPIRED: &str = "timeout";

/// A message's kind: a tuple's first element (a gen_server cast's or
/// call's request's kind, `cast note`, `call get`), an atom, else the
/// term's shape (`integer`, `list`, `binary`, `map`, `pid`, `tuple`...).
pub fn kind_of(message: &[u8]) -> String {
    let mut kind = String::new();
    kind_into(message, Shape::Unknown, &mut kind);
    kind
}

/// [`kind_of`] written into `kind` (cleared first), so that a caller
/// reuses one buffer. Where the message's `shape` says it is a plain call
/// or a whole reply, only the call's request is read.
fn kind_into(message: &[u8], shape: Shape, kind: &mut String) {
    kind.clear();
    if let Some((words, body)) = shape.kind(message) {
        // Found by the thread that decoded the message.
        kind.push_str(PREFIXES[usize::from(words)]);
        push_body(kind, body);
    } else if let Some(request) = shape.plain_request(message) {
        kind.push_str("call ");
        kind_text(request.trim_ascii(), kind);
    } else if shape.is_whole_reply(message) {
        // A tuple whose first element is a reference or a list.
        kind.push_str("tuple");
    } else {
        kind_text(message.trim_ascii(), kind);
    }
    cut_kind(kind);
}

/// A kind's text cut to [`MAX_KIND_BYTES`] (on a character's boundary).
fn cut_kind(kind: &mut String) {
    if kind.len() > MAX_KIND_BYTES {
        let mut cut = MAX_KIND_BYTES;
        while !kind.is_char_boundary(cut) {
            cut -= 1;
        }
        kind.truncate(cut);
    }
}

/// A message's kind as its parts (the index of its prefix in [`PREFIXES`]
/// and its body), as [`kind_into`] writes it; None when it has more than
/// one prefix (then written whole).
///
/// The shape tells which of the three ways applies, tried in the order of
/// [`kind_into`]: a kind found with the shape, a plain call's request, a
/// reply written whole (a tuple; half the messages of gen_server's
/// calls, told by their shape alone), else the whole text.
#[inline]
fn kind_parts_of(message: &[u8], shape: Shape) -> Option<(u8, KindBody<'_>)> {
    match shape {
        Shape::Reply(_) if shape.is_whole_reply(message) => Some((0, KindBody::Word(TUPLE))),
        Shape::Other(_) => shape.kind(message),
        Shape::Plain { .. } => match shape.kind(message) {
            Some(kind) => Some(kind),
            // Not looked for by the decoding thread, or none.
            None => kind_prefixed(shape.plain_request(message)?.trim_ascii(), 2),
        },
        _ => kind_prefixed(message.trim_ascii(), 0),
    }
}

/// The index in [`WORDS`] of a tuple's word.
const TUPLE: u8 = 1;

/// Distinct kinds kept by [`Kinds`] before it starts again: memory stays
/// bounded whatever the messages' atoms.
const MAX_KIND_TEXTS: usize = 4096;

/// No id yet.
const NONE: u32 = u32::MAX;

/// The kinds met, one id each (never reused), found from a kind's parts
/// without writing its text: by its prefix and its atom or word.
struct Kinds {
    /// Each kind's text: the id `first + i` is at `i`.
    texts: Vec<Box<[u8]>>,
    first: u64,
    /// Their places in `texts` by text.
    by_text: ByText<u32>,
    /// By prefix, the places of the kinds ending with an atom, by atom.
    atoms: [ByText<u32>; PREFIXES.len()],
    /// By prefix and word, the place of the kind ending with that word.
    words: [[u32; WORDS.len()]; PREFIXES.len()],
    /// The kind ending with an atom last found: most messages are of a
    /// few kinds, found again without a hash lookup.
    last: LastAtom,
    /// By the slot of an open call (the identity layer's), its message
    /// and kind as its send (or receive) found them: the other end's
    /// message, the same text, is not read again.
    calls: Vec<CallKind>,
    /// A kind's text being written.
    buf: String,
}

/// A call's message and its kind's place in [`Kinds`].
#[derive(Default)]
struct CallKind {
    generation: u32,
    /// The place, and the first id when it was found.
    at: u32,
    first: u64,
    text: Vec<u8>,
}

/// Calls' kinds are kept for the identity layer's slots below this, and
/// for messages of at most [`CALL_TEXT`] bytes: memory stays bounded.
const CALL_SLOTS: usize = 16_384;
const CALL_TEXT: usize = 160;

/// Atoms of at most this many bytes are kept as [`Kinds`]' last one.
const LAST_ATOM: usize = 24;

/// A kind ending with an atom: its prefix, its atom, its place.
#[derive(Clone, Copy)]
struct LastAtom {
    prefix: u8,
    len: u8,
    atom: [u8; LAST_ATOM],
    at: u32,
}

impl LastAtom {
    const NONE: LastAtom = LastAtom {
        prefix: 0,
        len: 0,
        atom: [0; LAST_ATOM],
        at: NONE,
    };
}

impl Default for Kinds {
    fn default() -> Kinds {
        Kinds {
            texts: Vec::new(),
            first: 0,
            by_text: ByText::default(),
            atoms: Default::default(),
            words: [[NONE; WORDS.len()]; PREFIXES.len()],
            last: LastAtom::NONE,
            calls: Vec::new(),
            buf: String::new(),
        }
    }
}

impl Kinds {
    /// The kind of `message` whose shape is `shape`: its id, its text, and
    /// the first id given since ids were last given anew (see
    /// [`Capped::add`]).
    /// A call's message (`who` says) has the kind of the call's other
    /// end when its text is the same.
    #[inline(always)]
    fn of(&mut self, message: &[u8], shape: Shape, who: &Identity) -> (u64, &[u8], u64) {
        // A reply written whole (half of gen_server's call messages) is a
        // tuple, once its kind has a place.
        if let Shape::Reply(_) = shape {
            let at = self.words[0][usize::from(TUPLE)];
            if at != NONE && shape.is_whole_reply(message) {
                return self.answer(at);
            }
        }
        let call = match who.part() {
            Part::Call => who.call().filter(|c| (c.slot as usize) < CALL_SLOTS),
            _ => None,
        };
        if let Some(c) = call {
            if let Some(k) = self.calls.get(c.slot as usize) {
                let kept = !k.text.is_empty() && k.generation == c.generation;
                if kept && k.first == self.first && same(&k.text, message) {
                    return self.answer(k.at);
                }
            }
        }
        let at = self.found_for(message, shape, call);
        self.answer(at)
    }

    /// [`Kinds::of`] past what it finds without reading the message: the
    /// kind's place, kept for the call `call` when its message is short.
    #[inline(never)]
    fn found_for(&mut self, message: &[u8], shape: Shape, call: Option<CallId>) -> u32 {
        let at = self.found(message, shape);
        if let Some(c) = call.filter(|_| message.len() <= CALL_TEXT) {
            let slot = c.slot as usize;
            if slot >= self.calls.len() {
                self.calls.resize_with(slot + 1, CallKind::default);
            }
            let k = &mut self.calls[slot];
            k.generation = c.generation;
            k.at = at;
            k.first = self.first;
            k.text.clear();
            k.text.extend_from_slice(message);
        }
        at
    }

    /// The id, text and first id of the kind at `at`.
    fn answer(&self, at: u32) -> (u64, &[u8], u64) {
        (
            self.first + u64::from(at),
            &self.texts[at as usize],
            self.first,
        )
    }

    /// The place of the kind of `message` whose shape is `shape`.
    fn found(&mut self, message: &[u8], shape: Shape) -> u32 {
        match kind_parts_of(message, shape) {
            Some((prefix, KindBody::Word(w))) => {
                let p = usize::from(prefix);
                match self.words[p][usize::from(w)] {
                    NONE => {
                        let at = self.written(prefix, KindBody::Word(w));
                        self.words[p][usize::from(w)] = at;
                        at
                    }
                    at => at,
                }
            }
            Some((prefix, KindBody::Atom(a))) => {
                let last = &self.last;
                if last.at != NONE
                    && last.prefix == prefix
                    && same(&last.atom[..usize::from(last.len)], a)
                {
                    last.at
                } else {
                    let at = match get_mut(&mut self.atoms[usize::from(prefix)], a) {
                        Some(&mut at) => at,
                        None => {
                            let at = self.written(prefix, KindBody::Atom(a));
                            self.atoms[usize::from(prefix)].insert(a.into(), at);
                            at
                        }
                    };
                    if a.len() <= LAST_ATOM {
                        self.last = LastAtom {
                            prefix,
                            len: a.len() as u8,
                            atom: [0; LAST_ATOM],
                            at,
                        };
                        self.last.atom[..a.len()].copy_from_slice(a);
                    }
                    at
                }
            }
            None => {
                let mut buf = std::mem::take(&mut self.buf);
                kind_into(message, shape, &mut buf);
                let at = self.place(&buf);
                self.buf = buf;
                at
            }
        }
    }

    /// The place of the kind `prefix` and `body` make, its text written.
    fn written(&mut self, prefix: u8, body: KindBody) -> u32 {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.push_str(PREFIXES[usize::from(prefix)]);
        push_body(&mut buf, body);
        cut_kind(&mut buf);
        let at = self.place(&buf);
        self.buf = buf;
        at
    }

    /// The place of the kind whose text is `text` (two sets of parts may
    /// write one text once cut), kept the first time; all are dropped
    /// first when [`MAX_KIND_TEXTS`] are kept.
    fn place(&mut self, text: &str) -> u32 {
        if let Some(&mut at) = get_mut(&mut self.by_text, text.as_bytes()) {
            return at;
        }
        if self.texts.len() >= MAX_KIND_TEXTS {
            self.first += self.texts.len() as u64;
            self.texts.clear();
            self.by_text.clear();
            self.atoms.iter_mut().for_each(|a| a.clear());
            self.words = [[NONE; WORDS.len()]; PREFIXES.len()];
            self.last = LastAtom::NONE;
        }
        let at = self.texts.len() as u32;
        self.by_text.insert(text.as_bytes().into(), at);
        self.texts.push(text.as_bytes().into());
        at
    }
}

fn kind_text(t: &[u8], out: &mut String) {
    let body = kind_parts(t, &mut |words| out.push_str(words));
    push_body(out, body);
}

/// A kind's body into `out`: an atom's text as it is when UTF-8 (always,
/// unless quoted: checked without the lossy conversion's setup), else
/// lossily; or its word.
fn push_body(out: &mut String, body: KindBody) {
    match body {
        KindBody::Atom(text) => match std::str::from_utf8(text) {
            Ok(text) => out.push_str(text),
            Err(_) => out.push_str(&String::from_utf8_lossy(text)),
        },
        KindBody::Word(w) => out.push_str(WORDS[usize::from(w)]),
    }
}

/// The `mailbox` state machine.
#[derive(Default)]
pub struct Mailbox {
    /// The receivers in the order first seen, by their pid's id.
    receivers: ById<Receiver>,
    samples: u64,
    scheduling: u64,
    /// Sends to a target that is no pid the trace explains.
    unresolved: u64,
    /// The messages' kinds.
    kinds: Kinds,
    /// The receivers' and senders' pids.
    pids: Pids,
}

impl Mailbox {
    /// The receiver of `pid`, made the first time.
    fn entry(&mut self, pid: &[u8]) -> &mut Receiver {
        let id = self.pids.id(pid);
        self.receivers.entry(id)
    }

    /// The id of `pid` among the pids met, given the first time: an
    /// analysis that runs mailbox inside looks a process's pid up once
    /// per event and hands mailbox its id ([`Mailbox::scheduled`]).
    #[inline(always)]
    pub fn pid_id(&mut self, pid: &[u8]) -> u32 {
        self.pids.id(pid)
    }

    /// The pids met, by id ([`Mailbox::pid_id`]).
    pub fn pids(&self) -> &Pids {
        &self.pids
    }

    /// A `process_scheduled` event of the process whose pid's id is `id`
    /// (None: a pid not met yet, which has no receiver).
    #[inline(always)]
    pub fn scheduled(&mut self, ev: &Event, id: Option<u32>, scheduled_in: bool) {
        self.scheduling += 1;
        let Some(r) = id.and_then(|id| self.receivers.get_mut(id)) else {
            return;
        };
        match scheduled_in {
            true => r.on_cpu_since = Some(ev.ts_ns),
            false => {
                if let Some(since) = r.on_cpu_since.take() {
                    r.cpu_ns = r
                        .cpu_ns
                        .saturating_add(ev.ts_ns.saturating_sub(since).max(0) as u64);
                    r.scheduled = true;
                    if let Some(c) = &mut r.counting {
                        c.cpu_ns = c
                            .cpu_ns
                            .saturating_add(ev.ts_ns.saturating_sub(since.max(c.ts)).max(0) as u64);
                    }
                }
            }
        }
    }

    /// The receivers by pid text (as the analyses see it), in no order.
    pub fn receivers(&self) -> impl Iterator<Item = (&[u8], &Receiver)> {
        self.receivers.iter().map(|(id, r)| (self.pids.text(id), r))
    }

    /// Whether any `process_memory` sample was read.
    pub fn has_samples(&self) -> bool {
        self.samples > 0
    }

    /// Whether any scheduling event was read.
    pub fn has_scheduling(&self) -> bool {
        self.scheduling > 0
    }

    /// The receivers, the fastest-growing queue first, then most in.
    fn ordered(&self) -> Vec<(&[u8], &Receiver)> {
        let mut v: Vec<(&[u8], &Receiver)> = self.receivers().collect();
        v.sort_by(|a, b| {
            b.1.growth_per_s()
                .total_cmp(&a.1.growth_per_s())
                .then(b.1.count_in().cmp(&a.1.count_in()))
                .then(a.0.cmp(b.0))
        });
        v
    }
}

fn per_s_cell(rate: Option<f64>) -> Cell {
    match rate {
        Some(r) => Cell::Num(r.round() as u64),
        None => Cell::Null,
    }
}

/// "524/s" (or "?/s" when the rate is unknown).
pub fn rate_text(rate: Option<f64>) -> String {
    match rate {
        Some(r) if r < 10.0 => format!("{r:.1}/s"),
        Some(r) => format!("{r:.0}/s"),
        None => "?/s".into(),
    }
}

impl Analysis for Mailbox {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::MessageSend
                | Kind::MessageReceive
                | Kind::ProcessMemory
                | Kind::ProcessScheduled
                | Kind::UserTraceS1
        )
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    fn reads_message_kinds(&self) -> bool {
        true
    }

    #[inline(always)]
    fn on_event(&mut self, ev: &Event, who: &Identity) {
        match ev.kind() {
            Some(Kind::MessageReceive) => {
                let (kind, text, first) = self.kinds.of(ev.str(Slot::Message), ev.shape, who);
                let to = ev.str(Slot::To);
                let id = self.pids.id(to);
                let r = self.receivers.entry(id);
                r.kinds.add(kind, text, first, MAX_KINDS);
                r.received.see(ev.ts_ns);
                r.received_since += 1;
                if let Some(c) = &mut r.counting {
                    c.received += 1;
                }
            }
            Some(Kind::UserTraceS1) => {
                let text = ev.str(Slot::Message);
                if text.starts_with(b"dyntrace_focus ") {
                    self.entry(ev.str(Slot::Pid)).mark(ev.ts_ns, text);
                }
            }
            Some(Kind::MessageSend) => {
                let to = ev.str(Slot::To);
                if !to.starts_with(b"<") {
                    // A name, alias or port the trace does not resolve.
                    self.unresolved += 1;
                    return;
                }
                let (kind, text, first) = self.kinds.of(ev.str(Slot::Message), ev.shape, who);
                let from = self.pids.id(ev.str(Slot::From));
                let id = self.pids.id(to);
                let r = self.receivers.entry(id);
                r.kinds_sent.add(kind, text, first, MAX_KINDS);
                r.senders
                    .add(u64::from(from), self.pids.text(from), 0, MAX_SENDERS);
                r.sent.see(ev.ts_ns);
            }
            Some(Kind::ProcessMemory) => {
                self.samples += 1;
                let r = self.entry(ev.str(Slot::Pid));
                r.sample(ev.ts_ns, uint(ev, "message_queue_len"));
            }
            Some(Kind::ProcessScheduled) => {
                let id = self.pids.find(ev.str(Slot::Pid));
                self.scheduled(ev, id, ev.scheduled_in());
            }
            _ => {}
        }
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let ordered = self.ordered();
        let mut per = Table::new(
            "mailbox",
            "Mailboxes per receiver (fastest-growing queue first; rates over the time traced)",
            vec![
                col("receiver", "receiver", Unit::Pid),
                col("in", "in", Unit::Count),
                col("in_per_s", "in/s", Unit::Count),
                col("traced_ns", "traced", Unit::Ns),
                col("queue_first", "queue first", Unit::Count),
                col("queue_last", "queue last", Unit::Count),
                col("queue_peak", "queue peak", Unit::Count),
                col("queue_growth_per_s", "queue/s", Unit::Count),
                col("queue_trend", "queue over time", Unit::Text),
                col("top_kind", "most in", Unit::Text),
            ],
        );
        let mut kinds = Table::new(
            "mailbox_kinds",
            "Messages in per receiver and kind (a tuple's first element, an atom, else the shape)",
            vec![
                col("receiver", "receiver", Unit::Pid),
                col("kind", "kind", Unit::Text),
                col("count", "in", Unit::Count),
                col("per_s", "in/s", Unit::Count),
                col("note", "beside the queue", Unit::Text),
            ],
        );
        let mut senders = Table::new(
            "mailbox_senders",
            "Messages in per receiver and sender (from message_send)",
            vec![
                col("receiver", "receiver", Unit::Pid),
                col("sender", "sender", Unit::Pid),
                col("count", "sent", Unit::Count),
                col("per_s", "sent/s", Unit::Count),
            ],
        );
        let mut cpu = Table::new(
            "mailbox_cpu",
            format!(
                "CPU per message handled by queue length (queues of {LONG_QUEUE} or more; \
                 handled = in less the queue's growth between samples)"
            ),
            vec![
                col("receiver", "receiver", Unit::Pid),
                col("queue_from", "queue from", Unit::Count),
                col("intervals", "intervals", Unit::Count),
                col("handled", "handled", Unit::Count),
                col("cpu_ns", "cpu", Unit::Ns),
                col("cpu_per_message_ns", "cpu/message", Unit::Ns),
            ],
        );
        // A process only triage's marks named (in focus, nothing in).
        for (pid, r) in ordered
            .iter()
            .filter(|(_, r)| r.count_in() > 0 || r.has_queue())
        {
            let (_, traced) = r.arrivals();
            let rates = r.kind_rates();
            let q = |v: Option<u64>| v.map_or(Cell::Null, Cell::Num);
            let has_q = r.has_queue();
            per.push(
                vec![
                    Cell::bytes(pid),
                    Cell::Num(r.count_in()),
                    per_s_cell(r.rate_in()),
                    traced
                        .seconds()
                        .map_or(Cell::Null, |s| Cell::Num((s * 1e9) as u64)),
                    q(r.queue.first().map(|f| f.1)),
                    q(has_q.then(|| r.queue.last().1)),
                    q(has_q.then(|| r.queue.peak())),
                    match has_q {
                        true => Cell::Int(r.growth_per_s().round() as i64),
                        false => Cell::Null,
                    },
                    Cell::Text(match has_q {
                        true => r.queue.sparkline(),
                        false => String::new(),
                    }),
                    Cell::Text(rates.first().map(|k| k.kind.clone()).unwrap_or_default()),
                ],
                None,
            );
            let growth = r.growth_per_s();
            for k in &rates {
                let note = match k.accounts {
                    true => format!(
                        "{} {} in, queue {:+.0}/s: not taken out",
                        k.kind,
                        rate_text(k.per_s),
                        growth
                    ),
                    false => String::new(),
                };
                kinds.push(
                    vec![
                        Cell::bytes(pid),
                        Cell::Text(k.kind.clone()),
                        Cell::Num(k.count),
                        per_s_cell(k.per_s),
                        Cell::Text(note),
                    ],
                    None,
                );
            }
            for (sender, n) in r.senders() {
                senders.push(
                    vec![
                        Cell::bytes(pid),
                        Cell::Text(sender),
                        Cell::Num(n),
                        per_s_cell(r.sent.rate(n)),
                    ],
                    None,
                );
            }
            if r.queue.peak() >= LONG_QUEUE {
                for (from, b) in r.cpu_by_queue() {
                    cpu.push(
                        vec![
                            Cell::bytes(pid),
                            Cell::Num(from),
                            Cell::Num(b.intervals),
                            Cell::Num(b.handled),
                            Cell::Num(b.cpu_ns),
                            Cell::Num(b.cpu_ns / b.handled.max(1)),
                        ],
                        None,
                    );
                }
            }
        }
        if self.receivers().all(|(_, r)| r.count_in() == 0) {
            per.notes.push(
                "no message events: trace messages ('receive' and send) to count what arrives"
                    .into(),
            );
        }
        if self.unresolved > 0 {
            senders.notes.push(format!(
                "{} sends to a name, alias or port the trace does not resolve to a process: not counted",
                self.unresolved
            ));
        }
        if self.samples == 0 {
            per.notes.push(
                "no process_memory samples: queue lengths come from the memory sampler (dyntrace:memory/1)"
                    .into(),
            );
        }
        if self.receivers().all(|(_, r)| r.sent.count == 0) {
            senders
                .notes
                .push("no message_send events: senders need sends traced".into());
        }
        if self.scheduling == 0 {
            cpu.notes.push(
                "no scheduling events: CPU per message needs process_scheduled (the scheduling flag)"
                    .into(),
            );
        }
        vec![per, kinds, senders, cpu]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    const MS: i64 = 1_000_000;
    const S: i64 = 1_000_000_000;

    fn queue(s: &mut Script, ts: i64, pid: &str, q: i64) {
        s.named(
            ts,
            Kind::ProcessMemory,
            &[("pid", pid), ("name", "")],
            &[
                ("memory", 1000),
                ("total_heap", 100),
                ("bin_vheap", 0),
                ("message_queue_len", q),
            ],
        );
    }

    fn table<'t>(tables: &'t [Table], key: &str) -> &'t Table {
        tables.iter().find(|t| t.key == key).unwrap()
    }

    fn text(t: &Table, row: usize, key: &str) -> String {
        match t.value(&t.rows[row], key) {
            Some(Cell::Text(s)) => s.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn kinds_of_messages() {
        // Read from the text, and from its shape where the decoding
        // thread found it: the same.
        let kind = |text: &[u8]| {
            let mut kinded = String::new();
            kind_into(text, Shape::of(text).kinded(text), &mut kinded);
            assert_eq!(kinded, kind_of(text), "{}", String::from_utf8_lossy(text));
            kinded
        };
        assert_eq!(kind(b"{note,1,<0.5.0>}"), "note");
        assert_eq!(kind(b"{'$gen_cast',{note,7}}"), "cast note");
        assert_eq!(
            kind(b"{'$gen_call',{<0.9.0>,[alias|#Ref<0.1.2.3>]},{get,k}}"),
            "call get"
        );
        assert_eq!(kind(b"tick"), "tick");
        assert_eq!(kind(b"'EXIT'"), "'EXIT'");
        assert_eq!(kind(b"{{a,b},c}"), "tuple");
        assert_eq!(kind(b"{}"), "{}");
        assert_eq!(kind(b"42"), "integer");
        assert_eq!(kind(b"-1.5"), "float");
        assert_eq!(kind(b"<<1,2>>"), "binary");
        assert_eq!(kind(b"<0.1.0>"), "pid");
        assert_eq!(kind(b"[1,2]"), "list");
        assert_eq!(kind(b"#{a => 1}"), "map");
        assert_eq!(kind(b"{'$gen_cast',#{a => {x,y}}}"), "cast map");
        assert_eq!(kind(b"#Ref<0.1.2.3>"), "reference");
        // A cast or call of another arity is a tuple of that atom; a
        // call's fourth element stays in its request.
        assert_eq!(kind(b"{'$gen_cast',a,b}"), "'$gen_cast'");
        assert_eq!(kind(b"{'$gen_call',x}"), "'$gen_call'");
        assert_eq!(kind(b"{'$gen_call',{<0.9.0>,t},{get,k},x}"), "call term");
        assert_eq!(kind(b"{'a,b',c}"), "'a,b'");
        assert_eq!(kind(b"{\"x,y\",1}"), "tuple");
        assert_eq!(kind(b"{'$gen_cast',{#{a => b},1}}"), "cast tuple");
        // A message's shape gives the same kind as its text, also where a
        // byte of a call is changed, put in or left out, or the text cut.
        use crate::model::message::tests::{mutations, SAMPLES};
        let bytes = [b'0', b'>', b',', b'{', b'}', b']', b' ', b'a', b'\''];
        let texts = SAMPLES.iter().map(|t| t.to_vec()).chain(
            [
                SAMPLES[0],
                SAMPLES[1],
                b"{'$gen_call',{<0.9.0>,#Ref<0.1.2.3>},{'$gen_cast',x}}",
            ]
            .into_iter()
            .flat_map(|base| mutations(base, &bytes)),
        );
        for text in texts {
            let text = &text[..];
            let mut kind = String::new();
            kind_into(text, Shape::of(text), &mut kind);
            assert_eq!(kind, kind_of(text), "{}", String::from_utf8_lossy(text));
            kind_into(text, Shape::of(text).kinded(text), &mut kind);
            assert_eq!(kind, kind_of(text), "{}", String::from_utf8_lossy(text));
        }
    }

    /// `timeout` (a `receive ... after` that expired) arriving faster than
    /// the queue grows is not what fills it: `note` is.
    #[test]
    fn an_expired_receive_never_accounts_for_the_queue() {
        let mut s = Script::default();
        let mut q = 0;
        for ms in 0..2000 {
            let t = ms * MS;
            s.ev(t, Kind::MessageReceive, &["<0.80.0>", "timeout"]);
            if ms % 2 == 0 {
                s.ev(t, Kind::MessageReceive, &["<0.80.0>", "{note,1}"]);
                q += 1;
            }
            if ms % 100 == 0 {
                queue(&mut s, t, "<0.80.0>", q);
            }
        }
        let mut m = Mailbox::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let kinds = table(&tables, "mailbox_kinds");
        assert_eq!(text(kinds, 0, "kind"), "timeout");
        assert_eq!(text(kinds, 0, "note"), "");
        assert_eq!(
            text(kinds, 1, "note"),
            "note 500/s in, queue +500/s: not taken out"
        );
    }

    /// A receiver gets `note` at 500/s and `get` at 50/s for 2 s, takes
    /// out only `get`: the queue grows by 500/s and `note` accounts for it.
    #[test]
    fn the_kind_that_makes_the_queue_grow_is_marked() {
        let mut s = Script::default();
        s.snapshot(0, "<0.80.0>", "store");
        let mut q = 0;
        for ms in 0..2000 {
            let t = ms * MS;
            if ms % 2 == 0 {
                s.ev(t, Kind::MessageSend, &["<0.90.0>", "<0.80.0>", "{note,1}"]);
                s.ev(t, Kind::MessageReceive, &["<0.80.0>", "{note,1}"]);
                q += 1;
            }
            if ms % 20 == 0 {
                s.ev(t, Kind::MessageSend, &["<0.91.0>", "<0.80.0>", "{get,k}"]);
                s.ev(t, Kind::MessageReceive, &["<0.80.0>", "{get,k}"]);
            }
            if ms % 100 == 0 {
                queue(&mut s, t, "<0.80.0>", q);
                queue(&mut s, t, "<0.81.0>", 5000);
            }
        }
        let mut m = Mailbox::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let per = table(&tables, "mailbox");
        assert_eq!(
            per.value(&per.rows[0], "receiver"),
            Some(&Cell::Text("<0.80.0>".into()))
        );
        assert_eq!(per.value(&per.rows[0], "in"), Some(&Cell::Num(1100)));
        assert_eq!(per.value(&per.rows[0], "in_per_s"), Some(&Cell::Num(550)));
        assert_eq!(
            per.value(&per.rows[0], "queue_growth_per_s"),
            Some(&Cell::Int(500))
        );
        assert_eq!(text(per, 0, "top_kind"), "note");
        // The large flat queue: no growth, nothing in.
        assert_eq!(
            per.value(&per.rows[1], "queue_growth_per_s"),
            Some(&Cell::Int(0))
        );
        let kinds = table(&tables, "mailbox_kinds");
        assert_eq!(text(kinds, 0, "kind"), "note");
        assert_eq!(kinds.value(&kinds.rows[0], "per_s"), Some(&Cell::Num(500)));
        assert_eq!(
            text(kinds, 0, "note"),
            "note 500/s in, queue +500/s: not taken out"
        );
        assert_eq!(text(kinds, 1, "kind"), "get");
        assert_eq!(text(kinds, 1, "note"), "");
        let senders = table(&tables, "mailbox_senders");
        assert_eq!(text(senders, 0, "sender"), "<0.90.0>");
        assert_eq!(
            senders.value(&senders.rows[0], "count"),
            Some(&Cell::Num(1000))
        );
    }

    /// Traced in two windows of 500 ms, 10 s apart: rates count those
    /// windows, not the 10 s between.
    #[test]
    fn rates_are_over_the_time_traced() {
        let mut s = Script::default();
        for start in [0, 10 * S] {
            for i in 0..100 {
                s.ev(start + i * 5 * MS, Kind::MessageReceive, &["<0.7.0>", "x"]);
            }
        }
        let mut m = Mailbox::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let per = table(&tables, "mailbox");
        assert_eq!(per.value(&per.rows[0], "in_per_s"), Some(&Cell::Num(200)));
        assert_eq!(
            per.value(&per.rows[0], "traced_ns"),
            Some(&Cell::Num(1_000_000_000))
        );
        // Only receives: no sender, and said so.
        assert!(table(&tables, "mailbox_senders").rows.is_empty());
        assert!(!per.notes.is_empty());
    }

    #[test]
    fn kinds_beyond_the_cap_are_other() {
        let mut s = Script::default();
        for i in 0..MAX_KINDS + 10 {
            s.ev(
                i as i64 * MS,
                Kind::MessageReceive,
                &["<0.7.0>", &format!("{{k{i},1}}")],
            );
        }
        let mut m = Mailbox::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let kinds = table(&tables, "mailbox_kinds");
        assert_eq!(kinds.rows.len(), MAX_KINDS + 1);
        let last = kinds.rows.len() - 1;
        assert_eq!(text(kinds, last, "kind"), OTHER);
        assert_eq!(
            kinds.value(&kinds.rows[last], "count"),
            Some(&Cell::Num(10))
        );
    }

    /// Texts are counted alike before and past the ones compared one by
    /// one, whatever order they come in; past the cap they are `(other)`.
    #[test]
    fn capped_counts_every_text_it_keeps() {
        let mut c = Capped::default();
        for round in 0..10 {
            for k in round..10 {
                c.add(k as u64, format!("k{k}").as_bytes(), 0, 8);
            }
        }
        let want: Vec<(String, u64)> = (0..8)
            .rev()
            .map(|k| (format!("k{k}"), k + 1))
            .chain([(OTHER.to_string(), 9 + 10)])
            .collect();
        assert_eq!(c.sorted(), want);
    }

    /// A kind found by its parts has the text written from the message,
    /// whatever the shape, and one id per text.
    #[test]
    fn kinds_by_id_are_kinds_by_text() {
        let mut kinds = Kinds::default();
        let who = Identity::default();
        let mut ids: Vec<(u64, String)> = Vec::new();
        let texts = crate::model::message::tests::SAMPLES
            .iter()
            .copied()
            .chain([
                &b"{'$gen_cast',{'$gen_cast',x}}"[..],
                b"{'$gen_call',{<0.9.0>,#Ref<0.1.2.3>},{'$gen_cast',x}}",
                b"{note,1}",
                b"42",
            ]);
        for text in texts {
            for shape in [
                Shape::Unknown,
                Shape::of(text),
                Shape::of(text).kinded(text),
            ] {
                let (id, kind, _) = kinds.of(text, shape, &who);
                assert_eq!(
                    kind,
                    kind_of(text).as_bytes(),
                    "{}",
                    String::from_utf8_lossy(text)
                );
                let kind = kind_of(text);
                match ids.iter().find(|(_, k)| *k == kind) {
                    Some((i, _)) => assert_eq!(*i, id, "{kind}"),
                    None => ids.push((id, kind)),
                }
            }
        }
        assert!(ids.iter().any(|(_, k)| k == "cast cast x"));
    }

    /// Ids given anew: a text kept under its old id is counted in its
    /// slot, not as another.
    #[test]
    fn capped_finds_its_texts_under_new_ids() {
        let mut c = Capped::default();
        for (id, text) in [(0, "a"), (1, "b"), (0, "a")] {
            c.add(id, text.as_bytes(), 0, 8);
        }
        for (id, text) in [(10, "b"), (11, "c"), (10, "b"), (12, "a")] {
            c.add(id, text.as_bytes(), 10, 8);
        }
        let want = [("a", 3), ("b", 3), ("c", 1)].map(|(k, n)| (k.to_string(), n));
        assert_eq!(c.sorted(), want);
    }

    /// Each message takes 10 us to handle at a queue of 10, 1 ms at a
    /// queue of 5000 (a receive scanning the queue).
    #[test]
    fn cpu_per_message_by_queue_length() {
        let mut s = Script::default();
        let mut t = 0;
        for (q, per_msg) in [(10, 10_000), (5000, 1_000_000)] {
            for _ in 0..5 {
                queue(&mut s, t, "<0.7.0>", q);
                for _ in 0..10 {
                    s.ev(t, Kind::MessageReceive, &["<0.7.0>", "{req,1}"]);
                    s.sched(t + 1, "<0.7.0>", "in");
                    s.sched(t + 1 + per_msg, "<0.7.0>", "out");
                    t += 2 * MS;
                }
                t += 100 * MS;
            }
        }
        queue(&mut s, t, "<0.7.0>", 5000);
        let mut m = Mailbox::default();
        s.feed(&mut m);
        let tables = m.tables(&Summary::default());
        let cpu = table(&tables, "mailbox_cpu");
        let per: Vec<(Cell, Cell)> = cpu
            .rows
            .iter()
            .map(|r| {
                (
                    cpu.value(r, "queue_from").cloned().unwrap(),
                    cpu.value(r, "cpu_per_message_ns").cloned().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            per,
            [
                (Cell::Num(8), Cell::Num(10_000)),
                (Cell::Num(4096), Cell::Num(1_000_000))
            ]
        );
    }
}
