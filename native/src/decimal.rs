//! Decimal digits, written without allocating: the integers of term
//! texts, references' numbers, code locations' arities.

/// The most digits a u64 has.
pub const DECIMAL_MAX: usize = 20;

/// The two digits of every number below 100, in order.
const PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// The decimal digits of `n`, written at the end of `buf`, two at a time.
#[inline]
pub fn decimal(n: u64, buf: &mut [u8; DECIMAL_MAX]) -> &[u8] {
    let at = decimal_before(n, buf, DECIMAL_MAX);
    &buf[at..]
}

/// Writes the decimal digits of `n` into `buf` so that they end at `end`;
/// answers where they start. `buf` must hold them (`DECIMAL_MAX` bytes
/// before `end` always do).
#[inline]
pub fn decimal_before(mut n: u64, buf: &mut [u8], end: usize) -> usize {
    let mut at = end;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
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
    fn decimal_agrees_with_std() {
        for n in (0..64)
            .map(|s| (1u64 << s) - 1)
            .chain((0..20).map(|e| 10u64.pow(e)))
        {
            assert_eq!(text(n), n.to_string().into_bytes());
        }
    }
}
