//! `payload => shape`: the leaves that `shape` writes as their type and
//! size, never reading a byte, character or digit of them into the text.
//!
//! - integers that fit in 64 bits (-2^63 ..= 2^64-1): `<int:D>`, D the
//!   number of decimal digits of the magnitude (no sign); others `<bigint>`
//! - floats: `<float>`
//! - binaries: `<<_:N/binary>>`, N bytes; bitstrings whose size is not a
//!   multiple of 8: `<<_/bitstring>>`
//! - printable lists (the lists `full` writes as strings): `<string:N>`, N
//!   characters; `<string:>N>` for one whose first N elements are
//!   printable characters and that goes on past them (not looked at)
//! - funs: `<fun>`; anything else that is not a container, atom or
//!   identifier: `<term>`

use super::bounded_text::BoundedText;
use super::printable::{list_char, Lists};
use crate::decimal::{decimal, DECIMAL_MAX};
use rustler::sys::{ErlNifEnv, ErlNifTerm};

/// An integer read through enif.
pub fn write_integer(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let (mut small, mut unsigned) = (0i64, 0u64);
    // SAFETY: out-pointers to locals.
    let magnitude = if unsafe { rustler::sys::enif_get_int64(env, term, &mut small) } != 0 {
        small.unsigned_abs()
    // SAFETY: as above.
    } else if unsafe { rustler::sys::enif_get_uint64(env, term, &mut unsigned) } != 0 {
        unsigned
    } else {
        text.put(b"<bigint>");
        return;
    };
    write_magnitude(magnitude, text);
}

/// A small integer, read from its word.
#[inline]
pub fn write_small(n: i64, text: &mut BoundedText) {
    write_magnitude(n.unsigned_abs(), text);
}

fn write_magnitude(magnitude: u64, text: &mut BoundedText) {
    let digits = decimal(magnitude, &mut [0; DECIMAL_MAX]).len();
    text.put(b"<int:");
    text.put(decimal(digits as u64, &mut [0; DECIMAL_MAX]));
    text.byte(b'>');
}

pub fn write_float(text: &mut BoundedText) {
    text.put(b"<float>");
}

pub fn write_fun(text: &mut BoundedText) {
    text.put(b"<fun>");
}

pub fn write_other(text: &mut BoundedText) {
    text.put(b"<term>");
}

/// A binary's shape, from its size in bytes.
pub fn write_binary_size(size: usize, text: &mut BoundedText) {
    text.put(b"<<_:");
    text.put(decimal(size as u64, &mut [0; DECIMAL_MAX]));
    text.put(b"/binary>>");
}

/// Writes the list `list`, whose first element `head` is a printable
/// character, as a string's shape if it is one, and returns true; false
/// (nothing written) if it is not a printable list. Looks at no more
/// elements than the text's scan allowance (at least the first).
pub fn write_string(lists: &Lists, list: usize, text: &mut BoundedText) -> bool {
    let limit = text.scan_bound().min(text.scan_left().saturating_add(1));
    let mut seen = 0usize;
    let mut rest = list;
    let string = loop {
        if lists.is_empty(rest) {
            break seen > 0;
        }
        if seen >= limit {
            break true;
        }
        match lists.cell(rest) {
            Some((elem, next)) if list_char(elem).is_some() => {
                seen += 1;
                rest = next;
            }
            _ => break false,
        }
    };
    text.spend_scan(seen);
    if !string {
        return false;
    }
    text.put(b"<string:");
    if !lists.is_empty(rest) {
        text.byte(b'>');
    }
    text.put(decimal(seen as u64, &mut [0; DECIMAL_MAX]));
    text.byte(b'>');
    true
}
