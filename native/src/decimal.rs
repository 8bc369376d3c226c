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

/// The text of a number from its `chunks` (least significant first, as
/// `chunks` answers them): `-` when `negative`, then its digits, the
/// most significant chunk's without leading zeros (`0` when there is no
/// chunk), written from the start of `out`; answers the length. `out`
/// must hold it: `1 + 19 * chunks.len()` bytes do.
#[inline(always)]
pub fn chunks_text(negative: bool, chunks: &[u64], out: &mut [u8]) -> usize {
    let mut at = 0;
    if negative {
        out[0] = b'-';
        at = 1;
    }
    let Some((top, rest)) = chunks.split_last() else {
        out[at] = b'0';
        return at + 1;
    };
    at += top.checked_ilog10().unwrap_or(0) as usize + 1;
    // Eight digits at a time from the end, each eight side by side; the
    // first (at most eight) by pairs.
    let (mut high, mut end) = (*top, at);
    while high >= 100_000_000 {
        out[end - 8..end].copy_from_slice(&eight_digits(high % 100_000_000));
        (high, end) = (high / 100_000_000, end - 8);
    }
    decimal_before(high, out, end);
    for chunk in rest.iter().rev() {
        at += 19;
        nineteen_digits_before(*chunk, out, at);
    }
    at
}

/// Writes the 19 digits of `n` (below 10^19), leading zeros too, so that
/// they end at `end`: three parts of at most eight digits, each written
/// from four pairs, so that no digit waits for the divisions of all
/// before it.
#[inline(always)]
fn nineteen_digits_before(n: u64, buf: &mut [u8], end: usize) {
    let top = (n / 10_000_000_000_000_000) as u32;
    let [t, u] = two_digits(top % 100);
    buf[end - 19..end - 16].copy_from_slice(&[b'0' + (top / 100) as u8, t, u]);
    buf[end - 16..end - 8].copy_from_slice(&eight_digits(n / 100_000_000 % 100_000_000));
    buf[end - 8..end].copy_from_slice(&eight_digits(n % 100_000_000));
}

/// The eight digits of `n` (below 10^8), leading zeros too, computed in
/// a word's lanes, no table: the two halves of four digits go to 32-bit
/// lanes, each splits by 100 into 16-bit lanes and those by 10 into
/// bytes, the first digit lowest. Each split divides by multiplying with
/// a reciprocal exact over its lane's range (`v * 10486 >> 20 == v / 100`
/// for `v` below 10^4, `v * 103 >> 10 == v / 10` for `v` below 100), and
/// no lane's product reaches the bits kept of the lane above.
#[inline(always)]
fn eight_digits(n: u64) -> [u8; 8] {
    let fours = (n / 10_000) | ((n % 10_000) << 32);
    let hundreds = ((fours * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = hundreds | ((fours - hundreds * 100) << 16);
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    let digits = tens | ((pairs - tens * 10) << 8);
    (digits | 0x3030_3030_3030_3030).to_le_bytes()
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
            nineteen_digits_before(n, &mut buf, 20);
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
            assert_eq!(eight_digits(n), *format!("{n:08}").as_bytes(), "{n}");
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
