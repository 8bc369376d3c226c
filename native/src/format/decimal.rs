//! Decimal digits, written without allocating.

/// The most digits a u64 has.
pub const DECIMAL_MAX: usize = 20;

/// The decimal digits of `n`, written at the end of `buf`.
pub fn decimal(mut n: u64, buf: &mut [u8; DECIMAL_MAX]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
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
