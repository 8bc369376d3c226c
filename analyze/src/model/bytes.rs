//! Finding a byte in a short text. Most texts searched (a string's end,
//! a pid's end, a reference's `>`) are found within a few tens of bytes:
//! eight bytes at a time finds them before a vector search is set up.

/// Bytes searched eight at a time before a vector search.
const SHORT: usize = 32;

/// The position of the first `byte` in `text`.
#[inline(always)]
pub fn find(byte: u8, text: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(byte);
    let mut at = 0;
    while at < SHORT {
        let Some(chunk) = text.get(at..at + 8) else {
            return text[at..].iter().position(|&b| b == byte).map(|p| at + p);
        };
        // Zero where the byte is `byte`; the high bit of a byte is set
        // below where that byte is zero (the lowest such flag is exact).
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ pattern;
        let zero = w.wrapping_sub(ONES) & !w & HIGHS;
        if zero != 0 {
            return Some(at + zero.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    memchr::memchr(byte, &text[at..]).map(|p| at + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first one, at any place, past any byte with its high bit set.
    #[test]
    fn finds_the_first_of_a_byte() {
        for len in 0..80u8 {
            let mut text: Vec<u8> = (0..len).map(|i| 0x80 | i).collect();
            text.push(b'>');
            text.push(b'>');
            assert_eq!(find(b'>', &text), Some(len as usize), "{len}");
            assert_eq!(find(b'>', &text[..len as usize]), None);
            assert_eq!(find(0, &text), None);
        }
        assert_eq!(find(0, b"\x80\x01\0"), Some(2));
        assert_eq!(find(b'?', b"\xbf\x3f"), Some(1));
    }
}
