//! The output buffer with its byte budget.

const ELLIPSIS: &[u8] = b"...";

/// Appends to the caller's buffer until the budget is spent. Once `full`,
/// every write is ignored and the walk stops; `finish` then cuts the text
/// to `max - 3` bytes on a character boundary and appends `...`.
pub struct Sink<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    /// Index in `out` where the text must end at the latest.
    end: usize,
    max: usize,
    full: bool,
}

impl<'a> Sink<'a> {
    pub fn new(out: &'a mut Vec<u8>, max: usize) -> Self {
        let start = out.len();
        Sink {
            out,
            start,
            end: start.saturating_add(max.max(ELLIPSIS.len())),
            max,
            full: false,
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

    /// Writes `bytes`; the first byte past the budget marks the text cut
    /// (one byte is kept past it so that `finish` knows a cut happened).
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        if self.full {
            return;
        }
        let room = self.room();
        if bytes.len() <= room {
            self.out.extend_from_slice(bytes);
        } else {
            self.out.extend_from_slice(&bytes[..room + 1]);
            self.full = true;
        }
    }

    #[inline]
    pub fn byte(&mut self, byte: u8) {
        self.put(&[byte]);
    }

    /// Where the text ends now, for `rollback`; only while not full.
    #[inline]
    pub fn mark(&self) -> usize {
        self.out.len()
    }

    /// Forgets everything written since `mark` (the text was not full
    /// then), full or not.
    pub fn rollback(&mut self, mark: usize) {
        self.out.truncate(mark);
        self.full = false;
    }

    /// Stops the text here: what follows could not fit.
    pub fn stop(&mut self) {
        self.full = true;
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
            self.full = true;
        }
    }

    /// Ends the text: a cut text loses its last bytes, back to a character
    /// boundary, and gets `...`.
    pub fn finish(self) {
        if !self.full {
            return;
        }
        let mut cut = self.out.len().min(self.end - ELLIPSIS.len());
        while cut > self.start && cut < self.out.len() && is_continuation(self.out[cut]) {
            cut -= 1;
        }
        self.out.truncate(cut);
        self.out.extend_from_slice(ELLIPSIS);
    }
}

#[inline]
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}
