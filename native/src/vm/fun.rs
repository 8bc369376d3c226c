//! External funs (`fun M:F/A`), told in place: their text is the VM's for
//! the export entry they point at, and export entries are never freed, so
//! the walk keeps that text by the entry's address (`leaf_texts`).
//!
//! Releases lay an external fun out one of two ways: a header of its own
//! tag (`EXPORT_SUBTAG`, up to OTP 25) or a fun's header with the external
//! kind and the fun's arity in its bits (`ErlFunThing`, later releases);
//! either way the word after the header is the export entry's address.
//! OTP 25 gives local funs the same header as external ones and tells them
//! by another word (the creator, an atom for external funs): when decoded
//! local funs have the external funs' header, `init` learns which word of
//! the first five (OTP 25's `ErlFunThing` has five before its
//! environment) holds the same value in every external fun and another in
//! every local one, and checks it too.
//! `init` decodes external funs of several arities from their external
//! format (EXPORT_EXT) and keeps the form their headers agree with, when
//! the same function gives the same entry and different ones different
//! entries; otherwise every fun goes to the VM's printer.
//!
//! Local funs (`#Fun<M.I.U>`) point at their fun entry the same way (the
//! word after the header), and their text is the entry's module name, old
//! index and old unique number. Where those three lie in the entry
//! differs between releases (OTP 25's reference-counted `ErlFunEntry`
//! starts with a hash bucket; later ones with the code addresses of each
//! code index), so `init` decodes local funs (NEW_FUN_EXT) of known
//! fields, finds each field's one offset in their entries, and checks the
//! printer's text of each against the fields it found. The entry is live
//! while the term is: the VM's printer reads it for any live fun, so a fun
//! keeps it (OTP 25 counts the funs of an entry; later releases never
//! free entries, a purge only resets their code). The entry's address is
//! not a key for the text, since an entry freed (OTP 25) may give its
//! address to another: the fields read are (`LocalFun`).

use super::enif::printed;
use super::word::{boxed, is_atom_word, term_of_word, term_word};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// The header of an external fun of arity 0, learned at load (0, a
/// tuple's, when not learned).
static HEADER: AtomicUsize = AtomicUsize::new(0);
/// The shift of the arity within the header, or `FIXED` when every
/// external fun has the same header.
static ARITY_SHIFT: AtomicU32 = AtomicU32::new(FIXED);
const FIXED: u32 = u32::MAX;

/// The index of the word that tells external funs from local ones of the
/// same header (0: the header alone tells them), and its value in
/// external funs.
static MARKER_AT: AtomicUsize = AtomicUsize::new(0);
static MARKER: AtomicUsize = AtomicUsize::new(0);

/// The header tag bits of local funs, learned at load (`NO_TAG` when not).
static LOCAL_TAG: AtomicUsize = AtomicUsize::new(NO_TAG);
const NO_TAG: usize = usize::MAX;
/// The byte offsets in a fun entry of its module (a word), old index and
/// old unique number (32-bit each), as learned, 16 bits each.
static LOCAL_FIELDS: AtomicUsize = AtomicUsize::new(0);

/// What decides a local fun's text: its module's atom word, and its old
/// index (high half) and old unique number (low half) as their 32 bits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LocalFun {
    pub module: usize,
    pub numbers: u64,
}

/// What the load learned.
#[derive(Clone, Copy)]
pub struct Known {
    header: usize,
    arity_shift: u32,
    marker_at: usize,
    marker: usize,
    local_tag: usize,
    local_fields: usize,
}

impl Known {
    /// Nothing learned: every fun goes to the VM's printer.
    pub const NONE: Known = Known {
        header: 0,
        arity_shift: FIXED,
        marker_at: 0,
        marker: 0,
        local_tag: NO_TAG,
        local_fields: 0,
    };

    /// The header tag bits of local funs, as learned.
    pub fn local_tag(&self) -> Option<usize> {
        (self.local_tag != NO_TAG).then_some(self.local_tag)
    }

    /// Whether the object `obj`, whose header is `header`, is a local fun
    /// whose entry is read in place.
    ///
    /// # Safety
    /// As for `entry`.
    #[inline]
    pub unsafe fn is_local(&self, obj: *const usize, header: usize) -> bool {
        // SAFETY: the caller's promise, passed on.
        header & 0x3F == self.local_tag && unsafe { self.entry(obj, header) }.is_none()
    }

