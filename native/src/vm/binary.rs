//! The bytes of a binary, read in place.
//!
//! A message is often a binary, and `enif_inspect_binary` costs several
//! times what reading the common forms directly costs (it handles
//! sub-binaries at any bit offset, and writable ones).
//! The VM lays a binary out in one of two ways, each the same for every
//! release of its era (ERTS's `erl_binary.h`, then `erl_bits.h`):
//!
//! - up to OTP 26: a heap binary is a header, its size in bytes and its
//!   bytes; a larger one is a `ProcBin`, a header, the size, two pointers,
//!   the address of the bytes and a flags word;
//! - from OTP 27: a heap bitstring is a header, its size in bits and its
//!   bytes; a larger one is a sub-bitstring, a header, the base address
//!   (its two low bits flags), and the start and end offsets in bits.
//!
//! `init` reads binaries the VM makes at load, of both kinds and a sub-
//! binary, each way, and keeps the way whose every reading agrees with
//! `enif_inspect_binary` (the same address, the same size). Only the
//! plain forms are read in place by `read`: the heap form, and the
//! off-heap one with no flag set and whole bytes; anything else (a
//! sub-binary up to OTP 26, a writable binary, a bitstring, another
//! layout) answers `None`, and the caller asks enif: slower, never wrong.
//! The walk reads two more forms by their header alone: a sub-binary up
//! to OTP 26 (`read_sub`, its original read in place as above) and, from
//! OTP 27, a heap bitstring of one data word (`read_word`).

use super::enif::inspect_binary;
use super::word::{boxed, term_word};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// How this release lays binaries out, as learned at load.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Layout {
    /// Not learned, or neither layout agreed: every read goes to enif.
    Unknown = 0,
    /// Heap binaries sized in bytes, `ProcBin`s (up to OTP 26).
    ProcBin = 1,
    /// Heap bitstrings sized in bits, sub-bitstrings (from OTP 27).
    SubBits = 2,
}

static LAYOUT: AtomicU8 = AtomicU8::new(Layout::Unknown as u8);
/// The low six bits of a heap binary's header (its tag), learned at load.
static HEAP_TAG: AtomicUsize = AtomicUsize::new(0);
/// The whole header word of the off-heap form, learned at load.
static OFF_HEAP_HEADER: AtomicUsize = AtomicUsize::new(0);
/// Up to OTP 26, the whole header word of a sub-binary (`ErlSubBin`), the
/// form of every bitstring that is not whole bytes; 0 when not learned.
static SUB_HEADER: AtomicUsize = AtomicUsize::new(0);
/// From OTP 27, the whole header word of a heap bitstring of one data
/// word (up to 64 bits); 0 when not learned.
static WORD_HEADER: AtomicUsize = AtomicUsize::new(0);

/// A header's tag bits (primary and subtag), and the shift of its arity:
/// the number of words that follow it (ERTS's `_HEADER_ARITY_OFFS`).
const TAG_BITS: usize = 0x3F;
const ARITY_SHIFT: u32 = 6;
/// The tag bits of a sub-binary's header up to OTP 26
/// (`_TAG_HEADER_SUB_BIN`).
const SUB_BIN_TAG: usize = 0x28;
/// The flag bits in a sub-bitstring's base word.
const SUB_BITS_FLAGS: usize = 0b11;

/// What the learned layout needs to read a binary.
#[derive(Clone, Copy)]
pub struct Known {
    layout: Layout,
    heap_tag: usize,
    off_heap_header: usize,
    sub_header: usize,
    word_header: usize,
}

impl Known {
    /// The one header told before the kind dispatch, when learned:
    /// up to OTP 26 a sub-binary's (every bitstring not whole bytes,
    /// `read_sub`), from OTP 27 a heap bitstring's of one data word
    /// (every one of up to 64 bits, `<<1:3>>` and `<<"abc">>` alike,
    /// `read_word`).
    pub fn first_header(&self) -> Option<usize> {
        [self.sub_header, self.word_header]
            .into_iter()
            .find(|&header| header != 0)
    }

    /// Whether `first_header` is a heap bitstring's of one data word
    /// (from OTP 27, read by `read_word`), not a sub-binary's.
    pub fn first_in_word(&self) -> bool {
        self.layout == Layout::SubBits
    }

