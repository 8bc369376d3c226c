//! Atoms, quoted and escaped exactly as the VM's printer does.
//!
//! An atom is left bare when its first character is a Latin-1 lowercase
//! letter and every other one a Latin-1 letter, a digit or `_`; reserved
//! words stay bare too, as `%T` leaves them. ASCII controls and 128-159 are
//! written as escapes, 160-255 UTF-8 encoded (as the VM writes them).
//! OTP 25's enif reads atom names as Latin-1 only: an atom with a character
//! above 255 (always quoted) is written by the VM itself.

use super::bounded_text::BoundedText;
use super::leaf::write_leaf;
use rustler::sys::{ErlNifCharEncoding, ErlNifEnv, ErlNifTerm};
use std::ffi::c_char;

/// 255 Latin-1 characters and the NUL.
const ATOM_BUF: usize = 256;

/// Writes the atom `term`.
pub fn write_atom(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let mut buf = [0u8; ATOM_BUF];
    // SAFETY: `buf` holds ATOM_BUF bytes; the VM writes at most that many.
    let len = unsafe {
        rustler::sys::enif_get_atom(
            env,
            term,
            buf.as_mut_ptr() as *mut c_char,
            ATOM_BUF as u32,
            ErlNifCharEncoding::ERL_NIF_LATIN1,
        )
    };
    match usize::try_from(len) {
        Ok(len) if len > 0 => write_name(buf.get(..len - 1).unwrap_or(&[]), text),
        _ => write_leaf(term, text),
    }
}

/// `name` in Latin-1.
fn write_name(name: &[u8], text: &mut BoundedText) {
    if name.is_empty() {
        text.put(b"''");
        return;
    }
    let quote = needs_quotes(name);
    if quote {
        text.byte(b'\'');
    }
    for &c in name {
        match c {
            b'\'' => text.put(b"\\'"),
            b'\\' => text.put(b"\\\\"),
            b'\n' => text.put(b"\\n"),
            0x0C => text.put(b"\\f"),
            b'\t' => text.put(b"\\t"),
            b'\r' => text.put(b"\\r"),
            0x08 => text.put(b"\\b"),
            0x0B => text.put(b"\\v"),
            0..=0x1F | 0x80..=0x9F => octal_escape(c, text),
            0xA0.. => text.put(&[0xC0 | (c >> 6), 0x80 | (c & 0x3F)]),
            _ => text.byte(c),
        }
    }
    if quote {
        text.byte(b'\'');
    }
}

fn octal_escape(c: u8, text: &mut BoundedText) {
    text.put(&[
        b'\\',
        b'0' + (c >> 6),
        b'0' + ((c >> 3) & 7),
        b'0' + (c & 7),
    ]);
}

/// The VM's rule, on Latin-1 code points.
fn needs_quotes(name: &[u8]) -> bool {
    let Some((&first, rest)) = name.split_first() else {
        return true;
    };
    !is_lower(first)
        || rest
            .iter()
            .any(|&c| !(is_lower(c) || is_upper(c) || c.is_ascii_digit() || c == b'_'))
}

fn is_lower(c: u8) -> bool {
    c.is_ascii_lowercase() || (c >= 223 && c != 247)
}

fn is_upper(c: u8) -> bool {
    c.is_ascii_uppercase() || ((192..=222).contains(&c) && c != 215)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_text(name: &[u8]) -> String {
        let mut out = Vec::new();
        let mut text = BoundedText::new(&mut out, 1024);
        write_name(name, &mut text);
        text.finish();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bare_where_the_vm_leaves_atoms_bare() {
        assert_eq!(name_text(b"ok"), "ok");
        assert_eq!(name_text(b"a_B9"), "a_B9");
        // Reserved words are bare in %T too.
        assert_eq!(name_text(b"receive"), "receive");
        // Latin-1 lowercase first, uppercase after: written UTF-8, bare.
        assert_eq!(name_text(&[0xE9, b't', 0xC9]), "étÉ");
    }

    #[test]
    fn quoted_where_the_vm_quotes() {
        assert_eq!(name_text(b""), "''");
        assert_eq!(name_text(b"Ok"), "'Ok'");
        assert_eq!(name_text(b"_x"), "'_x'");
        assert_eq!(name_text(b"9a"), "'9a'");
        assert_eq!(name_text(b"a-b"), "'a-b'");
        assert_eq!(name_text(b"-t_call/1-fun-1-"), "'-t_call/1-fun-1-'");
        // 247 (division sign) is not a letter.
        assert_eq!(name_text(&[b'a', 0xF7]), "'a\u{F7}'");
    }

    #[test]
    fn escapes_as_the_vm_does() {
        assert_eq!(name_text(b"it's"), r"'it\'s'");
        assert_eq!(name_text(b"a\\b"), r"'a\\b'");
        assert_eq!(name_text(b"a\nb\tc"), r"'a\nb\tc'");
        assert_eq!(name_text(&[b'a', 0x01]), r"'a\001'");
        assert_eq!(name_text(&[b'a', 0x85]), r"'a\205'");
    }
}
