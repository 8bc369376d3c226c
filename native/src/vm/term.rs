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
use super::fun::{self, LocalFun};
use super::map::{self, SmallMap};
use super::reference;
use super::word::{
    is_atom_word, is_local_pid, is_local_port, is_nil, object, small_int, term_of_word, term_word,
    BOXED, LIST,
};
use rustler::sys::{ErlNifEnv, ErlNifTerm};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

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

/// What a boxed object may be, told by its header's tag bits (the low
/// six): the one form read in place whose objects have those bits, or
/// `Any` when several do (each is then tried in turn), or none.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Class {
    Other = 0,
    Tuple,
    Map,
    Float,
    Binary,
    Ref,
    Big,
    Fun,
    Any,
}

/// Each header tag's class (`Class as u8`), made at load from the forms
/// learned (`learn_classes`); all `Other` before.
static CLASSES: Classes = [const { AtomicU8::new(Class::Other as u8) }; 64];

type Classes = [AtomicU8; 64];

/// The class of objects whose header is `header`, in `classes`.
#[inline(always)]
fn class(classes: &Classes, header: usize) -> Class {
    match classes[header & HEADER_TAG_BITS].load(Ordering::Relaxed) {
        1 => Class::Tuple,
        2 => Class::Map,
        3 => Class::Float,
        4 => Class::Binary,
        5 => Class::Ref,
        6 => Class::Big,
        7 => Class::Fun,
        8 => Class::Any,
        _ => Class::Other,
    }
}

/// Each header tag's class under the layouts `reader` holds: a tag that
/// two forms claim is `Any`.
fn classes(reader: &Reader) -> [Class; 64] {
    let mut table = [Class::Other; 64];
    let mut claim = |tag: Option<usize>, class: Class| {
        if let Some(tag) = tag {
            let slot = &mut table[tag & HEADER_TAG_BITS];
            *slot = match *slot {
                Class::Other => class,
                same if same == class => class,
                _ => Class::Any,
            };
        }
    };
    claim(reader.containers.then_some(TUPLE_TAG), Class::Tuple);
    claim(
        (reader.map_header != 0).then_some(reader.map_header),
        Class::Map,
    );
    claim(
        (reader.float_header != 0).then_some(reader.float_header),
        Class::Float,
    );
    for tag in reader.binary.map_or([None; 3], |known| known.tags()) {
        claim(tag, Class::Binary);
    }
    for tag in reader.refs.tags() {
        claim(tag, Class::Ref);
    }
    for tag in reader.bigs.tags() {
        claim(tag, Class::Big);
    }
    claim(reader.funs.tag(), Class::Fun);
    claim(reader.funs.local_tag(), Class::Fun);
    table
}

/// Makes each header tag's class from the layouts learned; called from
/// the NIF's load once every layout is learned.
pub fn learn_classes() {
    for (slot, class) in CLASSES.iter().zip(classes(&Reader::current())) {
        slot.store(class as u8, Ordering::Relaxed);
    }
}

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
    /// A binary or bitstring of the forms read in place: read by
    /// `Reader::bytes` or `Reader::bits` where it is written, not here.
    /// The leaves' kinds carry no value read from the object (or one
    /// word): handed back with them, the writer waited for the stores of
    /// the kind's fields.
    Binary,
    /// A local reference whose text `reference::write` knows.
    Ref,
    /// A bignum: its sign and digits read by `Reader::big`.
    Big,
    /// An external fun: the address of its export entry, which its text
    /// depends on alone.
    ExportFun(usize),
    /// A local fun whose entry is read in place: what its text depends on
    /// read by `Reader::local_fun`.
    LocalFun,
    /// A float: its value read by `Reader::float`.
    Float,
    /// Anything else (remote identifiers, large maps,
    /// binaries and references in other forms), or a layout not confirmed
    /// at load: ask enif.
    Other,
}

/// A binary or bitstring as `Reader::binary_leaf` tells it.
pub enum BinaryLeaf {
    /// A heap binary of whole bytes: its data words (`binary::read_heap`)
    /// and its length in bytes.
    Words(*const u64, usize),
    /// A binary in another form of the same tag: read by
    /// `Reader::bits_at`, or through enif.
    Bits,
    /// Another form (the off-heap one): written as any `Kind::Binary`.
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
    /// The one header told before the class dispatch
    /// (`binary::Known::first_header`: up to OTP 26 a sub-binary's, from
    /// OTP 27 a heap bitstring's of one data word) as learned at load;
    /// `usize::MAX`, which no header is, when none was learned.
    first_header: usize,
    classes: &'static Classes,
}

