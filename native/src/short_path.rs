//! `message_send` and `message_receive` on a short path of their own.
//!
//! The message events are most of what a busy node traces, and what one
//! costs beyond the tracepoint is mostly code, not work: a message round
//! trip's own code (the VM's send, receive and scheduling, LTTng's) is
//! larger than the instruction cache, so every line of the tracer's code
//! an event runs is fetched again at the next event. By the general way
//! (`tracer::emit`: the route lookup, the event's field extraction, three
//! field buffers) a `message_send` under `payload => none` ran 469
//! instructions over 48 distinct 64-byte code lines of the NIF (the
//! callbacks included); by this path it runs 288 over 24 (`make bench`'s
//! profile measures it). This path runs the common case in one short
//! function:
//! - the tag is one word compare (`send`, `receive`);
//! - the pids' texts are lent to the tracepoint from this thread's cache
//!   (`IdentCache::lend`), their NUL included, not copied;
//! - under `payload => none` the message's text is a constant; in the
//!   other modes it is written into one buffer, as the general way does.
//!
//! Everything else goes the general way, which writes the same texts: a
//! port or a remote pid, a send to a name, a pid whose text is not cached
//! yet (the general way caches it), `send_to_non_existing_process`, and
//! `Opts` that are not a small map. The tracer state is read only once
//! this path has taken the event, so a bad state is counted once.

use crate::events::{emit, Class, EventId};
use crate::format::{format_field, FieldKind, Payload, TermOptions, NONE_TEXT};
use crate::lttng::{self, Text};
use crate::{limits, options, small_map, term_word, tracer};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Env, Term};
use std::sync::atomic::{AtomicUsize, Ordering};

rustler::atoms! {
    send,
    receive,
    extra,
}

/// The words of the tags this path takes and of the `extra` key, learned
/// at load; 0, which no term is, before.
static SEND_WORD: AtomicUsize = AtomicUsize::new(0);
static RECEIVE_WORD: AtomicUsize = AtomicUsize::new(0);
static EXTRA_WORD: AtomicUsize = AtomicUsize::new(0);

/// Learns the words this path compares with. Called from the NIF's load.
pub fn init(env: Env) {
    let word = |atom: Atom| term_word(atom.to_term(env).as_c_arg());
    SEND_WORD.store(word(send()), Ordering::Relaxed);
    RECEIVE_WORD.store(word(receive()), Ordering::Relaxed);
    EXTRA_WORD.store(word(extra()), Ordering::Relaxed);
}

/// The event of a message tag of `class` (`send`, `receive`) with
/// whether a session records it; `None` for any other tag or class.
#[inline(always)]
pub fn tag_enabled(class: Option<Class>, tag: usize) -> Option<bool> {
    let (tag_word, event) = message_event(class)?;
    (tag == tag_word.load(Ordering::Relaxed)).then(|| lttng::is_enabled(event))
}

/// The tag word and the event of a message class.
#[inline(always)]
fn message_event(class: Option<Class>) -> Option<(&'static AtomicUsize, EventId)> {
    match class {
        Some(Class::Send) => Some((&SEND_WORD, EventId::MessageSend)),
        Some(Class::Receive) => Some((&RECEIVE_WORD, EventId::MessageReceive)),
        _ => None,
    }
}

/// A `trace_send/5` or `trace_receive/5` call (`class`) of the common
/// case: emits its event if a session records it and answers `ok`.
/// `None` leaves the call to `tracer::emit`; so does every other class,
/// which the compiler drops, `class` being a constant of each callback.
#[inline(always)]
pub fn emit(env: Env, class: Option<Class>, args: &[ErlNifTerm; 5]) -> Option<ErlNifTerm> {
    let [tag, state, tracee, message, opts] = *args;
    let (_, event) = message_event(class)?;
    if !tag_enabled(class, term_word(tag))? {
        return Some(tracer::ok_answer());
    }
    let receiver = match event {
        EventId::MessageSend => Some(receiver(opts)?),
        _ => None,
    };
    // Inlined, so that the event's code is one function.
    tracer::with_field_texts(
        #[inline(always)]
        |texts| {
            let (idents, buffer) = texts.lend_and_message();
            let from = idents.lend(term_word(tracee))?;
            let to = match receiver {
                Some(word) => Some(idents.lend(word)?),
                None => None,
            };
            // SAFETY: the words are the call's own terms, live for it.
            let [state, message] = [state, message].map(|word| unsafe { Term::new(env, word) });
            let mut view = options::StateView::default();
            options::read_state(state, &mut view);
            if limits::take(view.budget) {
                let text = match view.options.payload[FieldKind::Message as usize] {
                    Payload::None => Text::ended(NONE_TEXT),
                    _ => written(message, &view.options, buffer),
                };
                match to {
                    Some(to) => emit::message_send(from, to, text),
                    None => emit::message_receive(from, text),
                }
            }
            Some(tracer::ok_answer())
        },
    )
    .flatten()
}

/// The message's text in a mode other than `none`, written into
/// `buffer`. Out of line: the path of `none` stays short.
#[inline(never)]
fn written<'b>(message: Term, options: &TermOptions, buffer: &'b mut Vec<u8>) -> Text<'b> {
    format_field(message, options, FieldKind::Message, buffer);
    Text::terminate(buffer)
}

/// The word of the receiver in a send's `Opts` (`#{extra => To}`), if
/// they are a small map that holds one.
#[inline(always)]
fn receiver(opts: ErlNifTerm) -> Option<usize> {
    // SAFETY: `opts` is a term of the call being served (`emit`'s caller).
    let opts = unsafe { small_map::view_raw(opts) }?;
    opts.get_word(EXTRA_WORD.load(Ordering::Relaxed))
}
