//! Bignums, read in place: a header whose tag says the sign (ERTS's
//! `POS_BIG_SUBTAG`, `NEG_BIG_SUBTAG`) and whose arity is the number of
//! digit words that follow, least significant first, each a machine word
//! (`big.h`: `ErtsDigit` is a `UWord` on 64-bit machines).
//!
//! `init` learns both headers' tag bits from bignums the VM makes at load
//! and keeps them only if the digits read agree with the values made;
//! otherwise every bignum goes through enif and the VM's printer.

use super::word::{boxed, term_word};
use crate::decimal::two_digits;
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A header's tag bits (primary and subtag) and the shift of its arity.
const TAG_BITS: usize = 0x3F;
const ARITY_SHIFT: u32 = 6;

/// The tag bits of a positive and of a negative bignum's header, learned
/// at load; 0 (a tuple's, never a bignum's) when not learned.
static POS_TAG: AtomicUsize = AtomicUsize::new(0);
static NEG_TAG: AtomicUsize = AtomicUsize::new(0);

/// What the load learned: the two tags.
#[derive(Clone, Copy)]
pub struct Known {
    pos: usize,
    neg: usize,
}

impl Known {
    #[cfg(test)]
    pub const NONE: Known = Known { pos: 0, neg: 0 };

    /// The header tag bits of both signs, as learned.
    pub fn tags(&self) -> [Option<usize>; 2] {
        [self.pos, self.neg].map(|tag| (tag != 0).then_some(tag))
    }

    /// The sign and digits of the bignum `obj`, whose header is `header`;
    /// `None` if it is not a bignum in the learned layout.
    ///
    /// # Safety
    /// `obj` must be a live boxed term's object, `header` its first word,
    /// and the term must outlive 'a.
    #[inline]
    pub unsafe fn digits<'a>(
        &self,
        obj: *const usize,
        header: usize,
    ) -> Option<(bool, &'a [usize])> {
        let tag = header & TAG_BITS;
        let negative = if tag == self.pos && tag != 0 {
            false
        } else if tag == self.neg && tag != 0 {
            true
        } else {
            return None;
        };
        let arity = header >> ARITY_SHIFT;
        if arity == 0 {
            return None;
        }
        // SAFETY: a bignum's header counts the digit words after it, which
        // live as long as the term (the caller's promise).
        Some((negative, unsafe {
            std::slice::from_raw_parts(obj.add(1), arity)
        }))
    }
}

/// The tags as learned at load.
#[inline]
pub fn known() -> Known {
    Known {
        pos: POS_TAG.load(Ordering::Relaxed),
        neg: NEG_TAG.load(Ordering::Relaxed),
    }
}

/// Learns the tags from bignums the VM makes; called from the NIF's load.
/// Returns whether bignums will be read in place.
pub fn init(env: *mut ErlNifEnv) -> bool {
    let Some(known) = learn(env) else {
        return false;
    };
    POS_TAG.store(known.pos, Ordering::Relaxed);
    NEG_TAG.store(known.neg, Ordering::Relaxed);
    true
}

fn learn(env: *mut ErlNifEnv) -> Option<Known> {
    if usize::BITS != 64 {
        return None;
    }
    // SAFETY: making integers in the load's environment.
    let (max, min) = unsafe {
        (
            rustler::sys::enif_make_uint64(env, u64::MAX),
            rustler::sys::enif_make_int64(env, i64::MIN),
        )
    };
    let header = |term: ErlNifTerm| {
        // SAFETY: a live boxed term made above: its object starts with a
        // header.
        boxed(term_word(term)).map(|obj| (obj, unsafe { *obj }))
    };
    let (max_obj, max_header) = header(max)?;
    let (min_obj, min_header) = header(min)?;
    let known = Known {
        pos: max_header & TAG_BITS,
        neg: min_header & TAG_BITS,
    };
    if known.pos == known.neg || known.pos == 0 || known.neg == 0 {
        return None;
    }
    // SAFETY: the objects of the two terms made above, their headers.
    let (max_digits, min_digits) = unsafe {
        (
            known.digits(max_obj, max_header)?,
            known.digits(min_obj, min_header)?,
        )
    };
    (max_digits == (false, &[usize::MAX][..]) && min_digits == (true, &[1usize << 63][..]))
        .then_some(known)
}

/// The decimal text of a bignum of at most `MAX_DIGITS` words: `-` when
/// `negative`, then its digits, written at the end of `buf`; answers
/// where the text starts. Schoolbook division by 10^19, word by word:
/// quadratic in the words, at most 64 of them. Each step divides a
/// two-word value whose high word is below 10^19 by 10^19 (`div_step`).
pub fn decimal(negative: bool, digits: &[usize], buf: &mut [u8; TEXT_MAX]) -> Option<usize> {
    decimal_in::<MAX_DIGITS, TEXT_MAX>(negative, digits, buf)
}

