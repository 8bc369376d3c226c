//! A term's machine word and its tags: what the VM compares for
//! immediates, and the address of a boxed term's object. The tags used
//! here are the same in every ERTS release; `[]`'s word differs between
//! releases and is learned at load.

use rustler::sys::ErlNifTerm;
use rustler::{Env, Term};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The machine word of a term: what the VM compares for immediates.
#[inline]
pub fn term_word(term: ErlNifTerm) -> usize {
    // SAFETY: ErlNifTerm is a repr(transparent) wrapper of the term word.
    unsafe { std::mem::transmute::<ErlNifTerm, usize>(term) }
}

/// The term a word is: the inverse of `term_word`, for words taken from
/// terms.
#[inline]
pub fn term_of_word(word: usize) -> ErlNifTerm {
    // SAFETY: ErlNifTerm is a repr(transparent) wrapper of the term word.
    unsafe { std::mem::transmute::<usize, ErlNifTerm>(word) }
}

/// Whether a term is a local pid, by its tag (`_TAG_IMMED1_PID`): no VM
/// call.
#[inline]
pub fn is_local_pid(term: ErlNifTerm) -> bool {
    term_word(term) & 0xF == 0x3
}

/// Whether a term is a local port, by its tag (`_TAG_IMMED1_PORT`): no
/// VM call. Its text, like a local pid's, depends on its word alone.
#[inline]
pub fn is_local_port(term: ErlNifTerm) -> bool {
    term_word(term) & 0xF == 0x7
}

/// Whether a term is an atom, by its tag (`_TAG_IMMED2_ATOM`): no VM
/// call.
#[inline]
pub fn is_atom_word(term: ErlNifTerm) -> bool {
    term_word(term) & 0x3F == 0x0B
}

/// The value of a small integer, by its tag (`_TAG_IMMED1_SMALL`);
/// `None` for anything else, bignums too.
#[inline]
pub fn small_int(term: ErlNifTerm) -> Option<i64> {
    let word = term_word(term);
    (word & 0xF == 0xF).then_some((word as i64) >> 4)
}

/// Whether a term is an immediate (atom, small integer, local pid or
/// port, `[]`): its primary tag. A map, a tuple or a list cell never is.
#[inline]
pub fn is_immediate(term: ErlNifTerm) -> bool {
    term_word(term) & 0b11 == 0b11
}

/// The primary tags of a boxed term's word (`TAG_PRIMARY_BOXED`) and of
/// a list cell's (`TAG_PRIMARY_LIST`): the word without its low three
/// bits is the address of the object (a header, then its words) or of
/// the cell (head, then tail). Objects are 8-byte aligned; the third bit
/// marks a literal in some builds, and is dropped with the tag.
pub const BOXED: usize = 0b10;
pub const LIST: usize = 0b01;
const ADDRESS_MASK: usize = !0b111;

/// The address of a boxed term's object, if `word` is a boxed term's.
#[inline]
pub fn boxed(word: usize) -> Option<*const usize> {
    (word & 0b11 == BOXED).then(|| object(word))
}

/// The address of the object of `word`, known to be a boxed term's, or
/// of the cell of a list cell's word.
#[inline]
pub fn object(word: usize) -> *const usize {
    (word & ADDRESS_MASK) as *const usize
}

/// The word of `[]`, learned at load; 0, which is no term, before.
static NIL_WORD: AtomicUsize = AtomicUsize::new(0);

/// Whether a term is `[]`, by its word: no VM call.
#[inline]
pub fn is_nil(term: ErlNifTerm) -> bool {
    term_word(term) == NIL_WORD.load(Ordering::Relaxed)
}

/// Learns `[]`'s word. Called from the NIF's load.
pub fn init(env: Env) {
    let nil = Term::list_new_empty(env).as_c_arg();
    NIL_WORD.store(term_word(nil), Ordering::Relaxed);
}
