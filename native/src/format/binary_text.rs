//! Binaries, as the VM's printer writes them: `<<"text">>` when every
//! byte is printable, `<<1,2,3>>` otherwise; or their shape.

use super::bounded_text::BoundedText;
use super::leaf::write_bitstring;
use super::printable::{classify, classify_word};
use super::shape;
use crate::vm::binary::{self, Bits};
use rustler::sys::{ErlNifEnv, ErlNifTerm};

/// A binary's text, or its shape; a bitstring that is not whole bytes
/// as the VM writes it, or as its shape.
pub fn write_binary(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText, shape: bool) {
    // SAFETY: `term` is a term of the call being served, which outlives
    // this function.
    match unsafe { binary::bytes(env, term) } {
        Some(bytes) => write_binary_bytes(bytes, text, shape),
        None if shape => text.put(b"<<_/bitstring>>"),
        None => write_bitstring(term, text),
    }
}

/// A binary's text, or its shape, from its bytes.
#[inline]
pub fn write_binary_bytes(bytes: &[u8], text: &mut BoundedText, shape: bool) {
    if shape {
        shape::write_binary_size(bytes.len(), text);
    } else {
        write_bytes(bytes, text);
    }
}

/// A binary's text, from its bytes.
#[inline(always)]
fn write_bytes(bytes: &[u8], text: &mut BoundedText) {
    if !(1..=16).contains(&bytes.len()) || !write_short(bytes, text) {
        write_bytes_any(bytes, text);
    }
}

/// A binary of 1 to 16 printable bytes with no `"`, the common short
/// text, read into a register, checked and written from there: no copy
/// through memory, whose stores a 16-byte read would wait for. False,
/// with nothing written, for any other, and when the text would not fit.
#[inline(always)]
fn write_short(bytes: &[u8], text: &mut BoundedText) -> bool {
    write_short_word(short_word(bytes), bytes.len(), text)
}

/// `write_short` of the `len` (1 to 16) bytes in `word`, the first
/// lowest, spaces after them: the second half is looked at only when
/// `len` reaches it.
#[inline(always)]
fn write_short_word(word: u128, len: usize, text: &mut BoundedText) -> bool {
    let (low_bad, low_quote) = classify_word(word as u64);
    let (high_bad, high_quote) = if len > 8 {
        classify_word((word >> 64) as u64)
    } else {
        (false, false)
    };
    if low_bad || low_quote || high_bad || high_quote {
        return false;
    }
    // SAFETY: the text is `len + 6` bytes, all written: `<<"` (a 4-byte
    // store), the bytes (a 16-byte store after it, past them padding), and
    // `">>` (a 4-byte store over the padding). The stores reach 19 bytes
    // (the 16-byte one) or `len + 7`, at most 23: within `len + 6 +
    // SLACK` (SLACK is at least 16) as `put_within` allows.
    unsafe {
        text.put_within(len + 6, |dst| {
            dst.cast::<[u8; 4]>().write_unaligned(*b"<<\"\0");
            dst.add(3)
                .cast::<[u8; 16]>()
                .write_unaligned(word.to_le_bytes());
            dst.add(3 + len)
                .cast::<[u8; 4]>()
                .write_unaligned(*b"\">>\0");
            len + 6
        })
    }
}

/// The text of a heap binary of `len` bytes, `words` its data words:
/// one of up to 16 bytes is read as its one or two words, whole (no
/// byte loads put together), the bytes past `len` replaced by spaces.
///
/// # Safety
/// `words` must address `len.div_ceil(8)` words holding the bytes, the
/// first lowest in each word's little-endian order (a heap binary's
/// object, `vm::binary::read_heap`).
#[inline(always)]
pub unsafe fn write_heap_binary(words: *const u64, len: usize, text: &mut BoundedText) {
    if (1..=16).contains(&len) {
        // SAFETY: one word holds bytes 0 to 7 (the caller's promise).
        let low = u64::from_le(unsafe { *words });
        let word = if len > 8 {
            // SAFETY: as above, a second word for bytes 8 to 15.
            let high = u64::from_le(unsafe { *words.add(1) });
            u128::from(low) | u128::from(pad(high, len - 8)) << 64
        } else {
            u128::from(pad(low, len)) | u128::from(SPACES) << 64
        };
        if write_short_word(word, len, text) {
            return;
        }
    }
    let bytes = if len == 0 {
        &[][..]
    } else {
        // SAFETY: the caller's promise: `len` bytes from `words`.
        unsafe { std::slice::from_raw_parts(words.cast::<u8>(), len) }
    };
    write_bytes_any(bytes, text);
}

