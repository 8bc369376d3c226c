//! The `erl_tracer` callbacks: the enabled check, and the emission of one
//! event through its field extraction (`fields`).

use crate::events::{self, Class, Route};
use crate::fields::{EventTerms, FieldTexts, Malformed};
use crate::{is_immediate, term_of_word, term_word};
use crate::{limits, lttng, options, routes, stats};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Env, Error, NifResult, Term};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

rustler::atoms! {
    ok,
    trace,
    discard,
    trace_status,
}

/// The words of `trace_status` and `trace`, set at load (0, which is no
/// term, before): the runtime asks `enabled(trace_status, ...)` on every
/// traced send and call and every schedule-in, and this answers it with
/// plain loads.
static TRACE_STATUS_WORD: AtomicUsize = AtomicUsize::new(0);
static TRACE_WORD: AtomicUsize = AtomicUsize::new(0);

/// Learns the words `trace_status_answer` compares with.
pub fn init(env: Env) {
    let word = |atom: Atom| term_word(atom.to_term(env).as_c_arg());
    TRACE_STATUS_WORD.store(word(trace_status()), Ordering::Relaxed);
    TRACE_WORD.store(word(trace()), Ordering::Relaxed);
}

/// `trace` for `enabled(trace_status, State, _)` with a state that holds
/// no event budget (an immediate, as `[]` is); `None` for anything else,
/// which `enabled` and `limits::gate` answer.
#[inline(always)]
pub fn trace_status_answer(tag: ErlNifTerm, state: ErlNifTerm) -> Option<ErlNifTerm> {
    let status = TRACE_STATUS_WORD.load(Ordering::Relaxed);
    if term_word(tag) != status || status == 0 || !is_immediate(state) {
        return None;
    }
    Some(term_of_word(TRACE_WORD.load(Ordering::Relaxed)))
}

/// `enabled*(Tag, State, Tracee)`: `trace` when `Tag`'s event is enabled in
/// a started LTTng session, `discard` otherwise. `trace_status` keeps the
/// tracer attached whatever LTTng's state, so that `lttng enable-event`
/// and `lttng start` after `erlang:trace/3` take effect at once.
///
/// The runtime asks `enabled(trace_status, ...)` before most events, so
/// that question is answered first, before any route lookup.
#[inline]
pub fn enabled(class: Option<Class>, tag: Term, tracee: Term) -> Atom {
    if trace_status() == tag {
        return trace();
    }
    match find_route(class, tag, tracee) {
        Some(route) if lttng::is_enabled(route.event) => trace(),
        _ => discard(),
    }
}

/// `trace*(Tag, State, Tracee, TraceTerm, Opts)`: emits the event and
/// returns `ok`. Arguments the runtime never passes give `badarg` (and are
/// counted) without emitting.
pub fn emit<'a>(
    env: Env<'a>,
    class: Option<Class>,
    tag: Term<'a>,
    state: Term<'a>,
    tracee: Term<'a>,
    term: Term<'a>,
    opts: Term<'a>,
) -> NifResult<Atom> {
    let Some(route) = find_route(class, tag, tracee) else {
        return Ok(ok());
    };
    // Sessions may have stopped since the enabled check: skip the work.
    if !lttng::is_enabled(route.event) {
        return Ok(ok());
    }
    let state = options::read_state(state);
    if !limits::take(state.budget) {
        return Ok(ok());
    }
    let terms = EventTerms {
        env,
        route,
        options: state.options,
        tracee,
        term,
        opts,
    };
    let emitted = FIELD_TEXTS.with(|texts| match texts.try_borrow_mut() {
        Ok(mut texts) => {
            texts.clear();
            events::write_event(route.event, &terms, &mut texts)
        }
        Err(_) => Err(Malformed),
    });
    match emitted {
        Ok(()) => Ok(ok()),
        Err(Malformed) => {
            stats::count_bad_arguments();
            Err(Error::BadArg)
        }
    }
}

#[inline]
fn find_route(class: Option<Class>, tag: Term, tracee: Term) -> Option<&'static Route> {
    match class {
        Some(class) => routes::lookup(class, tag),
        None => routes::lookup_any(tag, tracee),
    }
}

thread_local! {
    /// Per-thread field buffers, reused by every event on that scheduler.
    static FIELD_TEXTS: RefCell<FieldTexts> = RefCell::new(FieldTexts::default());
}
