//! Decimal digits, written without allocating: the integers of term
//! texts (bignums' too), references' numbers, code locations' arities.

/// The most digits a u64 has.
pub const DECIMAL_MAX: usize = 20;

/// The two digits of every number below 100, in order.
const PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0u8; 2]; 100];
    let mut n = 0;
    while n < 100 {
        pairs[n] = [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
        n += 1;
    }
    pairs
};

/// The two digits of `n`, below 100.
#[inline(always)]
pub fn two_digits(n: u32) -> [u8; 2] {
    PAIRS[n as usize]
}

/// The digits of `n`, below 10000, in the first bytes of a block, and
/// how many there are: no loop, no division but by 100.
#[inline(always)]
pub fn below_10000(n: u16) -> ([u8; 4], usize) {
    let (high, low) = (usize::from(n / 100), usize::from(n % 100));
    let [a, b] = PAIRS[high];
    let [c, d] = PAIRS[low];
    match n {
        0..=9 => ([d, 0, 0, 0], 1),
        10..=99 => ([c, d, 0, 0], 2),
        100..=999 => ([b, c, d, 0], 3),
        _ => ([a, b, c, d], 4),
    }
}

/// The decimal digits of `n`, written at the end of `buf`, two at a time.
#[inline]
pub fn decimal(n: u64, buf: &mut [u8; DECIMAL_MAX]) -> &[u8] {
    let at = decimal_before(n, buf, DECIMAL_MAX);
    &buf[at..]
}

/// `decimal_before` of a 32-bit number (a reference's numbers): 32-bit
/// divisions, four digits a step, the bounds checked once.
#[inline]
pub fn decimal_u32_before(mut n: u32, buf: &mut [u8], end: usize) -> usize {
    const U32_DIGITS: usize = 10;
    assert!(end >= U32_DIGITS && end <= buf.len());
    let mut at = end;
    let mut put_pair = |at: &mut usize, pair: u32| {
        *at -= 2;
        // SAFETY: at most ten digits are written, all before `end`, and
        // `end` is at least ten (checked above): `at` stays in `buf`.
        unsafe {
            buf.as_mut_ptr()
                .add(*at)
                .cast::<[u8; 2]>()
                .write_unaligned(PAIRS[pair as usize]);
        }
    };
    while n >= 10_000 {
        let four = n % 10_000;
        n /= 10_000;
        put_pair(&mut at, four % 100);
        put_pair(&mut at, four / 100);
    }
    if n >= 100 {
        put_pair(&mut at, n % 100);
        n /= 100;
    }
    if n >= 10 {
        put_pair(&mut at, n);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    at
}

/// Writes the decimal digits of `n` into `buf` so that they end at `end`;
/// answers where they start. `buf` must hold them (`DECIMAL_MAX` bytes
/// before `end` always do).
#[inline]
pub fn decimal_before(mut n: u64, buf: &mut [u8], end: usize) -> usize {
    let mut at = end;
    while n >= 100 {
        let pair = (n % 100) as usize;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair]);
    }
    if n >= 10 {
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[n as usize]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    at
}

/// 10^19: the largest power of ten below 2^64, its top bit set; a
/// bignum's digits are found in chunks of 19.
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

/// `div_step` of a pass's first step, whose `high` word is often 0 and
/// `low` below 10^19: then its quotient is 0 and `low` the remainder,
/// with no step, which shortens the chain of dependent steps when the
/// number is shorter than the pass could be.
#[inline(always)]
fn top_step(high: u64, low: u64) -> (u64, u64) {
    if high == 0 && low < CHUNK {
        (0, low)
    } else {
        div_step(high, low)
    }
}

/// The most chunks a number of `words` 64-bit words has: its digits,
/// at most `words * 64 * log10(2) + 1`, by 19.
pub const fn chunks_max(words: usize) -> usize {
    (words * 64 * 30103 / 100_000 + 1).div_ceil(19)
}

