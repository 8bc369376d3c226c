//! Integers and floats, as the VM's printer writes them.

use super::bounded_text::BoundedText;
use super::leaf::{write_bignum, write_leaf};
use crate::decimal::{below_10000, decimal, DECIMAL_MAX};
use crate::vm::big;
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::io::Write;

/// An integer read through enif: 64 bits, or a bignum.
pub fn write_integer(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let (mut small, mut unsigned) = (0i64, 0u64);
    // SAFETY: out-pointers to locals.
    if unsafe { rustler::sys::enif_get_int64(env, term, &mut small) } != 0 {
        write_decimal(small < 0, small.unsigned_abs(), text);
    // SAFETY: as above.
    } else if unsafe { rustler::sys::enif_get_uint64(env, term, &mut unsigned) } != 0 {
        write_decimal(false, unsigned, text);
    } else {
        write_bignum(term, text);
    }
}

/// A bignum read in place, `digits` its words: its decimal text when
/// below 2^4096, as `write_bignum` writes one read through enif; else the
/// text is cut just before it.
pub fn write_big(negative: bool, digits: &[usize], text: &mut BoundedText) {
    let mut buf = [0u8; big::TEXT_MAX];
    match big::decimal(negative, digits, &mut buf) {
        Some(at) => text.put(&buf[at..]),
        None => text.stop(),
    }
}

/// A float: `%.6e` with an exponent of at least two digits, as the VM (C's printf)
/// writes it: `1.500000e+00`. Rust's `{:.6e}` rounds the exact binary value
/// to nearest, ties to even, as glibc's printf does; it writes the exponent
/// bare (`1.500000e0`).
pub fn write_float(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let mut x = 0f64;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_double(env, term, &mut x) } == 0 {
        write_leaf(term, text);
        return;
    }
    let mut buf = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    if write!(cursor, "{x:.6e}").is_err() {
        write_leaf(term, text);
        return;
    }
    let len = cursor.position() as usize;
    let printed = &buf[..len];
    let Some(e) = printed.iter().position(|b| *b == b'e') else {
        write_leaf(term, text);
        return;
    };
    let (mantissa, exponent) = (&printed[..e], &printed[e + 1..]);
    let (sign, digits) = match exponent.split_first() {
        Some((b'-', digits)) => (b'-', digits),
        _ => (b'+', exponent),
    };
    text.put(mantissa);
    text.put(&[b'e', sign]);
    if digits.len() < 2 {
        text.byte(b'0');
    }
    text.put(digits);
}

/// A small integer's digits: up to four in line, the others by
/// `write_decimal`.
#[inline(always)]
pub fn write_small(n: i64, text: &mut BoundedText) {
    if let Ok(n @ 0..10_000) = u16::try_from(n) {
        let (block, len) = below_10000(n);
        text.put_block(&block, len);
    } else {
        write_decimal(n < 0, n.unsigned_abs(), text);
    }
}

/// `n`, after a `-` when `negative`.
#[inline]
pub fn write_decimal(negative: bool, n: u64, text: &mut BoundedText) {
    if negative {
        text.byte(b'-');
    }
    if n < 10 {
        text.byte(b'0' + n as u8);
    } else {
        text.put(decimal(n, &mut [0u8; DECIMAL_MAX]));
    }
}
