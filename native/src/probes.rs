//! The user probes (`dyntrace:p/0..8`, `pn/1..9`, `user_trace_s1/1`,
//! `user_trace_i4s4/9`, `user_trace_n/10`): the enabled check a probe
//! makes first, and the writers of their events.

use crate::events::EventId;
use crate::format::{self, DEFAULT_MAX_TERM_BYTES};
use crate::lttng::{self, emit, Text};
use rustler::{NifResult, Term};

/// The byte limit of each text of a user probe: the tracer's default
/// `max_term_bytes`.
const PROBE_TEXT_BYTES: usize = DEFAULT_MAX_TERM_BYTES;

/// The text of a user probe's string: an iolist or `undefined` (`""`).
fn probe_text(term: Term, out: &mut Vec<u8>) -> NifResult<()> {
    if term.is_atom() {
        return if term.atom_to_string()? == "undefined" {
            Ok(())
        } else {
            Err(rustler::Error::BadArg)
        };
    }
    if format::format_iolist_bounded(term, PROBE_TEXT_BYTES, out) {
        Ok(())
    } else {
        Err(rustler::Error::BadArg)
    }
}

/// Whether the user probe event of `probe` is enabled: `user_trace_i4s4`
/// for `undefined`, `user_trace_n` for a number. The first thing a probe
/// does, so that one not enabled costs this call and a load.
#[rustler::nif]
fn user_probe_enabled(probe: Term) -> bool {
    lttng::is_enabled(if probe.is_atom() {
        EventId::UserTraceI4s4
    } else {
        EventId::UserTraceN
    })
}

/// Writes `user_trace_s1` for `pid` (the caller); false when the event is
/// not enabled. `dyntrace:user_trace_s1/1` checks the arguments' shape.
#[rustler::nif]
fn emit_user_trace_s1(pid: Term, message: Term) -> NifResult<bool> {
    if !lttng::is_enabled(EventId::UserTraceS1) {
        return Ok(false);
    }
    let (mut pid_text, mut message_text) = (Vec::new(), Vec::new());
    format::format_identifier(pid, &mut pid_text);
    probe_text(message, &mut message_text)?;
    emit::user_trace_s1(
        Text::terminate(&mut pid_text),
        Text::terminate(&mut message_text),
    );
    Ok(true)
}

/// Writes `user_trace_i4s4` (`probe` is `undefined`) or `user_trace_n`
/// (`probe` is 0..1023): the caller's pid, its tag (a binary or
/// `undefined`), four integers and four strings (iolists or `undefined`);
/// false when the event is not enabled. `dyntrace:user_probe/3` fills the
/// missing ones in.
#[rustler::nif]
fn emit_user_trace<'a>(
    probe: Term<'a>,
    pid: Term<'a>,
    tag: Term<'a>,
    ints: (i64, i64, i64, i64),
    strings: (Term<'a>, Term<'a>, Term<'a>, Term<'a>),
) -> NifResult<bool> {
    let numbered = if probe.is_atom() {
        None
    } else {
        Some(
            probe
                .decode::<u32>()
                .ok()
                .filter(|n| *n <= 1023)
                .ok_or(rustler::Error::BadArg)?,
        )
    };
    let event = numbered.map_or(EventId::UserTraceI4s4, |_| EventId::UserTraceN);
    if !lttng::is_enabled(event) {
        return Ok(false);
    }
    let mut texts: [Vec<u8>; 6] = Default::default();
    format::format_identifier(pid, &mut texts[0]);
    let (s1, s2, s3, s4) = strings;
    for (term, text) in [tag, s1, s2, s3, s4].into_iter().zip(&mut texts[1..]) {
        probe_text(term, text)?;
    }
    let [pid, tag, s1, s2, s3, s4] = texts.each_mut().map(Text::terminate);
    let (i1, i2, i3, i4) = ints;
    match numbered {
        None => emit::user_trace_i4s4(pid, tag, i1, i2, i3, i4, s1, s2, s3, s4),
        Some(n) => emit::user_trace_n(n, pid, tag, i1, i2, i3, i4, s1, s2, s3, s4),
    }
    Ok(true)
}