/// The number of `words` (64-bit, least significant first) in base
/// 10^19: its chunks, least significant first, into `chunks`, and how
/// many there are (none for zero). Schoolbook division by 10^19, word by
/// word, quadratic in the words; each step divides a two-word value
/// whose high word is below 10^19 (`div_step`). `words` is left holding
/// zeros. `C` must be `chunks_max` of the words at least; the chunks past
/// `C` are dropped.
#[inline(always)]
pub fn chunks<const C: usize>(words: &mut [u64], chunks: &mut [u64; C]) -> usize {
    let mut len = words.len();
    while len > 0 && words[len - 1] == 0 {
        len -= 1;
    }
    let mut count = 0;
    while len > 0 && count < C {
        // A top word below 10^19 is the first step's remainder, its
        // quotient 0: the quotient has one word fewer. Else a quotient by
        // less than 2^64 has at most one word fewer.
        let mut rem = 0u64;
        let top = words[len - 1];
        if top < CHUNK {
            rem = top;
            len -= 1;
        }
        for w in words[..len].iter_mut().rev() {
            (*w, rem) = div_step(rem, *w);
        }
        if len > 0 && words[len - 1] == 0 {
            len -= 1;
        }
        chunks[count] = rem;
        count += 1;
    }
    count
}

/// `chunks` of a number below 2^128, `high` and `low` its words: at
/// most one division step when `high` is below 10^19, else two, and
/// either word below 2 * 10^19 (as every word is) needs no division by
/// 10^19 beyond a subtraction.
#[inline(always)]
pub fn chunks_u128(high: u64, low: u64) -> ([u64; 3], usize) {
    if high == 0 {
        return if low < CHUNK {
            ([low, 0, 0], 1)
        } else {
            ([low - CHUNK, 1, 0], 2)
        };
    }
    if high < CHUNK {
        let (q, r) = div_step(high, low);
        return if q < CHUNK {
            ([r, q, 0], 2)
        } else {
            ([r, q - CHUNK, 1], 3)
        };
    }
    // The quotient is 2^64 + q: its chunks by one more step.
    let (q, r) = div_step(high - CHUNK, low);
    let (top, middle) = div_step(1, q);
    ([r, middle, top], 3)
}

/// `chunks` of a number below 2^256, `words` its words (least
/// significant first), unrolled for the words to stay in registers: four
/// passes, each dividing the last one's quotient by 10^19 (`div_step`
/// from its top word down), 3 + 3 + 2 + 1 steps at most, a pass's first
/// step skipped when the number is too short for it (`top_step`).
/// Answers the five chunks, least significant first, and how many there
/// are up to the most significant one not zero (1 for zero).
///
/// Each pass's quotient is known to be small enough for the next pass to
/// start at the word below its top: 2^256 / 10^19 is below 2^193 (its
/// top word 0 or 1), / 10^38 below 2^130, / 10^57 below 2^67, / 10^76
/// below 12; every top word is below 10^19, as `div_step` needs, the
/// first's after one subtraction (a word is below 2 * 10^19).
#[inline(always)]
pub fn chunks_u256(words: [u64; 4]) -> ([u64; 5], usize) {
    let [a0, a1, a2, a3] = words;
    let top = u64::from(a3 >= CHUNK);
    let (b2, r) = top_step(a3 - top * CHUNK, a2);
    let (b1, r) = div_step(r, a1);
    let (b0, c0) = div_step(r, a0);
    let (d2, r) = top_step(top, b2);
    let (d1, r) = div_step(r, b1);
    let (d0, c1) = div_step(r, b0);
    let (e1, r) = top_step(d2, d1);
    let (e0, c2) = div_step(r, d0);
    let (c4, c3) = top_step(e1, e0);
    let chunked = [c0, c1, c2, c3, c4];
    let count = chunked.iter().rposition(|c| *c != 0).map_or(1, |i| i + 1);
    (chunked, count)
}

/// The most bytes `chunks_text_at` writes of `count` chunks: a sign and
/// 19 digits a chunk (one chunk when there is none: `0`).
pub const fn chunks_text_max(count: usize) -> usize {
    1 + 19 * if count == 0 { 1 } else { count }
}

/// How far past the text's end `chunks_text_at` may store: a word's
/// store of the leading chunk's last digits overhangs by up to 7 bytes.
pub const CHUNKS_TEXT_OVERHANG: usize = 8;