/// The most digit words `decimal_small` converts: below 2^256.
pub const SMALL_DIGITS: usize = 4;

/// Room for the text of any bignum below 2^256, 78 digits and a sign,
/// and for its most significant chunk's zeros.
pub const SMALL_TEXT_MAX: usize = 100;

/// `decimal` of a bignum below 2^256, in buffers of its size: most
/// bignums met are, and they need not set up room for 2^4096.
#[inline]
pub fn decimal_small(
    negative: bool,
    digits: &[usize],
    buf: &mut [u8; SMALL_TEXT_MAX],
) -> Option<usize> {
    decimal_in::<SMALL_DIGITS, SMALL_TEXT_MAX>(negative, digits, buf)
}

/// `decimal` for at most `W` words, `T` bytes room for their text.
#[inline(always)]
fn decimal_in<const W: usize, const T: usize>(
    negative: bool,
    digits: &[usize],
    buf: &mut [u8; T],
) -> Option<usize> {
    // W words have at most W * 64 * log10(2) + 1 digits, and a sign; the
    // most significant chunk is written as 19 digits before its zeros are
    // skipped.
    const { assert!(W * 64 * 30103 / 100_000 + 2 + 19 < T) };
    if digits.len() > W {
        return None;
    }
    let mut words = [0u64; W];
    let mut len = digits.len();
    for (w, d) in words.iter_mut().zip(digits) {
        *w = *d as u64;
    }
    while len > 0 && words[len - 1] == 0 {
        len -= 1;
    }
    let mut at = T;
    loop {
        // Divide words[..len] by 10^19; the remainder is 19 digits.
        let mut rem = 0u64;
        for w in words[..len].iter_mut().rev() {
            (*w, rem) = div_step(rem, *w);
        }
        while len > 0 && words[len - 1] == 0 {
            len -= 1;
        }
        // All 19 digits, leading zeros too: the most significant chunk
        // then starts at its first digit.
        nineteen_digits_before(rem, buf, at);
        if len == 0 {
            at -= rem.checked_ilog10().unwrap_or(0) as usize + 1;
            break;
        }
        at -= 19;
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    Some(at)
}

/// Writes the 19 digits of `n` (below 10^19), leading zeros too, so that
/// they end at `end`: three parts of at most eight digits, each written
/// from four pairs, so that no digit waits for the divisions of all
/// before it.
#[inline(always)]
fn nineteen_digits_before(n: u64, buf: &mut [u8], end: usize) {
    let eight = |part: u64| -> [u8; 8] {
        let (high, low) = ((part / 10_000) as u32, (part % 10_000) as u32);
        let [a, b] = two_digits(high / 100);
        let [c, d] = two_digits(high % 100);
        let [e, f] = two_digits(low / 100);
        let [g, h] = two_digits(low % 100);
        [a, b, c, d, e, f, g, h]
    };
    let top = (n / 10_000_000_000_000_000) as u32;
    let [t, u] = two_digits(top % 100);
    buf[end - 19..end - 16].copy_from_slice(&[b'0' + (top / 100) as u8, t, u]);
    buf[end - 16..end - 8].copy_from_slice(&eight(n / 100_000_000 % 100_000_000));
    buf[end - 8..end].copy_from_slice(&eight(n % 100_000_000));
}

/// 10^19: the largest power of ten below 2^64, its top bit set.
const CHUNK: u64 = 10_000_000_000_000_000_000;
/// floor((2^128 - 1) / CHUNK) - 2^64: CHUNK's reciprocal, so that a step
/// divides by multiplying (Möller and Granlund, "Improved division by
/// invariant integers", 2011, algorithm 4).
const CHUNK_INV: u64 = (u128::MAX / CHUNK as u128 - (1u128 << 64)) as u64;

/// `(high * 2^64 + low) / CHUNK` and its remainder, `high` below CHUNK.
#[inline(always)]
fn div_step(high: u64, low: u64) -> (u64, u64) {
    let product = u128::from(CHUNK_INV) * u128::from(high);
    let sum = product.wrapping_add((u128::from(high) << 64) | u128::from(low));
    let (mut q, q0) = (((sum >> 64) as u64).wrapping_add(1), sum as u64);
    let mut r = low.wrapping_sub(q.wrapping_mul(CHUNK));
    if r > q0 {
        q = q.wrapping_sub(1);
        r = r.wrapping_add(CHUNK);
    }
    if r >= CHUNK {
        q += 1;
        r -= CHUNK;
    }
    (q, r)
}

/// The most digit words a bignum written here has: below 2^4096.
pub const MAX_DIGITS: usize = 64;

/// Room for the text of any bignum below 2^4096, 1234 digits and a sign,
/// and for its most significant chunk's zeros.
pub const TEXT_MAX: usize = 1260;

#[cfg(test)]
mod tests {
    use super::*;

    fn text(negative: bool, digits: &[usize]) -> String {
        let mut buf = [0u8; TEXT_MAX];
        let at = decimal(negative, digits, &mut buf).unwrap();
        String::from_utf8(buf[at..].to_vec()).unwrap()
    }

    #[test]
    fn div_step_is_division() {
        let mut next = crate::test_random::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let edges = [0, 1, CHUNK - 1, CHUNK / 2, u64::MAX, 1 << 63];
        for i in 0..200_000 {
            let (high, low) = if i < 36 {
                (edges[i / 6] % CHUNK, edges[i % 6])
            } else {
                (next() % CHUNK, next())
            };
            let n = (u128::from(high) << 64) | u128::from(low);
            let want = (
                (n / u128::from(CHUNK)) as u64,
                (n % u128::from(CHUNK)) as u64,
            );
            assert_eq!(div_step(high, low), want, "{high} {low}");
        }
    }

    #[test]
    fn decimal_of_words() {
        assert_eq!(text(false, &[usize::MAX]), u64::MAX.to_string());
        assert_eq!(text(true, &[1 << 63]), "-9223372036854775808");
        assert_eq!(text(false, &[0, 1]), (1u128 << 64).to_string());
        assert_eq!(text(false, &[0, 0x10]), (1u128 << 68).to_string());
        // 10^9, 10^19 and 10^38: chunks of all zeros.
        assert_eq!(text(false, &[1_000_000_000]), "1000000000");
        assert_eq!(text(true, &[999_999_999]), "-999999999");
        assert_eq!(
            text(false, &[10_000_000_000_000_000_000]),
            "10000000000000000000"
        );
        let e38 = 10u128.pow(38);
        assert_eq!(
            text(true, &[e38 as u64 as usize, (e38 >> 64) as usize]),
            format!("-{e38}")
        );
        assert_eq!(
            text(false, &[usize::MAX, usize::MAX]),
            u128::MAX.to_string()
        );
        // 2^4096 - 1: 1234 digits, the largest written.
        let all = [usize::MAX; MAX_DIGITS];
        let t = text(false, &all);
        assert_eq!(t.len(), 1234);
        assert!(
            t.starts_with("104438888141315250669175271071")
                && t.ends_with("436090243804708340403154190335")
        );
        assert!(decimal(false, &[0; MAX_DIGITS + 1], &mut [0; TEXT_MAX]).is_none());
    }

    #[test]
    fn nineteen_digits_with_their_zeros() {
        let mut next = crate::test_random::xorshift(0x9E37_79B9_7F4A_7C15);
        let picked = [0, 1, 99_999_999, 100_000_000, CHUNK / 10, CHUNK - 1];
        let random = (0..100_000).map(|_| (next() % CHUNK) >> (next() % 64));
        for n in picked.into_iter().chain(random) {
            let mut buf = [b'x'; 21];
            nineteen_digits_before(n, &mut buf, 20);
            assert_eq!(buf, *format!("x{n:019}x").as_bytes(), "{n}");
        }
    }

    #[test]
    fn small_decimal_agrees_with_decimal() {
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1Du64);
        let mut cases: Vec<Vec<usize>> = vec![
            vec![usize::MAX; SMALL_DIGITS],
            vec![0, 0, 0, 1],
            vec![0, 1],
            vec![1 << 36, 0, 0, 0],
        ];
        for _ in 0..20_000 {
            let len = (next() % SMALL_DIGITS as u64) as usize + 1;
            // Some words small, so that chunks of zeros come up.
            cases.push(
                (0..len)
                    .map(|_| (next() >> (next() % 64)) as usize)
                    .collect(),
            );
        }
        for digits in cases {
            for negative in [false, true] {
                let mut small = [0u8; SMALL_TEXT_MAX];
                let at = decimal_small(negative, &digits, &mut small).unwrap();
                assert_eq!(
                    small[at..],
                    *text(negative, &digits).as_bytes(),
                    "{digits:x?}"
                );
            }
        }
        assert!(decimal_small(false, &[1; SMALL_DIGITS + 1], &mut [0; SMALL_TEXT_MAX]).is_none());
    }
}
