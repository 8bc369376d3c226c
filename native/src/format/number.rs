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
/// writes it: `1.500000e+00`, the exact binary value rounded to seven
/// significant digits, ties to even, as glibc's printf does.
///
/// Most floats have a shortest round-trip text (`zmij`) of at most seven
/// significant digits, and for a normal float that text is the rounding:
/// the float lies within half its ulp (2^-53 of it) of the text, far
/// less than half a unit of the seventh digit, so no midpoint lies
/// between them. The others (longer texts, subnormals) go the exact way:
/// Rust's `{:.6e}`, which rounds the exact value as glibc does.
pub fn write_float(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let mut x = 0f64;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_double(env, term, &mut x) } == 0 {
        write_leaf(term, text);
        return;
    }
    write_float_value(x, text);
}

/// `write_float` of a float's value.
#[inline]
pub fn write_float_value(x: f64, text: &mut BoundedText) {
    let mut buf = [0u8; 32];
    match short_float(x, &mut buf) {
        Some(len) => text.put(&buf[..len]),
        None => write_float_exact(x, text),
    }
}

/// `%.6e` of `x` from its shortest text, into `buf`: its length, or
/// `None` when that text is not the rounding (see `write_float`).
fn short_float(x: f64, buf: &mut [u8; 32]) -> Option<usize> {
    let negative = x.is_sign_negative();
    let mut at = 0;
    if negative {
        buf[0] = b'-';
        at = 1;
    }
    if x == 0.0 {
        buf[at..at + 12].copy_from_slice(b"0.000000e+00");
        return Some(at + 12);
    }
    if !x.is_normal() {
        return None;
    }
    let mut shortest = zmij::Buffer::new();
    let printed = shortest.format_finite(x.abs()).as_bytes();
    // Its significant digits, and the decimal exponent of the first.
    let (mantissa, exponent) = match printed.iter().position(|b| *b == b'e') {
        Some(e) => (&printed[..e], parse_exponent(&printed[e + 1..])?),
        None => (printed, 0),
    };
    let mut digits = [0u8; 32];
    let mut n = 0;
    let mut point = mantissa.len();
    for (i, &b) in mantissa.iter().enumerate() {
        match b {
            b'.' => point = i,
            b'0'..=b'9' => {
                if n == digits.len() {
                    return None;
                }
                digits[n] = b;
                n += 1;
            }
            _ => return None,
        }
    }
    // Leading zeros move the first digit right; trailing ones say nothing.
    let leading = digits[..n].iter().take_while(|d| **d == b'0').count();
    let trailing = digits[leading..n]
        .iter()
        .rev()
        .take_while(|d| **d == b'0')
        .count();
    let significant = &digits[leading..n - trailing];
    if significant.is_empty() || significant.len() > 7 {
        return None;
    }
    let exp10 = i32::try_from(point).ok()? - i32::try_from(leading).ok()? - 1 + exponent;
    buf[at] = significant[0];
    buf[at + 1] = b'.';
    let fraction = &mut buf[at + 2..at + 8];
    fraction.fill(b'0');
    fraction[..significant.len() - 1].copy_from_slice(&significant[1..]);
    at += 8;
    buf[at] = b'e';
    buf[at + 1] = if exp10 < 0 { b'-' } else { b'+' };
    at += 2;
    let e = exp10.unsigned_abs();
    if e >= 100 {
        buf[at] = b'0' + (e / 100) as u8;
        at += 1;
    }
    buf[at] = b'0' + (e / 10 % 10) as u8;
    buf[at + 1] = b'0' + (e % 10) as u8;
    Some(at + 2)
}

fn parse_exponent(text: &[u8]) -> Option<i32> {
    let (negative, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 4 {
        return None;
    }
    let mut e = 0i32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        e = e * 10 + i32::from(d - b'0');
    }
    Some(if negative { -e } else { e })
}

/// `%.6e` by Rust's exact formatting, `{:.6e}`, which writes the
/// exponent bare (`1.500000e0`). Any finite float's text fits the buffer;
/// were it not to, the text is cut there.
#[inline(never)]
fn write_float_exact(x: f64, text: &mut BoundedText) {
    let mut buf = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    if write!(cursor, "{x:.6e}").is_err() {
        text.stop();
        return;
    }
    let len = cursor.position() as usize;
    let printed = &buf[..len];
    let Some(e) = printed.iter().position(|b| *b == b'e') else {
        text.stop();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `%.6e` as C writes it, from Rust's exact formatting.
    fn exact(x: f64) -> String {
        let printed = format!("{x:.6e}");
        let (mantissa, exponent) = printed.split_once('e').unwrap();
        let e: i32 = exponent.parse().unwrap();
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", e.unsigned_abs())
    }

    fn short(x: f64) -> Option<String> {
        let mut buf = [0u8; 32];
        short_float(x, &mut buf).map(|len| String::from_utf8(buf[..len].to_vec()).unwrap())
    }

    #[test]
    fn short_texts_are_the_exact_rounding() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut shorts = 0;
        let picked = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            0.1,
            1e300,
            -1e-300,
            123456789.0,
            9.9999995,
            9.9999996e99,
            1234567.5,
            1234568.5,
            12345675.0,
            1e-7,
            1e7,
            1e100,
            1e-100,
            1e22,
            1e23,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            0.3,
            2.5e-308,
            100.0,
            1000000.0,
            9999999.0,
            99999995.0,
            0.000123,
            4.35,
            4.345,
        ];
        let random: Vec<f64> = (0..200_000).map(|_| f64::from_bits(next())).collect();
        // Short decimals: up to seven digits at every exponent.
        let decimal: Vec<f64> = (0..200_000)
            .map(|i| {
                let digits = next() % 10_000_000;
                let e = (next() % 600) as i32 - 300;
                let x: f64 = format!("{digits}e{e}").parse().unwrap();
                if i % 2 == 0 {
                    x
                } else {
                    -x
                }
            })
            .collect();
        for x in picked.into_iter().chain(random).chain(decimal) {
            if !x.is_finite() {
                continue;
            }
            if let Some(text) = short(x) {
                shorts += 1;
                assert_eq!(text, exact(x), "{x:e} ({:#x})", x.to_bits());
            }
        }
        assert!(shorts > 200_000, "{shorts}");
        // Subnormals are never taken the short way.
        assert_eq!(short(5e-324), None);
    }
}