    /// The fields of the entry of the local fun `obj` that its text
    /// depends on.
    ///
    /// # Safety
    /// `obj` must be a live local fun's object (`is_local`).
    #[inline]
    pub unsafe fn local(&self, obj: *const usize) -> LocalFun {
        // SAFETY: a local fun's object has its entry's address after its
        // header, and the entry lives as long as the fun (module doc).
        unsafe { read_fields(*obj.add(1) as *const u8, self.local_fields) }
    }

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
        // SAFETY: a fun of that header has the marker's word (learned
        // from such funs at load; `MARKER_WORDS`).
        if self.marker_at != 0 && unsafe { *obj.add(self.marker_at) } != self.marker {
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
        marker_at: MARKER_AT.load(Ordering::Relaxed),
        marker: MARKER.load(Ordering::Relaxed),
        local_tag: LOCAL_TAG.load(Ordering::Relaxed),
        local_fields: LOCAL_FIELDS.load(Ordering::Relaxed),
    }
}

/// The fields at the offsets packed in `fields` of the entry at `entry`.
///
/// # Safety
/// `entry` must point at a live fun entry of the layout learned, or at
/// `SPAN` readable bytes.
#[inline(always)]
unsafe fn read_fields(entry: *const u8, fields: usize) -> LocalFun {
    let at = |n: u32| (fields >> (16 * n)) & 0xFFFF;
    // SAFETY: the offsets lie within the entry's first `SPAN` bytes, the
    // module's aligned to a word and the numbers' to 4 bytes (as learned).
    unsafe {
        let module = *entry.add(at(0)).cast::<usize>();
        let index = *entry.add(at(1)).cast::<u32>();
        let uniq = *entry.add(at(2)).cast::<u32>();
        LocalFun {
            module,
            numbers: (u64::from(index) << 32) | u64::from(uniq),
        }
    }
}

/// Which funs the load found it can tell in place.
pub struct Learned {
    pub external: bool,
    pub local: bool,
}

/// Learns the forms of external and local funs from funs the VM decodes;
/// called from the NIF's load. Local funs are told in place only with
/// external ones: they may share a header.
pub fn init(env: *mut ErlNifEnv) -> Learned {
    let none = Learned {
        external: false,
        local: false,
    };
    let Some((mut known, exports)) = learn(env) else {
        return none;
    };
    let samples = local_samples(env);
    if let Some(samples) = &samples {
        if !tell_apart(&mut known, &exports, samples) {
            return none;
        }
    }
    let local = samples.and_then(|samples| learn_local(env, &known, &samples));
    if let Some((tag, fields)) = local {
        LOCAL_FIELDS.store(fields, Ordering::Relaxed);
        LOCAL_TAG.store(tag, Ordering::Relaxed);
    }
    MARKER.store(known.marker, Ordering::Relaxed);
    MARKER_AT.store(known.marker_at, Ordering::Relaxed);
    ARITY_SHIFT.store(known.arity_shift, Ordering::Relaxed);
    HEADER.store(known.header, Ordering::Relaxed);
    Learned {
        external: true,
        local: local.is_some(),
    }
}

/// Words of every fun's object on a release whose local and external
/// funs share a header (OTP 25: `ErlFunThing` before its environment).
const MARKER_WORDS: usize = 5;

/// Makes `known` take none of the local `samples`: if the header takes
/// some, learns the word (after the entry's) whose value is the same atom
/// in every external fun of `exports` and another in every local sample.
/// False if there is none, or a local fun is still taken.
fn tell_apart(known: &mut Known, exports: &[*const usize], samples: &[LocalSample]) -> bool {
    let taken = |known: &Known| {
        samples.iter().any(|s| {
            // SAFETY: a live fun's object and its header.
            unsafe { known.entry(s.obj, s.header) }.is_some()
        })
    };
    if !taken(known) {
        return true;
    }
    // SAFETY: the objects of live funs of one header, which have
    // `MARKER_WORDS` words on the releases this applies to.
    let word = |obj: *const usize, at: usize| unsafe { *obj.add(at) };
    // An atom (OTP 25's creator, `external`), which no local fun has
    // there: a word such as the off-heap link is 0 in external funs and
    // in local funs made as literals alike.
    let marker_at = (2..MARKER_WORDS).find(|&at| {
        let marker = word(exports[0], at);
        is_atom_word(term_of_word(marker))
            && exports.iter().all(|&obj| word(obj, at) == marker)
            && samples.iter().all(|s| word(s.obj, at) != marker)
    });
    let Some(marker_at) = marker_at else {
        return false;
    };
    known.marker_at = marker_at;
    known.marker = word(exports[0], marker_at);
    // Every external fun still reads as its entry.
    exports.iter().all(|&obj| {
        // SAFETY: as above.
        let read = unsafe { known.entry(obj, *obj) };
        read == Some(word(obj, 1))
    }) && !taken(known)
}

/// Bytes of a fun entry searched for its fields: no release's entry is
/// shorter (OTP 25's and OTP 29's are 88 bytes on 64-bit builds).
const SPAN: usize = 88;