/// Eight spaces.
const SPACES: u64 = u64::from_le_bytes([b' '; 8]);

/// `word`'s first `n` bytes (up to 8, lowest first), spaces after them.
#[inline(always)]
fn pad(word: u64, n: usize) -> u64 {
    let keep = !u64::MAX.checked_shl(8 * n as u32).unwrap_or(0);
    (word & keep) | (SPACES & !keep)
}

/// The 1 to 16 `bytes` as a word, the first lowest, spaces after them:
/// read by two overlapping loads (or three bytes), never past them.
#[inline(always)]
fn short_word(bytes: &[u8]) -> u128 {
    let len = bytes.len();
    debug_assert!((1..=16).contains(&len));
    let at = |i: usize, n: usize| -> u128 {
        let mut word = [0u8; 8];
        word[..n].copy_from_slice(&bytes[i..i + n]);
        u128::from(u64::from_le_bytes(word)) << (8 * i)
    };
    // Overlapping loads OR the same bytes twice.
    let loaded = if len >= 8 {
        at(0, 8) | at(len - 8, 8)
    } else if len >= 4 {
        at(0, 4) | at(len - 4, 4)
    } else {
        at(0, 1) | at(len / 2, 1) | at(len - 1, 1)
    };
    u128::from(pad(loaded as u64, len.min(8)))
        | u128::from(pad((loaded >> 64) as u64, len.saturating_sub(8))) << 64
}

/// `write_bytes` of any binary.
fn write_bytes_any(bytes: &[u8], text: &mut BoundedText) {
    // Each byte writes at least one byte of text, so no more than the scan
    // bound can be written before the text is full.
    let scanned = &bytes[..bytes.len().min(text.scan_bound())];
    let (printable, quoted) = classify(scanned);
    let printable = printable && !bytes.is_empty();
    if printable && !quoted && scanned.len() == bytes.len() {
        // The common case, a text binary read whole: one write.
        text.put_parts([b"<<\"", scanned, b"\">>"]);
        return;
    }
    if printable && !quoted {
        text.put(b"<<\"");
        text.put(scanned);
        if text.is_full() {
            return;
        }
    } else if printable {
        text.put(b"<<\"");
        for (i, run) in scanned.split(|b| *b == b'"').enumerate() {
            if i > 0 {
                text.put(b"\\\"");
            }
            text.put(run);
            if text.is_full() {
                return;
            }
        }
    } else {
        text.put(b"<<");
        for (i, &b) in scanned.iter().enumerate() {
            if text.is_full() {
                return;
            }
            let (word, len) = BYTE_TEXT[usize::from(b)].word(i == 0);
            text.put_word(u128::from(word), len);
        }
    }
    if scanned.len() < bytes.len() {
        // Not reached: the text filled up within the scanned bytes.
        text.stop();
        return;
    }
    text.put(if printable { b"\">>" } else { b">>" });
}

/// A bitstring whose size is not a multiple of 8, as the VM writes it:
/// its whole bytes, then the last bits' value and count,
/// `<<97,98,1:3>>`. The bytes are read from any bit offset. One of fewer
/// than 8 bits (`<<1:3>>`) is written here, in line, its whole text one
/// load from a table and one store; a longer one by `write_bits_long`.
///
/// # Panics
/// On whole bytes (a size that is a multiple of 8): its callers send those
/// to the binary writers.
#[inline(always)]
pub fn write_bits(bits: Bits, text: &mut BoundedText) {
    debug_assert!(!bits.size.is_multiple_of(8));
    if bits.size >= 8 {
        write_bits_long(bits.bytes, bits.offset as u32, bits.size, text);
        return;
    }
    let (off, tail) = (bits.offset as u32, bits.size as u32);
    let entry = &BITS_TEXT[bits_index(last_bits(bits.bytes, 0, off, tail), tail)];
    text.put_block(entry, bits_text_len(entry));
}

