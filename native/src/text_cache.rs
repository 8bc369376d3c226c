//! Texts remembered per scheduler thread under a key that decides them
//! for the node's life: a fixed number of slots, one text each, never
//! grown. A key lives in one of two slots (its home and the one beside
//! it), so that two keys of the same home both stay. A text is kept with its NUL, so an event can hand it to its
//! tracepoint as it is (`lend`), with no copy. Two caches use it: the
//! texts of pids and atoms (`ident_cache`) and of code locations
//! (`Module:Function/Arity`, for the call events).

use crate::lttng::Text;

/// What a cache is keyed by.
pub trait Key: Copy + Eq {
    /// No key a text is kept under: the mark of an empty slot.
    const EMPTY: Self;

    /// The key's bits, mixed so that the slot index (the top bits) spreads
    /// keys that differ only in a few low bits (pids and atoms differ in
    /// their tag bits, and atoms step by 64).
    fn mix(&self) -> u64;
}

/// Fibonacci hashing's multiplier: 2^64 over the golden ratio.
pub const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Key for usize {
    const EMPTY: usize = 0;

    #[inline(always)]
    fn mix(&self) -> u64 {
        (*self as u64).wrapping_mul(MIX)
    }
}

/// One slot: its key, its text's length (less than `N`, so `text[len]`
/// is the text's NUL) and the text. Aligned to cache lines: a hit reads
/// one line when the slot fits in one.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot<K, const N: usize> {
    key: K,
    len: u8,
    text: [u8; N],
}

/// `S` slots (a power of two) of texts of fewer than `N` bytes.
pub struct TextCache<K: Key, const S: usize, const N: usize> {
    slots: Box<[Slot<K, N>; S]>,
}

impl<K: Key, const S: usize, const N: usize> Default for TextCache<K, S, N> {
    fn default() -> Self {
        const { assert!(S.is_power_of_two() && N <= u8::MAX as usize) };
        let empty = Slot {
            key: K::EMPTY,
            len: 0,
            text: [0; N],
        };
        TextCache {
            slots: Box::new([empty; S]),
        }
    }
}

impl<K: Key, const S: usize, const N: usize> TextCache<K, S, N> {
    /// The slot a key is kept in: the top bits of its mixed bits.
    #[inline(always)]
    fn index(key: K) -> usize {
        (key.mix() >> (64 - S.ilog2())) as usize
    }

    /// The slot that holds `key`: its home, or the one beside it.
    #[inline(always)]
    fn slot(&self, key: K) -> Option<&Slot<K, N>> {
        let home = Self::index(key);
        let slot = &self.slots[home];
        if slot.key == key {
            return Some(slot);
        }
        let beside = &self.slots[home ^ 1];
        (beside.key == key).then_some(beside)
    }

    /// The whole text block of `key`'s slot and the text's length, if it
    /// holds `key`: a caller copying it copies the block, a fixed size.
    #[inline(always)]
    pub fn block(&self, key: K) -> Option<(&[u8; N], usize)> {
        self.slot(key)
            .map(|slot| (&slot.text, usize::from(slot.len)))
    }

    /// The text of `key`, NUL included, for a tracepoint; `None` if it is
    /// not kept.
    #[inline(always)]
    pub fn lend(&self, key: K) -> Option<Text<'_>> {
        let slot = self.slot(key)?;
        slot.text.get(..usize::from(slot.len) + 1).map(Text::kept)
    }

    /// Keeps `text` under `key` in its home slot; what the home held moves
    /// beside it, in place of what that held. A text of `N` bytes or more
    /// is not kept.
    pub fn keep(&mut self, key: K, text: &[u8]) {
        if text.len() >= N {
            return;
        }
        let home = Self::index(key);
        let held = self.slots[home].key;
        if held != key && held != K::EMPTY {
            self.slots[home ^ 1] = self.slots[home];
        }
        let slot = &mut self.slots[home];
        slot.text[..text.len()].copy_from_slice(text);
        slot.text[text.len()] = 0;
        slot.len = text.len() as u8;
        slot.key = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lent(cache: &TextCache<usize, 4, 8>, key: usize) -> Option<Vec<u8>> {
        cache.lend(key).map(|text| {
            // SAFETY: a lent text ends in NUL within its slot.
            unsafe { std::ffi::CStr::from_ptr(text.as_ptr()) }
                .to_bytes()
                .to_vec()
        })
    }

    #[test]
    fn keeps_and_lends_with_nul() {
        let mut cache = TextCache::<usize, 4, 8>::default();
        assert_eq!(lent(&cache, 5), None);
        cache.keep(5, b"<0.5.0>");
        assert_eq!(lent(&cache, 5).as_deref(), Some(&b"<0.5.0>"[..]));
        assert_eq!(cache.block(5).map(|(_, len)| len), Some(7));
        // A shorter text in the same slot ends at its own NUL.
        cache.keep(5, b"ab");
        assert_eq!(lent(&cache, 5).as_deref(), Some(&b"ab"[..]));
    }

    #[test]
    fn never_keeps_a_text_without_room_for_its_nul() {
        let mut cache = TextCache::<usize, 4, 8>::default();
        cache.keep(9, b"12345678");
        assert_eq!(lent(&cache, 9), None);
        cache.keep(9, b"1234567");
        assert_eq!(lent(&cache, 9).as_deref(), Some(&b"1234567"[..]));
    }

    #[test]
    fn two_keys_of_one_home_stay_and_a_third_drops_the_older() {
        let mut cache = TextCache::<usize, 4, 8>::default();
        // Keys share a home slot if their mixed top bits agree.
        let index = |key: usize| key.mix() >> 62;
        let mut same: Vec<usize> = (2..1000)
            .filter(|k| index(*k) == index(1))
            .take(2)
            .collect();
        let (second, third) = (same.remove(0), same.remove(0));
        cache.keep(1, b"one");
        cache.keep(second, b"second");
        assert_eq!(lent(&cache, 1).as_deref(), Some(&b"one"[..]));
        assert_eq!(lent(&cache, second).as_deref(), Some(&b"second"[..]));
        // Kept again: its text replaced in place, the other key stays.
        cache.keep(second, b"2nd");
        assert_eq!(lent(&cache, second).as_deref(), Some(&b"2nd"[..]));
        assert_eq!(lent(&cache, 1).as_deref(), Some(&b"one"[..]));
        cache.keep(third, b"third");
        assert_eq!(lent(&cache, 1), None);
        assert_eq!(lent(&cache, second).as_deref(), Some(&b"2nd"[..]));
        assert_eq!(lent(&cache, third).as_deref(), Some(&b"third"[..]));
    }
}
