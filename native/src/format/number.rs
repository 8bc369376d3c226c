//! Integers and floats, as the VM's printer writes them.

use super::bounded_text::BoundedText;
use super::leaf::{write_bignum, write_leaf};
use crate::decimal::{
    below_10000, chunks, chunks_max, chunks_text_at, chunks_text_max, chunks_u128, chunks_u256,
    decimal, two_digits, CHUNKS_TEXT_OVERHANG, DECIMAL_MAX,
};
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

/// The most words a bignum written here has: below 2^4096 (1234
/// digits); a larger one's text is cut just before it.
const BIG_WORDS_MAX: usize = 64;

/// A bignum read in place, `digits` its words: its decimal text when
/// below 2^4096, as `write_bignum` writes one read through enif; else the
/// text is cut just before it. Below 2^256, as most bignums met are, its
/// chunks of 19 digits are found with the words in registers. Not
/// inlined (see `write_float_value`).
#[inline(never)]
pub fn write_big(negative: bool, digits: &[usize], text: &mut BoundedText) {
    match *digits {
        [low] => write_u128(negative, 0, low as u64, text),
        [low, high] => write_u128(negative, high as u64, low as u64, text),
        [a0, a1, a2] => write_u256(negative, [a0, a1, a2, 0], text),
        [a0, a1, a2, a3] => write_u256(negative, [a0, a1, a2, a3], text),
        _ => write_large(negative, digits, text),
    }
}

/// `write_big` of a bignum below 2^128.
#[inline(always)]
fn write_u128(negative: bool, high: u64, low: u64, text: &mut BoundedText) {
    let (chunked, count) = chunks_u128(high, low);
    write_chunks(negative, &chunked[..count], text);
}

/// `write_big` of a bignum below 2^256.
#[inline(always)]
fn write_u256(negative: bool, words: [usize; 4], text: &mut BoundedText) {
    let (chunked, count) = chunks_u256(words.map(|w| w as u64));
    write_chunks(negative, &chunked[..count], text);
}

/// The most base-10^19 chunks of a bignum written here.
const CHUNKS: usize = chunks_max(BIG_WORDS_MAX);

/// `write_big` of a bignum of more than four words: by schoolbook
/// division over a copy of its words.
#[inline(never)]
fn write_large(negative: bool, digits: &[usize], text: &mut BoundedText) {
    if digits.len() > BIG_WORDS_MAX {
        text.stop();
        return;
    }
    let mut words = [0u64; BIG_WORDS_MAX];
    let len = digits.len();
    for (w, d) in words.iter_mut().zip(digits) {
        *w = *d as u64;
    }
    let mut chunked = [0u64; CHUNKS];
    let count = chunks(&mut words[..len], &mut chunked);
    write_chunks(negative, &chunked[..count], text);
}

/// Writes the text of a number's `chunked` digits (as `chunks` answers
/// them), straight into the text's end when the longest text of that
/// many chunks fits there, else into a buffer first (and cut as it is
/// put). Not inlined: one copy for every size.
#[inline(never)]
fn write_chunks(negative: bool, chunked: &[u64], text: &mut BoundedText) {
    const { assert!(CHUNKS_TEXT_OVERHANG <= 16) };
    // SAFETY: `put_within` lends `chunks_text_max` bytes and its slack
    // after them (at least 16, as it asserts), more than the overhang
    // `chunks_text_at` may store; it answers how many it wrote, at most
    // `chunks_text_max`.
    let written = unsafe {
        text.put_within(chunks_text_max(chunked.len()), |at| {
            chunks_text_at(negative, chunked, at)
        })
    };
    if !written {
        write_big_cut(negative, chunked, text);
    }
}

