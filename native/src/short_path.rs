//! The busiest events on a short path of their own: `message_send` and
//! `message_receive` between local processes, `function_call` and
//! `function_return`.
//!
//! What one of these costs beyond the tracepoint is mostly code, not
//! work: a message round trip's own code (the VM's send, receive and
//! scheduling, LTTng's) is larger than the instruction cache, so every
//! line of the tracer's code an event runs is fetched again at the next
//! event. The general way (`general_path::emit`: the route lookup, the
//! event's field extraction, three field buffers) runs more instructions,
//! over more distinct code lines, than this path (`bench/profile.sh`
//! counts both). The common case runs in one short function:
//! - the tag is one word compare (`send`, `receive`, `call`,
//!   `return_from`);
//! - the pids' texts, and a call's `Module:Function/Arity`, are lent to
//!   the tracepoint from this thread's caches (`text_cache`), their NUL
//!   included, not copied;
//! - under `payload => none` a message's text is a constant; in the other
//!   modes it is written into one buffer, as the general way does.
//!
//! Everything else goes the general way, which writes the same texts (and
//! keeps what this path lends): a port or a remote pid, a send to a name,
//! a pid or a location not cached yet, the other tags
//! (`send_to_non_existing_process`, `return_to`, `exception_from`), and
//! `Opts` that are not a small map. The tracer state is read only once
//! this path has taken the event, so a bad state is counted once.

use crate::answers::ok_answer;
use crate::events::{Class, EventId};
use crate::fields::{location, with_field_texts};
use crate::format::{write_field_with, FieldKind, Payload, TermOptions, WalkBuffers, NONE_TEXT};
use crate::lttng::{self, emit, Text};
use crate::options::{state_admits, StateView};
use crate::vm::{map, term_word};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Env, Term};
use std::sync::atomic::{AtomicUsize, Ordering};

rustler::atoms! {
    send,
    receive,
    call,
    return_from,
    extra,
}

/// The words of the tags this path takes and of the `extra` key, learned
/// at load; 0, which no term is, before.
static SEND_WORD: AtomicUsize = AtomicUsize::new(0);
static RECEIVE_WORD: AtomicUsize = AtomicUsize::new(0);
static CALL_WORD: AtomicUsize = AtomicUsize::new(0);
static RETURN_FROM_WORD: AtomicUsize = AtomicUsize::new(0);
static EXTRA_WORD: AtomicUsize = AtomicUsize::new(0);

/// Learns the words this path compares with. Called from the NIF's load.
pub fn init(env: Env) {
    let word = |atom: Atom| term_word(atom.to_term(env).as_c_arg());
    SEND_WORD.store(word(send()), Ordering::Relaxed);
    RECEIVE_WORD.store(word(receive()), Ordering::Relaxed);
    CALL_WORD.store(word(call()), Ordering::Relaxed);
    RETURN_FROM_WORD.store(word(return_from()), Ordering::Relaxed);
    EXTRA_WORD.store(word(extra()), Ordering::Relaxed);
}

/// The event of a tag of `class` that this path takes; `None` for any
/// other tag or class.
#[inline(always)]
fn event_of(class: Option<Class>, tag: usize) -> Option<EventId> {
    let is = |word: &AtomicUsize| tag == word.load(Ordering::Relaxed);
    match class? {
        Class::Send if is(&SEND_WORD) => Some(EventId::MessageSend),
        Class::Receive if is(&RECEIVE_WORD) => Some(EventId::MessageReceive),
        Class::Call if is(&CALL_WORD) => Some(EventId::FunctionCall),
        Class::Call if is(&RETURN_FROM_WORD) => Some(EventId::FunctionReturn),
        _ => None,
    }
}

/// Whether a session records the event of a tag this path takes; `None`
/// for any other tag or class.
#[inline(always)]
pub fn tag_enabled(class: Option<Class>, tag: usize) -> Option<bool> {
    event_of(class, tag).map(lttng::is_enabled)
}