    /// The header tag bits (the low six) of the forms read in place: the
    /// heap form's, the off-heap one's, and up to OTP 26 the sub-binary's.
    pub fn tags(&self) -> [Option<usize>; 3] {
        [
            Some(self.heap_tag),
            Some(self.off_heap_header & TAG_BITS),
            (self.sub_header != 0).then_some(self.sub_header & TAG_BITS),
        ]
    }
}

/// A bitstring read in place: `size` bits from bit `offset` (below 8) of
/// `bytes`, which hold them and nothing past them. Its size is not a
/// multiple of 8, but for a sub-binary's (`read_sub`) and a one-word heap
/// bitstring's (`read_word`), which may be whole bytes.
#[derive(Clone, Copy)]
pub struct Bits<'a> {
    pub bytes: &'a [u8],
    pub offset: usize,
    pub size: usize,
}

/// The bytes of `term` if it is a binary in a form read in place; `None`
/// for any other term, and for binaries enif must read.
///
/// # Safety
/// `term` must be a live term of the NIF call being served, which outlives
/// 'a.
#[inline]
pub unsafe fn read<'a>(term: ErlNifTerm) -> Option<&'a [u8]> {
    // SAFETY: the caller's promise, passed on.
    unsafe { read_known(known()?, term_word(term)) }
}

/// The layout as learned at load; `None` when binaries are not read in
/// place.
#[inline]
pub fn known() -> Option<Known> {
    Some(Known {
        layout: match LAYOUT.load(Ordering::Relaxed) {
            1 => Layout::ProcBin,
            2 => Layout::SubBits,
            _ => return None,
        },
        heap_tag: HEAP_TAG.load(Ordering::Relaxed),
        off_heap_header: OFF_HEAP_HEADER.load(Ordering::Relaxed),
        sub_header: SUB_HEADER.load(Ordering::Relaxed),
        word_header: WORD_HEADER.load(Ordering::Relaxed),
    })
}

/// The bits of `word`'s term if it is a bitstring whose size is not a
/// multiple of 8, in a form read in place; `None` for anything else.
/// The bytes answered hold the bits and nothing past the object's.
///
/// # Safety
/// As for `read`: `word` must be a live term's word, the term outliving
/// 'a. Inlined into its callers: its answer, handed back through
/// memory, made them wait for the stores of its fields.
#[inline(always)]
pub unsafe fn read_bits<'a>(known: Known, word: usize) -> Option<Bits<'a>> {
    let obj = boxed(word)?;
    // SAFETY: a live boxed term's object starts with a header word, and
    // the term outlives 'a (the caller's promise).
    unsafe { read_bits_at(known, obj, *obj) }
}

/// `read_bits` of a boxed object, `header` its first word (already read
/// by the caller).
///
/// # Safety
/// `obj` must be a live boxed term's object, `header` its first word, the
/// term outliving 'a.
#[inline(always)]
pub unsafe fn read_bits_at<'a>(known: Known, obj: *const usize, header: usize) -> Option<Bits<'a>> {
    let arity = header >> ARITY_SHIFT;
    // (address, first bit, size in bits) as the layout says.
    let (base, offset, size) = match known.layout {
        Layout::SubBits if is_heap(known, header) && arity >= 1 => {
            // SAFETY: word 1 is within the object.
            let size = unsafe { *obj.add(1) };
            if size.div_ceil(64) > arity - 1 {
                return None;
            }
            // SAFETY: word 2 onwards holds the bytes, within the object.
            (unsafe { obj.add(2) }.cast::<u8>(), 0, size)
        }
        Layout::SubBits if header == known.off_heap_header && arity >= 3 => {
            // SAFETY: words 1 to 3 are within the object (arity >= 3).
            let (base, start, end) = unsafe { (*obj.add(1), *obj.add(2), *obj.add(3)) };
            if base & SUB_BITS_FLAGS != 0 || end < start {
                return None;
            }
            (base as *const u8, start, end - start)
        }
        Layout::ProcBin if is_sub(known, header) => {
            // SAFETY: the caller's promise: a live object, a sub-binary's
            // by its header.
            return unsafe { read_sub(known, obj) }.filter(|bits| bits.size % 8 != 0);
        }
        _ => return None,
    };
    if size % 8 == 0 {
        return None;
    }
    // SAFETY: the bits lie within the binary's bytes (checked above for the
    // forms whose size the object does not bound itself), which live as
    // long as the term.
    Some(unsafe { bits_of(base, offset, size) })
}

