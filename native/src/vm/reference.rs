//! The text of a local reference, `#Ref<0.N.N.N>`, from the words of its
//! object rather than through the VM's printer.
//!
//! A local reference is a header and its numbers, 32 bits each, two to a
//! word beside a 32-bit marker of all ones (ERTS's `ErtsORefThing` on a
//! 64-bit machine); an alias made by a monitor or `alias/0` is a longer
//! object of the same tag holding the owner's pid after the numbers
//! (`ErtsPRefThing`), and releases print three or five of its numbers. A
//! reference kept in a magic binary has the ordinary header but no marker:
//! its numbers are elsewhere, and the VM prints it. The printer writes the
//! numbers last to first.
//!
//! `init` learns both headers from references the VM made (its own, and
//! the samples the module passes at load), and how many numbers an alias
//! prints, and keeps a form only when the text written here is the VM's,
//! byte for byte, for every sample; anything else is printed by the VM.

use super::enif::printed as printed_text;
use super::word::{object, term_word};
use crate::decimal::decimal_u32_before;
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// Room for the longest text: `#Ref<0.` and five 10-digit numbers.
pub const TEXT_MAX: usize = 64;

/// The marker of an ordinary reference, in the low half of its first word.
const MARKER: usize = 0xFFFF_FFFF;
/// The shift of a header's arity: the words after it.
const ARITY_SHIFT: u32 = 6;

/// The headers learned at load (0, which no header is, when not), and the
/// numbers an alias prints (0 when not learned).
static ORDINARY_HEADER: AtomicUsize = AtomicUsize::new(0);
static ALIAS_HEADER: AtomicUsize = AtomicUsize::new(0);
static ALIAS_NUMBERS: AtomicU8 = AtomicU8::new(0);

/// The forms learned at load.
#[derive(Clone, Copy)]
pub struct Known {
    ordinary: usize,
    alias: usize,
    alias_numbers: u8,
}

impl Known {
    /// No form: every reference is printed by the VM.
    pub const NONE: Known = Known {
        ordinary: 0,
        alias: 0,
        alias_numbers: 0,
    };
}

/// The forms as learned at load.
#[inline]
pub fn known() -> Known {
    Known {
        ordinary: ORDINARY_HEADER.load(Ordering::Relaxed),
        alias: ALIAS_HEADER.load(Ordering::Relaxed),
        alias_numbers: ALIAS_NUMBERS.load(Ordering::Relaxed),
    }
}

impl Known {
    /// The header tag bits (the low six) of the forms written here.
    pub fn tags(&self) -> [Option<usize>; 2] {
        let tag = |header: usize| (header != 0).then_some(header & 0x3F);
        [
            tag(self.ordinary),
            tag(self.alias).filter(|_| self.alias_numbers != 0),
        ]
    }

    /// How many numbers the object `obj` with header `header` prints, if
    /// it is a reference whose text `write` knows.
    ///
    /// # Safety
    /// `obj` must be a live boxed term's object, `header` its first word.
    #[inline(always)]
    unsafe fn numbers(&self, obj: *const usize, header: usize) -> Option<usize> {
        let count = if header == self.ordinary {
            3
        } else if header == self.alias && self.alias_numbers != 0 {
            usize::from(self.alias_numbers)
        } else {
            return None;
        };
        // SAFETY: both forms have at least two words after the header.
        let first = unsafe { *obj.add(1) };
        (first & MARKER == MARKER).then_some(count)
    }

    /// Whether `write` writes the reference whose object is `obj`.
    ///
    /// # Safety
    /// As for `numbers`.
    #[inline(always)]
    pub unsafe fn is_written(&self, obj: *const usize, header: usize) -> bool {
        // SAFETY: the caller's promise.
        unsafe { self.numbers(obj, header) }.is_some()
    }

    /// The text of the reference of `word`, written into `buf`, if it is
    /// one `is_written` accepts.
    ///
    /// # Safety
    /// `word` must be a live boxed term's word.
    #[inline]
    pub unsafe fn write<'b>(&self, word: usize, buf: &'b mut [u8; TEXT_MAX]) -> Option<&'b [u8]> {
        let obj = object(word);
        // SAFETY: a live boxed term's object starts with its header.
        let count = unsafe { self.numbers(obj, *obj) }?;
        // Written backwards from the end of `buf`: `>`, then each number
        // first to last, each after a `.`, then `#Ref<0`.
        let mut at = TEXT_MAX - 1;
        buf[at] = b'>';
        for i in 0..count {
            // SAFETY: the numbers follow the marker, two to a word: word
            // 1 + ceil(i / 2) is within the object for i < count (an
            // ordinary reference has 2 words after its header, an alias 3).
            let word = unsafe { *obj.add(1 + i.div_ceil(2)) };
            let n = if i % 2 == 0 {
                word >> 32
            } else {
                word & MARKER
            };
            at = decimal_u32_before(n as u32, buf, at) - 1;
            buf[at] = b'.';
        }
        at -= PREFIX.len();
        buf[at..at + PREFIX.len()].copy_from_slice(PREFIX);
        Some(&buf[at..])
    }
}

/// What every local reference's text starts with: its channel is 0.
const PREFIX: &[u8] = b"#Ref<0";

