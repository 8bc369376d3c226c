//! `payload => size`: the byte length of the text `full` would write
//! (redaction included), or `>N` when it is longer than the byte limit N.
//! The text is written to a per-thread buffer and dropped, so the work is
//! bounded by the limit exactly as for `full`.

use super::payload::Redact;
use super::walk::write;
use crate::decimal::{decimal, DECIMAL_MAX};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::cell::RefCell;

thread_local! {
    static TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Appends the size text of `term`.
pub fn write_size(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    max: usize,
    redact: &Redact,
    out: &mut Vec<u8>,
) {
    let measure = |text: &mut Vec<u8>| {
        text.clear();
        let cut = write(env, term, max, false, redact, text);
        let len = text.len();
        text.clear();
        (cut, len)
    };
    let (cut, len) = TEXT
        .try_with(|text| match text.try_borrow_mut() {
            Ok(mut text) => measure(&mut text),
            Err(_) => measure(&mut Vec::new()),
        })
        .unwrap_or_else(|_| measure(&mut Vec::new()));
    let mut digits = [0u8; DECIMAL_MAX];
    if cut {
        out.push(b'>');
        out.extend_from_slice(decimal(max as u64, &mut digits));
    } else {
        out.extend_from_slice(decimal(len as u64, &mut digits));
    }
}
