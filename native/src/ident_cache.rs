//! The text of local pids, remembered per scheduler thread.
//!
//! Every event writes one to three pids, and the VM's printer
//! (`enif_snprintf`) is the costliest step after the message itself. A
//! local pid is an immediate term: its word alone decides its text, for as
//! long as the node runs, so a slot keyed by the word is never stale. The
//! cache has a fixed number of slots per thread and never grows; boxed
//! identifiers (remote pids, ports on runtimes where they are boxed) are
//! always printed.

use crate::format::format_identifier;
use crate::term_word;
use rustler::Term;
use std::cell::RefCell;

const SLOTS: usize = 256;
/// Longer than any local pid's text (`<0.4294967295.4294967295>`).
const TEXT_MAX: usize = 40;
/// The low two bits of every immediate term, in every ERTS release.
const IMMEDIATE_TAG: usize = 0b11;

#[derive(Clone, Copy)]
struct Slot {
    /// The term word; 0 is no immediate, so it marks an empty slot.
    word: usize,
    len: u8,
    text: [u8; TEXT_MAX],
}

const EMPTY: Slot = Slot {
    word: 0,
    len: 0,
    text: [0; TEXT_MAX],
};

thread_local! {
    static CACHE: RefCell<[Slot; SLOTS]> = const { RefCell::new([EMPTY; SLOTS]) };
}

/// Appends the text of a pid or port, as `format_identifier` writes it.
pub fn write_identifier(term: Term, out: &mut Vec<u8>) {
    let word = term_word(term.as_c_arg());
    if word & IMMEDIATE_TAG != IMMEDIATE_TAG {
        return format_identifier(term, out);
    }
    CACHE.with(|cache| {
        let Ok(mut cache) = cache.try_borrow_mut() else {
            return format_identifier(term, out);
        };
        // The tag bits are the same for all pids: index by the bits above.
        let slot = &mut cache[(word >> 4) % SLOTS];
        if slot.word == word {
            out.extend_from_slice(&slot.text[..usize::from(slot.len)]);
            return;
        }
        let start = out.len();
        format_identifier(term, out);
        let text = &out[start..];
        if text.len() <= TEXT_MAX {
            slot.text[..text.len()].copy_from_slice(text);
            slot.len = text.len() as u8;
            slot.word = word;
        }
    })
}