/// The bits of a sub-binary (up to OTP 26: every bitstring that is not
/// whole bytes, and binaries cut from others), `obj` its object, whose
/// header `is_sub` said is a sub-binary's: any size, whole bytes too.
/// `None` when its original is not read in place.
///
/// # Safety
/// `obj` must be a live sub-binary's object, the term outliving 'a.
#[inline(always)]
pub unsafe fn read_sub<'a>(known: Known, obj: *const usize) -> Option<Bits<'a>> {
    // Only learned with the sub-binary's layout: said so here, the
    // original's reading has no other layout's arms to pass.
    debug_assert!(known.layout == Layout::ProcBin);
    let known = Known {
        layout: Layout::ProcBin,
        ..known
    };
    // SAFETY: a sub-binary (its header as learned at load) has five
    // words: the header, whose arity counts three of them (the original's
    // term after them is not counted), the size and offset in bytes, the
    // bit size, bit offset and writable flag in the low bytes of word 3,
    // the original binary's term.
    let (bytes, offs, bits, orig) = unsafe { (*obj.add(1), *obj.add(2), *obj.add(3), *obj.add(4)) };
    // The word's other bytes are the struct's padding: never written,
    // whatever they hold.
    let (bit_size, bit_offs) = (bits & 0xFF, (bits >> 8) & 0xFF);
    // SAFETY: the original of a live sub-binary is a live binary.
    let (data, len) = unsafe { read_with(known, orig) }?;
    // The bytes holding the bits: the whole ones from byte `offs`, then
    // those up to bit `bit_offs + bit_size` after them; counted with no
    // sum that could wrap, and within the original's `len`. A count of
    // bytes below 2^60 keeps the count in bits below 2^64.
    let room = len.checked_sub(offs)?.checked_sub(bytes)?;
    let last = (bit_offs + bit_size).div_ceil(8);
    // Both below 8: no bit of 0xF8 set in either byte.
    if bits & 0xF8F8 != 0 || last > room || bytes >> 60 != 0 {
        return None;
    }
    // SAFETY: bytes `offs` to `offs + bytes + last` are within the
    // original's `len` (checked above), which live as long as the term.
    let held = unsafe { std::slice::from_raw_parts(data.add(offs), bytes + last) };
    Some(Bits {
        bytes: held,
        offset: bit_offs,
        size: bytes * 8 + bit_size,
    })
}

/// The bits of a heap bitstring of one data word (from OTP 27), `obj`
/// its object: its size in bits, up to 64, then the word. `None` for a
/// larger size, which no such object has.
///
/// # Safety
/// `obj` must be a live object of three words (a header counting two,
/// as `word_header`), the term outliving 'a.
#[inline(always)]
pub unsafe fn read_word<'a>(obj: *const usize) -> Option<Bits<'a>> {
    // SAFETY: word 1 is within the object.
    let size = unsafe { *obj.add(1) };
    if size > 64 {
        return None;
    }
    // SAFETY: word 2 holds the bits (at most 64: checked), from its first
    // byte, within the object and living as long as the term.
    Some(unsafe { bits_of(obj.add(2).cast::<u8>(), 0, size) })
}

/// The `size` bits from bit `offset` of the bytes at `base`, as `Bits`:
/// the bytes from the one holding the first bit to the one holding the
/// last.
///
/// # Safety
/// The bits must lie within bytes that live for 'a.
#[inline(always)]
unsafe fn bits_of<'a>(base: *const u8, offset: usize, size: usize) -> Bits<'a> {
    let first = offset / 8;
    let len = (offset % 8 + size).div_ceil(8);
    // SAFETY: the caller's promise: those bytes are the bits'.
    let bytes = unsafe { std::slice::from_raw_parts(base.add(first), len) };
    Bits {
        bytes,
        offset: offset % 8,
        size,
    }
}

