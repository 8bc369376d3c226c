//! `genserver`: gen_server and gen_statem calls seen from message events
//! alone. A call is the message `{'$gen_call',{From,Tag},Request}`; its
//! reply is `{Tag,Reply}`. OTP 24+ writes the tag as `[alias|#Ref<...>]`
//! (the reply goes to the alias), older releases as `#Ref<...>`: either way
//! the reference text is the key that pairs them: the identity layer finds
//! the call once per event ([`Identity::call`]) and the analysis keeps what
//! it knows of each call by the call's slot. Per server and request
//! (the request's first atom): the caller's latency (send of the call ->
//! receive of the reply) and the server's share (receive of the call ->
//! send of the reply). Calls whose text was cut before the reference, and
//! calls never answered, are counted as unmatched. With `--slowest N`, the
//! N slowest calls one by one (a heap of N: memory does not grow with the
//! calls).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::analysis::durations::{duration_cells, duration_columns};
use crate::engine::analysis::Analysis;
use crate::engine::identity::{CallId, Identity, Part};
use crate::engine::summary::Summary;
use crate::model::bytes::same;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::ends_hash;
use crate::model::message::{Call, ATOM_BYTES};
use crate::model::stats::Durations;
use crate::model::table::{col, Cell, Table, Unit};

/// Calls awaiting their reply, at most (more are counted unmatched).
pub const MAX_PENDING: usize = 65_536;

/// Request text kept when it does not start with an atom.
const REQUEST_TEXT_MAX: usize = 32;

struct Pending {
    row: usize,
    sent_ns: i64,
    server_received_ns: Option<i64>,
    server_ns: Option<u64>,
    /// With `--slowest`: the caller and the request's whole text.
    detail: Option<Box<Detail>>,
}

/// What the analysis knows of one call, kept by its slot in the identity
/// layer's call table.
#[derive(Default)]
struct CallState {
    /// The use of the slot these are of ([`CallId::generation`]).
    generation: u32,
    pending: Option<Pending>,
    /// The server was seen to receive the call without its send (the
    /// caller not traced, as in a triage window): (row, received), until
    /// the server's reply.
    server_only: Option<(usize, i64)>,
}

struct Detail {
    caller: Box<[u8]>,
    text: Box<[u8]>,
}

/// One call of the `--slowest` list.
struct Slow {
    latency_ns: u64,
    start_ns: i64,
    server_ns: Option<u64>,
    row: usize,
    detail: Box<Detail>,
}

impl PartialEq for Slow {
    fn eq(&self, other: &Self) -> bool {
        (self.latency_ns, self.start_ns) == (other.latency_ns, other.start_ns)
    }
}

impl Eq for Slow {}

impl PartialOrd for Slow {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Slow {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.latency_ns, Reverse(self.start_ns)).cmp(&(other.latency_ns, Reverse(other.start_ns)))
    }
}

struct Row {
    server: Box<[u8]>,
    request: Box<[u8]>,
    caller: Durations,
    server_share: Durations,
    unmatched: u64,
    /// Calls whose reply's receive never reached the analysis (left out by
    /// the selection) after their slot went to another call: waiting for
    /// good, as if still pending.
    left_waiting: u64,
    /// The same since [`GenServer::next_sub_window`], when kept
    /// ([`GenServer::with_sub_windows`]). A call is recorded here alone:
    /// `caller` and `server_share` get the sub-window's calls when it
    /// starts again, and at the end ([`GenServer::finish`]).
    sub: Option<Box<(Durations, Durations)>>,
}

impl Row {
    #[inline]
    fn caller_took(&mut self, ns: u64) {
        match &mut self.sub {
            Some(sub) => sub.0.record(ns),
            None => self.caller.record(ns),
        }
    }

    #[inline]
    fn server_took(&mut self, ns: u64) {
        match &mut self.sub {
            Some(sub) => sub.1.record(ns),
            None => self.server_share.record(ns),
        }
    }

    /// The sub-window's calls into the whole run's: taken, so that the
    /// sub-window starts again empty and no call is added twice (an empty
    /// one is left as it is).
    fn settle_sub(&mut self) {
        if let Some(sub) = self
            .sub
            .as_mut()
            .filter(|sub| sub.0.count() > 0 || sub.1.count() > 0)
        {
            let (caller, server_share) =
                std::mem::replace(&mut **sub, (Durations::new(2), Durations::new(2)));
            self.caller.add(&caller);
            self.server_share.add(&server_share);
        }
    }
}