/// The text of a message under `payload => none`.
const NONE: Text<'static> = Text::ended(NONE_TEXT);

/// A `trace*/5` call (`class`) of the common case: emits its event if a
/// session records it and answers `ok`. `None` leaves the call to
/// `general_path::emit`; so does every class without a short path, which the
/// compiler drops, `class` being a constant of each callback.
#[inline(always)]
pub fn emit(env: Env, class: Option<Class>, args: &[ErlNifTerm; 5]) -> Option<ErlNifTerm> {
    let event = event_of(class, term_word(args[0]))?;
    if !lttng::is_enabled(event) {
        return Some(ok_answer());
    }
    match event {
        EventId::MessageSend | EventId::MessageReceive => message(env, event, args),
        EventId::FunctionCall | EventId::FunctionReturn => function(env, event, args),
        _ => None,
    }
}

/// `message_send` (from, to, message) or `message_receive` (to, message).
#[inline(always)]
fn message(env: Env, event: EventId, args: &[ErlNifTerm; 5]) -> Option<ErlNifTerm> {
    let [_, state, tracee, message, opts] = *args;
    let receiver = match event {
        EventId::MessageSend => Some(receiver(opts)?),
        _ => None,
    };
    // Inlined, so that the event's code is one function.
    with_field_texts(
        #[inline(always)]
        |texts| {
            let lending = texts.lending();
            let (idents, buffer, walk) = (lending.idents, lending.message, lending.walk);
            let from = idents.lend(term_word(tracee))?;
            let to = match receiver {
                Some(word) => Some(idents.lend(word)?),
                None => None,
            };
            // SAFETY: the words are the call's own terms, live for it.
            let [state, message] = [state, message].map(|word| unsafe { Term::new(env, word) });
            let mut view = StateView::default();
            if state_admits(state, &mut view) {
                let text = match view.options.payload[FieldKind::Message as usize] {
                    Payload::None => NONE,
                    _ => written(message, &view.options, buffer, walk),
                };
                match to {
                    Some(to) => emit::message_send(from, to, text),
                    None => emit::message_receive(from, text),
                }
            }
            Some(ok_answer())
        },
    )
    .flatten()
}

/// `function_call` or `function_return`: pid, entry and depth 0, as the
/// general way writes them.
#[inline(always)]
fn function(env: Env, event: EventId, args: &[ErlNifTerm; 5]) -> Option<ErlNifTerm> {
    let [_, state, tracee, entry, _] = *args;
    // SAFETY: the words are the call's own terms, live for it.
    let [state, entry] = [state, entry].map(|word| unsafe { Term::new(env, word) });
    let key = location(env, entry)?.key();
    with_field_texts(
        #[inline(always)]
        |texts| {
            let lending = texts.lending();
            let pid = lending.idents.lend(term_word(tracee))?;
            let entry = lending.locations.lend(key)?;
            if state_admits(state, &mut StateView::default()) {
                match event {
                    EventId::FunctionCall => emit::function_call(pid, entry, 0),
                    _ => emit::function_return(pid, entry, 0),
                }
            }
            Some(ok_answer())
        },
    )
    .flatten()
}

/// The message's text in a mode other than `none`, written into
/// `buffer`. Out of line: the path of `none` stays short.
#[inline(never)]
fn written<'b>(
    message: Term,
    options: &TermOptions,
    buffer: &'b mut Vec<u8>,
    walk: &mut WalkBuffers,
) -> Text<'b> {
    buffer.clear();
    write_field_with(message, options, FieldKind::Message, buffer, walk);
    Text::terminate(buffer)
}

/// The word of the receiver in a send's `Opts` (`#{extra => To}`), if
/// they are a small map that holds one.
#[inline(always)]
fn receiver(opts: ErlNifTerm) -> Option<usize> {
    // SAFETY: `opts` is a term of the call being served (`emit`'s caller).
    let opts = unsafe { map::view_raw(opts) }?;
    opts.get_word(EXTRA_WORD.load(Ordering::Relaxed))
}