/// The value of the `tail` (1 to 7) bits from bit `off` (below 8) of
/// byte `at` of `bytes`.
#[inline(always)]
fn last_bits(bytes: &[u8], at: usize, off: u32, tail: u32) -> u32 {
    // The two bytes the bits may lie in, the second 0 when there is none
    // (then they lie in the first); the bits after them shifted out.
    let next = bytes.get(at + 1).copied().unwrap_or(0);
    let window = u32::from(u16::from_be_bytes([bytes[at], next]));
    (window << off & 0xFFFF) >> (16 - tail)
}

/// `,V:T>>` for the last bits' value `value` (below `1 << tail`) and
/// count `tail` (1 to 7), the first byte lowest, and its length: the
/// table's `<<V:T>>` with its first `<` dropped and the second made `,`.
#[inline(always)]
fn last_word(value: u32, tail: u32) -> (u64, usize) {
    let entry = &BITS_TEXT[bits_index(value, tail)];
    let word = u128::from_le_bytes(*entry);
    (
        ((word >> 8) as u64 & !0xFF) | u64::from(b','),
        bits_text_len(entry) - 1,
    )
}

/// The index in `BITS_TEXT` of the `tail` (1 to 7) bits of value `value`:
/// the bits after a leading 1, `1 << tail | value`, below 256.
#[inline(always)]
fn bits_index(value: u32, tail: u32) -> usize {
    ((1 << tail | value) & 0xFF) as usize
}

/// The length of a `BITS_TEXT` entry's text, kept in its last byte.
#[inline(always)]
fn bits_text_len(entry: &[u8; 16]) -> usize {
    usize::from(entry[15] & 0xF)
}

/// `<<V:T>>`, the text of each bitstring of T (1 to 7) bits of value V,
/// at `bits_index(V, T)`: its bytes (at most 9, `<<127:7>>`) from the
/// lowest, and its length in the last byte. Index 0 and 1 are no
/// bitstring's (empty).
static BITS_TEXT: [[u8; 16]; 256] = bits_texts();

const fn bits_texts() -> [[u8; 16]; 256] {
    let mut table = [[0u8; 16]; 256];
    let mut tail = 1;
    while tail < 8 {
        let mut value = 0;
        while value < 1 << tail {
            let mut bytes = [0u8; 16];
            let mut len = 0;
            bytes[0] = b'<';
            bytes[1] = b'<';
            len += 2;
            if value >= 100 {
                bytes[len] = b'0' + (value / 100) as u8;
                len += 1;
            }
            if value >= 10 {
                bytes[len] = b'0' + (value / 10 % 10) as u8;
                len += 1;
            }
            bytes[len] = b'0' + (value % 10) as u8;
            bytes[len + 1] = b':';
            bytes[len + 2] = b'0' + tail as u8;
            bytes[len + 3] = b'>';
            bytes[len + 4] = b'>';
            len += 5;
            bytes[15] = len as u8;
            table[(1 << tail) | value] = bytes;
            value += 1;
        }
        tail += 1;
    }
    table
}

/// Whole bytes of a bitstring written per store of the text's end.
const BITS_CHUNK: usize = 16;

/// The most text a chunk writes: `<<`, `BITS_CHUNK` bytes of at most 4
/// bytes each (`,255`), and the last part (8 at most, `,127:7>>`).
const BITS_CHUNK_TEXT: usize = 2 + 4 * BITS_CHUNK + 8;

