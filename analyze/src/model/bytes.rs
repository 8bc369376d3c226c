//! Finding a byte in a short text, and comparing two. Most texts searched
//! (a string's end, a pid's end, a reference's `>`) are found within a few
//! tens of bytes: sixteen bytes at a time (SSE2, in every x86-64) finds
//! them in line, where a call to a vector search would first be set up.
//! The keys compared (pids, references, functions) are as short.

/// The position of the first `byte` in `text`: sixteen bytes at a time
/// with SSE2, the last sixteen overlapping those before (so no byte loop
/// after them); eight at a time below sixteen.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn find(byte: u8, text: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let n = text.len();
    if n < 16 {
        return find_by_words(byte, text);
    }
    // One bit per byte of the sixteen at `at` that is `byte`.
    let hits = |at: usize| {
        let chunk = &text[at..at + 16];
        // SAFETY: SSE2 is in every x86-64 build; `chunk` holds the 16
        // readable bytes the unaligned load reads.
        unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8))) as u32
        }
    };
    let mut at = 0;
    while at + 16 <= n {
        let found = hits(at);
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize);
        }
        at += 16;
    }
    if at == n {
        return None;
    }
    // The last sixteen, less the bytes already looked at.
    let found = hits(n - 16) >> (at - (n - 16));
    match found {
        0 => None,
        _ => Some(at + found.trailing_zeros() as usize),
    }
}

/// The position of the first `byte` in `text`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn find(byte: u8, text: &[u8]) -> Option<usize> {
    match find_by_words(byte, &text[..text.len().min(32)]) {
        None if text.len() > 32 => memchr::memchr(byte, &text[32..]).map(|p| 32 + p),
        found => found,
    }
}

/// The position of the first `byte` in `text`, eight bytes at a time,
/// then byte by byte.
#[inline(always)]
fn find_by_words(byte: u8, text: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let pattern = ONES * u64::from(byte);
    let mut at = 0;
    while let Some(chunk) = text.get(at..at + 8) {
        // Zero where the byte is `byte`; the high bit of a byte is set
        // below where that byte is zero (the lowest such flag is exact).
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ pattern;
        let zero = w.wrapping_sub(ONES) & !w & HIGHS;
        if zero != 0 {
            return Some(at + zero.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    text[at..].iter().position(|&b| b == byte).map(|p| at + p)
}

/// Whether `a` and `b` hold the same bytes: compared in line, eight at a
/// time (the last eight overlapping), rather than by a call to `memcmp`,
/// for the short keys of the analyses' maps.
#[inline(always)]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 64 {
        return a == b;
    }
    if n < 8 {
        return a.iter().zip(b).fold(true, |all, (x, y)| all & (x == y));
    }
    let word = |t: &[u8], at: usize| u64::from_le_bytes(t[at..at + 8].try_into().expect("8 bytes"));
    let mut at = 0;
    while at + 8 < n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    word(a, n - 8) == word(b, n - 8)
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

    /// Texts of every length up to past the word loop's, equal or one byte
    /// apart anywhere.
    #[test]
    fn compares_as_slices_do() {
        for len in 0..80usize {
            let a: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            assert!(same(&a, &a.clone()));
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "{len} {at}");
            }
            assert!(!same(&a, &a[..len.saturating_sub(1)]) || len == 0);
        }
    }
}
