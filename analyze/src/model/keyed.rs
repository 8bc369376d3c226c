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

/// Keys sorted for stable output.
pub fn sorted_keys<V>(map: &ByText<V>) -> Vec<&[u8]> {
    let mut keys: Vec<&[u8]> = map.keys().map(|k| &k[..]).collect();
    keys.sort();
    keys
}
