//! Maps: small ones (up to 32 keys) read in place, the others through
//! enif, and the order enif iterates a large one in.
//!
//! Every event reads two such maps: the tracer state (`#{payload => none}`)
//! and the runtime's `Opts` (`#{extra => To, ...}`); the runtime asks
//! `enabled(trace_status, State, _)` before most events too. One
//! `enif_get_map_value` call costs more than comparing every key of a
//! small map. The VM lays a small map out as a header word,
//! the key count, a tuple of the keys, then the values in the keys' order
//! (ERTS's `flatmap_t`, the same from OTP 18 to 29). `init` checks that
//! layout at load against maps the VM itself made, and learns the header
//! word; when anything differs, `view` answers `None` and callers use the
//! enif calls, so a release that lays maps out otherwise is slower, never
//! wrong. Maps of more than 32 keys (hash tries) have another header and
//! go through enif too.

use super::enif::tuple_elements;
use super::word::{boxed, object, term_of_word, term_word};
use rustler::sys::{ErlNifEnv, ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm};
use rustler::{Atom, Encoder, Env, Term};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The header word of a small map, learned at load; 0, which no header
/// is, until then or when the layout is not the one described above.
static HEADER: AtomicUsize = AtomicUsize::new(0);

/// A small map's keys and values, in place, as term words.
#[derive(Clone, Copy)]
pub struct SmallMap<'a> {
    keys: &'a [usize],
    values: &'a [usize],
}

impl<'a> SmallMap<'a> {
    /// The words of its keys and of their values, in the keys' order.
    #[inline]
    pub fn words(&self) -> (&'a [usize], &'a [usize]) {
        (self.keys, self.values)
    }

    /// The words of each key and its value.
    #[inline]
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize)> + 'a {
        self.keys.iter().copied().zip(self.values.iter().copied())
    }

    /// The value under the key whose word is `key`: an immediate key (an
    /// atom), so comparing words is comparing terms.
    #[inline]
    pub fn get_word(&self, key: usize) -> Option<usize> {
        let at = self.keys.iter().position(|k| *k == key)?;
        self.values.get(at).copied()
    }

    /// The value under `key`, an atom, as a term of `env`.
    #[inline]
    pub fn get(&self, env: Env<'a>, key: Atom) -> Option<Term<'a>> {
        let word = self.get_word(term_word(key.as_c_arg()))?;
        // SAFETY: a value of the map, a term of the same call as the map.
        Some(unsafe { Term::new(env, term_of_word(word)) })
    }
}

/// `term` as a small map, if it is one and the layout was confirmed at
/// load; `None` for any other term (a large map too).
#[inline]
pub fn view<'a>(term: Term<'a>) -> Option<SmallMap<'a>> {
    // SAFETY: `term` lives for 'a.
    unsafe { view_raw(term.as_c_arg()) }
}

/// `view` of a raw term, for the callbacks' first checks.
///
/// # Safety
/// `term` must be a live term of the NIF call being served, which
/// outlives 'a.
#[inline]
pub unsafe fn view_raw<'a>(term: ErlNifTerm) -> Option<SmallMap<'a>> {
    let header = HEADER.load(Ordering::Relaxed);
    let word = term_word(term);
    let map = boxed(word)?;
    if header == 0 {
        return None;
    }
    // SAFETY: `term` is a live boxed term (the caller's promise), so its word less
    // the tag addresses its object, which starts with a header word.
    if unsafe { *map } != header {
        return None;
    }
    // SAFETY: the object's header is the small map's, and it lives for 'a.
    Some(unsafe { view_object(map) })
}

/// The header of a small map as learned at load; 0 when maps are not read
/// in place.
#[inline]
pub fn header() -> usize {
    HEADER.load(Ordering::Relaxed)
}

/// The small map whose object is `map`.
///
/// # Safety
/// `map` must be the object of a live term whose header is `header()`'s
/// (not 0), and the term must outlive 'a.
#[inline]
pub unsafe fn view_object<'a>(map: *const usize) -> SmallMap<'a> {
    // SAFETY: the header is a small map's, whose layout `init` confirmed:
    // the key count, the boxed keys tuple (a header, then the keys), then
    // as many values. The terms live as long as the map, that is 'a.
    unsafe {
        let size = *map.add(1);
        let keys = object(*map.add(2)).add(1);
        SmallMap {
            keys: std::slice::from_raw_parts(keys, size),
            values: std::slice::from_raw_parts(map.add(3), size),
        }
    }
}

/// The value under the atom `key` in `map`: in place for a small map,
/// else through enif.
#[inline]
pub fn get<'a>(map: Term<'a>, key: Atom) -> Option<Term<'a>> {
    match view(map) {
        Some(small) => small.get(map.get_env(), key),
        None => value(map, key.to_term(map.get_env())),
    }
}

/// The value under `key` in `map`, straight from the enif call.
#[inline]
pub fn value<'a>(map: Term<'a>, key: Term<'a>) -> Option<Term<'a>> {
    let env = map.get_env();
    let mut value = ErlNifTerm::default();
    // SAFETY: valid terms of `env`; `value` is an out-pointer to a local.
    let found = unsafe {
        rustler::sys::enif_get_map_value(env.as_c_arg(), map.as_c_arg(), key.as_c_arg(), &mut value)
    };
    // SAFETY: on success `value` is a term of `env`.
    (found != 0).then(|| unsafe { Term::new(env, value) })
}