/// A row's key (server and request name) hashed to find the row.
fn row_hash(server: &[u8], request: &[u8]) -> u64 {
    ends_hash(server, ends_hash(request, 0))
}

/// Rows kept as [`GenServer`]'s recent ones (a power of two).
const RECENT_ROWS: usize = 16;

/// A row's place among the recent ones: from its server pid's last eight
/// bytes and its request name's length and first byte.
#[inline(always)]
fn recent_slot(server: &[u8], request: &[u8]) -> usize {
    let n = server.len();
    let tail = match n {
        8.. => u64::from_le_bytes(server[n - 8..].try_into().expect("8 bytes")),
        _ => server.iter().fold(0, |w, &b| w << 8 | u64::from(b)),
    };
    let first = u64::from(request.first().copied().unwrap_or(0));
    let mixed =
        (tail ^ (request.len() as u64) << 40 ^ first << 48).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 58) as usize % RECENT_ROWS
}

/// The `genserver` state machine.
#[derive(Default)]
pub struct GenServer {
    rows: Vec<Row>,
    /// Rows by server and request name ([`row_hash`]).
    row_ids: hashbrown::HashTable<usize>,
    /// Calls by slot.
    calls: Vec<CallState>,
    /// Calls awaiting their reply's receive (those left waiting included).
    pending: usize,
    /// Calls seen received by their server alone, until the server's reply
    /// (those whose reply never came, once their slot went to another
    /// call, included).
    server_only: usize,
    slowest: usize,
    slow: BinaryHeap<Reverse<Slow>>,
    /// Rows last found, by [`recent_slot`] (the row's place + 1; 0:
    /// none): most calls go to a few servers with a few requests, found
    /// again by comparing their texts, without hashing them.
    recent: [u32; RECENT_ROWS],
    /// Whether rows keep their calls since the last sub-window too.
    sub_windows: bool,
}

/// The request's first atom (`get` of `{get,Key}`), else its text cut short.
fn request_name(request: &[u8]) -> &[u8] {
    let body = request.strip_prefix(b"{").unwrap_or(request);
    if let Some(quoted) = body.strip_prefix(b"'") {
        let end = quoted
            .iter()
            .position(|&b| b == b'\'')
            .map_or(body.len(), |e| e + 2);
        return &body[..end.min(body.len())];
    }
    if body.first().is_some_and(|b| b.is_ascii_lowercase()) {
        let end = body.iter().position(|&b| !ATOM_BYTES[usize::from(b)]);
        return &body[..end.unwrap_or(body.len())];
    }
    &request[..request.len().min(REQUEST_TEXT_MAX)]
}

impl GenServer {
    /// Also keeps the `slowest` slowest calls one by one.
    pub fn with_slowest(slowest: usize) -> GenServer {
        GenServer {
            slowest,
            ..GenServer::default()
        }
    }

    /// Rows also keep their calls since the last
    /// [`GenServer::next_sub_window`] ([`GenServer::sub_window_requests`]):
    /// whoever needs figures per window (`findings`) and the whole run's
    /// tables reads the calls once.
    pub fn with_sub_windows(mut self) -> GenServer {
        self.sub_windows = true;
        self
    }

    /// Each server and request: the caller's latencies and the server's
    /// share since the last sub-window (see [`GenServer::requests`]).
    pub fn sub_window_requests(
        &self,
    ) -> impl Iterator<Item = (&[u8], &[u8], &Durations, &Durations)> {
        self.rows.iter().filter_map(|r| {
            let sub = r.sub.as_deref()?;
            Some((&r.server[..], &r.request[..], &sub.0, &sub.1))
        })
    }

    /// A sub-window starts: its figures start again (taken into the whole
    /// run's), but for the servers and requests `keep` holds on to (they go
    /// on adding up).
    pub fn next_sub_window(&mut self, keep: impl Fn(&[u8], &[u8]) -> bool) {
        for r in self.rows.iter_mut() {
            if r.sub.is_some() && !keep(&r.server, &r.request) {
                r.settle_sub();
            }
        }
    }

    /// Each server and request: the caller's latencies and the server's
    /// share (which alone has figures where the callers were not traced).
    pub fn requests(&self) -> impl Iterator<Item = (&[u8], &[u8], &Durations, &Durations)> {
        self.rows
            .iter()
            .map(|r| (&r.server[..], &r.request[..], &r.caller, &r.server_share))
    }

