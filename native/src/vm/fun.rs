//! External funs (`fun M:F/A`), told in place: their text is the VM's for
//! the export entry they point at, and export entries are never freed, so
//! the walk keeps that text by the entry's address (`leaf_texts`).
//!
//! Releases lay an external fun out one of two ways: a header of its own
//! tag (`EXPORT_SUBTAG`, up to OTP 25) or a fun's header with the external
//! kind and the fun's arity in its bits (`ErlFunThing`, later releases);
//! either way the word after the header is the export entry's address.
//! `init` decodes external funs of several arities from their external
//! format (EXPORT_EXT) and keeps the form their headers agree with, when
//! the same function gives the same entry and different ones different
//! entries; otherwise every fun goes to the VM's printer.

use super::word::{boxed, term_word};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// The header of an external fun of arity 0, learned at load (0, a
/// tuple's, when not learned).
static HEADER: AtomicUsize = AtomicUsize::new(0);
/// The shift of the arity within the header, or `FIXED` when every
/// external fun has the same header.
static ARITY_SHIFT: AtomicU32 = AtomicU32::new(FIXED);
const FIXED: u32 = u32::MAX;

/// What the load learned.
#[derive(Clone, Copy)]
pub struct Known {
    header: usize,
    arity_shift: u32,
}

impl Known {
    #[cfg(test)]
    pub const NONE: Known = Known {
        header: 0,
        arity_shift: FIXED,
    };

    /// The header tag bits (the low six, below the arity's) of external
    /// funs, as learned.
    pub fn tag(&self) -> Option<usize> {
        (self.header != 0).then_some(self.header & 0x3F)
    }

    /// The export entry's address of the external fun `obj`, whose header
    /// is `header`; `None` for any other object.
    ///
    /// # Safety
    /// `obj` must be a live boxed term's object, `header` its first word.
    #[inline]
    pub unsafe fn entry(&self, obj: *const usize, header: usize) -> Option<usize> {
        if self.header == 0 {
            return None;
        }
        let masked = match self.arity_shift {
            FIXED => header,
            shift => header & !(0xFF << shift),
        };
        if masked != self.header {
            return None;
        }
        // SAFETY: an external fun's object has the entry's address after
        // its header (the layout learned at load).
        let entry = unsafe { *obj.add(1) };
        (entry != 0 && entry & 0b111 == 0).then_some(entry)
    }
}

/// The form as learned at load.
#[inline]
pub fn known() -> Known {
    Known {
        header: HEADER.load(Ordering::Relaxed),
        arity_shift: ARITY_SHIFT.load(Ordering::Relaxed),
    }
}

/// Learns the form from external funs the VM decodes; called from the
/// NIF's load. Returns whether external funs are told in place.
pub fn init(env: *mut ErlNifEnv) -> bool {
    let Some(known) = learn(env) else {
        return false;
    };
    ARITY_SHIFT.store(known.arity_shift, Ordering::Relaxed);
    HEADER.store(known.header, Ordering::Relaxed);
    true
}

fn learn(env: *mut ErlNifEnv) -> Option<Known> {
    // (header, entry) of each: functions of modules always loaded.
    let self0 = export_fun(env, "erlang", "self", 0)?;
    let rev1 = export_fun(env, "lists", "reverse", 1)?;
    let rev1_again = export_fun(env, "lists", "reverse", 1)?;
    let rev2 = export_fun(env, "lists", "reverse", 2)?;
    let map2 = export_fun(env, "lists", "map", 2)?;
    let entries = [self0.1, rev1.1, rev2.1, map2.1];
    let distinct = entries
        .iter()
        .enumerate()
        .all(|(i, e)| entries[i + 1..].iter().all(|o| o != e));
    if !distinct || rev1.1 != rev1_again.1 || rev1.0 != rev1_again.0 {
        return None;
    }
    let known = if [rev1.0, rev2.0, map2.0].iter().all(|h| *h == self0.0) {
        Known {
            header: self0.0,
            arity_shift: FIXED,
        }
    } else {
        let diff = self0.0 ^ rev1.0;
        if diff.count_ones() != 1 || rev2.0 != map2.0 {
            return None;
        }
        let shift = diff.trailing_zeros();
        if !(6..=usize::BITS - 8).contains(&shift) || self0.0 & (0xFF << shift) != 0 {
            return None;
        }
        (rev2.0 == self0.0 | (2 << shift)).then_some(Known {
            header: self0.0,
            arity_shift: shift,
        })?
    };
    // Each reads back as the entry it was decoded with.
    [self0, rev1, rev2, map2]
        .iter()
        .all(|&(header, entry)| {
            let obj = [header, entry];
            // SAFETY: `obj` holds the two words read at the decoding.
            let read = unsafe { known.entry(obj.as_ptr(), header) };
            read == Some(entry)
        })
        .then_some(known)
}

/// Decodes `fun Module:Function/Arity` (EXPORT_EXT, the atoms as
/// SMALL_ATOM_UTF8_EXT): its header word and the word after it.
fn export_fun(
    env: *mut ErlNifEnv,
    module: &str,
    function: &str,
    arity: u8,
) -> Option<(usize, usize)> {
    let mut ext = vec![131u8, 113];
    for name in [module, function] {
        ext.push(119);
        ext.push(u8::try_from(name.len()).ok()?);
        ext.extend_from_slice(name.as_bytes());
    }
    ext.extend_from_slice(&[97, arity]);
    let mut term = ErlNifTerm::default();
    // SAFETY: `ext` is a complete external term; `env` is the load's.
    let used =
        unsafe { rustler::sys::enif_binary_to_term(env, ext.as_ptr(), ext.len(), &mut term, 0) };
    // SAFETY: as above.
    if used != ext.len() || unsafe { rustler::sys::enif_is_fun(env, term) } == 0 {
        return None;
    }
    let obj = boxed(term_word(term))?;
    // SAFETY: a live boxed term: its header, and the word after it (every
    // fun's object has one).
    let (header, next) = unsafe { (*obj, *obj.add(1)) };
    Some((header, next))
}