impl Reader {
    /// The layouts as learned at load.
    #[inline]
    pub fn current() -> Reader {
        let binary = binary::known();
        Reader {
            containers: CONTAINERS.load(Ordering::Relaxed),
            map_header: map::header(),
            binary,
            refs: reference::known(),
            bigs: big::known(),
            funs: fun::known(),
            float_header: FLOAT_HEADER.load(Ordering::Relaxed),
            first_header: binary
                .and_then(|known| known.first_header())
                .unwrap_or(usize::MAX),
            classes: &CLASSES,
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

    /// The bytes of the binary of `word`, which `kind` called `Binary`,
    /// when it is whole bytes in a form read in place.
    ///
    /// # Safety
    /// `word` must be a live term's word, the term outliving 'a.
    #[inline(always)]
    pub unsafe fn bytes<'a>(&self, word: usize) -> Option<&'a [u8]> {
        // SAFETY: the caller's promise, passed on.
        unsafe { binary::read_known(self.binary?, word) }
    }

    /// The sign and digits (least significant first) of the bignum of
    /// `word`, which `kind` called `Big`.
    ///
    /// # Safety
    /// `word` must be a live term's word, the term outliving 'a.
    #[inline(always)]
    pub unsafe fn big<'a>(&self, word: usize) -> Option<(bool, &'a [usize])> {
        let obj = object(word);
        // SAFETY: the caller's promise: a live boxed term's object, which
        // starts with its header.
        unsafe { self.bigs.digits(obj, *obj) }
    }

    /// The value of the float of `word`, which `kind` called `Float`.
    ///
    /// # Safety
    /// `word` must be a live term's word.
    #[inline(always)]
    pub unsafe fn float(&self, word: usize) -> f64 {
        // SAFETY: a float's object (`kind` saw its header, as learned at
        // load): its double is the word after the header.
        f64::from_bits(unsafe { *object(word).add(1) } as u64)
    }

    /// What the text of the local fun of `word`, which `kind` called
    /// `LocalFun`, depends on.
    ///
    /// # Safety
    /// `word` must be a live term's word.
    #[inline(always)]
    pub unsafe fn local_fun(&self, word: usize) -> LocalFun {
        // SAFETY: the caller's promise: a live local fun's object.
        unsafe { self.funs.local(object(word)) }
    }

    /// The bits of the bitstring of the boxed term `word`, which `kind`
    /// called `Binary`, `header` its object's header that the caller read,
    /// when it is not whole bytes and its form is read in place.
    ///
    /// # Safety
    /// `word` must be a live boxed term's word, `header` its object's
    /// first word, the term outliving 'a.
    #[inline(always)]
    pub unsafe fn bits_at<'a>(&self, word: usize, header: usize) -> Option<Bits<'a>> {
        // SAFETY: the caller's promise, passed on.
        unsafe { binary::read_bits_at(self.binary?, object(word), header) }
    }

    /// Whether `header` is `first_header`: up to OTP 26 a sub-binary's
    /// (every bitstring that is not whole bytes, and binaries cut from
    /// others), from OTP 27 a heap bitstring's of one data word (every one
    /// of up to 64 bits, whole bytes or not). One comparison, made before
    /// the class dispatch.
    #[inline(always)]
    pub fn is_first_header(&self, header: usize) -> bool {
        header == self.first_header
    }

    /// The bits of the sub-binary of `word` (up to OTP 26), whole bytes
    /// too; `None` when its original is not read in place.
    ///
    /// # Safety
    /// `word` must be a live boxed term's word, the term outliving 'a,
    /// whose header `is_first_header` said is `first_header`, and
    /// `first_in_word` false.
    #[inline(always)]
    pub unsafe fn sub_bits<'a>(&self, word: usize) -> Option<Bits<'a>> {
        // SAFETY: `first_header` is a header only when `binary` is known
        // (it is learned with the layout, `current`), and the caller saw
        // it; a live sub-binary's object (its promise).
        unsafe { binary::read_sub(self.binary.unwrap_unchecked(), object(word)) }
    }

    /// The bits of the heap bitstring of one data word of `word` (from
    /// OTP 27), whole bytes too, from its word's start.
    ///
    /// # Safety
    /// `word` must be a live boxed term's word, the term outliving 'a,
    /// whose header `is_first_header` said is `first_header`, and
    /// `first_in_word` true.
    #[inline(always)]
    pub unsafe fn word_bits<'a>(&self, word: usize) -> Option<Bits<'a>> {
        // SAFETY: the caller's promise: a live object whose header is
        // `first_header`, which with `first_in_word` (the OTP 27 layout,
        // which learns no sub-binary's header) is the one `word_header`
        // learned: three words, the header counting two.
        unsafe { binary::read_word(object(word)) }
    }

    /// Whether `first_header` is a heap bitstring's of one data word
    /// (from OTP 27, read by `word_bits`), not a sub-binary's
    /// (`sub_bits`).
    #[inline(always)]
    pub fn first_in_word(&self) -> bool {
        self.binary.is_some_and(|known| known.first_in_word())
    }

    /// Whether a boxed object whose header is `header` is a tuple or a
    /// small map that `kind` reads in place.
    #[inline(always)]
    pub fn is_container_header(&self, header: usize) -> bool {
        (header & HEADER_TAG_BITS == TUPLE_TAG && self.containers) || header == self.map_header
    }

    /// The binary or bitstring of `word` (`kind` said `Binary`), `header`
    /// its object's header, told by its header alone when it is a heap
    /// binary or (up to OTP 26) a sub-binary: the commonest boxed leaves.
    /// The walk tells a sub-binary before it comes here (`is_first_header`);
    /// it is answered here too, for a caller that has not.
    ///
    /// # Safety
    /// `word` must be a live boxed term's word, `header` its object's
    /// first word.
    #[inline(always)]
    pub unsafe fn binary_leaf(&self, word: usize, header: usize) -> BinaryLeaf {
        let Some(known) = self.binary else {
            return BinaryLeaf::Other;
        };
        if binary::is_heap(known, header) {
            // SAFETY: the caller's promise, passed on.
            if let Some((words, len)) = unsafe { binary::read_heap(known, object(word), header) } {
                return BinaryLeaf::Words(words, len);
            }
        } else if !binary::is_sub(known, header) {
            return BinaryLeaf::Other;
        }
        BinaryLeaf::Bits
    }

    /// What the boxed term of `word` is, `header` its object's header
    /// (already read by the caller).
    ///
    /// # Safety
    /// As for `kind`, `word` a boxed term's word and `header` its
    /// object's first word.
    #[inline(always)]
    pub unsafe fn boxed_kind_of<'a>(&self, word: usize, header: usize) -> Kind<'a> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.boxed_kind(word, object(word), header, class(self.classes, header)) }
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
                // SAFETY: the caller's promise, passed on.
                unsafe { self.boxed_kind(word, obj, header, class(self.classes, header)) }
            }
            _ => Kind::Other,
        }
    }

    /// What the boxed term of `word` is, `obj` its object, `header` its
    /// first word and `class` that header's: one dispatch on the class,
    /// then that form's own test.
    ///
    /// # Safety
    /// As for `kind`, `word` a boxed term's word.
    #[inline(always)]
    unsafe fn boxed_kind<'a>(
        &self,
        word: usize,
        obj: *const usize,
        header: usize,
        class: Class,
    ) -> Kind<'a> {
        match class {
            Class::Other => Kind::Other,
            Class::Tuple if self.containers => {
                // SAFETY: a tuple's header (its tag bits) counts the
                // elements after it, which live as long as the term.
                Kind::Tuple(unsafe {
                    std::slice::from_raw_parts(obj.add(1), header >> ARITY_SHIFT)
                })
            }
            Class::Tuple => Kind::Other,
            Class::Map if header == self.map_header => {
                // SAFETY: a small map's header, as confirmed at load.
                Kind::Map(unsafe { map::view_object(obj) })
            }
            Class::Float if header == self.float_header => Kind::Float,
            Class::Map | Class::Float => Kind::Other,
            Class::Binary if self.binary.is_some() => Kind::Binary,
            Class::Binary => Kind::Other,
            // SAFETY: here and below, `obj` is a live boxed term's object
            // and `header` its first word (the caller's promise).
            Class::Ref if unsafe { self.refs.is_written(obj, header) } => Kind::Ref,
            Class::Ref => Kind::Other,
            // SAFETY: as for `Ref`.
            Class::Big if unsafe { self.bigs.digits(obj, header) }.is_some() => Kind::Big,
            Class::Big => Kind::Other,
            // SAFETY: as for `Ref`.
            Class::Fun => match unsafe { self.funs.entry(obj, header) } {
                Some(entry) => Kind::ExportFun(entry),
                // SAFETY: as for `Ref`.
                None if unsafe { self.funs.is_local(obj, header) } => Kind::LocalFun,
                None => Kind::Other,
            },
            // SAFETY: the caller's promise, passed on.
            Class::Any => unsafe { self.any_kind(word, obj, header) },
        }
    }

    /// `boxed_kind` of a header whose tag bits several forms have: each
    /// form tried in turn.
    ///
    /// # Safety
    /// As for `boxed_kind`.
    #[inline(never)]
    unsafe fn any_kind<'a>(&self, word: usize, obj: *const usize, header: usize) -> Kind<'a> {
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
            return Kind::Float;
        }
        if let Some(known) = self.binary {
            // SAFETY: the caller's promise, passed on.
            if unsafe { binary::read_known(known, word) }.is_some() {
                return Kind::Binary;
            }
        }
        // SAFETY: as above.
        if unsafe { self.refs.is_written(obj, header) } {
            return Kind::Ref;
        }
        // SAFETY: as above.
        if unsafe { self.bigs.digits(obj, header) }.is_some() {
            return Kind::Big;
        }
        // SAFETY: as above.
        if let Some(entry) = unsafe { self.funs.entry(obj, header) } {
            return Kind::ExportFun(entry);
        }
        // SAFETY: as above.
        if unsafe { self.funs.is_local(obj, header) } {
            return Kind::LocalFun;
        }
        if let Some(known) = self.binary {
            // SAFETY: the caller's promise, passed on.
            if unsafe { binary::read_bits(known, word) }.is_some() {
                return Kind::Binary;
            }
        }
        Kind::Other
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
        with_classes(Reader {
            containers,
            map_header: 0,
            binary: None,
            refs: reference::Known::NONE,
            bigs: big::Known::NONE,
            funs: fun::Known::NONE,
            float_header: 0,
            first_header: usize::MAX,
            classes: &CLASSES,
        })
    }

    /// `reader` with its classes made from its own layouts.
    fn with_classes(mut reader: Reader) -> Reader {
        let table = classes(&reader).map(|class| AtomicU8::new(class as u8));
        reader.classes = Box::leak(Box::new(table));
        reader
    }

    #[test]
    fn a_tag_two_forms_have_is_told_by_trying_each() {
        // A float's header and a small map's with the same tag bits: that
        // tag is `Any`, and each is still told by its whole header.
        let (map_header, float_header) = ((2 << ARITY_SHIFT) | 0x18, (1 << ARITY_SHIFT) | 0x18);
        let r = with_classes(Reader {
            map_header,
            float_header,
            ..reader(true)
        });
        assert_eq!(class(r.classes, float_header), Class::Any);
        assert_eq!(class(r.classes, 0), Class::Tuple);
        let float: [usize; 2] = [float_header, 1.5f64.to_bits() as usize];
        assert_eq!(kind(r, float.as_ptr() as usize | BOXED), "float");
        let other: [usize; 2] = [(1 << ARITY_SHIFT) | 0x14, 0];
        assert_eq!(kind(r, other.as_ptr() as usize | BOXED), "other");
        // Only the float's: `Float`, and a header of its tag bits but
        // another arity is no float.
        let r = with_classes(Reader {
            float_header,
            ..reader(false)
        });
        assert_eq!(class(r.classes, float_header), Class::Float);
        assert_eq!(class(r.classes, 0), Class::Other);
        assert_eq!(kind(r, float.as_ptr() as usize | BOXED), "float");
        let longer: [usize; 3] = [(2 << ARITY_SHIFT) | 0x18, 0, 0];
        assert_eq!(kind(r, longer.as_ptr() as usize | BOXED), "other");
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
            Kind::Binary => "binary".into(),
            Kind::Ref => "ref".into(),
            Kind::Big => "big".into(),
            Kind::ExportFun(entry) => format!("export fun {entry:#x}"),
            Kind::LocalFun => "local fun".into(),
            Kind::Float => "float".into(),
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
