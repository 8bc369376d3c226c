//! What one term field gets under the tracer's options: its payload mode
//! (`full`, `shape`, `size`, `none`) per field kind, and the keys whose
//! values are never read (`redact`).

use super::sink::Sink;
use super::size;
use super::walk;
use rustler::sys::ErlNifTerm;
use rustler::Term;

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
    pub(super) fn list(&self) -> Option<Term<'a>> {
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
            max_term_bytes: crate::options::DEFAULT_MAX_TERM_BYTES,
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

/// Appends the text field `kind` gets for `term` under `options`: at most
/// `max_term_bytes`, a cut text ends in `...` and stays valid UTF-8.
#[inline(always)]
pub fn format_field(term: Term, options: &TermOptions, kind: FieldKind, out: &mut Vec<u8>) {
    let env = term.get_env().as_c_arg();
    let max = options.max_term_bytes;
    let redact = &options.redact;
    match options.payload[kind as usize] {
        Payload::None => out.extend_from_slice(&NONE_TEXT[..NONE_TEXT.len() - 1]),
        Payload::Full => {
            write(env, term.as_c_arg(), max, false, redact, out);
        }
        Payload::Shape => {
            write(env, term.as_c_arg(), max, true, redact, out);
        }
        Payload::Size => size::write_size(env, term.as_c_arg(), max, redact, out),
    }
}

/// Appends `term` as `%T` text or its shape, at most `max` bytes; true if
/// it was cut.
#[inline(always)]
pub(super) fn write(
    env: *mut rustler::sys::ErlNifEnv,
    term: ErlNifTerm,
    max: usize,
    shape: bool,
    redact: &Redact,
    out: &mut Vec<u8>,
) -> bool {
    let mut sink = Sink::new(out, max);
    walk::walk(env, term, &mut sink, shape, redact);
    sink.finish()
}