/// `write_chunks`'s text when it may not fit: through a buffer.
#[inline(never)]
fn write_big_cut(negative: bool, chunked: &[u64], text: &mut BoundedText) {
    let mut buf = [0u8; chunks_text_max(CHUNKS) + CHUNKS_TEXT_OVERHANG];
    if chunked.len() > CHUNKS {
        text.stop();
        return;
    }
    // SAFETY: `buf` holds the longest text of at most CHUNKS chunks and
    // the overhang; the answer is at most that text's length.
    let len = unsafe { chunks_text_at(negative, chunked, buf.as_mut_ptr()) };
    text.put(&buf[..len]);
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

/// `write_float` of a float's value: most floats between 10^-16 and
/// 2^93 (about 10^28) by one floating-point scaling (`rounded_float`); the others, and
/// those whose scaled value lies too near a rounding midpoint for it,
/// the slower ways (`write_float_other`). Not inlined, as `write_big`: in
/// the walk's leaf dispatch they made every term's walk slower (a 97-byte
/// message with no float nor bignum, 235 -> 250 ns).
#[inline(never)]
pub fn write_float_value(x: f64, text: &mut BoundedText) {
    if let Some((word, len)) = rounded_float(x) {
        text.put_word(word, len);
        return;
    }
    write_float_other(x, text);
}

/// `write_float_value` of the floats `rounded_float` does not write: by
/// integer scaling when between 10^-16 and 2^64 (`scaled_float`), else
/// from the shortest text or the exact way. Not inlined: the common
/// path keeps few registers, so saves few.
#[inline(never)]
fn write_float_other(x: f64, text: &mut BoundedText) {
    if let Some((word, len)) = scaled_float(x) {
        text.put_word(word, len);
        return;
    }
    let mut buf = [0u8; 32];
    match short_float(x, &mut buf) {
        Some(len) => text.put(&buf[..len]),
        None => write_float_exact(x, text),
    }
}

/// floor(n * log10(2)), by a fixed-point product (a unit test checks it
/// over the exponents used): the power of ten of the first digit of a
/// float whose binary exponent is `n`, or one less.
#[inline(always)]
const fn log10_pow2(n: i32) -> i32 {
    (n * 78913) >> 18
}

/// The biased binary exponents `rounded_float` scales: -53 to 92,
/// whose `log10_pow2` are -16 to 27, so that the power of ten it scales
/// by, and the next one down, are in [10^-22, 10^22].
const ROUNDED_FIRST: usize = 1023 - 53;
const ROUNDED_COUNT: usize = 53 + 93;

/// For each biased exponent from `ROUNDED_FIRST`, the power of ten that
/// scales a float of that exponent into [10^6, 10^8): 10^(6 - e10), e10
/// its `log10_pow2`. Each is the float nearest the power: 10^0 to 10^22
/// are floats, and a negative power is 1 divided by one of them, rounded
/// once.
const ROUNDED_SCALE: [f64; ROUNDED_COUNT] = {
    let mut scale = [0f64; ROUNDED_COUNT];
    let mut i = 0;
    while i < ROUNDED_COUNT {
        let k = 6 - log10_pow2((ROUNDED_FIRST + i) as i32 - 1023);
        assert!(-21 <= k && k <= 22);
        scale[i] = if k >= 0 {
            POW10[k as usize] as f64
        } else {
            1.0 / POW10[(-k) as usize] as f64
        };
        i += 1;
    }
    scale
};

/// 2^52: a float in [0, 2^52) added to it is rounded to an integer,
/// ties to even (the default rounding, which the VM keeps), the integer
/// then the low bits of the sum.
const ROUND_TO_INTEGER: f64 = (1u64 << 52) as f64;

/// How near a rounding midpoint `rounded_float` lets a scaled value be:
/// 2^-25, many times its rounding error (at most 2^-27, below).
const MIDPOINT_MARGIN: f64 = 1.0 / (1u64 << 25) as f64;

/// `%.6e` of a normal float of magnitude in [2^-53, 2^93), as
/// `scaled_float` answers it, by floating-point scaling, with a short
/// chain of dependent steps: the magnitude times the power of ten of its
/// binary exponent (`ROUNDED_SCALE`), and times 0.1 again when that is
/// 10^7 or more, lies in [10^6, 10^7) (or just below 10^6, by a rounding)
/// and within 4 * 2^-53 of itself of the exact value scaled (four
/// roundings, each within 2^-53, the powers' too), so within 2^-27 as it
/// is below 2^24. Rounded to an integer, ties to even, it is the exact
/// value's rounding unless its fraction lies within `MIDPOINT_MARGIN` of
/// one half; those (exact ties among them) answer `None`, as do
/// magnitudes out of the range, zeros, subnormals, infinities and NaNs.
#[inline(always)]
fn rounded_float(x: f64) -> Option<(u128, usize)> {
    let bits = x.to_bits();
    let biased = (bits >> 52 & 0x7FF) as usize;
    let scale = *ROUNDED_SCALE.get(biased.wrapping_sub(ROUNDED_FIRST))?;
    let mut e10 = log10_pow2(biased as i32 - 1023);
    let mut scaled = f64::from_bits(bits & !(1 << 63)) * scale;
    if scaled >= 10_000_000.0 {
        e10 += 1;
        scaled *= 0.1;
    }
    let integer = scaled + ROUND_TO_INTEGER;
    if (scaled - (integer - ROUND_TO_INTEGER)).abs() > 0.5 - MIDPOINT_MARGIN {
        return None;
    }
    let mut digits = integer.to_bits() as u32;
    if digits < 1_000_000 {
        return None;
    }
    if digits >= 10_000_000 {
        // Rounded up to the next power of ten: one digit more.
        e10 += 1;
        digits = 1_000_000;
    }
    Some(float_text(digits, e10, x.is_sign_negative()))
}

/// Powers of ten up to 10^22, the largest one `scaled_float` multiplies by.
const POW10: [u128; 23] = {
    let mut pow = [1u128; 23];
    let mut k = 1;
    while k < 23 {
        pow[k] = pow[k - 1] * 10;
        k += 1;
    }
    pow
};

/// `%.6e` of a normal float of magnitude in [10^-16, 2^64), as the bytes
/// of a word, the first lowest, and their count:
/// its seven significant digits are the exact value scaled by a power of
/// ten and rounded to an integer, ties to even, all in integers. The
/// float is `m * 2^e` (`m` its 53-bit significand); scaled by `10^k` so
/// that it lies in [10^6, 10^7): for `k >= 0`, `m * 10^k` (below 2^127)
/// shifted right by `-e` bits, the bits shifted out the remainder; for `k
/// < 0`, `m * 2^e` divided by `10^-k`, numerator and divisor in 64 bits.
/// `None` for anything else (zero, subnormals, larger or smaller
/// magnitudes), which goes the other ways.
#[inline]
fn scaled_float(x: f64) -> Option<(u128, usize)> {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    if biased == 0 || biased == 0x7FF {
        return None;
    }
    let m = (bits & ((1 << 52) - 1)) | (1 << 52);
    let e = biased - 1075;
    // floor(log10(2^(e + 52))): the first digit's power of ten, or one less.
    let mut e10 = log10_pow2(e + 52);
    let mut digits = scale_round(m, e, 6 - e10)?;
    if digits > 10_000_000 {
        e10 += 1;
        digits = scale_round(m, e, 6 - e10)?;
    }
    if digits == 10_000_000 {
        // Rounded up to the next power of ten: one digit more.
        e10 += 1;
        digits = 1_000_000;
    }
    Some(float_text(digits, e10, x.is_sign_negative()))
}

/// The text of every exponent from -99 to 99 as `%.6e` ends, `e`, its
/// sign and two digits (`e-16`, `e+00`), as the bytes of a word, the
/// first lowest: one load for `float_text`.
const EXPONENT_TEXT: [u32; 199] = {
    let mut texts = [0u32; 199];
    let mut i = 0;
    while i < 199 {
        let e = i as i32 - 99;
        let sign = if e < 0 { b'-' } else { b'+' };
        let magnitude = e.unsigned_abs();
        texts[i] = u32::from_le_bytes([
            b'e',
            sign,
            b'0' + (magnitude / 10) as u8,
            b'0' + (magnitude % 10) as u8,
        ]);
        i += 1;
    }
    texts
};

/// The text of `%.6e` whose seven significant digits are `digits` (in
/// [10^6, 10^7)) and whose exponent is `e10` (|e10| below 100), as the
/// bytes of a word, the first lowest, and their count: built in
/// registers and stored from them (a block copied through memory waits
/// for its stores). `d.dddddde`, then the exponent's sign and two digits.
/// The pairs of digits after the first are each found from two
/// quotients of `digits`, not one after the other.
#[inline(always)]
fn float_text(digits: u32, e10: i32, negative: bool) -> (u128, usize) {
    let pair = |n: u32| u64::from(u16::from_le_bytes(two_digits(n)));
    let (first, four, two) = (digits / 1_000_000, digits / 10_000, digits / 100);
    let low = u64::from(b'0' + first as u8)
        | u64::from(b'.') << 8
        | pair(four - first * 100) << 16
        | pair(two - four * 100) << 32
        | pair(digits - two * 100) << 48;
    let exponent = EXPONENT_TEXT[(e10 + 99).clamp(0, 198) as usize];
    let text = u128::from(low) | u128::from(exponent) << 64;
    if negative {
        (text << 8 | u128::from(b'-'), 13)
    } else {
        (text, 12)
    }
}

/// `m * 2^e * 10^k` rounded to an integer, ties to even; `None` when it
/// would not be computed exactly in 128 bits (`k >= 0`) or 64 (`k < 0`).
#[inline(always)]
fn scale_round(m: u64, e: i32, k: i32) -> Option<u32> {
    let (q, up) = if k >= 0 {
        let shift = u32::try_from(-e).ok()?;
        if k > 22 || !(1..=127).contains(&shift) {
            return None;
        }
        let product = u128::from(m) * POW10[k as usize];
        let half = 1u128 << (shift - 1);
        let rem = product & ((half << 1) - 1);
        let q = product >> shift;
        (q, rem > half || (rem == half && q & 1 == 1))
    } else {
        let j = (-k) as usize;
        if j > 19 {
            return None;
        }
        let pow = POW10[j] as u64;
        let (n, d) = if e >= 0 {
            // m is below 2^53: up to 11 more bits fit.
            (m.checked_shl(e as u32).filter(|_| e <= 11)?, pow)
        } else {
            let shift = (-e) as u32;
            if shift >= pow.leading_zeros() {
                return None;
            }
            (m, pow << shift)
        };
        let (q, rem) = (n / d, n % d);
        let other = d - rem;
        (u128::from(q), rem > other || (rem == other && q & 1 == 1))
    };
    u32::try_from(q + u128::from(up)).ok()
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

    /// What `write_big` writes at the budget `max`, after `before`.
    fn big_written(before: &[u8], negative: bool, words: &[usize], max: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut text = BoundedText::new(&mut out, max);
        text.put(before);
        write_big(negative, words, &mut text);
        text.finish();
        out
    }

    /// The decimal text of `words`, the slow way: divided by 10 digit
    /// by digit, 32 bits at a time.
    fn slow_text(negative: bool, words: &[usize]) -> String {
        let mut limbs: Vec<u64> = words
            .iter()
            .flat_map(|w| [*w as u64 & 0xFFFF_FFFF, *w as u64 >> 32])
            .collect();
        let mut digits = Vec::new();
        while limbs.iter().any(|l| *l != 0) {
            let mut rem = 0;
            for l in limbs.iter_mut().rev() {
                let n = rem << 32 | *l;
                (*l, rem) = (n / 10, n % 10);
            }
            digits.push(b'0' + rem as u8);
        }
        if digits.is_empty() {
            digits.push(b'0');
        }
        if negative {
            digits.push(b'-');
        }
        digits.reverse();
        String::from_utf8(digits).unwrap()
    }

    #[test]
    fn bignum_texts_are_their_digits() {
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1Du64);
        let e38 = 10u128.pow(38);
        let mut cases: Vec<Vec<usize>> = vec![
            vec![usize::MAX],
            vec![1 << 63],
            vec![0, 1],
            vec![0, 0x10],
            vec![1_000_000_000],
            vec![10_000_000_000_000_000_000],
            vec![e38 as u64 as usize, (e38 >> 64) as usize],
            vec![usize::MAX; 2],
            vec![usize::MAX; 4],
            vec![0, 0, 0, 1],
            vec![1 << 36, 0, 0, 0],
            vec![0; 3],
            vec![usize::MAX; BIG_WORDS_MAX],
        ];
        for _ in 0..20_000 {
            let len = (next() % 8) as usize + 1;
            // Some words small, so that chunks of zeros come up.
            cases.push(
                (0..len)
                    .map(|_| (next() >> (next() % 64)) as usize)
                    .collect(),
            );
        }
        for len in [5, 17, 63, 64] {
            cases.push((0..len).map(|_| next() as usize).collect());
        }
        // Every word count's edges, to one word more than the words kept
        // in registers, without zero words on top (a bignum's).
        for n in crate::test_random::near_powers(5) {
            let len = n.iter().rposition(|w| *w != 0).map_or(1, |i| i + 1);
            cases.push(n[..len].iter().map(|w| *w as usize).collect());
        }
        for words in cases {
            for negative in [false, true] {
                let want = slow_text(negative, &words);
                let got = big_written(b"", negative, &words, 65536);
                assert_eq!(String::from_utf8(got).unwrap(), want, "{words:x?}");
            }
        }
        let all = [usize::MAX; BIG_WORDS_MAX];
        let t = String::from_utf8(big_written(b"", false, &all, 65536)).unwrap();
        assert_eq!(t.len(), 1234);
        assert!(
            t.starts_with("104438888141315250669175271071")
                && t.ends_with("436090243804708340403154190335")
        );
        // Of more than 2^4096: cut before it.
        assert_eq!(
            big_written(b"[", false, &[1; BIG_WORDS_MAX + 1], 100),
            b"[..."
        );
    }

    #[test]
    fn bignum_texts_cut_at_every_budget() {
        // 2^100, -(2^200), 2^4096 - 1 and some of three and four words:
        // cut at every byte, after a prefix, as the text put whole is cut.
        let cases: [(bool, Vec<usize>); 7] = [
            (false, vec![0, 1 << 36]),
            (true, vec![0, 0, 0, 1 << 8]),
            (false, vec![usize::MAX; BIG_WORDS_MAX]),
            (true, vec![usize::MAX; 4]),
            (false, vec![0, 0, 1]),
            (true, vec![12345, 0, 1 << 40]),
            (false, vec![7, 0, 0, 1 << 63]),
        ];
        for (negative, words) in cases {
            let whole = slow_text(negative, &words);
            for max in (3..whole.len() + 12).filter(|m| *m < 200 || m % 97 == 0) {
                let mut want = Vec::new();
                let mut text = BoundedText::new(&mut want, max);
                text.put(b"<<");
                text.put(whole.as_bytes());
                text.finish();
                assert_eq!(big_written(b"<<", negative, &words, max), want, "{max}");
            }
        }
    }

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

    /// Checks that `way` writes each finite float of `xs` it writes as
    /// `exact` does; answers how many it wrote.
    fn agreeing_with_exact(xs: impl Iterator<Item = f64>, way: fn(f64) -> Option<String>) -> usize {
        let mut taken = 0;
        for x in xs.filter(|x| x.is_finite()) {
            if let Some(text) = way(x) {
                taken += 1;
                assert_eq!(text, exact(x), "{x:e} ({:#x})", x.to_bits());
            }
        }
        taken
    }

    /// The text of a word and its length, as `scaled_float` and
    /// `rounded_float` answer them.
    fn word_text(word: Option<(u128, usize)>) -> Option<String> {
        word.map(|(word, len)| String::from_utf8(word.to_le_bytes()[..len].to_vec()).unwrap())
    }

    fn scaled(x: f64) -> Option<String> {
        word_text(scaled_float(x))
    }

    /// 300,000 floats of each sort: random bits; magnitudes spread over
    /// the binary exponents `exponents` with random signs; decimals of
    /// fewer digits than `digits_below`'s, at the decimal `exponents10`
    /// (the ties at the seventh digit and those near them).
    fn sample_floats(
        next: &mut impl FnMut() -> u64,
        exponents: std::ops::Range<i64>,
        digits_below: u64,
        exponents10: std::ops::Range<i64>,
    ) -> Vec<f64> {
        let mut floats: Vec<f64> = (0..300_000).map(|_| f64::from_bits(next())).collect();
        let span = |range: &std::ops::Range<i64>, r: u64| {
            range.start + (r % (range.end - range.start) as u64) as i64
        };
        for _ in 0..300_000 {
            let exponent = (span(&exponents, next()) + 1023) as u64;
            let sign = next() & 1;
            floats.push(f64::from_bits(
                (next() & ((1 << 52) - 1)) | exponent << 52 | sign << 63,
            ));
        }
        for _ in 0..300_000 {
            let digits = next() % digits_below;
            let e = span(&exponents10, next());
            floats.push(format!("{digits}e{e}").parse().unwrap());
        }
        floats
    }

    /// Ties at the seventh digit (even and odd) and near them, values
    /// that round up to the next power of ten, the ranges' ends, powers
    /// of ten and of two, zeros, subnormals, infinities and NaNs.
    fn picked_floats() -> Vec<f64> {
        let mut picked = vec![
            1.5,
            -1.5,
            0.5,
            1234567.5,
            1234568.5,
            12345675.0,
            12345685.0,
            -1.2345675e8,
            1.2345675,
            9.9999995,
            9.9999996,
            9.99999949999,
            9999999.5,
            99999995.0,
            0.1,
            0.3,
            4.35,
            1e-16,
            9.99e-17,
            1e-17,
            18446744073709549568.0,
            18446744073709551616.0,
            9.9999999e27,
            1e28,
            f64::MIN_POSITIVE,
            5e-324,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NAN,
        ];
        picked.extend((-18..=30).map(|e| 10f64.powi(e)));
        picked.extend((-60..=100).map(|e| 2f64.powi(e)));
        picked
    }

    #[test]
    fn scaled_texts_are_the_exact_rounding() {
        let mut next = crate::test_random::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let picked = picked_floats();
        let sampled = sample_floats(&mut next, -80..80, 100_000_000, -24..16);
        let taken = agreeing_with_exact(picked.into_iter().chain(sampled), scaled);
        assert!(taken > 400_000, "{taken}");
        assert_eq!(scaled(1.5).as_deref(), Some("1.500000e+00"));
        assert_eq!(scaled(1234567.5).as_deref(), Some("1.234568e+06"));
        assert_eq!(scaled(1234568.5).as_deref(), Some("1.234568e+06"));
        assert_eq!(scaled(12345675.0).as_deref(), Some("1.234568e+07"));
        assert_eq!(scaled(9999999.5).as_deref(), Some("1.000000e+07"));
        assert_eq!(scaled(-2e-16).as_deref(), Some("-2.000000e-16"));
        // Outside the range, zeros and subnormals: the other ways.
        for x in [0.0, -0.0, 5e-324, f64::MIN_POSITIVE, 1e-17, 1e20, f64::MAX] {
            assert_eq!(scaled(x), None, "{x:e}");
        }
    }

    fn rounded(x: f64) -> Option<String> {
        word_text(rounded_float(x))
    }

    #[test]
    fn rounded_texts_are_the_exact_rounding() {
        let mut next = crate::test_random::xorshift(0xD1B5_4A32_D192_ED03u64);
        let mut picked = picked_floats();
        // The float next to a tie, on both sides, at every exponent.
        for e in -24..=30 {
            let tie: f64 = format!("1234567.5e{}", e - 6).parse().unwrap();
            picked.extend([
                tie,
                f64::from_bits(tie.to_bits() - 1),
                f64::from_bits(tie.to_bits() + 1),
            ]);
        }
        let sampled = sample_floats(&mut next, -80..120, 1_000_000_000, -25..25);
        let taken = agreeing_with_exact(picked.into_iter().chain(sampled), rounded);
        assert!(taken > 450_000, "{taken}");
        // A tie itself is left to the exact ways.
        assert_eq!(rounded(1234567.5), None);
        assert_eq!(rounded(1.5).as_deref(), Some("1.500000e+00"));
        assert_eq!(rounded(-2e-16).as_deref(), Some("-2.000000e-16"));
        assert_eq!(rounded(9.99999951).as_deref(), Some("1.000000e+01"));
        for x in [0.0, -0.0, 5e-324, f64::MIN_POSITIVE, 1e-17, 1e30, f64::MAX] {
            assert_eq!(rounded(x), None, "{x:e}");
        }
    }

    #[test]
    fn log10_pow2_is_the_floor() {
        for n in -1100..=1100 {
            let exact = (f64::from(n) * std::f64::consts::LOG10_2).floor() as i32;
            assert_eq!(log10_pow2(n), exact, "{n}");
        }
    }

    #[test]
    fn short_texts_are_the_exact_rounding() {
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1Du64);
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
        let shorts = agreeing_with_exact(picked.into_iter().chain(random).chain(decimal), short);
        assert!(shorts > 200_000, "{shorts}");
        // Subnormals are never taken the short way.
        assert_eq!(short(5e-324), None);
    }
}