/// `write_bits` of a bitstring of 8 bits or more, `size` bits from bit
/// `off` of `bytes`: its whole bytes, then the last bits. Each chunk of
/// up to `BITS_CHUNK` whole bytes is written straight into the text's
/// room, its parts at a cursor held in a register, and the text's end
/// moved once (each move is waited for by the next); near the budget's
/// end, by `put_bits_chunk_cut`. Out of line: the registers it needs
/// would be saved for the bitstrings of fewer than 8 bits too.
#[inline(never)]
fn write_bits_long(bytes: &[u8], off: u32, size: usize, text: &mut BoundedText) {
    let bits = Bits {
        bytes,
        offset: off as usize,
        size,
    };
    let whole = size / 8;
    let mut from = 0;
    loop {
        let to = whole.min(from + BITS_CHUNK);
        // SAFETY: a chunk's text is at most `BITS_CHUNK_TEXT` bytes, all
        // written, and its stores reach at most 8 bytes past its end
        // (within SLACK); the room given is `BITS_CHUNK_TEXT + SLACK`.
        let put = unsafe {
            text.put_within(BITS_CHUNK_TEXT, |dst| write_bits_chunk(bits, from, to, dst))
        };
        if !put {
            put_bits_chunk_cut(bits, from, to, text);
        }
        if to == whole || text.is_full() {
            return;
        }
        from = to;
    }
}

/// `write_bits_long`'s chunk when it may not fit in the text's room:
/// written into a buffer, then put as any text, which cuts it.
#[cold]
#[inline(never)]
fn put_bits_chunk_cut(bits: Bits, from: usize, to: usize, text: &mut BoundedText) {
    let mut buf = [0u8; BITS_CHUNK_TEXT + 8];
    // SAFETY: the buffer has room for `BITS_CHUNK_TEXT + 8` bytes.
    let len = unsafe { write_bits_chunk(bits, from, to, buf.as_mut_ptr()) };
    text.put(&buf[..len]);
}

/// Writes at `dst` the text of whole bytes `from` to `to` of `bits` (8
/// bits or more, not whole bytes): `<<` first when `from` is 0, the last
/// bits' part when `to` is its last whole byte; answers its length. Each
/// part is one store of its word, which may reach 8 bytes past the
/// text's end.
///
/// # Safety
/// `dst` must have room for `BITS_CHUNK_TEXT + 8` bytes; `to - from` is
/// at most `BITS_CHUNK`.
#[inline(always)]
unsafe fn write_bits_chunk(bits: Bits, from: usize, to: usize, dst: *mut u8) -> usize {
    let (bytes, off) = (bits.bytes, bits.offset as u32);
    let (whole, tail) = (bits.size / 8, (bits.size % 8) as u32);
    // The byte whose first bit is `i`'s first bit: from it and the one
    // after it, which holds the last bits at least (there are some).
    let byte_at = |i: usize| -> u8 {
        (u32::from(u16::from_be_bytes([bytes[i], bytes[i + 1]])) << off >> 8) as u8
    };
    let mut at = 0;
    let mut i = from;
    if from == 0 {
        // `<<` and the first byte's text (`whole` is at least 1).
        let (word, len) = BYTE_TEXT[usize::from(byte_at(0))].word(true);
        let opened = u64::from(word) << 16 | u64::from(u16::from_le_bytes(*b"<<"));
        // SAFETY: 8 bytes at the start of the room.
        unsafe { dst.cast::<u64>().write_unaligned(opened.to_le()) };
        (at, i) = (len + 2, 1);
    }
    while i < to {
        let (word, len) = BYTE_TEXT[usize::from(byte_at(i))].word(false);
        // SAFETY: at most 5 + 4 * (BITS_CHUNK - 1) bytes written before,
        // 4 more: within the room.
        unsafe { dst.add(at).cast::<u32>().write_unaligned(word.to_le()) };
        (at, i) = (at + len, i + 1);
    }
    if to == whole {
        // The last bits: `tail` of them from bit `off` of byte `whole`.
        let (last, len) = last_word(last_bits(bytes, whole, off, tail), tail);
        // SAFETY: at most 2 + 4 * BITS_CHUNK bytes written before, 8
        // more: within the room.
        unsafe { dst.add(at).cast::<u64>().write_unaligned(last.to_le()) };
        at += len;
    }
    at
}

/// `,N` for a byte N: the text of a binary's elements after the first.
#[derive(Clone, Copy)]
struct ByteText {
    text: [u8; 4],
    len: u8,
}

impl ByteText {
    /// The text as a word, the first byte lowest, and its length: `,N`,
    /// or `N` alone when `first`.
    #[inline(always)]
    fn word(&self, first: bool) -> (u32, usize) {
        let word = u32::from_le_bytes(self.text);
        let len = usize::from(self.len);
        if first {
            (word >> 8, len - 1)
        } else {
            (word, len)
        }
    }
}

