//! `genserver`: gen_server and gen_statem calls seen from message events
//! alone. A call is the message `{'$gen_call',{From,Tag},Request}`; its
//! reply is `{Tag,Reply}`. OTP 24+ writes the tag as `[alias|#Ref<...>]`
//! (the reply goes to the alias), older releases as `#Ref<...>`: either way
//! the reference text is the key that pairs them. Per server and request
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
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::bytes::same;
use crate::model::event::{Event, Kind, Slot};
use crate::model::keyed::Key;
use crate::model::message::{Call, ShortText};
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
    /// The same since [`GenServer::next_sub_window`], when kept
    /// ([`GenServer::with_sub_windows`]).
    sub: Option<Box<(Durations, Durations)>>,
}

impl Row {
    fn caller_took(&mut self, ns: u64) {
        self.caller.record(ns);
        if let Some(sub) = &mut self.sub {
            sub.0.record(ns);
        }
    }

    fn server_took(&mut self, ns: u64) {
        self.server_share.record(ns);
        if let Some(sub) = &mut self.sub {
            sub.1.record(ns);
        }
    }
}

/// A row's server and request texts.
/// A row's server and request name.
#[derive(Hash, PartialEq, Eq)]
struct RowKey {
    server: Box<[u8]>,
    request: Box<[u8]>,
}

/// A row's key as an event holds it: looked up without a copy (it hashes
/// as [`RowKey`] does).
#[derive(Hash)]
struct RowRef<'a> {
    server: &'a [u8],
    request: &'a [u8],
}

impl hashbrown::Equivalent<RowKey> for RowRef<'_> {
    #[inline]
    fn equivalent(&self, key: &RowKey) -> bool {
        same(self.server, &key.server) && same(self.request, &key.request)
    }
}

/// The `genserver` state machine.
#[derive(Default)]
pub struct GenServer {
    rows: Vec<Row>,
    row_ids: hashbrown::HashMap<RowKey, usize, rustc_hash::FxBuildHasher>,
    pending: hashbrown::HashMap<ShortText, Pending, rustc_hash::FxBuildHasher>,
    /// Calls the server was seen to receive without their send (the
    /// caller not traced, as in a triage window): (row, received), until
    /// the server's reply.
    server_only: hashbrown::HashMap<ShortText, (usize, i64), rustc_hash::FxBuildHasher>,
    slowest: usize,
    slow: BinaryHeap<Reverse<Slow>>,
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
        let end = body
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'@'));
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

    /// A sub-window starts: its figures start again, but for the servers
    /// and requests `keep` holds on to (they go on adding up); the whole
    /// run's go on.
    pub fn next_sub_window(&mut self, keep: impl Fn(&[u8], &[u8]) -> bool) {
        for r in self.rows.iter_mut() {
            if let Some(sub) = &mut r.sub {
                if !keep(&r.server, &r.request) {
                    **sub = (Durations::new(2), Durations::new(2));
                }
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

    fn row(&mut self, server: &[u8], request: &[u8]) -> usize {
        if let Some(&i) = self.row_ids.get(&RowRef { server, request }) {
            return i;
        }
        let key = RowKey {
            server: server.into(),
            request: request.into(),
        };
        let i = self.rows.len();
        self.rows.push(Row {
            server: key.server.clone(),
            request: key.request.clone(),
            caller: Durations::new(2),
            server_share: Durations::new(2),
            unmatched: 0,
            sub: self
                .sub_windows
                .then(|| Box::new((Durations::new(2), Durations::new(2)))),
        });
        self.row_ids.insert(key, i);
        i
    }

    fn send(&mut self, ev: &Event) {
        if let Some(Call {
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
            match key {
                Some(key) if self.pending.len() < MAX_PENDING => {
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
                    if let Some(old) = self.pending.insert(ShortText::new(key), call) {
                        self.rows[old.row].unmatched += 1;
                    }
                }
                _ => self.rows[row].unmatched += 1,
            }
        } else if let Some(key) = ev.reply() {
            if let Some((row, received)) = self.server_only.remove(&Key(key)) {
                let ns = ev.ts_ns.saturating_sub(received).max(0) as u64;
                self.rows[row].server_took(ns);
            } else if let Some(p) = self.pending.get_mut(&Key(key)) {
                if let Some(received) = p.server_received_ns {
                    let ns = ev.ts_ns.saturating_sub(received).max(0) as u64;
                    self.rows[p.row].server_took(ns);
                    p.server_ns = Some(ns);
                }
            }
        }
    }

    fn receive(&mut self, ev: &Event) {
        if let Some(Call {
            reference: Some(key),
            request,
            ..
        }) = ev.call()
        {
            if let Some(p) = self.pending.get_mut(&Key(key)) {
                p.server_received_ns.get_or_insert(ev.ts_ns);
            } else if self.server_only.len() < MAX_PENDING {
                let row = self.row(ev.str(Slot::To), request_name(request));
                self.server_only
                    .insert(ShortText::new(key), (row, ev.ts_ns));
            }
        } else if let Some(key) = ev.reply() {
            if let Some(p) = self.pending.remove(&Key(key)) {
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

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        match ev.kind() {
            Some(Kind::MessageSend) => self.send(ev),
            Some(Kind::MessageReceive) => self.receive(ev),
            _ => {}
        }
    }

    fn carries_over(&self) -> bool {
        true
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
        let mut waiting = vec![0u64; self.rows.len()];
        for p in self.pending.values() {
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
}
