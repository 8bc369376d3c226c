//! Term to text, as the VM's `%T` writes it, within a byte budget.
//!
//! The walk over containers is ours, with an explicit stack of the open
//! containers (no recursion), so that it stops the moment the budget is
//! spent: a term costs what its printed prefix costs, whatever its size or
//! depth. Atoms, integers, floats, strings, binaries, local pids (their
//! texts kept per thread) and local references (from their numbers,
//! `vm::reference`) are written here; leaves whose text only the VM knows
//! (ports, remote identifiers, funs, bignums, atoms with characters above
//! 255, bitstrings) go through `enif_snprintf("%T")` one leaf at a time
//! (`leaf`), and so does a pid when its text is first kept.
//!
//! Where the text differs from `%T` (README, "Term text"):
//! - UTF-8 throughout: characters 160-255 of printable lists, which `%T`
//!   writes as raw Latin-1 bytes, are written UTF-8 encoded (atoms are
//!   UTF-8 in `%T` already).
//! - Every map is written flat, `#{K=>V,...}`, in the order
//!   `maps:to_list/1` returns: for maps up to 32 keys that is `%T`'s text;
//!   over 32 keys `%T` prints its internal hash-trie nodes.
//!
//! Beyond fixed bounds, which keep the cost of a term bounded by its
//! budget (the text is still within the budget and ends in `...`):
//! - A list of more than N elements, N = the budget (`max`) + 1, is written
//!   as a string when its first N elements are printable characters;
//!   elements after those are not looked at. `%T` writes it as `[97,...]`
//!   if a later element is not printable or its tail is improper. Either
//!   text is longer than the budget, but ours is then not a prefix of the
//!   VM's. Lists of at most N elements are exact.
//! - Likewise a binary of more than N bytes is written `<<"...` when its
//!   first N bytes are printable ASCII. Scans stay within twice the text
//!   written plus N: a scanned list or binary is then printed, at least
//!   one byte per element scanned.
//! - An integer of 2^4096 or more in magnitude (1234 digits and up) is not
//!   written at all, whatever the budget: the text is cut (`...`) just
//!   before it. The VM converts bignums to decimal in time quadratic in
//!   their size (seconds for the largest); smaller ones are written, up
//!   to the cut.
//!
//! Costs the budget does not bound (rare in traces):
//! - A sub-binary that does not start on a byte boundary (`<<_:3,
//!   Rest/binary>>`) is copied by `enif_inspect_binary` before we read it:
//!   O(its size).
//! - A map over 32 keys costs one small allocation inside the VM (its
//!   iterator's stack).
//!
//! Payload modes (`field`): the same walk writes `shape` (leaves as their
//! type and size, `shape`) and skips the values under redacted keys;
//! `size` measures the `full` text (`size`). `write_field` is the entry
//! point for every term field of an event.
//!
//! Memory: the stack, the map iterators and the kept texts live in
//! per-thread buffers reused from call to call (the callbacks' with their
//! field buffers); the stack holds O(budget) frames at most, the kept
//! texts a fixed number of slots.

mod atom;
mod binary_text;
mod bounded_text;
mod field;
mod leaf;
mod leaf_texts;
mod number;
mod payload;
mod printable;
mod shape;
mod size;
mod walk;

use bounded_text::BoundedText;
pub use field::{write_field, write_field_with};
pub use payload::{
    FieldKind, Payload, Redact, TermOptions, DEFAULT_MAX_TERM_BYTES, MAX_MAX_TERM_BYTES,
    MIN_MAX_TERM_BYTES, NONE_TEXT,
};
use rustler::Term;
pub use walk::Buffers as WalkBuffers;

/// The budget of texts that are never cut (identifiers, atoms).
const UNBOUNDED: usize = usize::MAX / 2;

/// Appends `term` as `%T` text, at most `max` bytes; a cut text ends in
/// `...` and stays valid UTF-8.
pub fn format_term_bounded(term: Term, max: usize, out: &mut Vec<u8>) {
    let env = term.get_env().as_c_arg();
    let mut text = BoundedText::new(out, max);
    walk::walk(env, term.as_c_arg(), &mut text, false, &Redact::default());
    text.finish();
}

/// Drops a walk a panic cut short on this thread: its frames and its map
/// iterators, which are destroyed with `env`, the environment of the
/// NIF call that panicked.
pub fn reset_after_panic(env: *mut rustler::sys::ErlNifEnv) {
    walk::reset(env);
}

