//! What a term is, told from its word and the object it points at, with
//! no VM call: the walk over a term asks this first, and asks enif only
//! for what it answers `Other`.
//!
//! Tuples (a header word whose tag bits are zero and whose arity is the
//! element count, then the elements) and list cells (two words, head
//! then tail) are laid out so in every ERTS release; `init` still checks
//! both against terms the VM makes, and when either differs every list
//! and tuple is `Other`. Small maps and binaries have layouts of their
//! own (`map`, `binary`), local references too (`reference`).

use super::big;
use super::binary::{self, Bits, Known};
use super::enif::{list_cell, tuple_elements};
use super::fun;
use super::map::{self, SmallMap};
use super::reference;
use super::word::{
    is_atom_word, is_local_pid, is_local_port, is_nil, object, small_int, term_of_word, term_word,
    BOXED, LIST,
};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A header's tag bits, and the shift of its arity.
const HEADER_TAG_BITS: usize = 0x3F;
const ARITY_SHIFT: u32 = 6;
/// The tag bits of a tuple's header (`ARITYVAL`).
const TUPLE_TAG: usize = 0;

/// Whether tuples and list cells are laid out as above (checked at load).
static CONTAINERS: AtomicBool = AtomicBool::new(false);
/// The header of a float (one word after it, the IEEE 754 double), as
/// learned at load; 0 (no float's) when not learned.
static FLOAT_HEADER: AtomicUsize = AtomicUsize::new(0);

