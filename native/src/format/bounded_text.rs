//! A text being written into the caller's buffer, with its byte budget.

const ELLIPSIS: &[u8] = b"...";

/// Room kept past the writable index: a short copy or a cached text's
/// block is written whole there without a capacity check.
const SLACK: usize = 64;

/// The largest budget whose whole room is reserved up front; a larger one
/// (identifiers and atoms are never cut) grows as it is written.
const RESERVED_MAX: usize = 1 << 17;

/// Appends to the caller's buffer until the budget is spent. Once `full`,
/// every write is ignored and the walk stops; `finish` then cuts the text
/// to `max - 3` bytes on a character boundary and appends `...`.
pub struct BoundedText<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    /// Index in `out` where the text must end at the latest.
    end: usize,
    /// The lesser of `end` and `writable` while the text is not full, 0
    /// once it is: a short write that fits is one comparison with it.
    limit: usize,
    /// Index in `out` up to which it has capacity for `SLACK` more bytes.
    writable: usize,
    max: usize,
    full: bool,
    /// List elements `shape` may still look at to tell strings from lists.
    scan_left: usize,
}

impl<'a> BoundedText<'a> {
    pub fn new(out: &'a mut Vec<u8>, max: usize) -> Self {
        let start = out.len();
        let end = start.saturating_add(max.max(ELLIPSIS.len()));
        // A buffer reused from event to event reserves nothing after the
        // first: its capacity stays.
        out.reserve(max.min(RESERVED_MAX).saturating_add(1 + SLACK));
        let writable = out.capacity() - SLACK;
        BoundedText {
            out,
            start,
            end,
            limit: end.min(writable),
            writable,
            max,
            full: false,
            scan_left: max.saturating_mul(2),
        }
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Bytes that can still be written without cutting the text.
    #[inline]
    pub fn room(&self) -> usize {
        self.end.saturating_sub(self.out.len())
    }

    /// How many list elements or binary bytes to look at when deciding
    /// whether a list or binary prints as text: one more than the whole
    /// budget. A longer one that is printable that far is written as text,
    /// cut; this bounds the scan and keeps it below twice the output.
    #[inline]
    pub fn scan_bound(&self) -> usize {
        self.max.saturating_add(1)
    }

    /// List elements left to look at beyond those printed: `shape` writes
    /// few bytes per string, so its scans share one allowance of twice the
    /// budget per text.
    #[inline]
    pub fn scan_left(&self) -> usize {
        self.scan_left
    }

    #[inline]
    pub fn spend_scan(&mut self, elements: usize) {
        self.scan_left = self.scan_left.saturating_sub(elements);
    }

    /// Writes `bytes`; the first byte past the budget marks the text cut
    /// (one byte is kept past it so that `finish` knows a cut happened).
    #[inline(always)]
    pub fn put(&mut self, bytes: &[u8]) {
        let at = self.out.len();
        if bytes.len() <= 16 && at + bytes.len() <= self.limit {
            // SAFETY: `at` is within `limit`, so within `writable`: `out`
            // has capacity for SLACK (more than 16) bytes after it.
            unsafe { copy_short(bytes, self.out.as_mut_ptr().add(at)) };
            // SAFETY: those bytes are written.
            unsafe { self.out.set_len(at + bytes.len()) };
            return;
        }
        self.put_slow(bytes);
    }

    /// `put` of a text of up to `SLACK` bytes (a reference's): when it
    /// fits, by four overlapping 16-byte copies rather than a call to
    /// memcpy.
    #[inline(always)]
    pub fn put_medium(&mut self, bytes: &[u8]) {
        // Four copies cover 64 bytes at most.
        const { assert!(SLACK <= 64) };
        let (at, len) = (self.out.len(), bytes.len());
        if (16..=SLACK).contains(&len) && at + len <= self.limit {
            // SAFETY: `at` is within `limit`, so within `writable`: `out`
            // has capacity for SLACK (at least `len`) bytes after it. Each
            // copy reads and writes 16 bytes within the first or the last
            // 32 of the `len` (at least 16) bytes, which together cover
            // them.
            unsafe {
                let (src, dst) = (bytes.as_ptr(), self.out.as_mut_ptr().add(at));
                let copy = |at: usize| {
                    let chunk = src.add(at).cast::<[u8; 16]>().read_unaligned();
                    dst.add(at).cast::<[u8; 16]>().write_unaligned(chunk);
                };
                let half = len.min(32);
                copy(0);
                copy(half - 16);
                copy(len - half);
                copy(len - 16);
                self.out.set_len(at + len);
            }
            return;
        }
        self.put(bytes);
    }

    /// `put` of a long text, or of one that does not fit in the budget or
    /// the capacity left.
    #[inline(never)]
    fn put_slow(&mut self, bytes: &[u8]) {
        if self.full {
            return;
        }
        let room = self.room();
        if bytes.len() <= room {
            self.out.extend_from_slice(bytes);
        } else {
            self.out.extend_from_slice(&bytes[..room + 1]);
            self.cut();
        }
        self.refresh();
    }

    /// After `out` grew: the new capacity's `writable`, and `limit`.
    fn refresh(&mut self) {
        self.writable = self.writable.max(self.out.capacity().saturating_sub(SLACK));
        if !self.full {
            self.limit = self.end.min(self.writable);
        }
    }

    /// Marks the text full: nothing more is written.
    fn cut(&mut self) {
        self.full = true;
        self.limit = 0;
    }

    /// Writes `parts` one after the other, as `put` would; when all of them
    /// fit, with one room check and no capacity check.
    #[inline]
    pub fn put_parts<const N: usize>(&mut self, parts: [&[u8]; N]) {
        let len: usize = parts.iter().map(|part| part.len()).sum();
        let at = self.out.len();
        if at + len > self.limit {
            parts.into_iter().for_each(|part| self.put(part));
            return;
        }
        let mut to = at;
        for part in parts {
            // SAFETY: `out` has capacity for `len` bytes after `at` (`at +
            // len` is within `limit`, so within `writable`); each part goes
            // after the one before.
            unsafe {
                let dst = self.out.as_mut_ptr().add(to);
                if part.len() <= 16 {
                    copy_short(part, dst);
                } else {
                    std::ptr::copy_nonoverlapping(part.as_ptr(), dst, part.len());
                }
            }
            to += part.len();
        }
        // SAFETY: the `len` bytes after `at` are written.
        unsafe { self.out.set_len(at + len) };
    }

    #[inline(always)]
    pub fn byte(&mut self, byte: u8) {
        let at = self.out.len();
        if at < self.limit {
            // SAFETY: `at` is within `limit`, so within `writable`: `out`
            // has capacity after it.
            unsafe {
                *self.out.as_mut_ptr().add(at) = byte;
                self.out.set_len(at + 1);
            }
            return;
        }
        self.put_slow(&[byte]);
    }

    /// Writes the first `len` bytes of `block`, as `put` would; when they
    /// fit, by copying the whole block (a fixed size: no call to memcpy)
    /// and keeping `len` bytes of it.
    #[inline(always)]
    pub fn put_block<const N: usize>(&mut self, block: &[u8; N], len: usize) {
        const { assert!(N <= SLACK) };
        let at = self.out.len();
        if len <= N && at + len <= self.limit {
            // SAFETY: `at` is within `limit`, so within `writable`: `out`
            // has capacity for SLACK >= N bytes after it; the whole block
            // is copied there, and its first `len` bytes kept.
            unsafe {
                std::ptr::copy_nonoverlapping(block.as_ptr(), self.out.as_mut_ptr().add(at), N);
                self.out.set_len(at + len);
            }
            return;
        }
        self.put_slow(&block[..len.min(N)]);
    }

    /// Writes the first `len` (at most 16) bytes of `word`, lowest first,
    /// as `put` would; when they fit, by storing the word from its
    /// registers (no copy through memory, which would wait for the word's
    /// stores to read it back).
    #[inline(always)]
    pub fn put_word(&mut self, word: u128, len: usize) {
        const { assert!(SLACK >= 16) };
        let at = self.out.len();
        if len <= 16 && at + len <= self.limit {
            // SAFETY: `at` is within `limit`, so within `writable`: `out`
            // has capacity for SLACK >= 16 bytes after it, all the two
            // stores reach; the first `len` bytes are kept.
            unsafe {
                let dst = self.out.as_mut_ptr().add(at);
                dst.cast::<u64>().write_unaligned((word as u64).to_le());
                dst.add(8)
                    .cast::<u64>()
                    .write_unaligned(((word >> 64) as u64).to_le());
                self.out.set_len(at + len);
            }
            return;
        }
        self.put_slow(&word.to_le_bytes()[..len.min(16)]);
    }

    /// Where the text ends now, for `rollback` and `since`; only while not
    /// full.
    #[inline]
    pub fn mark(&self) -> usize {
        self.out.len()
    }

    /// What was written since `mark`.
    pub fn since(&self, mark: usize) -> &[u8] {
        &self.out[mark.min(self.out.len())..]
    }

    /// Forgets everything written since `mark` (the text was not full
    /// then), full or not.
    pub fn rollback(&mut self, mark: usize) {
        self.out.truncate(mark);
        self.full = false;
        self.limit = self.end.min(self.writable);
    }

    /// Stops the text here: what follows could not fit.
    pub fn stop(&mut self) {
        self.cut();
    }

    /// Lends the end of the text to `write` when `max` more bytes fit in
    /// the budget and the capacity: `write` writes its text at the address
    /// it is given and answers its length. False, with nothing written,
    /// when they do not fit; the caller then writes the text another way.
    ///
    /// # Safety
    /// `write` must answer at most `max`, have written every byte of the
    /// text it answers, and store nothing past `max + SLACK` bytes from
    /// the address (word stores may overhang the text by that much).
    #[inline(always)]
    pub unsafe fn put_within(&mut self, max: usize, write: impl FnOnce(*mut u8) -> usize) -> bool {
        const { assert!(SLACK >= 16) };
        let at = self.out.len();
        if at + max > self.limit {
            return false;
        }
        // SAFETY: `at + max` is within `limit`, so within `writable`: `out`
        // has capacity for `max + SLACK` bytes after `at`, all `write` may
        // store; the `len` it answers are written (the caller's promise).
        unsafe {
            let len = write(self.out.as_mut_ptr().add(at));
            self.out.set_len(at + len);
        }
        true
    }

    /// Lends `len` bytes of room at the end of the text to `fill`, which
    /// writes a NUL-terminated text there (C's snprintf contract); keeps
    /// that text, what fits. The room is not zeroed: the cost follows the
    /// text written, not `len`.
    pub fn put_with(&mut self, len: usize, fill: impl FnOnce(*mut u8, usize)) {
        if self.full || len == 0 {
            return;
        }
        let at = self.out.len();
        self.out.reserve(len);
        let buf = self.out.spare_capacity_mut()[..len]
            .as_mut_ptr()
            .cast::<u8>();
        // SAFETY: `buf` has `len` bytes of capacity (reserved above). The
        // two NULs bound the scan below even if `fill` writes nothing, or
        // writes without the NUL it promises.
        unsafe {
            *buf = 0;
            *buf.add(len - 1) = 0;
        }
        fill(buf, len);
        let mut written = 0;
        // SAFETY: bytes up to the first NUL were written by `fill` (or are
        // the NULs above); the scan stops there, within `len`.
        while unsafe { *buf.add(written) } != 0 {
            written += 1;
        }
        let keep = written.min(self.end + 1 - at);
        // SAFETY: the first `keep` bytes of the room are initialised text.
        unsafe { self.out.set_len(at + keep) };
        if self.out.len() > self.end {
            self.cut();
        }
        self.refresh();
    }

    /// Ends the text: a cut text loses its last bytes, back to a character
    /// boundary, and gets `...`. True if the text was cut.
    pub fn finish(self) -> bool {
        if !self.full {
            return false;
        }
        let mut cut = self.out.len().min(self.end - ELLIPSIS.len());
        while cut > self.start && cut < self.out.len() && is_continuation(self.out[cut]) {
            cut -= 1;
        }
        self.out.truncate(cut);
        self.out.extend_from_slice(ELLIPSIS);
        true
    }
}

/// Copies `bytes`, at most 16 of them, to `dst` by a few overlapping word
/// copies rather than a call to memcpy.
///
/// # Safety
/// `dst` must be valid for writing `bytes.len()` bytes.
#[inline(always)]
unsafe fn copy_short(bytes: &[u8], dst: *mut u8) {
    let (len, src) = (bytes.len(), bytes.as_ptr());
    // SAFETY: every read is within `bytes` and every write within the
    // `len` bytes at `dst` (the copies of a range overlap, never pass its
    // ends); all `len` are written.
    unsafe {
        if len >= 8 {
            let head = src.cast::<u64>().read_unaligned();
            let tail = src.add(len - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(head);
            dst.add(len - 8).cast::<u64>().write_unaligned(tail);
        } else if len >= 4 {
            let head = src.cast::<u32>().read_unaligned();
            let tail = src.add(len - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(head);
            dst.add(len - 4).cast::<u32>().write_unaligned(tail);
        } else if len > 0 {
            *dst = *src;
            *dst.add(len / 2) = *src.add(len / 2);
            *dst.add(len - 1) = *src.add(len - 1);
        }
    }
}

#[inline]
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(max: usize, write: impl FnOnce(&mut BoundedText)) -> Vec<u8> {
        let mut out = b"prefix:".to_vec();
        let mut text = BoundedText::new(&mut out, max);
        write(&mut text);
        text.finish();
        out.split_off(b"prefix:".len())
    }

    #[test]
    fn text_within_the_budget_is_kept_whole() {
        assert_eq!(written(8, |s| s.put(b"12345678")), b"12345678");
    }

    #[test]
    fn a_longer_text_is_cut_to_the_budget_with_an_ellipsis() {
        let text = written(8, |s| {
            s.put(b"1234");
            s.put(b"56789");
            assert!(s.is_full());
            s.put(b"ignored");
        });
        assert_eq!(text, b"12345...");
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        // "aé" is 3 bytes; with a 65-byte budget the cut (at 62 bytes)
        // falls inside an é, so the text goes back to its start.
        let text = written(65, |s| (0..64).for_each(|_| s.put("aé".as_bytes())));
        assert!(text.ends_with(b"..."));
        assert!(std::str::from_utf8(&text).is_ok());
        assert_eq!(text.len(), 61 + 3);
    }

    #[test]
    fn put_medium_writes_what_put_writes() {
        let long: Vec<u8> = (0..80u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=long.len() {
            for max in [8, 20, 40, 70, 200] {
                let bytes = &long[..len];
                let by_put = written(max, |s| {
                    s.put(b"<");
                    s.put(bytes);
                    s.put(b">");
                });
                let by_medium = written(max, |s| {
                    s.put(b"<");
                    s.put_medium(bytes);
                    s.put(b">");
                });
                assert_eq!(by_medium, by_put, "len {len}, max {max}");
            }
        }
    }

    #[test]
    fn put_word_writes_what_put_writes() {
        let word = u128::from_le_bytes(*b"0123456789abcdef");
        let bytes = word.to_le_bytes();
        for len in 0..=16 {
            for max in [4, 8, 12, 17, 18, 19, 30] {
                let by_put = written(max, |s| {
                    s.put(b"<");
                    s.put(&bytes[..len]);
                    s.put(b">");
                });
                let by_word = written(max, |s| {
                    s.put(b"<");
                    s.put_word(word, len);
                    s.put(b">");
                });
                assert_eq!(by_word, by_put, "len {len}, max {max}");
            }
        }
    }

    #[test]
    fn rollback_forgets_and_unfills() {
        let text = written(6, |s| {
            s.put(b"ab");
            let mark = s.mark();
            s.put(b"cdefgh");
            assert!(s.is_full());
            s.rollback(mark);
            s.put(b"[x]");
        });
        assert_eq!(text, b"ab[x]");
    }

    /// What enif_snprintf does: writes `text` and its NUL into the room.
    fn print(text: &'static std::ffi::CStr) -> impl FnOnce(*mut u8, usize) {
        move |buf, len| {
            let bytes = text.to_bytes_with_nul();
            assert!(bytes.len() <= len);
            // SAFETY: the text lends `len` writable bytes at `buf`.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
        }
    }

    #[test]
    fn put_with_keeps_the_text_up_to_its_nul_only() {
        let text = written(100, |s| s.put_with(4096, print(c"fun f/1")));
        assert_eq!(text, b"fun f/1");
    }

    #[test]
    fn put_with_text_past_the_budget_is_cut() {
        let text = written(10, |s| s.put_with(64, print(c"01234567890123456789")));
        assert_eq!(text, b"0123456...");
    }

    #[test]
    fn put_with_that_writes_nothing_keeps_nothing() {
        assert_eq!(written(10, |s| s.put_with(64, |_, _| {})), b"");
    }
}