/// Appends a pid, port or reference exactly, never cut.
pub fn format_identifier(term: Term, out: &mut Vec<u8>) {
    let env = term.get_env().as_c_arg();
    let mut text = BoundedText::new(out, UNBOUNDED);
    walk::walk(env, term.as_c_arg(), &mut text, false, &Redact::default());
    text.finish();
}

/// Appends an atom as the VM writes it, quoted where the VM quotes it.
pub fn format_atom(term: Term, out: &mut Vec<u8>) {
    format_identifier(term, out);
}

/// Appends the bytes of an iolist (or binary), at most `max` of them, cut
/// as `format_term_bounded` cuts. The walk is bounded too: it stops when
/// the text is full or after 4 * `max` list cells (nests of lists write
/// nothing), so only the part read is checked. False when what it read is
/// not an iolist.
pub fn format_iolist_bounded(term: Term, max: usize, out: &mut Vec<u8>) -> bool {
    let mut text = BoundedText::new(out, max);
    let mut cells_left = max.saturating_mul(4).saturating_add(16);
    // What is still to read, the next part last; each list cell read
    // pushes at most two (its tail, a list or binary head), so the stack
    // stays within twice the cells read.
    let mut pending: Vec<Term> = vec![term];
    while let Some(next) = pending.pop() {
        if text.is_full() {
            break;
        }
        // Not `decode_as_binary`: it flattens a whole iolist.
        if let Ok(binary) = rustler::Binary::from_term(next) {
            text.put(binary.as_slice());
        } else if let Ok((head, tail)) = next.list_get_cell() {
            if cells_left == 0 {
                text.stop();
                break;
            }
            cells_left -= 1;
            pending.push(tail);
            // rustler's u8 decoder truncates (256 would be 0).
            match head.decode::<u32>().ok().and_then(|n| u8::try_from(n).ok()) {
                Some(byte) => text.byte(byte),
                None if head.is_binary() || head.is_list() => pending.push(head),
                None => return false,
            }
        } else if !next.is_empty_list() {
            return false;
        }
    }
    text.finish();
    true
}

/// Appends the parts `next` writes, `separator` between them, as one text
/// of at most `max` bytes, cut as `format_term_bounded` cuts. Once the text
/// is full no more parts are asked for, so a long sequence costs what is
/// written. `next` appends one part to the buffer it is given and answers
/// `Ok(false)` when there are no more; its error ends the text unfinished.
pub fn format_joined_bounded<E>(
    max: usize,
    separator: &[u8],
    out: &mut Vec<u8>,
    mut next: impl FnMut(&mut Vec<u8>) -> Result<bool, E>,
) -> Result<(), E> {
    let mut text = BoundedText::new(out, max);
    let mut part = Vec::new();
    let mut first = true;
    while !text.is_full() {
        part.clear();
        if !next(&mut part)? {
            break;
        }
        if !first {
            text.put(separator);
        }
        first = false;
        text.put(&part);
    }
    text.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::format_joined_bounded;

    /// The parts "p0", "p1", ... up to `count`, joined within `max`; how
    /// many parts were asked for.
    fn joined(count: usize, max: usize) -> (Vec<u8>, usize) {
        let (mut out, mut asked) = (Vec::new(), 0);
        let written: Result<(), ()> = format_joined_bounded(max, b";", &mut out, |part| {
            asked += 1;
            if asked > count {
                return Ok(false);
            }
            part.extend_from_slice(format!("p{}", asked - 1).as_bytes());
            Ok(true)
        });
        assert!(written.is_ok());
        (out, asked)
    }

    #[test]
    fn parts_within_the_limit_are_joined_whole() {
        assert_eq!(joined(3, 8), (b"p0;p1;p2".to_vec(), 4));
        assert_eq!(joined(0, 8), (Vec::new(), 1));
    }

    #[test]
    fn a_longer_text_is_cut_and_no_more_parts_are_asked_for() {
        assert_eq!(joined(1_000_000, 8), (b"p0;p1...".to_vec(), 4));
    }

    #[test]
    fn an_error_of_a_part_is_the_answer() {
        let mut out = Vec::new();
        let written = format_joined_bounded(8, b";", &mut out, |_| Err("bad"));
        assert_eq!(written, Err("bad"));
    }
}
