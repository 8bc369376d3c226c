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

use super::bounded_text::BoundedText;
use crate::text_cache::TextCache;

/// Longer than any local pid's text and than most atoms: a slot is one
/// 64-byte cache line.
const TEXT_MAX: usize = 48;

#[derive(Default)]
pub struct LeafTexts {
    texts: TextCache<usize, 256, TEXT_MAX>,
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
        let mark = text.mark();
        write_leaf(text);
        if !text.is_full() {
            self.texts.keep(word, text.since(mark));
        }
    }
}