/// A term, as its word says.
#[derive(Clone, Copy)]
pub enum Kind<'a> {
    Atom,
    Small(i64),
    /// A local pid or port: its text depends on its word alone.
    LocalId,
    Nil,
    /// A list cell: the words of its head and tail.
    Cons(usize, usize),
    /// The words of a tuple's elements.
    Tuple(&'a [usize]),
    Map(SmallMap<'a>),
    Binary(&'a [u8]),
    /// A local reference whose text `reference::write` knows.
    Ref,
    /// A bitstring whose size is not a multiple of 8.
    Bits(Bits<'a>),
    /// A bignum: negative or not, its digit words, least significant
    /// first.
    Big(bool, &'a [usize]),
    /// An external fun: the address of its export entry, which its text
    /// depends on alone.
    ExportFun(usize),
    Float(f64),
    /// Anything else (local funs, remote identifiers, large maps,
    /// binaries and references in other forms), or a layout not confirmed
    /// at load: ask enif.
    Other,
}

/// The layouts learned at load, read once per walk.
#[derive(Clone, Copy)]
pub struct Reader {
    containers: bool,
    map_header: usize,
    binary: Option<Known>,
    refs: reference::Known,
    bigs: big::Known,
    funs: fun::Known,
    float_header: usize,
}

impl Reader {
    /// The layouts as learned at load.
    #[inline]
    pub fn current() -> Reader {
        Reader {
            containers: CONTAINERS.load(Ordering::Relaxed),
            map_header: map::header(),
            binary: binary::known(),
            refs: reference::known(),
            bigs: big::known(),
            funs: fun::known(),
            float_header: FLOAT_HEADER.load(Ordering::Relaxed),
        }
    }

    /// Whether list cells are read in place.
    #[inline]
    pub fn reads_lists(&self) -> bool {
        self.containers
    }

    /// The text of the reference of `word`, which `kind` called `Ref`.
    ///
    /// # Safety
    /// `word` must be a live boxed term's word.
    #[inline]
    pub unsafe fn write_reference<'b>(
        &self,
        word: usize,
        buf: &'b mut [u8; reference::TEXT_MAX],
    ) -> Option<&'b [u8]> {
        // SAFETY: the caller's promise.
        unsafe { self.refs.write(word, buf) }
    }

    /// Whether `word` is a list cell, a tuple or a small map that `kind`
    /// reads in place: a container, not a leaf.
    ///
    /// # Safety
    /// `word` is a live term of the call being served.
    #[inline(always)]
    pub unsafe fn is_container(&self, word: usize) -> bool {
        match word & 0b11 {
            LIST => self.containers,
            BOXED => {
                // SAFETY: a boxed term's word points at its header (the
                // caller's promise).
                let header = unsafe { *object(word) };
                (header & HEADER_TAG_BITS == TUPLE_TAG && self.containers)
                    || header == self.map_header
            }
            _ => false,
        }
    }

    /// What the term of `word` is.
    ///
    /// # Safety
    /// `word` must be a live term's word, and the term must outlive 'a.
    #[inline(always)]
    pub unsafe fn kind<'a>(&self, word: usize) -> Kind<'a> {
        match word & 0b11 {
            0b11 => {
                if is_atom_word(term_of_word(word)) {
                    Kind::Atom
                } else if let Some(n) = small_int(term_of_word(word)) {
                    Kind::Small(n)
                } else if is_local_pid(term_of_word(word)) || is_local_port(term_of_word(word)) {
                    Kind::LocalId
                } else if is_nil(term_of_word(word)) {
                    Kind::Nil
                } else {
                    Kind::Other
                }
            }
            LIST if self.containers => {
                let cell = object(word);
                // SAFETY: a live list cell's word addresses its two words.
                unsafe { Kind::Cons(*cell, *cell.add(1)) }
            }
            BOXED => {
                let obj = object(word);
                // SAFETY: a live boxed term's object starts with a header.
                let header = unsafe { *obj };
                if header & HEADER_TAG_BITS == TUPLE_TAG && self.containers {
                    // SAFETY: a tuple's header counts the elements after it,
                    // which live as long as the term.
                    return Kind::Tuple(unsafe {
                        std::slice::from_raw_parts(obj.add(1), header >> ARITY_SHIFT)
                    });
                }
                if header == self.map_header {
                    // SAFETY: a small map's header, as confirmed at load.
                    return Kind::Map(unsafe { map::view_object(obj) });
                }
                if header == self.float_header && header != 0 {
                    // SAFETY: a float's header, as learned at load: its
                    // double is the word after it.
                    return Kind::Float(f64::from_bits(unsafe { *obj.add(1) } as u64));
                }
                if let Some(known) = self.binary {
                    // SAFETY: the caller's promise, passed on.
                    if let Some(bytes) = unsafe { binary::read_known(known, word) } {
                        return Kind::Binary(bytes);
                    }
                }
                // SAFETY: as above.
                if unsafe { self.refs.is_written(obj, header) } {
                    return Kind::Ref;
                }
                // SAFETY: as above.
                if let Some((negative, digits)) = unsafe { self.bigs.digits(obj, header) } {
                    return Kind::Big(negative, digits);
                }
                // SAFETY: as above.
                if let Some(entry) = unsafe { self.funs.entry(obj, header) } {
                    return Kind::ExportFun(entry);
                }
                if let Some(known) = self.binary {
                    // SAFETY: the caller's promise, passed on.
                    if let Some(bits) = unsafe { binary::read_bits(known, word) } {
                        return Kind::Bits(bits);
                    }
                }
                Kind::Other
            }
            _ => Kind::Other,
        }
    }
}

/// The elements of a tuple: read in place where the layout was confirmed
/// at load, else through enif; `None` for anything else.
///
/// # Safety
/// `term` must be a live term of `env`'s call, which outlives 'a.
#[inline]
pub unsafe fn tuple<'a>(env: *mut ErlNifEnv, term: ErlNifTerm) -> Option<&'a [ErlNifTerm]> {
    let word = term_word(term);
    if !CONTAINERS.load(Ordering::Relaxed) {
        // SAFETY: the caller's promise, passed on.
        return unsafe { tuple_elements(env, term) };
    }
    if word & 0b11 != BOXED {
        return None;
    }
    let obj = object(word);
    // SAFETY: a live boxed term's object starts with a header; a tuple's
    // counts the elements after it, which live as long as the term. A
    // term is one word.
    unsafe {
        let header = *obj;
        (header & HEADER_TAG_BITS == TUPLE_TAG).then(|| {
            std::slice::from_raw_parts(obj.add(1).cast::<ErlNifTerm>(), header >> ARITY_SHIFT)
        })
    }
}

/// Checks the tuple and list cell layouts on terms the VM makes; called
/// from the NIF's load. Returns whether they will be read in place.
pub fn init(env: *mut ErlNifEnv) -> bool {
    let ok = check(env).is_some();
    CONTAINERS.store(ok, Ordering::Relaxed);
    FLOAT_HEADER.store(float_header(env).unwrap_or(0), Ordering::Relaxed);
    ok
}

/// The header of floats the VM makes, when every one made has it and the
/// word after it is the double's bits.
fn float_header(env: *mut ErlNifEnv) -> Option<usize> {
    if usize::BITS != 64 {
        return None;
    }
    let mut header = None;
    for x in [1.5f64, -0.25, 1e300, 5e-324, -0.0] {
        // SAFETY: making a float in the load's environment.
        let term = unsafe { rustler::sys::enif_make_double(env, x) };
        let obj = super::word::boxed(term_word(term))?;
        // SAFETY: a live boxed term (a float): a header, then a word
        // (every boxed object has at least one after its header; the
        // arity is checked before the word counts).
        let (h, bits) = unsafe { (*obj, *obj.add(1)) };
        if h >> ARITY_SHIFT != 1 || bits as u64 != x.to_bits() || *header.get_or_insert(h) != h {
            return None;
        }
    }
    header
}

fn check(env: *mut ErlNifEnv) -> Option<()> {
    let elems: Vec<ErlNifTerm> = (0..3).map(|i| make_int(env, i)).collect();
    for arity in [0usize, 1, 3] {
        // SAFETY: `elems` holds at least `arity` terms of `env`.
        let tuple =
            unsafe { rustler::sys::enif_make_tuple_from_array(env, elems.as_ptr(), arity as u32) };
        let word = term_word(tuple);
        (word & 0b11 == BOXED).then_some(())?;
        let obj = object(word);
        // SAFETY: a live boxed term (a tuple); its object starts with a
        // header; the elements are compared only once the header counts
        // them.
        let header = unsafe { *obj };
        if header & HEADER_TAG_BITS != TUPLE_TAG || header >> ARITY_SHIFT != arity {
            return None;
        }
        // SAFETY: the tuple is a term of `env`, not kept.
        let by_enif = unsafe { tuple_elements(env, tuple) }?;
        // SAFETY: one past the header, within or just past the object.
        let first = unsafe { obj.add(1) };
        if by_enif.len() != arity || (arity > 0 && by_enif.as_ptr().cast() != first) {
            return None;
        }
    }
    // SAFETY: terms of `env`.
    let cell = unsafe { rustler::sys::enif_make_list_cell(env, elems[1], elems[2]) };
    let word = term_word(cell);
    (word & 0b11 == LIST).then_some(())?;
    let (head, tail) = list_cell(env, cell)?;
    let at = object(word);
    // SAFETY: a live list cell: two words, head and tail.
    let (read_head, read_tail) = unsafe { (*at, *at.add(1)) };
    (read_head == term_word(head) && read_tail == term_word(tail)).then_some(())
}

fn make_int(env: *mut ErlNifEnv, n: i64) -> ErlNifTerm {
    // SAFETY: the load's environment.
    unsafe { rustler::sys::enif_make_int64(env, n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(containers: bool) -> Reader {
        Reader {
            containers,
            map_header: 0,
            binary: None,
            refs: reference::Known::NONE,
            bigs: big::Known::NONE,
            funs: fun::Known::NONE,
            float_header: 0,
        }
    }

    fn kind_name(kind: Kind) -> String {
        match kind {
            Kind::Atom => "atom".into(),
            Kind::Small(n) => format!("small {n}"),
            Kind::LocalId => "local id".into(),
            Kind::Nil => "nil".into(),
            Kind::Cons(h, t) => format!("cons {h:#x} {t:#x}"),
            Kind::Tuple(elems) => format!("tuple {elems:x?}"),
            Kind::Map(_) => "map".into(),
            Kind::Binary(bytes) => format!("binary {}", bytes.len()),
            Kind::Ref => "ref".into(),
            Kind::Bits(bits) => format!("bits {}", bits.size),
            Kind::Big(negative, digits) => format!("big {negative} {digits:x?}"),
            Kind::ExportFun(entry) => format!("export fun {entry:#x}"),
            Kind::Float(x) => format!("float {x}"),
            Kind::Other => "other".into(),
        }
    }

    fn kind(reader: Reader, word: usize) -> String {
        // SAFETY: each test passes immediates, or words of live objects it
        // built with the words their header counts.
        kind_name(unsafe { reader.kind(word) })
    }

    #[test]
    fn immediates_by_their_tags() {
        let r = reader(true);
        assert_eq!(kind(r, (5 << 6) | 0x0B), "atom");
        assert_eq!(kind(r, ((-3i64 as usize) << 4) | 0xF), "small -3");
        assert_eq!(kind(r, (42 << 4) | 0x3), "local id");
        assert_eq!(kind(r, (42 << 4) | 0x7), "local id");
    }

    #[test]
    fn tuples_and_cells_when_the_layout_was_confirmed() {
        let tuple: [usize; 4] = [3 << ARITY_SHIFT, 0x1F, 0x2F, 0x3F];
        let cell: [usize; 2] = [0x1F, 0x2F];
        let (tuple_word, cell_word) = (
            tuple.as_ptr() as usize | BOXED,
            cell.as_ptr() as usize | LIST,
        );
        assert_eq!(kind(reader(true), tuple_word), "tuple [1f, 2f, 3f]");
        assert_eq!(kind(reader(true), cell_word), "cons 0x1f 0x2f");
        assert_eq!(kind(reader(false), tuple_word), "other");
        assert_eq!(kind(reader(false), cell_word), "other");
        // Another header (a float): not a tuple.
        let float: [usize; 2] = [(1 << ARITY_SHIFT) | 0x18, 0];
        assert_eq!(kind(reader(true), float.as_ptr() as usize | BOXED), "other");
    }
}