    #[inline(always)]
    fn row(&mut self, server: &[u8], request: &[u8]) -> usize {
        let slot = recent_slot(server, request);
        if let Some(i) = (self.recent[slot] as usize).checked_sub(1) {
            let r = &self.rows[i];
            if same(server, &r.server) && same(request, &r.request) {
                return i;
            }
        }
        let i = self.found_row(server, request);
        self.recent[slot] = i as u32 + 1;
        i
    }

    /// The row of `server` and `request` by their hash, made the first
    /// time.
    #[inline(never)]
    fn found_row(&mut self, server: &[u8], request: &[u8]) -> usize {
        let hash = row_hash(server, request);
        let rows = &self.rows;
        let known = self.row_ids.find(hash, |&i| {
            same(server, &rows[i].server) && same(request, &rows[i].request)
        });
        if let Some(&i) = known {
            return i;
        }
        let i = self.rows.len();
        self.rows.push(Row {
            server: server.into(),
            request: request.into(),
            caller: Durations::new(2),
            server_share: Durations::new(2),
            unmatched: 0,
            left_waiting: 0,
            sub: self
                .sub_windows
                .then(|| Box::new((Durations::new(2), Durations::new(2)))),
        });
        let rows = &self.rows;
        self.row_ids
            .insert_unique(hash, i, |&j| row_hash(&rows[j].server, &rows[j].request));
        i
    }

    /// What the analysis knows of call `id`; an older call's state in
    /// its slot is let go first (a pending call's counted as waiting).
    #[inline(always)]
    fn state(&mut self, id: CallId) -> &mut CallState {
        let i = id.slot as usize;
        if i >= self.calls.len() {
            self.calls.resize_with(i + 1, CallState::default);
            self.calls[i].generation = id.generation;
        }
        let state = &mut self.calls[i];
        if state.generation != id.generation {
            if let Some(p) = state.pending.take() {
                self.rows[p.row].left_waiting += 1;
            }
            *state = CallState {
                generation: id.generation,
                ..CallState::default()
            };
        }
        state
    }

    fn send(&mut self, ev: &Event, who: &Identity) {
        if who.part() == Part::Reply {
            self.reply_sent(ev.ts_ns, who);
        } else if let Some(Call {
            caller,
            reference: key,
            request,
        }) = ev.call()
        {
            let name = if key.is_some() {
                request_name(request)
            } else {
                b"(cut)"
            };
            let row = self.row(ev.str(Slot::To), name);
            match who.call().filter(|_| key.is_some()) {
                Some(id) if self.pending < MAX_PENDING => {
                    let detail = (self.slowest > 0).then(|| {
                        Box::new(Detail {
                            caller: caller.into(),
                            text: request.into(),
                        })
                    });
                    let call = Pending {
                        row,
                        sent_ns: ev.ts_ns,
                        server_received_ns: None,
                        server_ns: None,
                        detail,
                    };
                    match self.state(id).pending.replace(call) {
                        Some(old) => self.rows[old.row].unmatched += 1,
                        None => self.pending += 1,
                    }
                }
                _ => self.rows[row].unmatched += 1,
            }
        }
    }

    /// A reply's send: the server's share of its call ends.
    fn reply_sent(&mut self, ts: i64, who: &Identity) {
        let Some(id) = who.call() else {
            return;
        };
        let state = self.state(id);
        let took = match (state.server_only.take(), &mut state.pending) {
            (Some((row, received)), _) => {
                self.server_only -= 1;
                Some((row, received))
            }
            (None, Some(p)) => p.server_received_ns.map(|received| {
                p.server_ns = Some(ts.saturating_sub(received).max(0) as u64);
                (p.row, received)
            }),
            (None, None) => None,
        };
        if let Some((row, received)) = took {
            let ns = ts.saturating_sub(received).max(0) as u64;
            self.rows[row].server_took(ns);
        }
    }

