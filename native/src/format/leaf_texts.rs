//! The texts of atoms, local pids and ports, `[]` and external funs met
//! by the walks of one scheduler thread, by their word (an external fun's:
//! its export entry's address).
//!
//! An atom's text (its name, quoted and escaped where the VM's printer
//! does) and a local pid's (`<0.N.S>`) or port's (`#Port<0.N>`) depend on
//! the word alone, for as long as the node runs: atoms are never
//! collected, and a pid's or port's word encodes its numbers. An external
//! fun's (`fun M:F/A`) depends on its export entry alone, which is never
//! freed. These would otherwise be read from the VM (its atom table, its
//! printer) at every occurrence. The walk keeps
//! them in a fixed number of slots (`text_cache`), apart from the event
//! fields' identifier cache, whose texts are lent to a tracepoint while a
//! message's walk runs.
//!
//! A local fun's (`#Fun<M.I.U>`) depends on its module and two numbers of
//! its fun entry alone, and is kept by those (`LocalFun`), in slots of
//! their own: not by the entry's address, which a freed entry may give to
//! another.

use super::bounded_text::BoundedText;
use crate::text_cache::{Key, TextCache, MIX};
use crate::vm::fun::LocalFun;

/// Longer than any local pid's text and than most atoms: a slot is one
/// 64-byte cache line.
const TEXT_MAX: usize = 48;

/// A local fun's slot is two cache lines: its 16-byte key, the length,
/// and a text of up to 110 bytes (a module name of up to 90, an escript's
/// about 50).
const FUN_TEXT_MAX: usize = 111;

impl Key for LocalFun {
    const EMPTY: LocalFun = LocalFun {
        module: 0,
        numbers: 0,
    };

    #[inline(always)]
    fn mix(&self) -> u64 {
        (self.module as u64 ^ self.numbers.wrapping_mul(MIX)).wrapping_mul(MIX)
    }
}

#[derive(Default)]
pub struct LeafTexts {
    texts: TextCache<usize, 256, TEXT_MAX>,
    funs: TextCache<LocalFun, 64, FUN_TEXT_MAX>,
}

/// Keeps in `cache` the text `write_leaf` writes for `key`, if it was
/// written whole: the text not cut by the budget.
#[inline(always)]
fn keep_written<K: Key, const S: usize, const N: usize>(
    cache: &mut TextCache<K, S, N>,
    key: K,
    text: &mut BoundedText,
    write_leaf: impl FnOnce(&mut BoundedText),
) {
    let mark = text.mark();
    write_leaf(text);
    if !text.is_full() {
        cache.keep(key, text.since(mark));
    }
}

impl LeafTexts {
    /// Writes the text kept for `word`; false if none is kept.
    #[inline(always)]
    pub fn write(&self, word: usize, text: &mut BoundedText) -> bool {
        match self.texts.block(word) {
            Some((block, len)) => {
                text.put_block(block, len);
                true
            }
            None => false,
        }
    }

    /// Writes the text kept for the local fun `fun`; false if none is kept.
    #[inline(always)]
    pub fn write_fun(&self, fun: LocalFun, text: &mut BoundedText) -> bool {
        match self.funs.block(fun) {
            Some((block, len)) => {
                text.put_medium(&block[..len]);
                true
            }
            None => false,
        }
    }

    /// `write_and_keep` for the local fun `fun`.
    #[cold]
    #[inline(never)]
    pub fn write_and_keep_fun(
        &mut self,
        fun: LocalFun,
        text: &mut BoundedText,
        write_leaf: impl FnOnce(&mut BoundedText),
    ) {
        keep_written(&mut self.funs, fun, text, write_leaf);
    }

    /// Keeps the text `write_leaf` writes for `word`, if it was written
    /// whole: the text not cut by the budget.
    #[cold]
    #[inline(never)]
    pub fn write_and_keep(
        &mut self,
        word: usize,
        text: &mut BoundedText,
        write_leaf: impl FnOnce(&mut BoundedText),
    ) {
        keep_written(&mut self.texts, word, text, write_leaf);
    }
}
