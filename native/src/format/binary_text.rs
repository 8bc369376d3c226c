//! Binaries, as the VM's printer writes them: `<<"text">>` when every
//! byte is printable, `<<1,2,3>>` otherwise; or their shape.

use super::bounded_text::BoundedText;
use super::leaf::write_bitstring;
use super::printable::classify;
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
fn write_bytes(bytes: &[u8], text: &mut BoundedText) {
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
        if let Some((first, rest)) = scanned.split_first() {
            text.put(&BYTE_TEXT[usize::from(*first)].comma_text()[1..]);
            for &b in rest {
                if text.is_full() {
                    return;
                }
                text.put(BYTE_TEXT[usize::from(b)].comma_text());
            }
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
/// `<<97,98,1:3>>`. The bytes are read from any bit offset.
pub fn write_bits(bits: Bits, text: &mut BoundedText) {
    let (bytes, off) = (bits.bytes, bits.offset as u32);
    let (whole, tail) = (bits.size / 8, (bits.size % 8) as u32);
    // The byte whose first bit is `i`'s first bit, and the one after it.
    let byte_at = |i: usize| -> u8 {
        if off == 0 {
            bytes[i]
        } else {
            ((u32::from(bytes[i]) << off) | (u32::from(bytes[i + 1]) >> (8 - off))) as u8
        }
    };
    text.put(b"<<");
    for i in 0..whole {
        if text.is_full() {
            return;
        }
        let comma = BYTE_TEXT[usize::from(byte_at(i))].comma_text();
        text.put(if i == 0 { &comma[1..] } else { comma });
    }
    // The last bits: `tail` of them from bit `off` of byte `whole`.
    let end = off + tail;
    let first = u32::from(bytes[whole]);
    let value = if end <= 8 {
        first >> (8 - end)
    } else {
        (first << (end - 8)) | (u32::from(bytes[whole + 1]) >> (16 - end))
    } & ((1 << tail) - 1);
    let comma = BYTE_TEXT[value as usize].comma_text();
    text.put(if whole == 0 { &comma[1..] } else { comma });
    text.put(&[b':', b'0' + tail as u8, b'>', b'>']);
}

/// `,N` for a byte N: the text of a binary's elements after the first.
#[derive(Clone, Copy)]
struct ByteText {
    text: [u8; 4],
    len: u8,
}

impl ByteText {
    fn comma_text(&self) -> &[u8] {
        &self.text[..usize::from(self.len)]
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

    #[test]
    fn byte_texts_are_each_byte_after_a_comma() {
        for (n, byte) in BYTE_TEXT.iter().enumerate() {
            assert_eq!(byte.comma_text(), format!(",{n}").as_bytes());
        }
    }
}
