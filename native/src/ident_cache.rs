//! The text of local pids and of atoms, remembered per scheduler thread.
//!
//! Every event writes one to three pids, a call event a module and a
//! function name, and the VM's printer (`enif_snprintf`) or its atom table
//! is the costliest step after the message itself. A local pid and an atom
//! are immediate terms: the word alone decides the text, for as long as the
//! node runs (atoms are never collected), so a slot keyed by the word is
//! never stale. The cache has a fixed number of slots per thread and never
//! grows; boxed identifiers (remote pids, ports on runtimes where they are
//! boxed) and texts longer than a slot are always printed.
//!
//! A slot's text ends in NUL, so that the message events' own path
//! (`message`) hands it to the tracepoint as it is (`lend`), with no copy.

use crate::format::format_identifier;
use crate::lttng::Text;
use crate::term_word;
use rustler::Term;

const SLOTS: usize = 256;
/// Longer than any local pid's or port's text (`<0.4294967295.4294967295>`
/// is 25 bytes) and its NUL, and than most atoms: a hit copies all of it,
/// a fixed-size copy. A slot is then one 64-byte cache line.
const TEXT_MAX: usize = 48;

/// The slot of a word: its bits mixed (Fibonacci hashing), since pids and
/// atoms differ in their tag bits and atoms step by 64.
#[inline]
fn slot_of(word: usize) -> usize {
    ((word as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.ilog2())) as usize
}

#[derive(Clone, Copy)]
#[repr(align(64))]
struct Slot {
    /// The term word; 0 is no immediate, so it marks an empty slot.
    word: usize,
    /// The text's length, less than TEXT_MAX: `text[len]` is NUL.
    len: u8,
    text: [u8; TEXT_MAX],
}

const EMPTY: Slot = Slot {
    word: 0,
    len: 0,
    text: [0; TEXT_MAX],
};

/// One thread's slots, kept with the field buffers of its events (one
/// thread-local lookup per event serves both).
pub struct IdentCache {
    slots: Box<[Slot; SLOTS]>,
}

impl Default for IdentCache {
    fn default() -> Self {
        IdentCache {
            slots: Box::new([EMPTY; SLOTS]),
        }
    }
}

impl IdentCache {
    /// Appends the text of a pid, port or atom, as `format_identifier`
    /// writes it. Inlined: a hit is a few instructions, and the miss is
    /// out of line.
    #[inline]
    pub fn write(&mut self, term: Term, out: &mut Vec<u8>) {
        let word = term_word(term.as_c_arg());
        if !crate::is_immediate(term.as_c_arg()) {
            return format_identifier(term, out);
        }
        let slot = &self.slots[slot_of(word)];
        if slot.word != word {
            return self.miss(term, out);
        }
        out.reserve(TEXT_MAX);
        let len = out.len();
        // SAFETY: `reserve` made room for TEXT_MAX bytes after `len`; all
        // of the slot's text is copied there (a fixed size, so no call to
        // memcpy), and only its `slot.len` bytes are kept.
        unsafe {
            std::ptr::copy_nonoverlapping(slot.text.as_ptr(), out.as_mut_ptr().add(len), TEXT_MAX);
            out.set_len(len + usize::from(slot.len));
        }
    }

    /// The text of a local pid in its slot, NUL included, for the
    /// tracepoint; `None` if it is not there, or `word` is no local pid:
    /// `write` prints and keeps it.
    #[inline(always)]
    pub fn lend(&self, word: usize) -> Option<Text<'_>> {
        let slot = &self.slots[slot_of(word)];
        if slot.word != word || !crate::is_local_pid(crate::term_of_word(word)) {
            return None;
        }
        slot.text.get(..usize::from(slot.len) + 1).map(Text::ended)
    }

    /// Prints an immediate not in its slot and keeps its text there.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, term: Term, out: &mut Vec<u8>) {
        let word = term_word(term.as_c_arg());
        let start = out.len();
        format_identifier(term, out);
        let text = &out[start..];
        if text.len() < TEXT_MAX {
            let slot = &mut self.slots[slot_of(word)];
            slot.text[..text.len()].copy_from_slice(text);
            slot.text[text.len()] = 0;
            slot.len = text.len() as u8;
            slot.word = word;
        }
    }
}