/// Writes the text of a number from its `chunks` (least significant
/// first, as `chunks` answers them) at `out`: `-` when `negative`, then
/// its digits, the most significant chunk's without leading zeros (`0`
/// when there is no chunk); answers the length. Written from the first
/// digit on, by word stores each of which may overhang the digits it
/// holds; the next store covers the overhang. No chunk may be 10^19 or
/// more: a leading chunk that large would be written with 20 digits, one
/// past the length promised below.
///
/// # Safety
/// `out` must be valid for writes of `chunks_text_max(chunks.len()) +
/// CHUNKS_TEXT_OVERHANG` bytes; the answer is at most
/// `chunks_text_max(chunks.len())`.
#[inline(always)]
pub unsafe fn chunks_text_at(negative: bool, chunks: &[u64], out: *mut u8) -> usize {
    debug_assert!(chunks.iter().all(|&c| c < CHUNK));
    let mut at = usize::from(negative);
    // SAFETY: every store below is within the bytes the caller lends:
    // the sign's byte, at most 19 digits and a 7-byte overhang for the
    // leading chunk, then 19 bytes a chunk (the last store ending at its
    // last digit).
    unsafe {
        out.write(b'-');
        let (top, rest) = chunks.split_last().unwrap_or((&0, &[][..]));
        at += leading_digits_at(*top, out.add(at));
        for chunk in rest.iter().rev() {
            nineteen_digits_at(*chunk, out.add(at));
            at += 19;
        }
    }
    at
}

/// 10^8: the digits of a chunk are split in parts of eight.
const E8: u64 = 100_000_000;

/// Writes the digits of `n` (below 10^19), no leading zeros (`0` for
/// zero), at `out`: its first part of up to eight digits by a word store
/// shifted past their leading zeros (counted from the zero bytes of
/// `eight_digit_values`, no logarithm), then the eight or 16 after it;
/// `n` is split only as far as its size needs. Answers their count.
/// Stores up to 7 bytes past them.
///
/// # Safety
/// `out` must be valid for writes of 27 bytes.
#[inline(always)]
unsafe fn leading_digits_at(n: u64, out: *mut u8) -> usize {
    let (first, tail, middle, low) = if n < E8 {
        (n, 0, 0, 0)
    } else if n < E8 * E8 {
        (n / E8, 1, 0, n % E8)
    } else {
        let rest = n % (E8 * E8);
        (n / (E8 * E8), 2, rest / E8, rest % E8)
    };
    let values = eight_digit_values(first);
    // The leading zeros are the low bytes that are zero; all eight for
    // zero, of which the last is written.
    let zeros = (values.trailing_zeros() / 8).min(7);
    let len = 8 - zeros as usize;
    // SAFETY: the stores reach at most 8 + 16 bytes from `out` (the
    // caller lends 27): the first's `len` digits, then eight for each
    // of the `tail` parts after it.
    unsafe {
        store_word(out, (values | ASCII_ZEROS) >> (8 * zeros));
        if tail == 2 {
            sixteen_digits_at(middle, low, out.add(len));
        } else if tail == 1 {
            store_word(out.add(len), eight_digits(low));
        }
    }
    len + 8 * tail
}

/// Writes the 19 digits of `n` (below 10^19), leading zeros too, at
/// `out`: its first three from a table, then its last 16, in two parts
/// of eight (`sixteen_digits_at`).
///
/// # Safety
/// `out` must be valid for writes of 19 bytes.
#[inline(always)]
unsafe fn nineteen_digits_at(n: u64, out: *mut u8) {
    let (high, low) = (n / E8, n % E8);
    // high / 10^8 as (high / 2^8) / 5^8, in 32 bits (high is below 2^37).
    let top = ((high >> 8) as u32) / 390_625;
    let middle = high - u64::from(top) * E8;
    let head = THREE_DIGITS[(top as usize).min(999)];
    // SAFETY: the stores cover bytes 0-3 and 3-18 of the 19 lent, in
    // order, the first's last byte covered by the second.
    unsafe {
        out.cast::<u32>().write_unaligned(head.to_le());
        sixteen_digits_at(middle, low, out.add(3));
    }
}

/// The three digits of every number below 1000, leading zeros too, as
/// ASCII bytes of a word, the first lowest (a chunk's first three: one
/// load, where two divisions would take the multiplier).
const THREE_DIGITS: [u32; 1000] = {
    let mut texts = [0u32; 1000];
    let mut n = 0;
    while n < 1000 {
        let [a, b, c] = [n / 100, n / 10 % 10, n % 10];
        texts[n] = u32::from_le_bytes([b'0' + a as u8, b'0' + b as u8, b'0' + c as u8, 0]);
        n += 1;
    }
    texts
};

