//! The `erl_tracer` callbacks: the enabled check, and the emission of one
//! event through its field extraction (`fields`).

use crate::events::{self, Class, Route};
use crate::fields::{EventTerms, FieldTexts, Malformed};
use crate::{is_immediate, term_of_word, term_word};
use crate::{limits, lttng, options, routes, short_path, small_map, stats};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Env, Term};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

rustler::atoms! {
    ok,
    trace,
    discard,
    trace_status,
}

/// The words of `trace_status` and of the answers (`ok` too), set at load
/// (0, which is no term, before): the callbacks answer with plain loads.
static TRACE_STATUS_WORD: AtomicUsize = AtomicUsize::new(0);
static TRACE_WORD: AtomicUsize = AtomicUsize::new(0);
static DISCARD_WORD: AtomicUsize = AtomicUsize::new(0);
static OK_WORD: AtomicUsize = AtomicUsize::new(0);

/// Learns the words `enabled_answer` compares with and answers.
pub fn init(env: Env) {
    let word = |atom: Atom| term_word(atom.to_term(env).as_c_arg());
    TRACE_STATUS_WORD.store(word(trace_status()), Ordering::Relaxed);
    TRACE_WORD.store(word(trace()), Ordering::Relaxed);
    DISCARD_WORD.store(word(discard()), Ordering::Relaxed);
    OK_WORD.store(word(ok()), Ordering::Relaxed);
}

/// The answer to `enabled*(Tag, State, _)` told from term words alone,
/// with no call that could panic: `trace` for `trace_status` with a state
/// that holds no event budget (an immediate, as `[]` is, or a small map
/// without `max_events`), and for a class's own callback whether the
/// tag's event is enabled (a budget changes only `trace_status`'s answer,
/// `limits::gate`). `None` for the rest, which `enabled` and
/// `limits::gate` answer: the generic callback's tags (the tracee tells
/// their class) and states that hold a budget.
///
/// # Safety
/// `state` must be a live term of the NIF call being served.
#[inline(always)]
pub unsafe fn enabled_answer(
    class: Option<Class>,
    tag: ErlNifTerm,
    state: ErlNifTerm,
) -> Option<ErlNifTerm> {
    let tag = term_word(tag);
    // A short path's own tag first (`send`, `call`, ...): the question of
    // every event of the busiest kinds. (Its word is 0, which no tag is,
    // until the load has set the answers' words too.)
    if let Some(enabled) = short_path::tag_enabled(class, tag) {
        return Some(answer(enabled));
    }
    let status = TRACE_STATUS_WORD.load(Ordering::Relaxed);
    if status == 0 {
        return None;
    }
    if tag != status {
        return Some(answer(recorded(routes::lookup_word(class?, tag))));
    }
    if !is_immediate(state) {
        // SAFETY: `state` is live (the caller's promise).
        let map = unsafe { small_map::view_raw(state) }?;
        if options::names_budget(&map) {
            return None;
        }
    }
    Some(answer(true))
}

/// `trace` or `discard`, as a term.
#[inline(always)]
fn answer(enabled: bool) -> ErlNifTerm {
    let word = if enabled { &TRACE_WORD } else { &DISCARD_WORD };
    term_of_word(word.load(Ordering::Relaxed))
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
    if recorded(find_route(class, tag, tracee)) {
        trace()
    } else {
        discard()
    }
}

/// Whether a tag's route leads to an event a started session records.
#[inline]
fn recorded(route: Option<&Route>) -> bool {
    route.is_some_and(|route| lttng::is_enabled(route.event))
}

/// `trace*(Tag, State, Tracee, TraceTerm, Opts)`: emits the event and
/// answers `ok`. Arguments the runtime never passes answer `None`, which
/// the callback raises as `badarg` (counted), without emitting.
pub fn emit(env: Env, class: Option<Class>, args: &[ErlNifTerm; 5]) -> Option<ErlNifTerm> {
    // SAFETY: the words are the NIF call's own terms, live for it.
    let [tag, state, tracee, term, opts] = args.map(|word| unsafe { Term::new(env, word) });
    let ok = Some(ok_answer());
    let Some(route) = find_route(class, tag, tracee) else {
        return ok;
    };
    // Sessions may have stopped since the enabled check: skip the work.
    if !lttng::is_enabled(route.event) {
        return ok;
    }
    let mut view = options::StateView::default();
    if !taken(state, &mut view) {
        return ok;
    }
    let terms = EventTerms {
        env,
        route,
        options: &view.options,
        tracee,
        term,
        opts,
    };
    let emitted = with_field_texts(|texts| {
        texts.clear();
        events::write_event(route.event, &terms, texts)
    })
    .unwrap_or(Err(Malformed));
    match emitted {
        Ok(()) => ok,
        Err(Malformed) => {
            stats::count_bad_arguments();
            None
        }
    }
}

/// Reads the tracer state of an event about to be written into `view`:
/// whether its budget lets it be written (one unit taken).
#[inline(always)]
pub fn taken<'a>(state: Term<'a>, view: &mut options::StateView<'a>) -> bool {
    options::read_state(state, view);
    limits::take(view.budget)
}

/// `ok`, the answer of every `trace*` call.
#[inline]
pub fn ok_answer() -> ErlNifTerm {
    term_of_word(OK_WORD.load(Ordering::Relaxed))
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

/// Runs `write` with this thread's field buffers; `None` if they are in
/// use already (an event cannot start inside another). `write` runs in
/// the caller's frame, not in a closure `LocalKey::with` would call: the
/// event's code stays in one function.
#[inline(always)]
pub fn with_field_texts<R>(write: impl FnOnce(&mut FieldTexts) -> R) -> Option<R> {
    let texts: *const RefCell<FieldTexts> = FIELD_TEXTS.with(|texts| texts as *const _);
    // SAFETY: a thread-local lives until its thread exits, and this NIF
    // call runs on that thread.
    let texts = unsafe { &*texts };
    let mut texts = texts.try_borrow_mut().ok()?;
    Some(write(&mut texts))
}