static BYTE_TEXT: [ByteText; 256] = byte_texts();

const fn byte_texts() -> [ByteText; 256] {
    let mut table = [ByteText {
        text: [0; 4],
        len: 0,
    }; 256];
    let mut n = 0;
    while n < 256 {
        let (h, t, u) = ((n / 100) as u8, ((n / 10) % 10) as u8, (n % 10) as u8);
        table[n] = if n >= 100 {
            ByteText {
                text: [b',', b'0' + h, b'0' + t, b'0' + u],
                len: 4,
            }
        } else if n >= 10 {
            ByteText {
                text: [b',', b'0' + t, b'0' + u, 0],
                len: 3,
            }
        } else {
            ByteText {
                text: [b',', b'0' + u, 0, 0],
                len: 2,
            }
        };
        n += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of the `size` bits from bit `offset` of `bytes`, each
    /// bit read one at a time.
    fn model(bytes: &[u8], offset: usize, size: usize) -> String {
        let bit = |i: usize| u32::from(bytes[(offset + i) / 8] >> (7 - (offset + i) % 8) & 1);
        let value = |from: usize, n: usize| (from..from + n).fold(0, |v, i| (v << 1) | bit(i));
        let mut parts: Vec<String> = (0..size / 8).map(|b| value(b * 8, 8).to_string()).collect();
        parts.push(format!("{}:{}", value(size / 8 * 8, size % 8), size % 8));
        format!("<<{}>>", parts.join(","))
    }

    #[test]
    fn bits_at_every_offset_and_size() {
        let data = [0xA5u8, 0x3C, 0xFF, 0x01, 0x80, 0x7E];
        for offset in 0..8 {
            for size in (1..=(data.len() * 8 - offset)).filter(|s| s % 8 != 0) {
                let len = (offset + size).div_ceil(8);
                let bits = Bits {
                    bytes: &data[..len],
                    offset,
                    size,
                };
                let mut out = Vec::new();
                let mut text = BoundedText::new(&mut out, 4096);
                write_bits(bits, &mut text);
                assert!(!text.finish());
                assert_eq!(String::from_utf8(out).unwrap(), model(&data, offset, size));
            }
        }
    }

    /// The text `write` makes of `bytes` in a budget of `max`, after
    /// `before` bytes of text already in the buffer.
    fn written(
        write: fn(&[u8], &mut BoundedText),
        bytes: &[u8],
        before: usize,
        max: usize,
    ) -> Vec<u8> {
        let mut out = vec![b'x'; before];
        let mut text = BoundedText::new(&mut out, before + max);
        write(bytes, &mut text);
        text.finish();
        out
    }

    #[test]
    fn short_binaries_as_any_binary() {
        let values = [b'a', b' ', b'~', b'"', 0x1F, 0x7F, 0x80, 0, b'\\'];
        let mut next = crate::test_random::xorshift(0x9E37_79B9_7F4A_7C15);
        for len in 0..=20 {
            for round in 0..200 {
                // Mostly printable texts, some with one other byte.
                let mut bytes: Vec<u8> = (0..len).map(|_| b'a' + (next() % 26) as u8).collect();
                if round % 2 == 1 && len > 0 {
                    bytes[(next() % len as u64) as usize] = values[(next() % 9) as usize];
                }
                // Budgets that cut the text, just fit it, and leave room.
                for max in [len, len + 5, len + 6, len + 7, 4096] {
                    let before = (next() % 3) as usize;
                    assert_eq!(
                        written(write_bytes, &bytes, before, max),
                        written(write_bytes_any, &bytes, before, max),
                        "{bytes:?} in {max}"
                    );
                }
            }
        }
        assert_eq!(written(write_bytes, b"abc", 0, 64), b"<<\"abc\">>");
        let sixteen = b"0123456789abcdef";
        assert_eq!(
            written(write_bytes, sixteen, 0, 64),
            b"<<\"0123456789abcdef\">>"
        );
        assert_eq!(written(write_bytes, b"a\"c", 0, 64), b"<<\"a\\\"c\">>");
        assert_eq!(written(write_bytes, &[1, 200], 0, 64), b"<<1,200>>");
    }

    #[test]
    fn heap_binaries_from_their_words_as_any_binary() {
        let values = [b'a', b' ', b'~', b'"', 0x1F, 0x7F, 0x80, 0, b'\\'];
        let mut next = crate::test_random::xorshift(0x3C6E_F372_FE94_F82B);
        for len in 0..=24usize {
            for round in 0..200 {
                let mut bytes: Vec<u8> = (0..len).map(|_| b'a' + (next() % 26) as u8).collect();
                if round % 2 == 1 && len > 0 {
                    bytes[(next() % len as u64) as usize] = values[(next() % 9) as usize];
                }
                // The object's words: the bytes, then padding that is
                // anything (here random bytes, quotes and controls too).
                let mut words = vec![0u64; len.div_ceil(8).max(1)];
                for (i, word) in words.iter_mut().enumerate() {
                    let mut chunk = next().to_le_bytes();
                    for (j, b) in chunk.iter_mut().enumerate() {
                        if let Some(&byte) = bytes.get(8 * i + j) {
                            *b = byte;
                        }
                    }
                    *word = u64::from_le_bytes(chunk);
                }
                let from_words = |bytes: &[u8], text: &mut BoundedText| {
                    // SAFETY: `words` holds the bytes in whole words.
                    unsafe { write_heap_binary(words.as_ptr(), bytes.len(), text) }
                };
                for max in [len, len + 5, len + 6, len + 7, 4096] {
                    let mut out = vec![b'x'; 2];
                    let mut text = BoundedText::new(&mut out, 2 + max);
                    from_words(&bytes, &mut text);
                    text.finish();
                    assert_eq!(out, written(write_bytes_any, &bytes, 2, max), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn bits_texts_are_each_value_and_count() {
        for tail in 1..8u32 {
            for value in 0..1u32 << tail {
                let entry = &BITS_TEXT[bits_index(value, tail)];
                let len = bits_text_len(entry);
                let text = format!("<<{value}:{tail}>>");
                assert_eq!(&entry[..len], text.as_bytes());
                let (last, len) = last_word(value, tail);
                assert_eq!(
                    &last.to_le_bytes()[..len],
                    format!(",{value}:{tail}>>").as_bytes()
                );
            }
        }
    }

    #[test]
    fn bits_in_every_budget_as_their_text_put_whole() {
        // Random bytes, and the extremes: all ones, all zeros.
        let mut next = crate::test_random::xorshift(0x2545_F491_4F6C_DD1D);
        let random: Vec<u8> = (0..26).map(|_| next() as u8).collect();
        for data in [random, vec![0xFF; 26], vec![0; 26]] {
            for offset in 0..8usize {
                for size in (1..25 * 8).filter(|s| s % 8 != 0) {
                    let len = (offset + size).div_ceil(8);
                    let bits = Bits {
                        bytes: &data[..len],
                        offset,
                        size,
                    };
                    let whole = model(&data, offset, size);
                    // Every cut, and room for the whole text.
                    for max in (0..whole.len() + 4).chain([4096]) {
                        for before in [0, 3] {
                            let mut by_bits = vec![b'x'; before];
                            let mut text = BoundedText::new(&mut by_bits, before + max);
                            write_bits(bits, &mut text);
                            let cut = text.finish();
                            let mut by_put = vec![b'x'; before];
                            let mut text = BoundedText::new(&mut by_put, before + max);
                            text.put(whole.as_bytes());
                            assert_eq!(cut, text.finish(), "{offset} {size} {max}");
                            assert_eq!(by_bits, by_put, "{offset} {size} {max}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn byte_texts_are_each_byte_after_a_comma() {
        for (n, byte) in BYTE_TEXT.iter().enumerate() {
            let (word, len) = byte.word(false);
            assert_eq!(&word.to_le_bytes()[..len], format!(",{n}").as_bytes());
            let (word, len) = byte.word(true);
            assert_eq!(&word.to_le_bytes()[..len], n.to_string().as_bytes());
        }
    }
}