/// Learns the forms from references the VM made: one of its own, and
/// `samples` (the module's, at load: references and aliases). Called from
/// the NIF's load; returns whether references will be written here.
pub fn init(env: *mut ErlNifEnv, samples: &[ErlNifTerm]) -> bool {
    let learned = learn(env, samples).unwrap_or(Known::NONE);
    ORDINARY_HEADER.store(learned.ordinary, Ordering::Relaxed);
    ALIAS_HEADER.store(learned.alias, Ordering::Relaxed);
    ALIAS_NUMBERS.store(learned.alias_numbers, Ordering::Relaxed);
    learned.ordinary != 0
}

fn learn(env: *mut ErlNifEnv, samples: &[ErlNifTerm]) -> Option<Known> {
    // SAFETY: the load's environment.
    let own = unsafe { rustler::sys::enif_make_ref(env) };
    let header = |term: ErlNifTerm| -> Option<usize> {
        let word = term_word(term);
        // SAFETY: a live boxed term's object starts with its header.
        (word & 0b11 == 0b10).then(|| unsafe { *object(word) })
    };
    let mut known = Known {
        ordinary: header(own)?,
        alias: 0,
        alias_numbers: 0,
    };
    let refs: Vec<ErlNifTerm> = std::iter::once(own)
        .chain(samples.iter().copied().filter(|t| is_reference(env, *t)))
        .collect();
    for &sample in &refs {
        let h = header(sample)?;
        if h != known.ordinary && known.alias == 0 {
            known.alias = h;
            // The words after the header must hold the numbers.
            let words = h >> ARITY_SHIFT;
            known.alias_numbers = [3u8, 5]
                .into_iter()
                .filter(|&n| words >= usize::from(n).div_ceil(2))
                .find(|&n| {
                    let trial = Known {
                        alias_numbers: n,
                        ..known
                    };
                    agrees(&trial, sample)
                })
                .unwrap_or(0);
        }
    }
    // Every sample of a known form must read as the VM prints it; one of
    // another form (a magic reference) must be left to the VM.
    refs.iter()
        .all(|&sample| agrees(&known, sample) || !is_plain(&known, sample))
        .then_some(known)
}

/// Whether `write` takes the reference `term`.
fn is_plain(known: &Known, term: ErlNifTerm) -> bool {
    let obj = object(term_word(term));
    // SAFETY: a live reference made by the VM: a boxed term whose object
    // starts with its header.
    unsafe { known.is_written(obj, *obj) }
}

/// Whether the text written for `term` is the VM's own.
fn agrees(known: &Known, term: ErlNifTerm) -> bool {
    let mut buf = [0u8; TEXT_MAX];
    // SAFETY: a live reference made by the VM.
    let Some(ours) = (unsafe { known.write(term_word(term), &mut buf) }) else {
        return false;
    };
    let mut printed = [0u8; TEXT_MAX + 1];
    printed_text(term, &mut printed) == ours
}

fn is_reference(env: *mut ErlNifEnv, term: ErlNifTerm) -> bool {
    // SAFETY: a term of `env`.
    unsafe { rustler::sys::enif_is_ref(env, term) != 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: usize = (2 << ARITY_SHIFT) | 0x10;
    const ALIAS: usize = (3 << ARITY_SHIFT) | 0x10;

    fn known(alias_numbers: u8) -> Known {
        Known {
            ordinary: HEADER,
            alias: ALIAS,
            alias_numbers,
        }
    }

    /// The text written for the object in `words`, as a boxed term.
    fn text(known: Known, words: &[usize]) -> Option<String> {
        let mut buf = [0u8; TEXT_MAX];
        // SAFETY: `words` is a live object: a header and the words it counts.
        let written = unsafe { known.write(words.as_ptr() as usize + 0b10, &mut buf) }?;
        Some(String::from_utf8(written.to_vec()).unwrap())
    }

    fn pair(low: u32, high: u32) -> usize {
        (high as usize) << 32 | low as usize
    }

    #[test]
    fn an_ordinary_reference_prints_its_numbers_last_to_first() {
        let words = [HEADER, pair(u32::MAX, 7), pair(8, 9)];
        assert_eq!(text(known(3), &words).as_deref(), Some("#Ref<0.9.8.7>"));
        let big = [HEADER, pair(u32::MAX, u32::MAX), pair(0, 4_000_000_000)];
        assert_eq!(
            text(known(3), &big).as_deref(),
            Some("#Ref<0.4000000000.0.4294967295>")
        );
    }

    #[test]
    fn an_alias_prints_as_many_numbers_as_learned() {
        let words = [ALIAS, pair(u32::MAX, 1), pair(2, 3), pair(4, 5)];
        assert_eq!(text(known(3), &words).as_deref(), Some("#Ref<0.3.2.1>"));
        assert_eq!(text(known(5), &words).as_deref(), Some("#Ref<0.5.4.3.2.1>"));
        // Not learned: the VM prints it.
        assert_eq!(text(known(0), &words), None);
    }

    #[test]
    fn a_reference_without_the_marker_is_left_to_the_vm() {
        // A magic reference: a pointer where the marker would be.
        let words = [HEADER, 0x7f00_1234_5678, 0];
        assert_eq!(text(known(3), &words), None);
        // Another header (an external reference, a tuple).
        assert_eq!(
            text(known(3), &[(2 << ARITY_SHIFT) | 0x38, u32::MAX as usize, 0]),
            None
        );
    }
}
