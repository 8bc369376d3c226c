//! Leaves whose text only the VM knows, through `enif_snprintf("%T")` on
//! that one term. Its return value is not reliable when the text is cut,
//! so the text's length is read from the buffer (up to its NUL).

use super::sink::Sink;
use rustler::sys::ErlNifTerm;
use std::ffi::c_char;
use std::sync::OnceLock;

/// Room for any pid, port or ref (at most 5 numbers of 10 digits).
const IDENTIFIER_BUF: usize = 128;

/// Room for anything else: a fun names two atoms of at most 255
/// characters, each written in at most 4 bytes, plus quotes.
const LEAF_BUF: usize = 4096;

/// Writes the `%T` text of a pid, port or reference.
pub fn write_identifier(term: ErlNifTerm, sink: &mut Sink) {
    snprintf(term, None, IDENTIFIER_BUF, sink);
}

/// Writes the `%T` text of one leaf term (what fits in the budget).
pub fn write_leaf(term: ErlNifTerm, sink: &mut Sink) {
    snprintf(term, None, LEAF_BUF, sink);
}

/// Writes a bitstring whose size is not a multiple of 8, which enif cannot
/// read: the VM prints it with a precision, so that it stops after about
/// as many elements as the budget has bytes left. Each element takes at
/// least two bytes, so the VM's own cut mark never reaches the budget.
pub fn write_bitstring(term: ErlNifTerm, sink: &mut Sink) {
    let room = sink.room().min(1 << 20) + 64;
    snprintf(term, Some(room as i32), room, sink);
}

fn snprintf(term: ErlNifTerm, precision: Option<i32>, len: usize, sink: &mut Sink) {
    sink.put_with(len, |buf| {
        let print = unsafe { rustler::sys::get_enif_snprintf() };
        let ptr = buf.as_mut_ptr() as *mut c_char;
        // SAFETY: `buf` has `buf.len()` writable bytes; the formats take
        // one term, or a precision and one term.
        unsafe {
            match precision {
                None => print(ptr, buf.len(), c"%T".as_ptr(), term),
                Some(p) => print(ptr, buf.len(), c"%.*T".as_ptr(), p, term),
            };
        }
    });
}

/// Writes an integer the enif API could not read as 64 bits.
///
/// Its magnitude is bracketed between powers of two (`enif_compare`, which
/// looks at sizes first), which bounds its number of decimal digits without
/// converting it. If even its smallest possible text is over twice the
/// budget left (plus 64), nothing is written and the text is cut here;
/// otherwise the VM converts it, its text bounded by about 4x the budget.
pub fn write_bignum(term: ErlNifTerm, sink: &mut Sink) {
    let Some(limits) = big_limits() else {
        write_leaf(term, sink);
        return;
    };
    // SAFETY: comparing two valid terms.
    let negative = unsafe { rustler::sys::enif_compare(term, limits.zero) } < 0;
    let bracket = limits.pow.iter().position(|(pos, neg)| {
        // SAFETY: as above.
        unsafe {
            rustler::sys::enif_compare(term, *pos) < 0 && rustler::sys::enif_compare(term, *neg) > 0
        }
    });
    let Some(j) = bracket else {
        sink.stop();
        return;
    };
    let sign = usize::from(negative);
    let fewest = if j == 0 {
        1
    } else {
        digits_at_least(bits(j - 1))
    } + sign;
    if fewest > 2 * sink.room() + 64 {
        sink.stop();
        return;
    }
    let most = digits_at_most(bits(j)) + sign + 1;
    snprintf(term, None, most, sink);
}

/// 2^(64 << j) bounds: from 2^64 to 2^262144 (about 78,900 digits, more
/// than the largest budget).
const BIG_STEPS: usize = 13;

fn bits(j: usize) -> usize {
    64 << j
}

/// Digits of a number >= 2^bits (log10(2) rounded down).
fn digits_at_least(bits: usize) -> usize {
    bits * 30102 / 100_000 + 1
}

/// Digits of a number < 2^bits (log10(2) rounded up).
fn digits_at_most(bits: usize) -> usize {
    bits * 30103 / 100_000 + 1
}

struct BigLimits {
    zero: ErlNifTerm,
    /// (2^bits(j), -2^bits(j)).
    pow: Vec<(ErlNifTerm, ErlNifTerm)>,
}

// SAFETY: the terms live in a process-independent environment that is
// never freed nor written after creation; reading them from any thread is
// what the enif API allows.
unsafe impl Send for BigLimits {}
unsafe impl Sync for BigLimits {}

static BIG_LIMITS: OnceLock<Option<BigLimits>> = OnceLock::new();

fn big_limits() -> Option<&'static BigLimits> {
    BIG_LIMITS.get_or_init(make_big_limits).as_ref()
}

/// Builds the bounds once, from their external term format.
fn make_big_limits() -> Option<BigLimits> {
    // SAFETY: a fresh environment, kept for the library's lifetime.
    let env = unsafe { rustler::sys::enif_alloc_env() };
    if env.is_null() {
        return None;
    }
    let decode = |ext: &[u8]| -> Option<ErlNifTerm> {
        let mut term = ErlNifTerm::default();
        // SAFETY: `ext` is a complete external term; `env` is ours.
        let used = unsafe {
            rustler::sys::enif_binary_to_term(env, ext.as_ptr(), ext.len(), &mut term, 0)
        };
        (used == ext.len()).then_some(term)
    };
    let zero = decode(&[131, 97, 0])?;
    let mut pow = Vec::with_capacity(BIG_STEPS);
    for j in 0..BIG_STEPS {
        let n = bits(j) / 8 + 1;
        let mut ext = Vec::with_capacity(n + 6);
        ext.extend_from_slice(&[131, 111]);
        ext.extend_from_slice(&(n as u32).to_be_bytes());
        ext.push(0);
        ext.resize(ext.len() + n, 0);
        if let Some(top) = ext.last_mut() {
            *top = 1;
        }
        let pos = decode(&ext)?;
        ext[6] = 1;
        let neg = decode(&ext)?;
        pow.push((pos, neg));
    }
    Some(BigLimits { zero, pow })
}