    fn receive(&mut self, ev: &Event, who: &Identity) {
        let Some(id) = who.call() else {
            return;
        };
        // The call's text is read only for a call its caller's side did
        // not show.
        let part = who.part();
        if part == Part::Call {
            let ts = ev.ts_ns;
            if let Some(p) = &mut self.state(id).pending {
                p.server_received_ns.get_or_insert(ts);
            } else if self.server_only < MAX_PENDING {
                let request = ev.call().map_or(&b""[..], |c| c.request);
                let row = self.row(ev.str(Slot::To), request_name(request));
                if self.state(id).server_only.replace((row, ts)).is_none() {
                    self.server_only += 1;
                }
            }
        } else if part == Part::Reply {
            if let Some(p) = self.state(id).pending.take() {
                self.pending -= 1;
                let ns = ev.ts_ns.saturating_sub(p.sent_ns).max(0) as u64;
                self.rows[p.row].caller_took(ns);
                if let Some(detail) = p.detail {
                    self.keep_if_slow(Slow {
                        latency_ns: ns,
                        start_ns: p.sent_ns,
                        server_ns: p.server_ns,
                        row: p.row,
                        detail,
                    });
                }
            }
        }
    }
}

impl GenServer {
    fn keep_if_slow(&mut self, call: Slow) {
        if self.slow.len() < self.slowest {
            self.slow.push(Reverse(call));
        } else if self.slow.peek().is_some_and(|Reverse(least)| call > *least) {
            self.slow.pop();
            self.slow.push(Reverse(call));
        }
    }

    fn slowest_table(&self) -> Table {
        let mut t = Table::new(
            "slowest",
            format!("The {} slowest calls (caller's latency)", self.slowest),
            vec![
                col("server", "server", Unit::Pid),
                col("request", "request", Unit::Text),
                col("caller", "caller", Unit::Pid),
                col("start_ns", "start", Unit::Timestamp),
                col("latency_ns", "latency", Unit::Ns),
                col("server_ns", "server", Unit::Ns),
                col("text", "request text", Unit::Excerpt),
            ],
        );
        let mut calls: Vec<&Slow> = self.slow.iter().map(|Reverse(s)| s).collect();
        calls.sort_by(|a, b| b.cmp(a));
        for c in calls {
            let row = &self.rows[c.row];
            t.push(
                vec![
                    Cell::bytes(&row.server),
                    Cell::bytes(&row.request),
                    Cell::bytes(&c.detail.caller),
                    Cell::Int(c.start_ns),
                    Cell::Num(c.latency_ns),
                    c.server_ns.map_or(Cell::Null, Cell::Num),
                    Cell::bytes(&c.detail.text),
                ],
                None,
            );
        }
        t
    }
}

impl Analysis for GenServer {
    fn needs_fields(&self, kind: Kind) -> bool {
        matches!(kind, Kind::MessageSend | Kind::MessageReceive)
    }

    fn ignores_other_kinds(&self) -> bool {
        true
    }

    #[inline(always)]
    fn on_event(&mut self, ev: &Event, who: &Identity) {
        match ev.kind() {
            Some(Kind::MessageSend) => self.send(ev, who),
            Some(Kind::MessageReceive) => self.receive(ev, who),
            _ => {}
        }
    }

    fn keeps_calls(&self) -> bool {
        true
    }
    fn carries_over(&self) -> bool {
        true
    }

    /// The sub-windows' calls are taken into the whole run's: whoever
    /// reads the last sub-window ([`GenServer::sub_window_requests`]) does
    /// so before.
    fn finish(&mut self, _who: &Identity) {
        self.rows.iter_mut().for_each(Row::settle_sub);
    }

