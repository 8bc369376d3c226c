//! Leaves whose text only the VM knows (local funs, remote identifiers),
//! or whose layout the load did not confirm, through `enif_snprintf("%T")`
//! on that one term. Its return value is not reliable when the text is cut,
//! so the text's length is read from the buffer (up to its NUL).

use super::bounded_text::BoundedText;
use rustler::sys::ErlNifTerm;
use std::ffi::c_char;
use std::sync::OnceLock;

/// Room for any pid, port or ref (at most 5 numbers of 10 digits).
const IDENTIFIER_BUF: usize = 128;

/// Room for anything else: a fun names two atoms of at most 255
/// characters, each written in at most 4 bytes, plus quotes.
const LEAF_BUF: usize = 4096;

/// Writes the `%T` text of a pid, port or reference.
pub fn write_identifier(term: ErlNifTerm, text: &mut BoundedText) {
    snprintf(term, None, IDENTIFIER_BUF, text);
}

/// Writes the `%T` text of one leaf term (what fits in the budget).
pub fn write_leaf(term: ErlNifTerm, text: &mut BoundedText) {
    snprintf(term, None, LEAF_BUF, text);
}

/// Writes a bitstring whose size is not a multiple of 8, which enif cannot
/// read: the VM prints it with a precision, so that it stops after about
/// as many elements as the budget has bytes left. Each element takes at
/// least two bytes, so the VM's own cut mark never reaches the budget.
pub fn write_bitstring(term: ErlNifTerm, text: &mut BoundedText) {
    let room = text.room().min(1 << 20) + 64;
    snprintf(term, Some(room as i32), room, text);
}

fn snprintf(term: ErlNifTerm, precision: Option<i32>, len: usize, text: &mut BoundedText) {
    text.put_with(len, |buf, len| {
        // SAFETY: reads the runtime's function table, set before any NIF runs.
        let print = unsafe { rustler::sys::get_enif_snprintf() };
        let ptr = buf.cast::<c_char>();
        // SAFETY: `buf` has `len` writable bytes; the formats take one
        // term, or a precision and one term.
        unsafe {
            match precision {
                None => print(ptr, len, c"%T".as_ptr(), term),
                Some(p) => print(ptr, len, c"%.*T".as_ptr(), p, term),
            };
        }
    });
}

/// Writes an integer the enif API could not read as 64 bits.
///
/// The VM converts bignums to decimal in time quadratic in their size
/// (the largest take seconds), so only those below
/// 2^4096 (at most 1234 characters) are written, up to the cut. A larger
/// one is not converted at all: the text is cut (`...`) just before it. Its
/// magnitude is known from one `enif_compare` with 2^4096 (sizes first).
pub fn write_bignum(term: ErlNifTerm, text: &mut BoundedText) {
    let Some(limit) = big_limit() else {
        text.stop();
        return;
    };
    // SAFETY: comparing valid terms.
    let small = unsafe {
        rustler::sys::enif_compare(term, limit.pos) < 0
            && rustler::sys::enif_compare(term, limit.neg) > 0
    };
    if small {
        snprintf(term, None, BIG_TEXT_BUF, text);
    } else {
        text.stop();
    }
}

/// Bits of the largest bignum written.
const BIG_BITS: usize = 4096;

/// Its text: 1234 digits, a sign, the NUL, and some room.
const BIG_TEXT_BUF: usize = 1280;

/// 2^BIG_BITS and -2^BIG_BITS.
struct BigLimit {
    pos: ErlNifTerm,
    neg: ErlNifTerm,
}

// SAFETY: the terms live in a process-independent environment that is
// never freed nor written after creation; reading them from any thread is
// what the enif API allows.
unsafe impl Send for BigLimit {}
// SAFETY: as for Send: shared reads of immutable terms.
unsafe impl Sync for BigLimit {}

static BIG_LIMIT: OnceLock<Option<BigLimit>> = OnceLock::new();

fn big_limit() -> Option<&'static BigLimit> {
    BIG_LIMIT.get_or_init(make_big_limit).as_ref()
}

/// Builds the bounds once, from their external term format
/// (LARGE_BIG_EXT: byte count, sign, little-endian bytes).
fn make_big_limit() -> Option<BigLimit> {
    // SAFETY: a fresh environment, kept for the library's lifetime.
    let env = unsafe { rustler::sys::enif_alloc_env() };
    if env.is_null() {
        return None;
    }
    let n = BIG_BITS / 8 + 1;
    let mut ext = [0u8; BIG_BITS / 8 + 1 + 7];
    ext[..2].copy_from_slice(&[131, 111]);
    ext[2..6].copy_from_slice(&(n as u32).to_be_bytes());
    ext[6 + n] = 1;
    let mut decode = |sign: u8| -> Option<ErlNifTerm> {
        ext[6] = sign;
        let mut term = ErlNifTerm::default();
        // SAFETY: `ext` is a complete external term; `env` is ours.
        let used = unsafe {
            rustler::sys::enif_binary_to_term(env, ext.as_ptr(), ext.len(), &mut term, 0)
        };
        (used == ext.len()).then_some(term)
    };
    let pos = decode(0)?;
    let neg = decode(1)?;
    Some(BigLimit { pos, neg })
}
