//! Bignums, read in place: a header whose tag says the sign (ERTS's
//! `POS_BIG_SUBTAG`, `NEG_BIG_SUBTAG`) and whose arity is the number of
//! digit words that follow, least significant first, each a machine word
//! (`big.h`: `ErtsDigit` is a `UWord` on 64-bit machines).
//!
//! `init` learns both headers' tag bits from bignums the VM makes at load
//! and keeps them only if the digits read agree with the values made;
//! otherwise every bignum goes through enif and the VM's printer.

use super::word::{boxed, term_word};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A header's tag bits (primary and subtag) and the shift of its arity.
const TAG_BITS: usize = 0x3F;
const ARITY_SHIFT: u32 = 6;

/// The tag bits of a positive and of a negative bignum's header, learned
/// at load; 0 (a tuple's, never a bignum's) when not learned.
static POS_TAG: AtomicUsize = AtomicUsize::new(0);
static NEG_TAG: AtomicUsize = AtomicUsize::new(0);

/// What the load learned: the two tags.
#[derive(Clone, Copy)]
pub struct Known {
    pos: usize,
    neg: usize,
}

impl Known {
    #[cfg(test)]
    pub const NONE: Known = Known { pos: 0, neg: 0 };

    /// The header tag bits of both signs, as learned.
    pub fn tags(&self) -> [Option<usize>; 2] {
        [self.pos, self.neg].map(|tag| (tag != 0).then_some(tag))
    }

    /// The sign and digits of the bignum `obj`, whose header is `header`;
    /// `None` if it is not a bignum in the learned layout.
    ///
    /// # Safety
    /// `obj` must be a live boxed term's object, `header` its first word,
    /// and the term must outlive 'a.
    #[inline]
    pub unsafe fn digits<'a>(
        &self,
        obj: *const usize,
        header: usize,
    ) -> Option<(bool, &'a [usize])> {
        let tag = header & TAG_BITS;
        let negative = if tag == self.pos && tag != 0 {
            false
        } else if tag == self.neg && tag != 0 {
            true
        } else {
            return None;
        };
        let arity = header >> ARITY_SHIFT;
        if arity == 0 {
            return None;
        }
        // SAFETY: a bignum's header counts the digit words after it, which
        // live as long as the term (the caller's promise).
        Some((negative, unsafe {
            std::slice::from_raw_parts(obj.add(1), arity)
        }))
    }
}

/// The tags as learned at load.
#[inline]
pub fn known() -> Known {
    Known {
        pos: POS_TAG.load(Ordering::Relaxed),
        neg: NEG_TAG.load(Ordering::Relaxed),
    }
}

/// Learns the tags from bignums the VM makes; called from the NIF's load.
/// Returns whether bignums will be read in place.
pub fn init(env: *mut ErlNifEnv) -> bool {
    let Some(known) = learn(env) else {
        return false;
    };
    POS_TAG.store(known.pos, Ordering::Relaxed);
    NEG_TAG.store(known.neg, Ordering::Relaxed);
    true
}

fn learn(env: *mut ErlNifEnv) -> Option<Known> {
    if usize::BITS != 64 {
        return None;
    }
    // SAFETY: making integers in the load's environment.
    let (max, min) = unsafe {
        (
            rustler::sys::enif_make_uint64(env, u64::MAX),
            rustler::sys::enif_make_int64(env, i64::MIN),
        )
    };
    let header = |term: ErlNifTerm| {
        // SAFETY: a live boxed term made above: its object starts with a
        // header.
        boxed(term_word(term)).map(|obj| (obj, unsafe { *obj }))
    };
    let (max_obj, max_header) = header(max)?;
    let (min_obj, min_header) = header(min)?;
    let known = Known {
        pos: max_header & TAG_BITS,
        neg: min_header & TAG_BITS,
    };
    if known.pos == known.neg || known.pos == 0 || known.neg == 0 {
        return None;
    }
    // SAFETY: the objects of the two terms made above, their headers.
    let (max_digits, min_digits) = unsafe {
        (
            known.digits(max_obj, max_header)?,
            known.digits(min_obj, min_header)?,
        )
    };
    (max_digits == (false, &[usize::MAX][..]) && min_digits == (true, &[1usize << 63][..]))
        .then_some(known)
}