/// Writes the eight digits of `high` then the eight of `low` (each below
/// 10^8, leading zeros too) at `out`. With SSE2 (part of x86-64 itself),
/// all 16 in a vector's lanes, by one store, as `eight_digit_values`
/// splits in a word's: each number by 10^4 into 32-bit lanes, those by
/// 100 into the eight pairs' 16-bit lanes, those by 10 into bytes, each
/// division a multiplication by a reciprocal exact over its lane's
/// range. The vector unit's multipliers take the work off the one
/// scalar multiplier the division steps also need.
///
/// # Safety
/// `out` must be valid for writes of 16 bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sixteen_digits_at(high: u64, low: u64, out: *mut u8) {
    use std::arch::x86_64::{
        _mm_add_epi8, _mm_mul_epu32, _mm_mulhi_epu16, _mm_mullo_epi16, _mm_or_si128,
        _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi8, _mm_set_epi64x, _mm_slli_epi16,
        _mm_slli_epi32, _mm_slli_epi64, _mm_srli_epi16, _mm_srli_epi64, _mm_storeu_si128,
        _mm_sub_epi16, _mm_sub_epi32,
    };
    // ceil(2^45 / 10^4): `x * it >> 45 == x / 10^4` for every 32-bit x.
    const DIV_10000: i32 = 0xD1B7_1759_u32 as i32;
    // `x * 5243 >> 19 == x / 100` below 43699; `x * 6554 >> 16 == x /
    // 10` below 16389.
    const DIV_100: i16 = 5243;
    const DIV_10: i16 = 6554;
    // SAFETY: SSE2 is part of x86-64 itself, so every processor this
    // code runs on has these instructions; the one store writes 16
    // bytes at `out`, the caller's promise (no alignment is needed).
    unsafe {
        // 32-bit lanes: `high`'s first four digits, its last four, then
        // `low`'s.
        let numbers = _mm_set_epi64x(low as i64, high as i64);
        let firsts = _mm_srli_epi64::<45>(_mm_mul_epu32(numbers, _mm_set1_epi32(DIV_10000)));
        let lasts = _mm_sub_epi32(numbers, _mm_mul_epu32(firsts, _mm_set1_epi32(10_000)));
        let fours = _mm_or_si128(firsts, _mm_slli_epi64::<32>(lasts));
        // 16-bit lanes: the eight pairs, in order.
        let hundreds = _mm_srli_epi16::<3>(_mm_mulhi_epu16(fours, _mm_set1_epi16(DIV_100)));
        let rest = _mm_sub_epi16(fours, _mm_mullo_epi16(hundreds, _mm_set1_epi16(100)));
        let pairs = _mm_or_si128(hundreds, _mm_slli_epi32::<16>(rest));
        // Bytes: the 16 digits, in order.
        let tens = _mm_mulhi_epu16(pairs, _mm_set1_epi16(DIV_10));
        let units = _mm_sub_epi16(pairs, _mm_mullo_epi16(tens, _mm_set1_epi16(10)));
        let digits = _mm_or_si128(tens, _mm_slli_epi16::<8>(units));
        let text = _mm_add_epi8(digits, _mm_set1_epi8(b'0' as i8));
        _mm_storeu_si128(out.cast(), text);
    }
}

/// `sixteen_digits_at` where SSE2 is not there: by two word stores.
///
/// # Safety
/// `out` must be valid for writes of 16 bytes.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn sixteen_digits_at(high: u64, low: u64, out: *mut u8) {
    // SAFETY: 16 bytes at `out`, the caller's promise.
    unsafe {
        store_word(out, eight_digits(high));
        store_word(out.add(8), eight_digits(low));
    }
}

/// Stores `word`'s bytes at `out`, lowest first.
///
/// # Safety
/// `out` must be valid for writes of 8 bytes.
#[inline(always)]
unsafe fn store_word(out: *mut u8, word: u64) {
    // SAFETY: the caller's promise; no alignment is needed.
    unsafe { out.cast::<u64>().write_unaligned(word.to_le()) }
}

/// An ASCII `0` in each of a word's bytes.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight digits of `n` (below 10^8), leading zeros too, as ASCII
/// bytes of a word, the first lowest.
#[inline(always)]
fn eight_digits(n: u64) -> u64 {
    eight_digit_values(n) | ASCII_ZEROS
}

