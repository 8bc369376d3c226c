//! The atoms the callbacks answer with (`ok`, `trace`, `discard`) and the
//! tag they are asked most (`trace_status`), as words learned at load:
//! the callbacks answer with plain loads, and no call that could panic.

use crate::vm::{term_of_word, term_word};
use rustler::sys::ErlNifTerm;
use rustler::{Atom, Env};
use std::sync::atomic::{AtomicUsize, Ordering};

rustler::atoms! {
    ok,
    trace,
    discard,
    trace_status,
}

/// The words, set at load; 0, which is no term, before.
static TRACE_STATUS_WORD: AtomicUsize = AtomicUsize::new(0);
static TRACE_WORD: AtomicUsize = AtomicUsize::new(0);
static DISCARD_WORD: AtomicUsize = AtomicUsize::new(0);
static OK_WORD: AtomicUsize = AtomicUsize::new(0);

/// Learns the words. Called from the NIF's load.
pub fn init(env: Env) {
    let word = |atom: Atom| term_word(atom.to_term(env).as_c_arg());
    TRACE_STATUS_WORD.store(word(trace_status()), Ordering::Relaxed);
    TRACE_WORD.store(word(trace()), Ordering::Relaxed);
    DISCARD_WORD.store(word(discard()), Ordering::Relaxed);
    OK_WORD.store(word(ok()), Ordering::Relaxed);
}

/// `trace` or `discard`, as a term.
#[inline(always)]
pub fn trace_or_discard(enabled: bool) -> ErlNifTerm {
    let word = if enabled { &TRACE_WORD } else { &DISCARD_WORD };
    term_of_word(word.load(Ordering::Relaxed))
}

/// `ok`, the answer of every `trace*` call.
#[inline]
pub fn ok_answer() -> ErlNifTerm {
    term_of_word(OK_WORD.load(Ordering::Relaxed))
}

/// The word of `trace_status`; 0 before the load has set the words.
#[inline(always)]
pub fn trace_status_word() -> usize {
    TRACE_STATUS_WORD.load(Ordering::Relaxed)
}
