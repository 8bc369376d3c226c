//! Decimal digits, written without allocating: the integers of term
//! texts, references' numbers, code locations' arities.

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
    fn decimal_agrees_with_std() {
        for n in (0..64)
            .map(|s| (1u64 << s) - 1)
            .chain((0..20).map(|e| 10u64.pow(e)))
        {
            assert_eq!(text(n), n.to_string().into_bytes());
        }
    }
}