/// A local fun decoded at load: its fields, and what was read of it.
struct LocalSample {
    module: &'static str,
    old_index: u32,
    old_uniq: u32,
    term: ErlNifTerm,
    obj: *const usize,
    header: usize,
    entry: *const u8,
}

/// Local funs decoded at load, of known fields.
fn local_samples(env: *mut ErlNifEnv) -> Option<Vec<LocalSample>> {
    // Of modules that are never loaded, so that their entries are only
    // these; numbers unlike any address or header, each in one sample.
    [
        ("dyntrace_fun_layout_a", 0x1A2B_3C01, 0x0765_4321, 0),
        ("dyntrace_fun_layout_b", 0x0000_0002, 0x3EAD_BE02, 1),
        ("dyntrace_fun_layout_c", 0x0DEF_0003, 0x0000_0103, 2),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(module, old_index, old_uniq, free))| {
        let term = local_fun(env, module, i as u32, old_index, old_uniq, free)?;
        let obj = boxed(term_word(term))?;
        // SAFETY: a live boxed term: its header, and the word after it
        // (every fun's object has one).
        let (header, entry) = unsafe { (*obj, *obj.add(1)) };
        (entry != 0 && entry % 8 == 0).then_some(LocalSample {
            module,
            old_index,
            old_uniq,
            term,
            obj,
            header,
            entry: entry as *const u8,
        })
    })
    .collect()
}

/// Learns the header tag of local funs and where their entries keep the
/// fields of their text, from `samples`, which `exports` must not take.
fn learn_local(
    env: *mut ErlNifEnv,
    exports: &Known,
    samples: &[LocalSample],
) -> Option<(usize, usize)> {
    let external = |s: &LocalSample| {
        // SAFETY: a live fun's object and its header.
        unsafe { exports.entry(s.obj, s.header) }.is_some()
    };
    if samples.iter().any(external) {
        return None;
    }
    let tag = samples[0].header & 0x3F;
    if samples.iter().any(|s| s.header & 0x3F != tag) {
        return None;
    }
    let module_at = one_offset(samples, 8, |s, at| {
        // SAFETY: `at` is within the sample's entry's first `SPAN` bytes
        // and aligned to a word.
        let word = unsafe { *s.entry.add(at).cast::<usize>() };
        word == atom_word(env, s.module)
    })?;
    let number_at = |value: fn(&LocalSample) -> u32| {
        one_offset(samples, 4, |s, at| {
            // SAFETY: as above, aligned to 4 bytes.
            unsafe { *s.entry.add(at).cast::<u32>() == value(s) }
        })
    };
    let index_at = number_at(|s| s.old_index)?;
    let uniq_at = number_at(|s| s.old_uniq)?;
    let fields = module_at | (index_at << 16) | (uniq_at << 32);
    // Each reads back as its fields, which the printer writes.
    samples
        .iter()
        .all(|s| {
            // SAFETY: a live local fun's entry, read at the offsets found.
            let read = unsafe { read_fields(s.entry, fields) };
            let want = format!("#Fun<{}.{}.{}>", s.module, s.old_index, s.old_uniq);
            let mut buf = [0u8; 96];
            read.module == atom_word(env, s.module)
                && read.numbers == (u64::from(s.old_index) << 32) | u64::from(s.old_uniq)
                && printed(s.term, &mut buf) == want.as_bytes()
        })
        .then_some((tag, fields))
}

/// The one offset (a multiple of `align` within `SPAN`) at which `holds`
/// for every sample; `None` if there is none or more than one.
fn one_offset(
    samples: &[LocalSample],
    align: usize,
    holds: impl Fn(&LocalSample, usize) -> bool,
) -> Option<usize> {
    let mut found = (0..SPAN)
        .step_by(align)
        .filter(|&at| samples.iter().all(|s| holds(s, at)));
    let at = found.next()?;
    found.next().is_none().then_some(at)
}

/// The word of the atom `name`.
fn atom_word(env: *mut ErlNifEnv, name: &str) -> usize {
    // SAFETY: the load's environment; `name` is its length in bytes.
    let atom = unsafe { rustler::sys::enif_make_atom_len(env, name.as_ptr().cast(), name.len()) };
    term_word(atom)
}