/// `read` of a term's word, with the layout `known` gives.
///
/// # Safety
/// As for `read`: `word` must be a live term's word.
#[inline(always)]
pub unsafe fn read_known<'a>(known: Known, word: usize) -> Option<&'a [u8]> {
    // SAFETY: the caller's promise, passed on.
    let (data, len) = unsafe { read_with(known, word) }?;
    if len == 0 {
        return Some(&[]);
    }
    // SAFETY: `data` addresses the binary's `len` bytes, which live as long
    // as the term (the caller's promise).
    Some(unsafe { std::slice::from_raw_parts(data, len) })
}

/// The address and length of the bytes of the binary whose term word is
/// `word`, read as `known` says. Reads no word past the object's arity.
///
/// # Safety
/// `word` must be a live term's word.
#[inline(always)]
unsafe fn read_with(known: Known, word: usize) -> Option<(*const u8, usize)> {
    let obj = boxed(word)?;
    // SAFETY: a live boxed term's object starts with a header word.
    let header = unsafe { *obj };
    let arity = header >> ARITY_SHIFT;
    if is_heap(known, header) {
        // SAFETY: the caller's promise: a live object and its header.
        return unsafe { read_heap(known, obj, header) }
            .map(|(words, len)| (words.cast::<u8>(), len));
    }
    if header != known.off_heap_header {
        return None;
    }
    match known.layout {
        Layout::ProcBin if arity >= 5 => {
            // SAFETY: words 1 to 5 are within the object (arity >= 5):
            // the size, then the bytes' address at 4 and the flags at 5.
            let (size, bytes, flags) = unsafe { (*obj.add(1), *obj.add(4), *obj.add(5)) };
            (flags == 0).then_some((bytes as *const u8, size))
        }
        Layout::SubBits if arity >= 3 => {
            // SAFETY: words 1 to 3 are within the object (arity >= 3):
            // the base address with its flags, the start and end bits.
            let (base, start, end) = unsafe { (*obj.add(1), *obj.add(2), *obj.add(3)) };
            if base & SUB_BITS_FLAGS != 0 || start % 8 != 0 || end < start || end % 8 != 0 {
                return None;
            }
            Some(((base + start / 8) as *const u8, (end - start) / 8))
        }
        _ => None,
    }
}

/// The bytes of a heap binary, `obj` its object and `header` its header
/// (its tag bits the heap form's): the address of its first data word
/// and its length in bytes, when it is whole bytes. The bytes lie in the
/// object's whole words from there, which may be read whole (the bytes
/// after the last one in its word are the object's padding).
///
/// # Safety
/// `obj` must be a live boxed term's object and `header` its first word.
#[inline(always)]
pub unsafe fn read_heap(
    known: Known,
    obj: *const usize,
    header: usize,
) -> Option<(*const u64, usize)> {
    let arity = header >> ARITY_SHIFT;
    if arity < 1 {
        return None;
    }
    // SAFETY: word 1 is within the object (its arity is at least 1).
    let size = unsafe { *obj.add(1) };
    let len = match known.layout {
        Layout::SubBits if size % 8 != 0 => return None,
        Layout::SubBits => size / 8,
        _ => size,
    };
    // The bytes must lie within the object's words 2..=arity.
    if len.div_ceil(8) > arity - 1 {
        return None;
    }
    // SAFETY: word 2 onwards holds the bytes, within the object.
    Some((unsafe { obj.add(2) }.cast::<u64>(), len))
}

/// Whether `header` has the heap form's tag bits.
#[inline(always)]
pub fn is_heap(known: Known, header: usize) -> bool {
    header & TAG_BITS == known.heap_tag
}

/// Whether `header` is a sub-binary's as learned at load (up to OTP 26,
/// the form of every bitstring that is not whole bytes).
#[inline(always)]
pub fn is_sub(known: Known, header: usize) -> bool {
    known.sub_header != 0 && header == known.sub_header
}

/// The bytes of a binary: read in place when the form allows, else
/// through `enif_inspect_binary`; `None` for a bitstring that is not
/// whole bytes, and for anything else.
///
/// # Safety
/// `term` must be a live term of `env`'s call, which outlives 'a.
#[inline]
pub unsafe fn bytes<'a>(env: *mut ErlNifEnv, term: ErlNifTerm) -> Option<&'a [u8]> {
    // SAFETY: the caller's promise, passed on.
    unsafe { read(term).or_else(|| inspect_binary(env, term)) }
}

