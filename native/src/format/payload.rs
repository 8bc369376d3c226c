//! What one term field gets under the tracer's options: its byte limit,
//! its payload mode (`full`, `shape`, `size`, `none`) per field kind, and
//! the keys whose values are never read (`redact`).

use rustler::Term;

/// The byte limit of a term's text (`max_term_bytes`): its default and
/// the range a tracer state may set.
pub const DEFAULT_MAX_TERM_BYTES: usize = 1024;
pub const MIN_MAX_TERM_BYTES: usize = 64;
pub const MAX_MAX_TERM_BYTES: usize = 65536;

/// How much of a term reaches the trace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Payload {
    /// The `%T` text, cut at the byte limit.
    Full,
    /// The outline: containers, atoms and identifiers; other leaves as
    /// their type and size.
    Shape,
    /// The length of the `full` text, or `>N` past the byte limit.
    Size,
    /// `-`: no part of the term. Not an empty text: babeltrace2 up to
    /// 2.0.4 shows an empty string field with the text of an earlier event.
    None,
}

/// The text of every term under `none`, and its NUL.
pub const NONE_TEXT: &[u8] = b"-\0";

/// The term fields of the events, each with its own payload mode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FieldKind {
    /// `message` of message_send and message_receive.
    Message = 0,
    /// `reason` of process_exit and port_exit.
    Reason,
    /// `name` of process_register, and message_send's `to` when it is a
    /// name.
    Name,
    /// `driver` of port_open.
    Driver,
    /// `entry` of port_scheduled (the port callback).
    Callback,
}

impl FieldKind {
    pub const COUNT: usize = 5;
    pub const ALL: [FieldKind; FieldKind::COUNT] = [
        FieldKind::Message,
        FieldKind::Reason,
        FieldKind::Name,
        FieldKind::Driver,
        FieldKind::Callback,
    ];
}

/// The keys whose values are written as `<redacted>`: the list from the
/// tracer state, kept as it is (reading the state stays cheap) and read by
/// a walk that needs it.
#[derive(Clone, Copy, Default)]
pub struct Redact<'a> {
    /// A non-empty proper list of at most `MAX_KEYS` terms.
    list: Option<Term<'a>>,
}

impl<'a> Redact<'a> {
    pub const MAX_KEYS: usize = 32;

    /// The keys of `list`, if it is a proper list of at most `MAX_KEYS`.
    pub fn from_list(list: Term<'a>) -> Option<Self> {
        let len = list.list_length().ok()?;
        (len <= Self::MAX_KEYS).then_some(Redact {
            list: (len > 0).then_some(list),
        })
    }

    /// The list of keys, if any.
    pub fn list(&self) -> Option<Term<'a>> {
        self.list
    }
}

/// The options for the term fields of one event.
#[derive(Clone, Copy)]
pub struct TermOptions<'a> {
    pub max_term_bytes: usize,
    pub payload: [Payload; FieldKind::COUNT],
    pub redact: Redact<'a>,
}

impl Default for TermOptions<'_> {
    fn default() -> Self {
        TermOptions {
            max_term_bytes: DEFAULT_MAX_TERM_BYTES,
            payload: [Payload::Full; FieldKind::COUNT],
            redact: Redact::default(),
        }
    }
}

impl TermOptions<'_> {
    /// Every field `none`: what a state that fails to say what to hide gets.
    pub fn hiding_all() -> Self {
        TermOptions {
            payload: [Payload::None; FieldKind::COUNT],
            ..TermOptions::default()
        }
    }
}
