//! State kept per key as the trace writes it (a pid, a function, a
//! message text): one hash lookup per event, the key copied only when new.

/// Per-process (or per-anything) state keyed by the text in the trace.
pub type ByText<V> = hashbrown::HashMap<Box<[u8]>, V, rustc_hash::FxBuildHasher>;

/// The entry for `key`, created with `make` the first time (one hash
/// lookup; the key is copied only when inserted).
pub fn entry<'m, V>(map: &'m mut ByText<V>, key: &[u8], make: impl FnOnce() -> V) -> &'m mut V {
    map.entry_ref(key).or_insert_with(make)
}

/// Keys sorted for stable output.
pub fn sorted_keys<V>(map: &ByText<V>) -> Vec<&[u8]> {
    let mut keys: Vec<&[u8]> = map.keys().map(|k| &k[..]).collect();
    keys.sort();
    keys
}