/// Whether bitstrings that are not whole bytes are read in place under
/// the learned layout: always from OTP 27, up to OTP 26 when the
/// sub-binary's header was learned.
pub fn reads_bits() -> bool {
    known().is_some_and(|k| k.layout == Layout::SubBits || k.sub_header != 0)
}

/// Learns the layout from binaries the VM makes; called from the NIF's
/// load. Returns whether binaries will be read in place.
pub fn init(env: *mut ErlNifEnv) -> bool {
    let known = learn(env);
    let layout = known.map_or(Layout::Unknown, |k| k.layout);
    if let Some(k) = known {
        HEAP_TAG.store(k.heap_tag, Ordering::Relaxed);
        OFF_HEAP_HEADER.store(k.off_heap_header, Ordering::Relaxed);
        SUB_HEADER.store(k.sub_header, Ordering::Relaxed);
        WORD_HEADER.store(k.word_header, Ordering::Relaxed);
    }
    LAYOUT.store(layout as u8, Ordering::Relaxed);
    layout != Layout::Unknown
}

fn learn(env: *mut ErlNifEnv) -> Option<Known> {
    // Two heap binaries (0 and 10 bytes: under ERTS's 64-byte heap limit),
    // an off-heap one (100 bytes) and a byte-aligned sub-binary of it.
    let empty = new_binary(env, 0)?;
    let small = new_binary(env, 10)?;
    let large = new_binary(env, 100)?;
    // SAFETY: `large` is a binary of `env` of 100 bytes; 8 + 40 <= 100.
    let sub = unsafe { rustler::sys::enif_make_sub_binary(env, large, 8, 40) };
    let header = |term: ErlNifTerm| {
        // SAFETY: a live boxed term (a binary) made above; its object
        // starts with a header.
        boxed(term_word(term)).map(|obj| unsafe { *obj })
    };
    let heap_tag = header(small)? & TAG_BITS;
    let off_heap_header = header(large)?;
    if header(empty)? & TAG_BITS != heap_tag || off_heap_header & TAG_BITS == heap_tag {
        return None;
    }
    [Layout::ProcBin, Layout::SubBits]
        .into_iter()
        .find_map(|layout| {
            let known = Known {
                layout,
                heap_tag,
                off_heap_header,
                sub_header: 0,
                word_header: 0,
            };
            let agrees = |term: ErlNifTerm, must_read: bool| {
                // SAFETY: a live term of `env`, made above.
                match unsafe { read_with(known, term_word(term)) } {
                    Some(read) => inspect(env, term).is_some_and(|by_enif| same(read, by_enif)),
                    None => !must_read,
                }
            };
            (agrees(empty, true)
                && agrees(small, true)
                && agrees(large, true)
                && agrees(sub, false))
            .then_some(known)
        })
        .map(|known| learn_bits(env, known, sub, large))
}

