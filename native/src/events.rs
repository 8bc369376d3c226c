//! The one table: every event of provider `org_erlang_dyntrace`, its
//! fields and the trace tags that become it.
//!
//! The table itself is `native/events.table`; `build.rs` generates from it
//! the C tracepoints and emitters and, included here, `EventId`, `ROUTES`
//! and each event's field list. The typed emitters (`emit::<event>`) are
//! included in `crate::lttng`, the dispatch to each event's field
//! extraction in `crate::fields`. How to add an event is written at the
//! top of the table.

include!(concat!(env!("OUT_DIR"), "/event_table.rs"));

/// The trace classes of `erl_tracer`: one `enabled_<class>/3` +
/// `trace_<class>/5` pair each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Procs,
    Ports,
    RunningProcs,
    RunningPorts,
    Call,
    Send,
    Receive,
    GarbageCollection,
}

impl Class {
    pub const ALL: [Class; 8] = [
        Class::Procs,
        Class::Ports,
        Class::RunningProcs,
        Class::RunningPorts,
        Class::Call,
        Class::Send,
        Class::Receive,
        Class::GarbageCollection,
    ];
    pub const COUNT: usize = Class::ALL.len();

    /// The trace flag of the class, which is also its name in
    /// `erl_tracer` (`enabled_<name>/3`).
    pub fn flag(self) -> &'static str {
        match self {
            Class::Procs => "procs",
            Class::Ports => "ports",
            Class::RunningProcs => "running_procs",
            Class::RunningPorts => "running_ports",
            Class::Call => "call",
            Class::Send => "send",
            Class::Receive => "receive",
            Class::GarbageCollection => "garbage_collection",
        }
    }
}

/// The LTTng type of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// A CTF string: a term's or an identifier's text.
    String,
    /// An unsigned 32-bit integer (C `unsigned int`).
    U32,
    /// An unsigned 64-bit integer (C `unsigned long`).
    U64,
    /// A signed 64-bit integer (C `long`): the user probes' integers.
    I64,
}

impl FieldType {
    /// Its name in `dyntrace:events()`.
    pub fn name(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::U32 => "u32",
            FieldType::U64 => "u64",
            FieldType::I64 => "i64",
        }
    }
}

/// One field of an event, in the event's order.
pub struct Field {
    pub name: &'static str,
    pub kind: FieldType,
}

/// One trace tag of one class and the event it becomes.
pub struct Route {
    pub class: Class,
    /// The trace tag atom's text.
    pub tag: &'static str,
    pub event: EventId,
}
