//! Hand-written event sequences for the state machines' unit tests.

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::model::event::{Event, EventClass, Field, Kind, PROVIDER};
use crate::model::message::Shape;

enum Value {
    Str(String),
    Int(i64),
}

struct Scripted {
    event: &'static str,
    ts: i64,
    trace: u32,
    vpid: i64,
    fields: Vec<(&'static str, Value)>,
}

/// A sequence of events to feed an analysis.
pub struct Script {
    events: Vec<Scripted>,
    trace: u32,
    vpid: i64,
}

impl Default for Script {
    fn default() -> Script {
        Script {
            events: Vec::new(),
            trace: 0,
            vpid: -1,
        }
    }
}

fn fields_of(kind: Kind) -> &'static [&'static str] {
    kind.fields()
}

impl Script {
    /// The events added from now on are in trace `trace` (0 at first).
    pub fn in_trace(&mut self, trace: u32) -> &mut Self {
        self.trace = trace;
        self
    }

    /// The events added from now on carry the `vpid` context `vpid` (-1:
    /// none, at first).
    pub fn in_vpid(&mut self, vpid: i64) -> &mut Self {
        self.vpid = vpid;
        self
    }

    fn push(&mut self, ts: i64, kind: Kind, fields: Vec<(&'static str, Value)>) -> &mut Self {
        self.push_named(ts, kind.name(), fields)
    }

    fn push_named(
        &mut self,
        ts: i64,
        event: &'static str,
        fields: Vec<(&'static str, Value)>,
    ) -> &mut Self {
        self.events.push(Scripted {
            event,
            ts,
            trace: self.trace,
            vpid: self.vpid,
            fields,
        });
        self
    }

    /// The `process_name` snapshot of one process.
    pub fn snapshot(&mut self, ts: i64, pid: &str, name: &str) -> &mut Self {
        let fields = vec![
            ("pid", Value::Str(pid.to_string())),
            ("name", Value::Str(name.to_string())),
        ];
        self.push_named(ts, crate::engine::identity::PROCESS_NAME, fields)
    }

    /// Any event with string fields given in the contract's order.
    pub fn ev(&mut self, ts: i64, kind: Kind, values: &[&str]) -> &mut Self {
        let names = fields_of(kind);
        let fields = names
            .iter()
            .zip(values)
            .map(|(n, v)| (*n, Value::Str(v.to_string())))
            .collect();
        self.push(ts, kind, fields)
    }

    /// An event with integer fields after the pid.
    pub fn ev_int(&mut self, ts: i64, kind: Kind, pid: &str, ints: &[i64]) -> &mut Self {
        let names = fields_of(kind);
        let mut fields = vec![(names[0], Value::Str(pid.to_string()))];
        fields.extend(
            names[1..]
                .iter()
                .zip(ints)
                .map(|(n, v)| (*n, Value::Int(*v))),
        );
        self.push(ts, kind, fields)
    }

    /// An event with its fields named: the strings, then the integers.
    pub fn named(
        &mut self,
        ts: i64,
        kind: Kind,
        strs: &[(&'static str, &str)],
        ints: &[(&'static str, i64)],
    ) -> &mut Self {
        let fields = strs
            .iter()
            .map(|(n, v)| (*n, Value::Str(v.to_string())))
            .chain(ints.iter().map(|(n, v)| (*n, Value::Int(*v))))
            .collect();
        self.push(ts, kind, fields)
    }

    /// `node_name`.
    pub fn ev_node(&mut self, ts: i64, node: &str, channel: i64, peer: &str) -> &mut Self {
        let fields = vec![
            ("node", Value::Str(node.to_string())),
            ("channel", Value::Int(channel)),
            ("peer", Value::Str(peer.to_string())),
            ("type", Value::Str("request".to_string())),
        ];
        self.push(ts, Kind::NodeName, fields)
    }

    /// `user_trace_i4s4` (no `number`) or `user_trace_n`: the integers
    /// given (the rest 0), `name` as `s1`.
    #[allow(clippy::too_many_arguments)]
    pub fn probe(
        &mut self,
        ts: i64,
        kind: Kind,
        number: Option<i64>,
        pid: &str,
        tag: &str,
        ints: &[i64],
        name: &str,
    ) -> &mut Self {
        let mut fields = Vec::new();
        if let Some(n) = number {
            fields.push(("probe", Value::Int(n)));
        }
        fields.push(("pid", Value::Str(pid.to_string())));
        fields.push(("tag", Value::Str(tag.to_string())));
        for (i, field) in ["i1", "i2", "i3", "i4"].into_iter().enumerate() {
            fields.push((field, Value::Int(ints.get(i).copied().unwrap_or(0))));
        }
        fields.push(("s1", Value::Str(name.to_string())));
        self.push(ts, kind, fields)
    }

    /// `function_call`.
    pub fn call(&mut self, ts: i64, pid: &str, entry: &str) -> &mut Self {
        self.ev(ts, Kind::FunctionCall, &[pid, entry])
    }

    /// `function_return`.
    pub fn ret(&mut self, ts: i64, pid: &str, entry: &str) -> &mut Self {
        self.ev(ts, Kind::FunctionReturn, &[pid, entry])
    }

    /// `function_exception` (class `error`).
    pub fn exception(&mut self, ts: i64, pid: &str, entry: &str) -> &mut Self {
        self.ev(ts, Kind::FunctionException, &[pid, entry, "error"])
    }

    /// `process_scheduled` of `type` (`in`, `out`, ...).
    pub fn sched(&mut self, ts: i64, pid: &str, kind: &str) -> &mut Self {
        self.ev(ts, Kind::ProcessScheduled, &[pid, "undefined", kind])
    }

    /// `stack_sample`: `stack` innermost first, `;`-separated.
    pub fn sample(&mut self, ts: i64, pid: &str, status: &str, stack: &str) -> &mut Self {
        self.ev(ts, Kind::StackSample, &[pid, status, stack])
    }

    /// Feeds every event, in order, as the run loop does: through the
    /// identity layer (names, aliases); returns what it learnt.
    pub fn feed(&self, a: &mut dyn Analysis) -> Identity {
        let mut who = Identity::default();
        if a.keeps_calls() {
            who.keep_calls();
        }
        self.feed_from(0, &mut who, a);
        who
    }

    /// Feeds the events from the `start`th on through `who`; returns how
    /// many events the script holds (where to start next time).
    pub fn feed_from(&self, start: usize, who: &mut Identity, a: &mut dyn Analysis) -> usize {
        let mut scratch = Vec::new();
        self.feed_raw_from(start, &mut |ev| {
            who.pass(ev, &mut scratch, &mut |ev, who| a.on_event(ev, who))
        });
        self.events.len()
    }

    /// Feeds every event, in order, as read.
    pub fn feed_raw(&self, sink: &mut dyn FnMut(&Event)) {
        self.feed_raw_from(0, sink)
    }

    fn feed_raw_from(&self, start: usize, sink: &mut dyn FnMut(&Event)) {
        for Scripted {
            event,
            ts,
            trace,
            vpid,
            fields,
        } in &self.events[start.min(self.events.len())..]
        {
            let class = EventClass::new(
                &format!("{PROVIDER}:{event}"),
                fields.iter().map(|(n, _)| n.to_string()).collect(),
            );
            let values: Vec<Field> = fields
                .iter()
                .map(|(_, v)| match v {
                    Value::Str(s) => Field::Str(s.as_bytes()),
                    Value::Int(i) => Field::Int(*i),
                })
                .collect();
            sink(&Event {
                class: &class,
                ts_ns: *ts,
                cpu: 0,
                trace: *trace,
                vpid: *vpid,
                node: *trace,
                fields: &values,
                shape: Shape::Unknown,
            });
        }
    }
}
