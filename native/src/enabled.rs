//! The answer to `enabled*(Tag, State, Tracee)`: `trace` when `Tag`'s
//! event is enabled in a started LTTng session, `discard` otherwise.
//! `trace_status` keeps the tracer attached whatever LTTng's state, so
//! that `lttng enable-event` and `lttng start` after `erlang:trace/3` take
//! effect at once; once a state's event budget is spent it answers
//! `remove` (`limits::gate`).

use crate::answers::{self, trace_or_discard};
use crate::events::Class;
use crate::vm::{is_immediate, map, term_word};
use crate::{options, routes, short_path};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Term};

/// The answer told from term words alone, with no call that could panic:
/// `trace` for `trace_status` with a state that holds no event budget (an
/// immediate, as `[]` is, or a small map without `max_events`), and for a
/// class's own callback whether the tag's event is enabled (a budget
/// changes only `trace_status`'s answer, `limits::gate`). `None` for the
/// rest, which `enabled` and `limits::gate` answer: the generic
/// callback's tags (the tracee tells their class) and states that hold a
/// budget.
///
/// # Safety
/// `state` must be a live term of the NIF call being served.
#[inline(always)]
pub unsafe fn from_words(
    class: Option<Class>,
    tag: ErlNifTerm,
    state: ErlNifTerm,
) -> Option<ErlNifTerm> {
    let tag = term_word(tag);
    // A short path's own tag first (`send`, `call`, ...): the question of
    // every event of the busiest kinds. (Its word is 0, which no tag is,
    // until the load has set the answers' words too.)
    if let Some(enabled) = short_path::tag_enabled(class, tag) {
        return Some(trace_or_discard(enabled));
    }
    let status = answers::trace_status_word();
    if status == 0 {
        return None;
    }
    if tag != status {
        return Some(trace_or_discard(routes::recorded(routes::lookup_word(
            class?, tag,
        ))));
    }
    if !is_immediate(state) {
        // SAFETY: `state` is live (the caller's promise).
        let map = unsafe { map::view_raw(state) }?;
        if options::names_budget(&map) {
            return None;
        }
    }
    Some(trace_or_discard(true))
}

/// The answer told from terms, for what `from_words` leaves
/// (before `limits::gate` applies the budget). The runtime asks
/// `enabled(trace_status, ...)` before most events, so that question is
/// answered first, before any route lookup.
#[inline]
pub fn from_terms(class: Option<Class>, tag: Term, tracee: Term) -> Atom {
    if answers::trace_status() == tag {
        return answers::trace();
    }
    if routes::recorded(routes::find(class, tag, tracee)) {
        answers::trace()
    } else {
        answers::discard()
    }
}
