//! State kept per key as the trace writes it (a pid, a function, a
//! message text): one hash lookup per event, the key copied only when new.

use crate::model::bytes::same;
use crate::model::message::ShortText;

/// Per-process (or per-anything) state keyed by the text in the trace.
pub type ByText<V> = hashbrown::HashMap<Box<[u8]>, V, rustc_hash::FxBuildHasher>;

/// A text as a map keyed by texts ([`ByText`], or by [`ShortText`]) is
/// searched with: it hashes as the key does and is compared with it in
/// line ([`same`]).
#[derive(Clone, Copy)]
pub struct Key<'a>(pub &'a [u8]);

impl std::hash::Hash for Key<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl hashbrown::Equivalent<Box<[u8]>> for Key<'_> {
    #[inline]
    fn equivalent(&self, key: &Box<[u8]>) -> bool {
        same(self.0, key)
    }
}

impl hashbrown::Equivalent<ShortText> for Key<'_> {
    #[inline]
    fn equivalent(&self, key: &ShortText) -> bool {
        same(self.0, key)
    }
}

impl From<&Key<'_>> for Box<[u8]> {
    fn from(key: &Key<'_>) -> Box<[u8]> {
        key.0.into()
    }
}

/// The entry for `key`, created with `make` the first time (one hash
/// lookup; the key is copied only when inserted).
pub fn entry<'m, V>(map: &'m mut ByText<V>, key: &[u8], make: impl FnOnce() -> V) -> &'m mut V {
    map.entry_ref(&Key(key)).or_insert_with(make)
}

/// The value for `key`, if any ([`Key`]'s lookup).
pub fn get_mut<'m, V>(map: &'m mut ByText<V>, key: &[u8]) -> Option<&'m mut V> {
    map.get_mut(&Key(key))
}

/// A hash of a short key text (a pid, a reference, a request's name) from
/// its ends: its first eight bytes, the eight before its last eight, its
/// last eight, and its length, mixed with `seed` (another part of the key).
/// The keys' texts differ there (a reference's fast-changing number is at
/// its end), and a table keyed by them compares the whole text anyway: a
/// few loads and one multiply instead of a pass over every byte.
#[inline]
pub fn ends_hash(text: &[u8], seed: u64) -> u64 {
    let n = text.len();
    let word = |at: usize| u64::from_le_bytes(text[at..at + 8].try_into().expect("8 bytes"));
    let (first, middle, last) = match n {
        16.. => (word(0), word(n - 16), word(n - 8)),
        8.. => (word(0), 0, word(n - 8)),
        _ => (text.iter().fold(0, |w, &b| w << 8 | u64::from(b)), 0, 0),
    };
    let a = first ^ last.rotate_left(29) ^ 0x243f_6a88_85a3_08d3;
    let b = middle ^ seed.rotate_left(17) ^ (n as u64) ^ 0x1319_8a2e_0370_7344;
    let m = u128::from(a) * u128::from(b);
    (m as u64) ^ ((m >> 64) as u64)
}

/// Keys sorted for stable output.
pub fn sorted_keys<V>(map: &ByText<V>) -> Vec<&[u8]> {
    let mut keys: Vec<&[u8]> = map.keys().map(|k| &k[..]).collect();
    keys.sort();
    keys
}