/// The learned layout, with the sub-binary's header of the releases that
/// have one (up to OTP 26) when a sub-binary and a bitstring the VM makes
/// read as they were made: the bitstring from its external format,
/// `<<171,7:3>>`; from OTP 27, with the header of a heap bitstring of one
/// data word when that bitstring has it (`learn_word`).
fn learn_bits(env: *mut ErlNifEnv, known: Known, sub: ErlNifTerm, large: ErlNifTerm) -> Known {
    let ext = [131u8, 77, 0, 0, 0, 2, 3, 0xAB, 0xE0];
    let mut bits = ErlNifTerm::default();
    // SAFETY: `ext` is a complete external term; `env` is the load's.
    let used =
        unsafe { rustler::sys::enif_binary_to_term(env, ext.as_ptr(), ext.len(), &mut bits, 0) };
    if used != ext.len() {
        return known;
    }
    if known.layout == Layout::SubBits {
        return learn_word(known, bits);
    }
    // A sub-binary's header counts three words; the original's term
    // follows them (ERTS's `ErlSubBin`, five words).
    let words = |term: ErlNifTerm| -> Option<[usize; 5]> {
        let obj = boxed(term_word(term))?;
        // SAFETY: a live boxed term's object starts with a header; the
        // other words are read only when it is a sub-binary's (its tag
        // and arity), which has five words.
        let header = unsafe { *obj };
        (header >> ARITY_SHIFT == 3 && header & TAG_BITS == SUB_BIN_TAG)
            // SAFETY: as above.
            .then(|| unsafe { [header, *obj.add(1), *obj.add(2), *obj.add(3), *obj.add(4)] })
    };
    let (Some(s), Some(b)) = (words(sub), words(bits)) else {
        return known;
    };
    // The sub-binary of bytes 8..48 of `large`; the bitstring's header the
    // same, one byte and three bits from offset 0.
    // Word 3's three low bytes are the bit size, the bit offset and the
    // writable flag; its other bytes are padding, never written.
    let fields = |w: usize| w & 0xFF_FFFF;
    if [s[1], s[2], fields(s[3]), s[4]] != [40, 8, 0, term_word(large)]
        || b[0] != s[0]
        || [b[1], b[2], fields(b[3])] != [1, 0, 3]
    {
        return known;
    }
    let learned = Known {
        sub_header: s[0],
        ..known
    };
    // SAFETY: a live term of `env`, made above.
    match unsafe { read_bits(learned, term_word(bits)) } {
        Some(read) if is_ab_7_3(read) => learned,
        _ => known,
    }
}

/// From OTP 27, the learned layout with the header of a heap bitstring
/// of one data word, when `bits` (`<<171,7:3>>`, made by the VM) has it,
/// the heap form's tag and a header counting two words, and `read_word`
/// reads it as it was made.
fn learn_word(known: Known, bits: ErlNifTerm) -> Known {
    let Some(obj) = boxed(term_word(bits)) else {
        return known;
    };
    // SAFETY: a live boxed term's object starts with its header.
    let header = unsafe { *obj };
    if header != (2 << ARITY_SHIFT | known.heap_tag) {
        return known;
    }
    let learned = Known {
        word_header: header,
        ..known
    };
    // SAFETY: a live term made by the caller; its object's header is
    // `word_header` (checked above).
    match unsafe { read_word(obj) } {
        Some(read) if is_ab_7_3(read) => learned,
        _ => known,
    }
}

/// Whether `read` is `<<171,7:3>>`'s bits, from a byte's start.
fn is_ab_7_3(read: Bits) -> bool {
    read.bytes == [0xAB, 0xE0] && read.offset == 0 && read.size == 11
}

/// A new binary of `len` bytes, made by the VM, its bytes filled.
fn new_binary(env: *mut ErlNifEnv, len: usize) -> Option<ErlNifTerm> {
    let mut term = ErlNifTerm::default();
    // SAFETY: `term` is an out-pointer to a local.
    let data = unsafe { rustler::sys::enif_make_new_binary(env, len, &mut term) };
    if data.is_null() {
        return None;
    }
    // SAFETY: the VM returned `len` writable bytes for the new binary.
    unsafe { std::ptr::write_bytes(data, b'x', len) };
    Some(term)
}

/// The address and size enif gives for `term`'s bytes.
fn inspect(env: *mut ErlNifEnv, term: ErlNifTerm) -> Option<(*const u8, usize)> {
    // SAFETY: `term` is a term of `env`, and the slice is not kept.
    unsafe { inspect_binary(env, term) }.map(|bytes| (bytes.as_ptr(), bytes.len()))
}

