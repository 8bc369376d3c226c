//! The text one term field gets under the tracer's options: the entry
//! point for every term field of an event.

use super::payload::{FieldKind, Payload, TermOptions, NONE_TEXT};
use super::size;
use super::walk::{self, Buffers};
use rustler::Term;

/// Appends the text field `kind` gets for `term` under `options`: at most
/// `max_term_bytes`, a cut text ends in `...` and stays valid UTF-8.
#[inline(always)]
pub fn write_field(term: Term, options: &TermOptions, kind: FieldKind, out: &mut Vec<u8>) {
    let env = term.get_env().as_c_arg();
    let max = options.max_term_bytes;
    let redact = &options.redact;
    match options.payload[kind as usize] {
        Payload::None => out.extend_from_slice(&NONE_TEXT[..NONE_TEXT.len() - 1]),
        Payload::Full => {
            walk::write(env, term.as_c_arg(), max, false, redact, out);
        }
        Payload::Shape => {
            walk::write(env, term.as_c_arg(), max, true, redact, out);
        }
        Payload::Size => size::write_size(env, term.as_c_arg(), max, redact, out),
    }
}

/// `write_field` with the caller's walk buffers: the callbacks keep them
/// with their field buffers.
#[inline(always)]
pub fn write_field_with(
    term: Term,
    options: &TermOptions,
    kind: FieldKind,
    out: &mut Vec<u8>,
    buffers: &mut Buffers,
) {
    let env = term.get_env().as_c_arg();
    let (max, redact) = (options.max_term_bytes, &options.redact);
    match options.payload[kind as usize] {
        Payload::Full => {
            walk::write_with(env, term.as_c_arg(), max, false, redact, out, buffers);
        }
        Payload::Shape => {
            walk::write_with(env, term.as_c_arg(), max, true, redact, out, buffers);
        }
        _ => write_field(term, options, kind, out),
    }
}
