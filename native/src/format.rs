//! Term to text, as the VM's `%T` writes it.
//!
//! Placeholder implementation: the whole term through `enif_snprintf`, then
//! cut. The bounded, non-recursive walker replaces it (issue: bounded term
//! formatter); the three functions below are its interface.

use rustler::Term;
use std::ffi::c_char;

const ELLIPSIS: &[u8] = b"...";

/// Appends the `%T` text of one term, exactly, through the VM's printer.
fn snprintf_term(term: Term, out: &mut Vec<u8>) {
    let start = out.len();
    let mut room = 64usize;
    loop {
        out.resize(start + room, 0);
        // SAFETY: `room` writable bytes at out[start..]; "%T" takes one term.
        let n = unsafe {
            rustler::sys::get_enif_snprintf()(
                out.as_mut_ptr().add(start) as *mut c_char,
                room,
                c"%T".as_ptr(),
                term.as_c_arg(),
            )
        };
        if n < 0 {
            out.truncate(start);
            return;
        }
        let n = n as usize;
        if n < room {
            out.truncate(start + n);
            return;
        }
        room = n + 1;
    }
}

/// Appends `term` as `%T` text, at most `max` bytes; a cut text ends in
/// `...` and stays valid UTF-8.
pub fn format_term_bounded(term: Term, max: usize, out: &mut Vec<u8>) {
    let start = out.len();
    snprintf_term(term, out);
    if out.len() - start > max {
        out.truncate(start + max - ELLIPSIS.len());
        out.extend_from_slice(ELLIPSIS);
    }
}

/// Appends a pid, port or reference exactly, never cut.
pub fn format_identifier(term: Term, out: &mut Vec<u8>) {
    snprintf_term(term, out);
}

/// Appends an atom as the VM writes it, quoted where the VM quotes it.
pub fn format_atom(term: Term, out: &mut Vec<u8>) {
    snprintf_term(term, out);
}
