//! The text of local pids and of atoms, remembered per scheduler thread.
//!
//! Every event writes one to three pids, a call event a module and a
//! function name, and the VM's printer (`enif_snprintf`) or its atom table
//! is the costliest step after the message itself. A local pid and an atom
//! are immediate terms: the word alone decides the text, for as long as the
//! node runs (atoms are never collected), so a slot keyed by the word is
//! never stale. The cache has a fixed number of slots per thread and never
//! grows (`text_cache`); boxed identifiers (remote pids, ports on runtimes
//! where they are boxed) and texts longer than a slot are always printed.
//! The short paths of the busiest events (`short_path`) lend a pid's text
//! to the tracepoint as it is kept, NUL included.

use crate::format::format_identifier;
use crate::lttng::Text;
use crate::text_cache::TextCache;
use crate::vm::{is_immediate, is_local_pid, term_of_word, term_word};
use rustler::Term;

/// Longer than any local pid's or port's text (`<0.4294967295.4294967295>`
/// is 25 bytes) and its NUL, and than most atoms: a hit copies all of it,
/// a fixed-size copy. A slot is then one 64-byte cache line.
const TEXT_MAX: usize = 48;

/// One thread's slots, kept with the field buffers of its events (one
/// thread-local lookup per event serves both).
#[derive(Default)]
pub struct IdentCache {
    texts: TextCache<usize, 256, TEXT_MAX>,
}

impl IdentCache {
    /// Appends the text of a pid, port or atom, as `format_identifier`
    /// writes it. Inlined: a hit is a few instructions, and the miss is
    /// out of line.
    #[inline]
    pub fn write(&mut self, term: Term, out: &mut Vec<u8>) {
        let word = term_word(term.as_c_arg());
        if !is_immediate(term.as_c_arg()) {
            return format_identifier(term, out);
        }
        let Some((block, len)) = self.texts.block(word) else {
            return self.miss(term, out);
        };
        out.reserve(TEXT_MAX);
        let at = out.len();
        // SAFETY: `reserve` made room for TEXT_MAX bytes after `at`; all
        // of the slot's block is copied there (a fixed size, so no call to
        // memcpy), and only its `len` bytes of text are kept.
        unsafe {
            std::ptr::copy_nonoverlapping(block.as_ptr(), out.as_mut_ptr().add(at), TEXT_MAX);
            out.set_len(at + len);
        }
    }

    /// The text of a local pid in its slot, NUL included, for the
    /// tracepoint; `None` if it is not there, or `word` is no local pid:
    /// `write` prints and keeps it.
    #[inline(always)]
    pub fn lend(&self, word: usize) -> Option<Text<'_>> {
        if !is_local_pid(term_of_word(word)) {
            return None;
        }
        self.texts.lend(word)
    }

    /// Prints an immediate not in its slot and keeps its text there.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, term: Term, out: &mut Vec<u8>) {
        let start = out.len();
        format_identifier(term, out);
        self.texts.keep(term_word(term.as_c_arg()), &out[start..]);
    }
}
