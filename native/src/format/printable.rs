//! The VM's rules for what prints as text: a list of characters as a
//! string, a binary as `<<"...">>`.

use crate::vm::enif::list_cell;
use crate::vm::{is_nil, small_int, term_of_word, term_word, word};
use rustler::sys::ErlNifEnv;

/// The character a list element stands for in a printable string: an
/// integer (a small one, since it is at most 255) that the VM's rule calls
/// printable: Latin-1 characters that are not controls, and the four
/// spaces ' ', '\n', '\t', '\r'.
#[inline]
pub fn list_char(elem: usize) -> Option<u8> {
    let c = u8::try_from(small_int(term_of_word(elem))?).ok()?;
    let printable = matches!(c, b' '..=0x7E | 0xA0..=0xFF | b'\n' | b'\t' | b'\r');
    printable.then_some(c)
}

/// Reads list cells: from their words where the layout was confirmed at
/// load, else through enif.
#[derive(Clone, Copy)]
pub struct Lists {
    pub env: *mut ErlNifEnv,
    /// Whether list cells are read in place.
    pub in_place: bool,
}

impl Lists {
    /// The head and tail of the list cell `list`; `None` for anything else
    /// (`[]` too).
    #[inline(always)]
    pub fn cell(&self, list: usize) -> Option<(usize, usize)> {
        if self.in_place {
            if list & 0b11 != word::LIST {
                return None;
            }
            let cell = word::object(list);
            // SAFETY: a live list cell's word (the walk reads only terms of
            // the call being served) addresses its head and tail.
            return Some(unsafe { (*cell, *cell.add(1)) });
        }
        list_cell(self.env, term_of_word(list)).map(|(h, t)| (term_word(h), term_word(t)))
    }

    /// Whether `list` is `[]`.
    #[inline(always)]
    pub fn is_empty(&self, list: usize) -> bool {
        is_nil(term_of_word(list))
    }
}

/// Whether every byte is printable ASCII (32 to 126), as a binary must be
/// to print as `<<"...">>`, and whether one is `"`. This runs on every
/// traced binary message: sixteen bytes a step with SSE2, which every
/// x86-64 processor has.
#[cfg(target_arch = "x86_64")]
pub fn classify(bytes: &[u8]) -> (bool, bool) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128,
    };
    const LANES: usize = 16;
    let (blocks, rest) = bytes.as_chunks::<LANES>();
    // The bytes after the last whole block: the last 16 bytes (again some
    // of a block before), or, in a shorter binary, all of them padded with
    // spaces (printable, not a quote).
    let mut padded = [b' '; LANES];
    let last: &[u8; LANES] = match bytes.last_chunk::<LANES>() {
        Some(last) if !rest.is_empty() => last,
        _ => {
            padded[..rest.len()].copy_from_slice(rest);
            &padded
        }
    };
    // SAFETY: SSE2 is part of x86-64 itself, so every processor this code
    // runs on has these instructions; each load reads one 16-byte array.
    unsafe {
        let low = _mm_set1_epi8(b' ' as i8);
        let delete = _mm_set1_epi8(0x7F);
        let quote_byte = _mm_set1_epi8(b'"' as i8);
        let (mut bad, mut quote) = (_mm_setzero_si128(), _mm_setzero_si128());
        let mut scan = |block: &[u8; LANES]| {
            let x = _mm_loadu_si128(block.as_ptr().cast());
            // As signed bytes, 128 and up are below 32 too.
            let outside = _mm_or_si128(_mm_cmplt_epi8(x, low), _mm_cmpeq_epi8(x, delete));
            bad = _mm_or_si128(bad, outside);
            quote = _mm_or_si128(quote, _mm_cmpeq_epi8(x, quote_byte));
        };
        blocks.iter().for_each(&mut scan);
        scan(last);
        (_mm_movemask_epi8(bad) == 0, _mm_movemask_epi8(quote) != 0)
    }
}

/// `classify` eight bytes a step, where SSE2 is not there.
#[cfg(not(target_arch = "x86_64"))]
pub fn classify(bytes: &[u8]) -> (bool, bool) {
    let (mut bad, mut quote) = (false, false);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let (b, q) = classify_word(u64::from_le_bytes(word));
        bad |= b;
        quote |= q;
    }
    let rest = chunks.remainder();
    let printable = !bad && rest.iter().all(|b| (b' '..0x7F).contains(b));
    (printable, quote || rest.contains(&b'"'))
}

/// For eight bytes in a word: whether one is not printable ASCII, and
/// whether one is `"` (`classify`'s two answers, negated the first).
#[inline(always)]
pub fn classify_word(x: u64) -> (bool, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Whether some byte of `x` is zero (exact as a whole, per word).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    // Bytes of 128 and up, below 32, or 127.
    let bad =
        (x & HIGHS) | (x.wrapping_sub(0x20 * ONES) & !x & HIGHS) | has_zero(x ^ (0x7F * ONES));
    (bad != 0, has_zero(x ^ (u64::from(b'"') * ONES)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_agrees_with_a_byte_by_byte_check() {
        let expected = |bytes: &[u8]| {
            (
                bytes.iter().all(|b| (b' '..0x7F).contains(b)),
                bytes.contains(&b'"'),
            )
        };
        // Every byte value at every position of a 1 to 40 byte text: short,
        // whole blocks, and a last block that overlaps the one before.
        for len in 1..=40 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    assert_eq!(classify(&text), expected(&text), "{text:?}");
                }
            }
        }
        assert_eq!(classify(b""), (true, false));
    }

    #[test]
    fn classify_word_agrees_with_a_byte_by_byte_check() {
        for at in 0..8 {
            for b in 0..=255u8 {
                let mut bytes = [b'a'; 8];
                bytes[at] = b;
                let bad = !bytes.iter().all(|b| (b' '..0x7F).contains(b));
                let want = (bad, bytes.contains(&b'"'));
                assert_eq!(classify_word(u64::from_le_bytes(bytes)), want, "{bytes:?}");
            }
        }
        // Words of the bytes at the edges, mixed.
        let edges = [
            0, 0x1F, b' ', b'!', b'"', b'#', 0x7E, 0x7F, 0x80, 0xFF, b'a',
        ];
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..200_000 {
            let bytes: [u8; 8] = std::array::from_fn(|_| edges[(next() % 11) as usize]);
            let bad = !bytes.iter().all(|b| (b' '..0x7F).contains(b));
            let want = (bad, bytes.contains(&b'"'));
            assert_eq!(classify_word(u64::from_le_bytes(bytes)), want, "{bytes:?}");
        }
    }
}