/// Decodes a local fun of `module` (NEW_FUN_EXT) with the given old index
/// and old unique number, new index `index`, and `free` free variables
/// (small integers): unique per `index` and `module`.
fn local_fun(
    env: *mut ErlNifEnv,
    module: &str,
    index: u32,
    old_index: u32,
    old_uniq: u32,
    free: u8,
) -> Option<ErlNifTerm> {
    let mut ext = vec![131u8, 112, 0, 0, 0, 0, free];
    let mut uniq = *b"dyntrace-fun-md5";
    uniq[15] = b'0' + index as u8;
    ext.extend_from_slice(&uniq);
    ext.extend_from_slice(&index.to_be_bytes());
    ext.extend_from_slice(&u32::from(free).to_be_bytes());
    ext.push(119);
    ext.push(u8::try_from(module.len()).ok()?);
    ext.extend_from_slice(module.as_bytes());
    for number in [old_index, old_uniq] {
        ext.push(98);
        ext.extend_from_slice(&number.to_be_bytes());
    }
    // The creator: a pid of this node's default name (NEW_PID_EXT).
    ext.extend_from_slice(&[88, 119, 13]);
    ext.extend_from_slice(b"nonode@nohost");
    ext.extend_from_slice(&[0; 12]);
    for n in 0..free {
        ext.extend_from_slice(&[97, n]);
    }
    let size = u32::try_from(ext.len() - 2).ok()?;
    ext[2..6].copy_from_slice(&size.to_be_bytes());
    let mut term = ErlNifTerm::default();
    // SAFETY: `ext` is a complete external term; `env` is the load's.
    let used =
        unsafe { rustler::sys::enif_binary_to_term(env, ext.as_ptr(), ext.len(), &mut term, 0) };
    // SAFETY: as above.
    (used == ext.len() && unsafe { rustler::sys::enif_is_fun(env, term) } != 0).then_some(term)
}

fn learn(env: *mut ErlNifEnv) -> Option<(Known, Vec<*const usize>)> {
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
            ..Known::NONE
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
            ..Known::NONE
        })?
    };
    // Each reads back as the entry it was decoded with.
    let samples = [self0, rev1, rev2, map2];
    samples
        .iter()
        .all(|&(header, entry, obj)| {
            // SAFETY: a live fun's object, `header` its first word.
            let read = unsafe { known.entry(obj, header) };
            read == Some(entry)
        })
        .then(|| (known, samples.iter().map(|s| s.2).collect()))
}

/// Decodes `fun Module:Function/Arity` (EXPORT_EXT, the atoms as
/// SMALL_ATOM_UTF8_EXT): its header word, the word after it, and its
/// object.
fn export_fun(
    env: *mut ErlNifEnv,
    module: &str,
    function: &str,
    arity: u8,
) -> Option<(usize, usize, *const usize)> {
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
    Some((header, next, obj))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OTP 25's form: one header for every fun, the creator (the fifth
    /// word) the atom `external` in external funs; the entry's module at
    /// byte 64, its old index at 44 and old unique number at 36.
    const FUN_HEADER: usize = 0xd4;
    const EXTERNAL: usize = 0x3f8b;
    const OTP25: Known = Known {
        header: FUN_HEADER,
        arity_shift: FIXED,
        marker_at: 4,
        marker: EXTERNAL,
        local_tag: FUN_HEADER & 0x3F,
        local_fields: 64 | (44 << 16) | (36 << 32),
    };

    fn entry(module: usize, old_index: u32, old_uniq: u32) -> [usize; SPAN / 8] {
        let mut words = [0usize; SPAN / 8];
        words[8] = module;
        words[5] = (old_index as usize) << 32;
        words[4] = (old_uniq as usize) << 32;
        words
    }

    #[test]
    fn the_marker_tells_a_local_fun_from_an_external_one() {
        let fields = entry(0x0012_345B, 7, 0xFFFF_FFF0);
        let addr = fields.as_ptr() as usize;
        let local = [FUN_HEADER, addr, 0, 0, 0x3];
        let external = [FUN_HEADER, 0x7000, 0, 1, EXTERNAL];
        // SAFETY: here and below, each object has the five words of its form.
        unsafe {
            assert_eq!(OTP25.entry(external.as_ptr(), FUN_HEADER), Some(0x7000));
            assert!(!OTP25.is_local(external.as_ptr(), FUN_HEADER));
            assert_eq!(OTP25.entry(local.as_ptr(), FUN_HEADER), None);
            assert!(OTP25.is_local(local.as_ptr(), FUN_HEADER));
            let read = OTP25.local(local.as_ptr());
            assert_eq!(
                read,
                LocalFun {
                    module: 0x0012_345B,
                    numbers: (7 << 32) | 0xFFFF_FFF0,
                }
            );
            // Another header tag (a tuple's) is neither.
            assert!(!OTP25.is_local(local.as_ptr(), 3 << 6));
        }
    }

    #[test]
    fn nothing_learned_tells_no_fun() {
        let words = [FUN_HEADER, 0x7000, 0, 1, EXTERNAL];
        // SAFETY: a five-word object.
        unsafe {
            assert_eq!(Known::NONE.entry(words.as_ptr(), FUN_HEADER), None);
            assert!(!Known::NONE.is_local(words.as_ptr(), FUN_HEADER));
        }
    }
}
