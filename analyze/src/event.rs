//! One event as the analyses see it: its kind (one of the
//! `org_erlang_dyntrace` events), timestamp, CPU and fields by name. Field
//! names are resolved once per event class into [`Slot`] positions, so a
//! lookup per event is an array index.

/// The trace provider whose events the analyses read.
pub const PROVIDER: &str = "org_erlang_dyntrace";
/// Payload fields passed per event (the contract's events have at most 11).
pub const MAX_FIELDS: usize = 16;

macro_rules! kinds {
    ($($kind:ident => $name:literal),* $(,)?) => {
        /// The contract's events (README, "Events").
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind { $($kind),* }
        impl Kind {
            /// Every kind, in the contract's order.
            pub const ALL: &'static [Kind] = &[$(Kind::$kind),*];
            /// The event name without the provider.
            pub fn name(self) -> &'static str {
                match self { $(Kind::$kind => $name),* }
            }
        }
    };
}

kinds! {
    ProcessSpawn => "process_spawn",
    ProcessLink => "process_link",
    ProcessExit => "process_exit",
    ProcessRegister => "process_register",
    ProcessScheduled => "process_scheduled",
    PortOpen => "port_open",
    PortExit => "port_exit",
    PortLink => "port_link",
    PortScheduled => "port_scheduled",
    FunctionCall => "function_call",
    FunctionReturn => "function_return",
    FunctionException => "function_exception",
    MessageSend => "message_send",
    MessageReceive => "message_receive",
    GcMinorStart => "gc_minor_start",
    GcMinorEnd => "gc_minor_end",
    GcMajorStart => "gc_major_start",
    GcMajorEnd => "gc_major_end",
    NodeName => "node_name",
    UserTraceS1 => "user_trace_s1",
    UserTraceI4s4 => "user_trace_i4s4",
    UserTraceN => "user_trace_n",
    MemorySample => "memory_sample",
    AllocatorSample => "allocator_sample",
    ProcessMemory => "process_memory",
    CarrierCreate => "carrier_create",
    CarrierDestroy => "carrier_destroy",
}

macro_rules! slots {
    ($($slot:ident => $name:literal),* $(,)?) => {
        /// The field names the analyses read.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Slot { $($slot),* }
        const SLOT_NAMES: &[&str] = &[$($name),*];
    };
}

slots! {
    Pid => "pid",
    Parent => "parent",
    Entry => "entry",
    From => "from",
    To => "to",
    Type => "type",
    Message => "message",
    Reason => "reason",
    Name => "name",
    Depth => "depth",
    Class => "class",
    Need => "need",
    Reclaimed => "reclaimed",
    Heap => "heap",
    OldHeap => "old_heap",
    Node => "node",
    Channel => "channel",
    Peer => "peer",
    Probe => "probe",
    Tag => "tag",
    I1 => "i1",
    I2 => "i2",
    I3 => "i3",
    I4 => "i4",
    S1 => "s1",
}

/// An event class of the trace: its name and where each known field is.
#[derive(Debug, Clone)]
pub struct EventClass {
    /// Full name, `provider:event`.
    pub name: String,
    /// The contract's event, when the class is one of ours.
    pub kind: Option<Kind>,
    /// Payload field names, in order.
    pub field_names: Vec<String>,
    slots: [Option<u8>; SLOT_NAMES.len()],
}

impl EventClass {
    /// Resolves `name` and the positions of the known fields.
    pub fn new(name: &str, field_names: Vec<String>) -> EventClass {
        let kind = name
            .strip_prefix(PROVIDER)
            .and_then(|rest| rest.strip_prefix(':'))
            .and_then(|event| Kind::ALL.iter().copied().find(|k| k.name() == event));
        let mut slots = [None; SLOT_NAMES.len()];
        for (slot, wanted) in slots.iter_mut().zip(SLOT_NAMES) {
            *slot = field_names
                .iter()
                .position(|f| f == wanted)
                .map(|p| p as u8);
        }
        EventClass {
            name: name.to_string(),
            kind,
            field_names,
            slots,
        }
    }

    /// A placeholder for an index the shim has not described.
    pub fn unknown() -> EventClass {
        EventClass::new("", Vec::new())
    }
}

/// One payload field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field<'a> {
    /// A CTF string (bytes as written: UTF-8 by the contract).
    Str(&'a [u8]),
    /// A CTF integer.
    Int(i64),
    /// Any other field type.
    Other,
}

/// One event, borrowed from the reader for the time of a handler call.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// The event's class.
    pub class: &'a EventClass,
    /// Nanoseconds from the clock's origin (the Unix epoch for LTTng).
    pub ts_ns: i64,
    /// The CPU that recorded it (packet context `cpu_id`), -1 if unknown.
    pub cpu: i64,
    /// The trace it comes from (numbered by the reader in order of first
    /// event): one per node and session.
    pub trace: u32,
    /// Payload fields in order.
    pub fields: &'a [Field<'a>],
}

impl<'a> Event<'a> {
    /// The contract's event kind, if it is one of ours.
    pub fn kind(&self) -> Option<Kind> {
        self.class.kind
    }

    /// A field by name (slow path: analyses use [`Event::str`]).
    pub fn field(&self, name: &str) -> Option<Field<'a>> {
        let i = self.class.field_names.iter().position(|f| f == name)?;
        self.fields.get(i).copied()
    }

    fn slot(&self, slot: Slot) -> Option<Field<'a>> {
        let i = self.class.slots[slot as usize]?;
        self.fields.get(i as usize).copied()
    }

    /// A string field; empty when absent or not a string.
    pub fn str(&self, slot: Slot) -> &'a [u8] {
        match self.slot(slot) {
            Some(Field::Str(s)) => s,
            _ => b"",
        }
    }

    /// An integer field; 0 when absent or not an integer.
    pub fn int(&self, slot: Slot) -> i64 {
        match self.slot(slot) {
            Some(Field::Int(v)) => v,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_resolve_kind_and_fields_by_name() {
        let class = EventClass::new(
            "org_erlang_dyntrace:message_send",
            vec!["from".into(), "to".into(), "message".into()],
        );
        assert_eq!(class.kind, Some(Kind::MessageSend));
        let fields = [
            Field::Str(b"<0.1.0>"),
            Field::Str(b"<0.2.0>"),
            Field::Str(b"hi"),
        ];
        let ev = Event {
            class: &class,
            ts_ns: 5,
            cpu: 1,
            trace: 0,
            fields: &fields,
        };
        assert_eq!(ev.str(Slot::To), b"<0.2.0>");
        assert_eq!(ev.str(Slot::Pid), b"");
        assert_eq!(ev.field("message"), Some(Field::Str(b"hi")));
        assert_eq!(EventClass::new("other:message_send", vec![]).kind, None);
    }
}