/// The same bytes: the same size, and the same address unless empty.
fn same(a: (*const u8, usize), b: (*const u8, usize)) -> bool {
    a.1 == b.1 && (a.1 == 0 || a.0 == b.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAP_TAG: usize = 0x24;
    const OFF_HEAP_TAG: usize = 0x20;

    fn header(arity: usize, tag: usize) -> usize {
        (arity << ARITY_SHIFT) | tag
    }

    fn known(layout: Layout, off_heap_arity: usize) -> Known {
        Known {
            layout,
            heap_tag: HEAP_TAG,
            off_heap_header: header(off_heap_arity, OFF_HEAP_TAG),
            sub_header: header(4, 0x28),
            word_header: 0,
        }
    }

    /// Reads the object in `words` as the boxed term pointing at it.
    fn read_obj(known: Known, words: &[usize]) -> Option<(*const u8, usize)> {
        // SAFETY: `words` is a live object whose header's arity is at most
        // its length less one (each test builds it so).
        unsafe { read_with(known, words.as_ptr() as usize + crate::vm::word::BOXED) }
    }

    #[test]
    fn heap_binary_sized_in_bytes_or_bits() {
        let obj = [header(3, HEAP_TAG), 10, 0, 0];
        let at = obj[2..].as_ptr().cast::<u8>();
        assert_eq!(read_obj(known(Layout::ProcBin, 5), &obj), Some((at, 10)));
        let bits = [header(3, HEAP_TAG), 80, 0, 0];
        let at = bits[2..].as_ptr().cast::<u8>();
        assert_eq!(read_obj(known(Layout::SubBits, 4), &bits), Some((at, 10)));
        // Not whole bytes: the VM is asked.
        assert_eq!(
            read_obj(known(Layout::SubBits, 4), &[header(3, HEAP_TAG), 81, 0, 0]),
            None
        );
    }

    /// A sub-binary's object, as `learn_bits` learns it, of `bytes` whole
    /// bytes and `bit_size` bits from byte `offs` and bit `bit_offs` of
    /// the binary whose term is `orig`.
    fn sub_bin(
        known: Known,
        bytes: usize,
        offs: usize,
        bit_size: usize,
        bit_offs: usize,
        orig: usize,
    ) -> [usize; 5] {
        [
            known.sub_header,
            bytes,
            offs,
            bit_size | bit_offs << 8,
            orig,
        ]
    }

    #[test]
    fn sub_binaries_within_their_original_only() {
        let k = known(Layout::ProcBin, 5);
        let data: Vec<u8> = (0..24u8).map(|i| i.wrapping_mul(37) ^ 0xA5).collect();
        // A heap binary of 20 bytes (three data words), and an off-heap
        // one of 20 bytes over the same bytes.
        let mut heap = [header(4, HEAP_TAG), 20, 0, 0, 0];
        for (i, chunk) in data.chunks(8).enumerate() {
            heap[2 + i] = usize::from_le_bytes(chunk.try_into().unwrap());
        }
        let heap_data = heap[2..].as_ptr().cast::<u8>();
        let proc_bin = [header(5, OFF_HEAP_TAG), 20, 0, 0, data.as_ptr() as usize, 0];
        let boxed = |obj: *const usize| obj as usize + crate::vm::word::BOXED;
        for (orig, at) in [
            (boxed(heap.as_ptr()), heap_data),
            (boxed(proc_bin.as_ptr()), data.as_ptr()),
        ] {
            for offs in 0..22 {
                for bytes in 0..22 {
                    for bit_offs in 0..9 {
                        for bit_size in 0..9 {
                            let obj = sub_bin(k, bytes, offs, bit_size, bit_offs, orig);
                            // SAFETY: a sub-binary's five words, its
                            // original a live binary.
                            let read = unsafe { read_sub(k, obj.as_ptr()) };
                            let last = (bit_offs + bit_size).div_ceil(8);
                            let fits = bit_offs < 8 && bit_size < 8 && offs + bytes + last <= 20;
                            assert_eq!(
                                read.is_some(),
                                fits,
                                "{offs} {bytes} {bit_offs} {bit_size}"
                            );
                            let Some(bits) = read else { continue };
                            assert_eq!(bits.bytes.as_ptr(), at.wrapping_add(offs));
                            assert_eq!(bits.bytes, &data[offs..offs + bytes + last]);
                            assert_eq!((bits.offset, bits.size), (bit_offs, bytes * 8 + bit_size));
                            // SAFETY: as above; `obj` starts with its header.
                            let as_bits = unsafe { read_bits_at(k, obj.as_ptr(), obj[0]) };
                            assert_eq!(as_bits.is_some(), bit_size != 0);
                        }
                    }
                }
            }
        }
        // An original with a flag set, or not a binary: not read.
        let flagged = [header(5, OFF_HEAP_TAG), 20, 0, 0, data.as_ptr() as usize, 1];
        let obj = sub_bin(k, 1, 0, 3, 0, boxed(flagged.as_ptr()));
        // SAFETY: as above.
        assert!(unsafe { read_sub(k, obj.as_ptr()) }.is_none());
        let obj = sub_bin(k, 1, 0, 3, 0, 0x3B);
        // SAFETY: as above; an immediate original is not dereferenced.
        assert!(unsafe { read_sub(k, obj.as_ptr()) }.is_none());
    }

    #[test]
    fn heap_words_as_their_bits_or_bytes() {
        let mut k = known(Layout::SubBits, 4);
        k.sub_header = 0;
        k.word_header = header(2, HEAP_TAG);
        assert_eq!(k.first_header(), Some(k.word_header));
        assert!(k.first_in_word());
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..64 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let word = match round {
                0 => 0,
                1 => u64::MAX,
                _ => seed,
            };
            for size in 0..=66usize {
                let obj = [k.word_header, size, word as usize];
                // SAFETY: an object of three words, its header counting two.
                let read = unsafe { read_word(obj.as_ptr()) };
                let Some(bits) = read else {
                    assert!(size > 64, "{size}");
                    continue;
                };
                assert!(size <= 64);
                let data = obj[2..].as_ptr().cast::<u8>();
                assert_eq!(bits.bytes.as_ptr(), data);
                assert_eq!(bits.bytes, &word.to_le_bytes()[..size.div_ceil(8)]);
                assert_eq!((bits.offset, bits.size), (0, size));
                // The general readers agree: `read_bits_at` for bits not
                // whole bytes, `read_with` (the heap form) for whole bytes.
                // SAFETY: as above.
                let general = unsafe { read_bits_at(k, obj.as_ptr(), obj[0]) };
                assert_eq!(general.is_some(), size % 8 != 0);
                if let Some(general) = general {
                    assert_eq!(
                        (general.bytes, general.offset, general.size),
                        (bits.bytes, bits.offset, bits.size)
                    );
                }
                let whole = read_obj(k, &obj);
                assert_eq!(whole.is_some(), size % 8 == 0);
                if let Some((at, len)) = whole {
                    assert_eq!((at, len * 8), (data, size));
                }
            }
        }
        // Up to OTP 26 the one header is the sub-binary's.
        let old = known(Layout::ProcBin, 5);
        assert_eq!(old.first_header(), Some(old.sub_header));
        assert!(!old.first_in_word());
    }

    #[test]
    fn never_reads_past_the_object() {
        // A size that would run past the words the header counts.
        assert_eq!(
            read_obj(known(Layout::ProcBin, 5), &[header(2, HEAP_TAG), 9, 0]),
            None
        );
        // The off-heap header learned, but too short an object for its form.
        let short = [header(3, OFF_HEAP_TAG), 100, 0, 0];
        assert_eq!(read_obj(known(Layout::ProcBin, 3), &short), None);
    }

    #[test]
    fn off_heap_plain_forms_only() {
        let data = [0u8; 100];
        let proc_bin = |flags| {
            [
                header(5, OFF_HEAP_TAG),
                100,
                0,
                0,
                data.as_ptr() as usize,
                flags,
            ]
        };
        let k = known(Layout::ProcBin, 5);
        assert_eq!(read_obj(k, &proc_bin(0)), Some((data.as_ptr(), 100)));
        assert_eq!(read_obj(k, &proc_bin(1)), None);
        let base = data.as_ptr() as usize;
        let k = known(Layout::SubBits, 4);
        let sub = |base, start, end| [header(4, OFF_HEAP_TAG), base, start, end, 0];
        assert_eq!(
            read_obj(k, &sub(base, 16, 800)),
            Some((data[2..].as_ptr(), 98))
        );
        assert_eq!(read_obj(k, &sub(base | 1, 16, 800)), None);
        assert_eq!(read_obj(k, &sub(base, 3, 800)), None);
        assert_eq!(read_obj(k, &sub(base, 16, 799)), None);
        assert_eq!(read_obj(k, &sub(base, 800, 16)), None);
        // Another header (a sub-binary up to OTP 26, a tuple): not read.
        assert_eq!(read_obj(k, &[header(4, 0x28), base, 16, 800, 0]), None);
        // An immediate is no binary.
        // SAFETY: an immediate's word is not dereferenced.
        assert_eq!(unsafe { read_with(k, 0x3B) }, None);
    }
}
