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

/// Pid texts [`Pids`] finds by their bytes as two words, in a table of
/// this many (a power of two).
const RECENT: usize = 64;

/// A text of 1 to 16 bytes as two words (with its length, they tell it
/// from every other), and its slot in [`Pids`]' recent ones; None for an
/// empty or a longer text.
#[inline(always)]
fn packed(text: &[u8]) -> Option<((u64, u64), usize)> {
    let n = text.len();
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let half = |b: &[u8]| u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes")));
    let words = match n {
        8..=16 => (word(&text[..8]), word(&text[n - 8..])),
        4..=7 => (half(&text[..4]) | half(&text[n - 4..]) << 32, 0),
        1..=3 => (text.iter().fold(0, |w, &b| w << 8 | u64::from(b)), 0),
        _ => return None,
    };
    let mixed = (words.0 ^ words.1.rotate_left(29) ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    Some((words, (mixed >> 58) as usize % RECENT))
}

/// One of [`Pids`]' recent texts.
#[derive(Clone, Copy, Default)]
struct Recent {
    words: (u64, u64),
    /// Its length (0: the slot is empty).
    len: u32,
    id: u32,
}

/// The pid texts met, one id each; the ones last looked up found by their
/// bytes as words, without hashing the text.
pub struct Pids {
    ids: ByText<u32>,
    texts: Vec<Box<[u8]>>,
    recent: Box<[Recent; RECENT]>,
}

impl Default for Pids {
    fn default() -> Pids {
        Pids {
            ids: ByText::default(),
            texts: Vec::new(),
            recent: Box::new([Recent::default(); RECENT]),
        }
    }
}

impl Pids {
    /// The id of `pid`, if it has one.
    #[inline(always)]
    pub fn find(&mut self, pid: &[u8]) -> Option<u32> {
        let packed = packed(pid);
        if let Some((words, slot)) = packed {
            let r = self.recent[slot];
            if r.words == words && r.len as usize == pid.len() {
                return Some(r.id);
            }
        }
        self.look_up(pid, packed)
    }

    /// [`Pids::find`] past the recent ones: the id by its text, then kept
    /// as a recent one.
    #[inline(never)]
    fn look_up(&mut self, pid: &[u8], packed: Option<((u64, u64), usize)>) -> Option<u32> {
        let id = *get_mut(&mut self.ids, pid)?;
        if let Some((words, slot)) = packed {
            self.recent[slot] = Recent {
                words,
                len: pid.len() as u32,
                id,
            };
        }
        Some(id)
    }

    /// The id of `pid`, given the first time.
    #[inline(always)]
    pub fn id(&mut self, pid: &[u8]) -> u32 {
        match self.find(pid) {
            Some(id) => id,
            None => self.add(pid),
        }
    }

    /// A new pid's id.
    #[inline(never)]
    fn add(&mut self, pid: &[u8]) -> u32 {
        let id = self.texts.len() as u32;
        self.ids.insert(pid.into(), id);
        self.texts.push(pid.into());
        id
    }

    pub fn text(&self, id: u32) -> &[u8] {
        &self.texts[id as usize]
    }

    /// The id of `pid`, if it has one, without keeping it as a recent one.
    pub fn get(&self, pid: &[u8]) -> Option<u32> {
        self.ids.get(pid).copied()
    }
}

/// No place yet in a [`ById`].
const NO_PLACE: u32 = u32::MAX;

/// Values by [`Pids`] id (of the ids met, those that have one), in the
/// order they were made: found by an index, not a lookup.
pub struct ById<V> {
    list: Vec<(u32, V)>,
    /// By id, the place in `list` of its value ([`NO_PLACE`]: none).
    of_id: Vec<u32>,
}

impl<V> Default for ById<V> {
    fn default() -> ById<V> {
        ById {
            list: Vec::new(),
            of_id: Vec::new(),
        }
    }
}

impl<V: Default> ById<V> {
    /// The value of `id`, if it has one.
    #[inline(always)]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut V> {
        // NO_PLACE is past the list's end.
        let at = *self.of_id.get(id as usize)?;
        self.list.get_mut(at as usize).map(|(_, v)| v)
    }

    /// The value of `id`, if it has one.
    pub fn get(&self, id: u32) -> Option<&V> {
        let at = *self.of_id.get(id as usize)?;
        self.list.get(at as usize).map(|(_, v)| v)
    }

    /// The value of `id`, made the first time.
    #[inline(always)]
    pub fn entry(&mut self, id: u32) -> &mut V {
        match self.of_id.get(id as usize) {
            Some(&at) if at != NO_PLACE => &mut self.list[at as usize].1,
            _ => self.make(id),
        }
    }

    /// A value for `id`, which has none.
    #[cold]
    #[inline(never)]
    fn make(&mut self, id: u32) -> &mut V {
        let i = id as usize;
        if i >= self.of_id.len() {
            self.of_id.resize(i + 1, NO_PLACE);
        }
        self.of_id[i] = self.list.len() as u32;
        self.list.push((id, V::default()));
        &mut self.list.last_mut().expect("just pushed").1
    }

    /// The ids and their values, in the order made.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &V)> {
        self.list.iter().map(|(id, v)| (*id, v))
    }

    /// The values, in the order made.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.list.iter_mut().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pid texts of every length get one id each, found again alike.
    #[test]
    fn pids_are_told_apart_by_every_byte() {
        let mut pids = Pids::default();
        let texts: Vec<Vec<u8>> = (0..20)
            .flat_map(|len| (0..len).map(move |at| (len, at)))
            .map(|(len, at)| (0..len).map(|i| b'0' + u8::from(i == at)).collect())
            .chain([Vec::new()])
            .collect();
        let ids: Vec<u32> = texts.iter().map(|t| pids.id(t)).collect();
        for (t, &id) in texts.iter().zip(&ids) {
            assert_eq!(pids.id(t), id);
            assert_eq!(pids.find(t), Some(id));
            assert_eq!(pids.text(id), &t[..]);
        }
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), ids.len());
        assert_eq!(pids.find(b"<0.1.0>"), None);
    }
}
