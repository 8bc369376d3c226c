//! The one table: trace class → trace tag → LTTng event.
//!
//! Everything per event is driven from here: the enabled checks, the
//! emitters, the load-time check against the C provider, `lttng list`
//! coverage. Adding an event is one `EventId` variant (and its row in
//! `c_src/dyntrace_events.h`) plus the rows of `ROUTES` that reach it.

/// The events of provider `org_erlang_dyntrace`, in the order of the C
/// provider's `DYNTRACE_EVENTS` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EventId {
    ProcessSpawn,
    ProcessLink,
    ProcessExit,
    ProcessRegister,
    ProcessScheduled,
    PortOpen,
    PortExit,
    PortLink,
    PortScheduled,
    FunctionCall,
    FunctionReturn,
    FunctionException,
    MessageSend,
    MessageReceive,
    GcMinorStart,
    GcMinorEnd,
    GcMajorStart,
    GcMajorEnd,
}

impl EventId {
    pub const ALL: [EventId; 18] = [
        EventId::ProcessSpawn,
        EventId::ProcessLink,
        EventId::ProcessExit,
        EventId::ProcessRegister,
        EventId::ProcessScheduled,
        EventId::PortOpen,
        EventId::PortExit,
        EventId::PortLink,
        EventId::PortScheduled,
        EventId::FunctionCall,
        EventId::FunctionReturn,
        EventId::FunctionException,
        EventId::MessageSend,
        EventId::MessageReceive,
        EventId::GcMinorStart,
        EventId::GcMinorEnd,
        EventId::GcMajorStart,
        EventId::GcMajorEnd,
    ];

    /// The LTTng event name (without the provider).
    pub fn name(self) -> &'static str {
        match self {
            EventId::ProcessSpawn => "process_spawn",
            EventId::ProcessLink => "process_link",
            EventId::ProcessExit => "process_exit",
            EventId::ProcessRegister => "process_register",
            EventId::ProcessScheduled => "process_scheduled",
            EventId::PortOpen => "port_open",
            EventId::PortExit => "port_exit",
            EventId::PortLink => "port_link",
            EventId::PortScheduled => "port_scheduled",
            EventId::FunctionCall => "function_call",
            EventId::FunctionReturn => "function_return",
            EventId::FunctionException => "function_exception",
            EventId::MessageSend => "message_send",
            EventId::MessageReceive => "message_receive",
            EventId::GcMinorStart => "gc_minor_start",
            EventId::GcMinorEnd => "gc_minor_end",
            EventId::GcMajorStart => "gc_major_start",
            EventId::GcMajorEnd => "gc_major_end",
        }
    }
}

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
}

/// Which side of a link event the tracee is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSide {
    /// `link`/`unlink`: from = tracee, to = the other side.
    Tracee,
    /// `getting_linked`/`getting_unlinked`: from = the other side.
    Other,
}

/// One trace tag of one class and the event it becomes.
pub struct Route {
    pub class: Class,
    /// The trace tag atom's text.
    pub tag: &'static str,
    pub event: EventId,
    /// The text of the event's `type` field, where it has one.
    pub kind: &'static str,
    pub side: LinkSide,
}

const fn row(class: Class, tag: &'static str, event: EventId, kind: &'static str) -> Route {
    Route {
        class,
        tag,
        event,
        kind,
        side: LinkSide::Tracee,
    }
}

const fn reversed(class: Class, tag: &'static str, event: EventId, kind: &'static str) -> Route {
    Route {
        class,
        tag,
        event,
        kind,
        side: LinkSide::Other,
    }
}

use Class::*;
use EventId::*;

/// Every trace tag that becomes an event. A tag missing here (`spawned`,
/// `seq_trace`, ports' `register`, ...) is answered `discard`.
pub const ROUTES: &[Route] = &[
    row(Procs, "spawn", ProcessSpawn, ""),
    row(Procs, "link", ProcessLink, "link"),
    row(Procs, "unlink", ProcessLink, "unlink"),
    reversed(Procs, "getting_linked", ProcessLink, "link"),
    reversed(Procs, "getting_unlinked", ProcessLink, "unlink"),
    row(Procs, "exit", ProcessExit, ""),
    row(Procs, "register", ProcessRegister, "register"),
    row(Procs, "unregister", ProcessRegister, "unregister"),
    row(Ports, "open", PortOpen, ""),
    row(Ports, "closed", PortExit, ""),
    row(Ports, "link", PortLink, "link"),
    row(Ports, "unlink", PortLink, "unlink"),
    reversed(Ports, "getting_linked", PortLink, "link"),
    reversed(Ports, "getting_unlinked", PortLink, "unlink"),
    row(RunningProcs, "in", ProcessScheduled, "in"),
    row(RunningProcs, "out", ProcessScheduled, "out"),
    row(RunningProcs, "in_exiting", ProcessScheduled, "in_exiting"),
    row(RunningProcs, "out_exiting", ProcessScheduled, "out_exiting"),
    row(RunningProcs, "out_exited", ProcessScheduled, "out_exited"),
    row(RunningPorts, "in", PortScheduled, "in"),
    row(RunningPorts, "out", PortScheduled, "out"),
    row(RunningPorts, "in_exiting", PortScheduled, "in_exiting"),
    row(RunningPorts, "out_exiting", PortScheduled, "out_exiting"),
    row(RunningPorts, "out_exited", PortScheduled, "out_exited"),
    row(Call, "call", FunctionCall, ""),
    row(Call, "return_from", FunctionReturn, ""),
    row(Call, "return_to", FunctionReturn, ""),
    row(Call, "exception_from", FunctionException, ""),
    row(Send, "send", MessageSend, ""),
    row(Send, "send_to_non_existing_process", MessageSend, ""),
    row(Receive, "receive", MessageReceive, ""),
    row(GarbageCollection, "gc_minor_start", GcMinorStart, ""),
    row(GarbageCollection, "gc_minor_end", GcMinorEnd, ""),
    row(GarbageCollection, "gc_major_start", GcMajorStart, ""),
    row(GarbageCollection, "gc_major_end", GcMajorEnd, ""),
];