    fn next_window(&mut self) {
        for r in self.rows.iter_mut() {
            r.caller = Durations::new(2);
            r.server_share = Durations::new(2);
            r.unmatched = 0;
            if let Some(sub) = &mut r.sub {
                **sub = (Durations::new(2), Durations::new(2));
            }
        }
        self.slow.clear();
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut waiting: Vec<u64> = self.rows.iter().map(|r| r.left_waiting).collect();
        for p in self.calls.iter().filter_map(|c| c.pending.as_ref()) {
            waiting[p.row] += 1;
        }
        let mut t = Table::new(
            "genserver",
            "gen_server/gen_statem calls: caller's latency and the server's share (worst p99 first)",
            [col("server", "server", Unit::Pid), col("request", "request", Unit::Text)]
                .into_iter()
                .chain(duration_columns())
                .chain([
                    col("server_p50_ns", "server p50", Unit::Ns),
                    col("server_p99_ns", "server p99", Unit::Ns),
                    col("server_max_ns", "server max", Unit::Ns),
                    col("unmatched", "unmatched", Unit::Count),
                ])
                .collect(),
        );
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(self.rows[i].caller.quantile(0.99)), i));
        for i in order {
            let r = &self.rows[i];
            // Nothing of it in this --window.
            if r.caller.count() == 0 && r.server_share.count() == 0 && r.unmatched + waiting[i] == 0
            {
                continue;
            }
            let s = &r.server_share;
            t.push(
                [Cell::bytes(&r.server), Cell::bytes(&r.request)]
                    .into_iter()
                    .chain(duration_cells(&r.caller))
                    .chain([
                        Cell::Num(s.quantile(0.5)),
                        Cell::Num(s.quantile(0.99)),
                        Cell::Num(s.max()),
                        Cell::Num(r.unmatched + waiting[i]),
                    ])
                    .collect(),
                (r.caller.count() > 0).then(|| r.caller.log2()),
            );
        }
        if self.slowest > 0 {
            return vec![t, self.slowest_table()];
        }
        vec![t]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;
    use crate::model::message::{parse_call, parse_reply};

    #[test]
    fn texts_parse_as_otp_writes_them() {
        let call = b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1.2.3>]},{get,key}}";
        assert_eq!(
            parse_call(call),
            Some(Call {
                caller: b"<0.90.0>",
                reference: Some(b"#Ref<0.1.2.3>"),
                request: b"{get,key}"
            })
        );
        assert_eq!(
            parse_call(b"{'$gen_call',{<0.90.0>,#Ref<0.1.2.3>},stop}").map(|c| c.reference),
            Some(Some(&b"#Ref<0.1.2.3>"[..]))
        );
        assert_eq!(
            parse_call(b"{'$gen_call',{<0.90.0>,[alias|#Ref<0.1..."),
            Some(Call {
                caller: b"<0.90.0>",
                reference: None,
                request: b""
            })
        );
        assert_eq!(
            parse_reply(b"{[alias|#Ref<0.1.2.3>],ok}"),
            Some(&b"#Ref<0.1.2.3>"[..])
        );
        assert_eq!(
            parse_reply(b"{#Ref<0.1.2.3>,{ok,1}}"),
            Some(&b"#Ref<0.1.2.3>"[..])
        );
        assert_eq!(parse_reply(b"{ok,#Ref<0.1.2.3>}"), None);
        assert_eq!(request_name(b"{get,key}"), b"get");
        assert_eq!(request_name(b"stop"), b"stop");
        assert_eq!(request_name(b"{'EXIT',x}"), b"'EXIT'");
        assert_eq!(request_name(b"42"), b"42");
    }

    #[test]
    fn calls_pair_with_replies_by_reference() {
        let call = "{'$gen_call',{<0.1.0>,[alias|#Ref<0.0.0.7>]},{get,k}}";
        let reply = "{[alias|#Ref<0.0.0.7>],{ok,v}}";
        let mut s = Script::default();
        s.ev(100, Kind::MessageSend, &["<0.1.0>", "<0.2.0>", call]);
        s.ev(150, Kind::MessageReceive, &["<0.2.0>", call]);
        s.ev(400, Kind::MessageSend, &["<0.2.0>", "#Ref<0.0.0.7>", reply]);
        s.ev(500, Kind::MessageReceive, &["<0.1.0>", reply]);
        s.ev(
            600,
            Kind::MessageSend,
            &[
                "<0.1.0>",
                "<0.2.0>",
                "{'$gen_call',{<0.1.0>,[alias|#Ref<0.0...",
            ],
        );
        let mut g = GenServer::default();
        s.feed(&mut g);
        let t = &g.tables(&Summary::default())[0];
        let get = t
            .rows
            .iter()
            .find(|r| r.cells[1] == Cell::Text("get".into()))
            .expect("get row");
        assert_eq!(t.value(get, "count"), Some(&Cell::Num(1)));
        assert_eq!(t.value(get, "max_ns"), Some(&Cell::Num(400)));
        assert_eq!(t.value(get, "server_max_ns"), Some(&Cell::Num(250)));
        assert_eq!(t.value(get, "unmatched"), Some(&Cell::Num(0)));
        let cut = t
            .rows
            .iter()
            .find(|r| r.cells[1] == Cell::Text("(cut)".into()))
            .expect("cut row");
        assert_eq!(t.value(cut, "unmatched"), Some(&Cell::Num(1)));
    }

    /// Rows kept per sub-window as well, some held on to over a few, give
    /// the whole run the figures of rows kept for the whole run alone, and
    /// finishing again adds nothing.
    #[test]
    fn sub_windows_add_up_to_the_whole_run() {
        let (mut whole, mut split) = (
            GenServer::default(),
            GenServer::default().with_sub_windows(),
        );
        let (mut who_whole, mut who_split) = (Identity::default(), Identity::default());
        who_whole.keep_calls();
        who_split.keep_calls();
        let mut s = Script::default();
        let (mut fed, mut n, mut late) = (0, 0, Vec::<(i64, String)>::new());
        for window in 0..6i64 {
            // Replies of the last window's calls, received in this one.
            for (t, reply) in late.drain(..) {
                s.ev(
                    window * 1_000_000 + t,
                    Kind::MessageReceive,
                    &["<0.1.0>", &reply],
                );
            }
            for i in 0..20i64 {
                n += 1;
                let server = ["<0.2.0>", "<0.3.0>"][(i % 2) as usize];
                let request = ["{get,k}", "{put,k,v}", "stop"][(i % 3) as usize];
                let call = format!("{{'$gen_call',{{<0.1.0>,[alias|#Ref<0.0.0.{n}>]}},{request}}}");
                let reply = format!("{{[alias|#Ref<0.0.0.{n}>],ok}}");
                let t = window * 1_000_000 + 1_000 + i * 10_000;
                s.ev(t, Kind::MessageSend, &["<0.1.0>", server, &call]);
                s.ev(t + 10 + i, Kind::MessageReceive, &[server, &call]);
                let sent = format!("#Ref<0.0.0.{n}>");
                s.ev(t + 100 + 7 * i, Kind::MessageSend, &[server, &sent, &reply]);
                match i % 5 {
                    0 => late.push((i, reply)),
                    _ => {
                        s.ev(t + 200 + 13 * i, Kind::MessageReceive, &["<0.1.0>", &reply]);
                    }
                }
            }
            s.feed_from(fed, &mut who_whole, &mut whole);
            fed = s.feed_from(fed, &mut who_split, &mut split);
            // The last window's rows are left in their sub-window for
            // `finish` to add, once.
            if window < 5 {
                split.next_sub_window(|server, _| window % 2 == 0 && server == b"<0.3.0>");
            }
        }
        whole.finish(&who_whole);
        let want = format!("{:?}", whole.tables(&Summary::default()));
        split.finish(&who_split);
        assert_eq!(format!("{:?}", split.tables(&Summary::default())), want);
        split.finish(&who_split);
        assert_eq!(format!("{:?}", split.tables(&Summary::default())), want);
    }

    /// A call whose reply's receive the selection left out waits for good,
    /// also once the next call takes its slot.
    #[test]
    fn a_call_whose_end_is_not_seen_stays_waiting() {
        let call =
            |r: u32| format!("{{'$gen_call',{{<0.1.0>,[alias|#Ref<0.0.0.{r}>]}},{{get,k}}}}");
        let reply = "{[alias|#Ref<0.0.0.7>],{ok,v}}";
        let (first, second) = (call(7), call(8));
        let mut s = Script::default();
        s.ev(100, Kind::MessageSend, &["<0.1.0>", "<0.2.0>", &first]);
        s.ev(150, Kind::MessageReceive, &["<0.2.0>", &first]);
        s.ev(400, Kind::MessageSend, &["<0.2.0>", "#Ref<0.0.0.7>", reply]);
        s.ev(500, Kind::MessageReceive, &["<0.1.0>", reply]);
        s.ev(600, Kind::MessageSend, &["<0.1.0>", "<0.2.0>", &second]);
        let (mut g, mut who, mut scratch) = (GenServer::default(), Identity::default(), vec![]);
        let mut slots = vec![];
        s.feed_raw(&mut |ev| {
            let node = who.node_of(ev);
            who.learn(node, ev);
            slots.push(who.call().map(|c| c.slot));
            if ev.ts_ns != 500 {
                who.present(ev, node, &mut scratch, &mut |ev| g.on_event(ev, &who));
            }
            who.forget(node, ev);
        });
        // The second call took the first's slot.
        assert_eq!(slots.first(), slots.last());
        let t = &g.tables(&Summary::default())[0];
        let get = &t.rows[0];
        assert_eq!(t.value(get, "count"), Some(&Cell::Num(0)));
        assert_eq!(t.value(get, "server_max_ns"), Some(&Cell::Num(250)));
        assert_eq!(t.value(get, "unmatched"), Some(&Cell::Num(2)));
    }
}