/// The eight digits of `n` (below 10^8), leading zeros too, as the
/// values 0-9 of a word's bytes, the first lowest, computed in the
/// word's lanes, no table: the two halves of four digits go to 32-bit
/// lanes, each splits by 100 into 16-bit lanes and those by 10 into
/// bytes. Each split divides by multiplying with a reciprocal exact
/// over its lane's range (`v * 10486 >> 20 == v / 100` for `v` below
/// 10^4, `v * 103 >> 10 == v / 10` for `v` below 100), and no lane's
/// product reaches the bits kept of the lane above.
#[inline(always)]
fn eight_digit_values(n: u64) -> u64 {
    let n = n as u32;
    let fours = u64::from(n / 10_000) | (u64::from(n % 10_000) << 32);
    let hundreds = ((fours * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = hundreds | ((fours - hundreds * 100) << 16);
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((pairs - tens * 10) << 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: u64) -> Vec<u8> {
        decimal(n, &mut [0; DECIMAL_MAX]).to_vec()
    }

    #[test]
    fn decimal_writes_every_digit() {
        assert_eq!(text(0), b"0");
        assert_eq!(text(7), b"7");
        assert_eq!(text(10), b"10");
        assert_eq!(text(1_000_000), b"1000000");
        assert_eq!(text(u64::MAX), b"18446744073709551615");
        assert_eq!(text(u64::MAX).len(), DECIMAL_MAX);
    }

    #[test]
    fn below_10000_agrees_with_std() {
        for n in 0..10_000u16 {
            let (block, len) = below_10000(n);
            assert_eq!(&block[..len], n.to_string().as_bytes());
        }
    }

    #[test]
    fn decimal_u32_agrees_with_std() {
        let powers = (0..10)
            .map(|e| 10u32.pow(e))
            .flat_map(|p| [p - 1, p, p + 1]);
        // A walk over the whole range with a step prime to 10.
        let spread = (0..=u32::MAX / 7_919).map(|k| k * 7_919);
        let edges = [
            0u32,
            9,
            10,
            99,
            100,
            12345,
            99_999_999,
            4_000_000_000,
            u32::MAX,
        ];
        for n in powers.chain(spread).chain(edges) {
            let mut buf = [0u8; DECIMAL_MAX];
            let at = decimal_u32_before(n, &mut buf, DECIMAL_MAX);
            assert_eq!(&buf[at..], n.to_string().as_bytes());
        }
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
    fn nineteen_digits_with_their_zeros() {
        let mut next = crate::test_random::xorshift(0x9E37_79B9_7F4A_7C15);
        let picked = [0, 1, 99_999_999, 100_000_000, CHUNK / 10, CHUNK - 1];
        let random = (0..100_000).map(|_| (next() % CHUNK) >> (next() % 64));
        for n in picked.into_iter().chain(random) {
            let mut buf = [b'x'; 21];
            // SAFETY: 19 bytes from the second of 21.
            unsafe { nineteen_digits_at(n, buf.as_mut_ptr().add(1)) };
            assert_eq!(buf, *format!("x{n:019}x").as_bytes(), "{n}");
        }
    }

    #[test]
    fn eight_digits_agrees_with_std() {
        let mut next = crate::test_random::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let edges = (0..9).map(|e| 10u64.pow(e)).flat_map(|p| [p - 1, p, p + 1]);
        let random = (0..200_000).map(|_| next() % 100_000_000);
        // Every four-digit half, with the other half at its ends.
        let halves = (0..10_000u64).flat_map(|h| [h, h * 10_000, h * 10_000 + 9_999]);
        for n in edges
            .filter(|n| *n < 100_000_000)
            .chain(random)
            .chain(halves)
        {
            let digits = eight_digits(n).to_le_bytes();
            assert_eq!(digits, *format!("{n:08}").as_bytes(), "{n}");
            // The vector's lanes too, each number in either half.
            let other = 99_999_999 - n;
            let mut buf = [b'x'; 18];
            // SAFETY: 16 bytes from the second of 18.
            unsafe { sixteen_digits_at(n, other, buf.as_mut_ptr().add(1)) };
            assert_eq!(buf, *format!("x{n:08}{other:08}x").as_bytes(), "{n}");
        }
    }

    #[test]
    fn chunks_u128_agrees_with_chunks() {
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1Du64);
        let edges = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, u64::MAX, 1 << 63];
        let mut cases: Vec<(u64, u64)> = edges
            .iter()
            .flat_map(|h| edges.iter().map(move |l| (*h, *l)))
            .collect();
        cases.extend((0..100_000).map(|_| (next() >> (next() % 65).min(63), next())));
        for (high, low) in cases {
            let mut want = [0u64; 3];
            let count = chunks(&mut [low, high], &mut want);
            let (got, got_count) = chunks_u128(high, low);
            assert_eq!(
                (got_count, &got[..got_count]),
                (count.max(1), &want[..count.max(1)]),
                "{high} {low}"
            );
        }
    }

    /// Numbers of one to four words: each word count's ends, powers of
    /// two and of ten and their neighbours, and random words, some
    /// small (so that chunks of zeros come up).
    fn words_cases() -> Vec<[u64; 4]> {
        let mut next = crate::test_random::xorshift(0xD1B5_4A32_D192_ED03u64);
        let mut cases = vec![
            [0; 4],
            [u64::MAX; 4],
            [0, 0, 0, CHUNK],
            [0, 0, 0, CHUNK - 1],
        ];
        let words = |n: &[u64]| -> [u64; 4] {
            let mut w = [0; 4];
            w[..n.len()].copy_from_slice(n);
            w
        };
        cases.extend(crate::test_random::near_powers(4).iter().map(|n| words(n)));
        for i in 0..200_000 {
            let len = i % 4 + 1;
            let n: Vec<u64> = (0..len).map(|_| next() >> (next() % 64)).collect();
            cases.push(words(&n));
        }
        cases
    }

    #[test]
    fn chunks_u256_agrees_with_chunks() {
        for words in words_cases() {
            let mut want = [0u64; 5];
            let count = chunks(&mut words.clone(), &mut want);
            let (got, got_count) = chunks_u256(words);
            assert_eq!(
                (got_count, &got[..got_count]),
                (count.max(1), &want[..count.max(1)]),
                "{words:x?}"
            );
            assert!(got[got_count..].iter().all(|c| *c == 0), "{words:x?}");
        }
    }

    #[test]
    fn chunks_texts_are_their_digits() {
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1Du64);
        let picked = (0..20)
            .map(|e| 10u64.pow(e))
            .flat_map(|p| [p - 1, p, p + 1])
            .chain([0, CHUNK - 1, CHUNK / 2])
            .filter(|c| *c < CHUNK);
        let mut cases: Vec<Vec<u64>> = vec![vec![]];
        for top in picked {
            for count in 1..=5 {
                let mut chunked: Vec<u64> = (1..count).map(|_| next() % CHUNK).collect();
                chunked.push(top);
                cases.push(chunked);
            }
        }
        for _ in 0..100_000 {
            let count = (next() % 6) as usize;
            cases.push(
                (0..count)
                    .map(|_| (next() % CHUNK) >> (next() % 64))
                    .collect(),
            );
        }
        for chunked in cases {
            let digits: String = match chunked.split_last() {
                None => "0".into(),
                Some((top, rest)) => {
                    let rest: String = rest.iter().rev().map(|c| format!("{c:019}")).collect();
                    format!("{top}{rest}")
                }
            };
            for negative in [false, true] {
                let want = format!("{}{digits}", if negative { "-" } else { "" });
                let room = chunks_text_max(chunked.len()) + CHUNKS_TEXT_OVERHANG;
                let mut buf = vec![b'x'; room + 8];
                // SAFETY: `buf` holds the room `chunks_text_at` needs.
                let len = unsafe { chunks_text_at(negative, &chunked, buf.as_mut_ptr()) };
                assert_eq!(&buf[..len], want.as_bytes(), "{chunked:?}");
                assert!(buf[room..].iter().all(|b| *b == b'x'), "{chunked:?}");
            }
        }
    }

    #[test]
    fn chunks_max_bounds_the_digits() {
        // 2^(64 w) - 1 has the most digits of w words.
        for (words, digits) in [(1, 20), (2, 39), (4, 78), (64, 1234)] {
            assert_eq!(chunks_max(words), (digits as usize).div_ceil(19), "{words}");
        }
    }

    #[test]
    fn decimal_agrees_with_std() {
        for n in (0..64)
            .map(|s| (1u64 << s) - 1)
            .chain((0..20).map(|e| 10u64.pow(e)))
        {
            assert_eq!(text(n), n.to_string().into_bytes());
        }
    }
}