/// The number of keys of a map.
#[inline]
pub fn size(map: Term) -> Option<usize> {
    let mut size = 0;
    // SAFETY: a valid term; `size` is an out-pointer to a local.
    let is_map = unsafe {
        rustler::sys::enif_get_map_size(map.get_env().as_c_arg(), map.as_c_arg(), &mut size)
    };
    (is_map != 0).then_some(size)
}

/// Confirms the layout on maps the VM makes and learns the header; called
/// from the NIF's load. Returns whether maps will be read in place.
pub fn init(env: Env) -> bool {
    let header = learn(env).unwrap_or(0);
    HEADER.store(header, Ordering::Relaxed);
    header != 0
}

fn learn(env: Env) -> Option<usize> {
    let two = map_of(env, 2)?;
    let header = checked_header(env, two, 2)?;
    // The header does not depend on the size, and a map past 32 keys
    // (another structure) does not have it.
    let one = map_of(env, 1)?;
    (checked_header(env, one, 1)? == header).then_some(())?;
    let large = boxed(term_word(map_of(env, 33)?.as_c_arg()))?;
    // SAFETY: a live boxed term (a map); its object starts with a header.
    let large_header = unsafe { *large };
    (large_header != header).then_some(header)
}

/// A map of `n` keys `0..n` (small integers, immediates) to the atoms
/// `true`/`false` alternately, made by the VM.
fn map_of(env: Env, n: usize) -> Option<Term> {
    let keys: Vec<Term> = (0..n).map(|i| i.encode(env)).collect();
    let values: Vec<Term> = (0..n).map(|i| (i % 2 == 0).encode(env)).collect();
    Term::map_from_arrays(env, &keys, &values).ok()
}

/// The header of `map`, a small map of `n` keys, if its words are laid
/// out as `view` reads them: the count, the keys tuple (checked with
/// `enif_get_tuple`) and each key's value (checked with
/// `enif_get_map_value`).
fn checked_header<'a>(env: Env<'a>, map: Term<'a>, n: usize) -> Option<usize> {
    let obj = boxed(term_word(map.as_c_arg()))?;
    // SAFETY: a map of n keys has at least 3 + n words in every release
    // with maps (a header, and n keys and values, are the least it can
    // hold, and a small map's object holds more); the words are read,
    // not trusted, until checked against the enif calls below.
    let (header, size, keys_word) = unsafe { (*obj, *obj.add(1), *obj.add(2)) };
    if size != n {
        return None;
    }
    // SAFETY: the keys tuple is a term of this environment if the layout
    // holds; enif_get_tuple checks that it is a tuple at all.
    let elems = unsafe { tuple_elements(env.as_c_arg(), term_of_word(keys_word)) }?;
    let keys = boxed(keys_word)?;
    // SAFETY: `keys` is a tuple's object (enif_get_tuple said so), whose
    // header is followed by its elements.
    if elems.len() != n || elems.as_ptr().cast::<usize>() != unsafe { keys.add(1) } {
        return None;
    }
    for (i, key) in elems.iter().enumerate() {
        // SAFETY: a key of the map, a term of `env`.
        let key = unsafe { Term::new(env, *key) };
        let value = value(map, key)?;
        // SAFETY: word 3 + i is within the map's object (see above).
        if term_word(value.as_c_arg()) != unsafe { *obj.add(3 + i) } {
            return None;
        }
    }
    Some(header)
}

/// The most keys a map stored flat has (the VM's `MAP_SMALL_MAP_LIMIT`):
/// enif iterates such a map in key order, as `%T` and `maps:to_list/1`
/// write it.
pub const FLAT_MAP_MAX_KEYS: usize = 32;

/// Whether the enif iterator walks a hash map in the reverse of
/// `maps:to_list/1`'s order: so on OTP 25, not on OTP 29.
static HASH_MAP_BACKWARD: AtomicBool = AtomicBool::new(true);

/// Whether enif walks a map of `size` keys in the reverse of
/// `maps:to_list/1`'s order (only a hash map can be, as learned at load).
#[inline]
pub fn iterates_backward(size: usize) -> bool {
    size > FLAT_MAP_MAX_KEYS && HASH_MAP_BACKWARD.load(Ordering::Relaxed)
}

/// Learns the direction from a hash map and the first key
/// `maps:to_list/1` gives for it (the module passes both at load).
/// Anything else keeps the default.
pub fn learn_iteration_order(env: *mut ErlNifEnv, map: ErlNifTerm, to_list_first: ErlNifTerm) {
    let mut size = 0;
    // SAFETY: out-pointer to a local; `map` is a term of `env`.
    if unsafe { rustler::sys::enif_get_map_size(env, map, &mut size) } == 0
        || size <= FLAT_MAP_MAX_KEYS
    {
        return;
    }
    let mut iter = MaybeUninit::<ErlNifMapIterator>::uninit();
    let (mut key, mut value) = (ErlNifTerm::default(), ErlNifTerm::default());
    // SAFETY: the iterator lives in a local and is destroyed before it
    // goes; `key` and `value` are out-pointers to locals.
    let found = unsafe {
        let head = ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD;
        if rustler::sys::enif_map_iterator_create(env, map, iter.as_mut_ptr(), head) == 0 {
            return;
        }
        let found =
            rustler::sys::enif_map_iterator_get_pair(env, iter.as_mut_ptr(), &mut key, &mut value);
        rustler::sys::enif_map_iterator_destroy(env, iter.as_mut_ptr());
        found
    };
    if found != 0 {
        // SAFETY: two terms of `env`.
        let same = unsafe { rustler::sys::enif_compare(key, to_list_first) } == 0;
        HASH_MAP_BACKWARD.store(!same, Ordering::Relaxed);
    }
}
