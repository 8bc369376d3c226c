//! The walk over a term: an explicit stack of the containers being
//! written (one frame each, no recursion), stopped as soon as the budget
//! is spent.
//!
//! A term is written whole if it is a leaf. A container writes its opening
//! and then its children in a loop of its own (tuples, small maps read in
//! place, lists) as long as they are leaves; at a child that is a
//! container it pushes a frame saying where it stopped, and that child is
//! written next. After a container's closing, the frame on top says what
//! follows: the loop goes on from where it stopped. Each container writes
//! at least one byte before it pushes its frame, so the stack holds
//! O(budget) frames whatever the term's depth. The stack, the map iterators and the
//! texts of atoms and pids met (`leaf_texts`) live in per-thread buffers,
//! reused from event to event.
//!
//! Terms are read from their words (`vm::term`): atoms, small integers,
//! local pids and ports, lists, tuples, small maps, binaries, bitstrings,
//! bignums, floats, external funs and local references, with no VM call.
//! What the words do not tell (local funs, remote identifiers, large maps,
//! a layout not confirmed at load) is read through enif, one term at a
//! time. In `shape`, bitstrings, bignums, floats and funs are told through
//! enif too: their shapes are written there.
//!
//! The same walk writes `shape` (`Walk::shape`: leaves as their type and
//! size, `shape`) and leaves out the values under redacted keys: in a map
//! pair or a 2-tuple whose key is one of `Walk::redact`, the value is
//! written `<redacted>` and never looked at.

use super::atom::write_atom;
use super::binary_text::{write_binary, write_binary_bytes, write_bits, write_heap_binary};
use super::bounded_text::BoundedText;
use super::leaf::{write_identifier, write_leaf};
use super::leaf_texts::LeafTexts;
use super::number::{write_big, write_float, write_float_value, write_integer, write_small};
use super::payload::Redact;
use super::printable::{list_char, Lists};
use super::shape;
use crate::vm::enif::{
    list_cell, term_type, tuple_elements, TYPE_ATOM, TYPE_BITSTRING, TYPE_FLOAT, TYPE_FUN,
    TYPE_INTEGER, TYPE_LIST, TYPE_MAP, TYPE_PID, TYPE_PORT, TYPE_REFERENCE, TYPE_TUPLE,
};
use crate::vm::reference::TEXT_MAX as REF_TEXT_MAX;
use crate::vm::term::{BinaryLeaf, Kind, Reader};
use crate::vm::word::{object, BOXED};
use crate::vm::{binary, is_immediate, map, small_int, term_of_word, term_word};
use rustler::sys::{ErlNifEnv, ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm};
use std::cell::RefCell;
use std::ffi::c_int;

/// A container being written: what follows the term written last.
#[derive(Clone, Copy)]
enum Frame {
    /// The elements of a tuple after the one written last (`next` up to
    /// `end`), each after a `,`; then `}`.
    Tuple {
        next: *const usize,
        end: *const usize,
    },
    /// The rest of a list after an element: `,` and the next element, `|`
    /// and an improper tail, or nothing; then `]`.
    List { tail: usize },
    /// After an improper tail: `]`.
    ListEnd,
    /// A small map read in place (`Pairs`).
    Pairs(Pairs),
    /// A 2-tuple whose first element is a redacted key: `,<redacted>}`.
    Redacted,
    /// A map read through the iterator on top of the iterator stack:
    /// `pending` is what follows the key written last.
    Iter {
        backward: bool,
        first: bool,
        pending: Pending,
    },
}

/// Where a small map read in place is: the pair at `keys`/`values`, up to
/// `end`; its key written last unless `at_value`, then its value.
#[derive(Clone, Copy)]
struct Pairs {
    keys: *const usize,
    values: *const usize,
    end: *const usize,
    at_value: bool,
}

/// What follows the key of an iterated map's pair.
#[derive(Clone, Copy)]
enum Pending {
    /// No key written yet, or its value written: the next pair.
    Pair,
    Value(usize),
    Redacted,
}

/// A walk's buffers: its frames, its map iterators, the redacted keys
/// read, and the texts of atoms and pids met. Kept from walk to walk: the
/// walks of the callbacks in the field buffers of their thread, the
/// others in a thread-local of their own.
#[derive(Default)]
pub struct Buffers {
    frames: Vec<Frame>,
    iters: Iters,
    keys: Vec<ErlNifTerm>,
    leaves: LeafTexts,
}

impl Buffers {
    /// Drops a walk a panic cut short: its frames and its map iterators,
    /// which are destroyed with `env`, the environment of the NIF call
    /// that panicked.
    pub fn reset(&mut self, env: *mut ErlNifEnv) {
        self.frames.clear();
        self.iters.destroy_all(env);
    }
}

/// The iterators of the maps being written, innermost last. Each one is
/// boxed, so that it never moves while the VM uses it; boxes are kept for
/// the next calls (`live` of them are in use).
#[derive(Default)]
struct Iters {
    // Boxed on purpose: a Vec that grows moves its items.
    #[allow(clippy::vec_box)]
    pool: Vec<Box<ErlNifMapIterator>>,
    live: usize,
}

impl Iters {
    /// A fresh (zeroed) iterator on top of the stack.
    fn push(&mut self) -> &mut ErlNifMapIterator {
        if self.live == self.pool.len() {
            // SAFETY: an all-zero iterator is plain data; create fills it.
            self.pool.push(Box::new(unsafe { std::mem::zeroed() }));
        }
        self.live += 1;
        &mut self.pool[self.live - 1]
    }

    fn top(&mut self) -> Option<&mut ErlNifMapIterator> {
        let live = self.live;
        self.pool
            .get_mut(live.checked_sub(1)?)
            .map(|iter| &mut **iter)
    }

    fn pop(&mut self) {
        self.live = self.live.saturating_sub(1);
    }

    /// Destroys the iterators still in use (a walk cut short).
    fn destroy_all(&mut self, env: *mut ErlNifEnv) {
        for iter in self.pool.iter_mut().take(self.live) {
            // SAFETY: a live iterator was created and not destroyed.
            unsafe { rustler::sys::enif_map_iterator_destroy(env, &mut **iter) };
        }
        self.live = 0;
    }
}

/// One walk: how it writes (`%T` text or shape, the keys it redacts) and
/// how it reads terms.
struct Walk<'a> {
    env: *mut ErlNifEnv,
    shape: bool,
    reader: Reader,
    lists: Lists,
    /// The state's list of redacted keys, if any.
    redact: Option<ErlNifTerm>,
    /// Its keys, read from the list at the first map pair or 2-tuple: a
    /// term without one never pays for them.
    keys: RefCell<Keys<'a>>,
}

struct Keys<'a> {
    read: bool,
    keys: &'a mut Vec<ErlNifTerm>,
}

impl<'a> Walk<'a> {
    fn new(
        env: *mut ErlNifEnv,
        shape: bool,
        redact: &Redact,
        keys: &'a mut Vec<ErlNifTerm>,
    ) -> Self {
        let reader = Reader::current();
        Walk {
            env,
            shape,
            reader,
            lists: Lists {
                env,
                in_place: reader.reads_lists(),
            },
            redact: redact.list().map(|list| list.as_c_arg()),
            keys: RefCell::new(Keys { read: false, keys }),
        }
    }

    /// Whether `key` is one of the redacted keys. Inlined: a walk without
    /// redacted keys pays one test.
    #[inline(always)]
    fn redacts(&self, key: usize) -> bool {
        self.redact.is_some() && self.redacts_listed(key)
    }

    /// `redacts` against the list: identical terms only (`1` is not
    /// `1.0`). Immediates (atoms, small integers) are equal exactly when
    /// their words are, so only boxed keys need the VM.
    #[inline(never)]
    fn redacts_listed(&self, key: usize) -> bool {
        let Some(list) = self.redact else {
            return false;
        };
        // Never borrowed elsewhere; if it were, hiding is the safe answer.
        let Ok(mut keys) = self.keys.try_borrow_mut() else {
            return true;
        };
        if !keys.read {
            keys.keys.clear();
            append_keys(self.env, list, keys.keys);
            keys.read = true;
        }
        let key = term_of_word(key);
        keys.keys.iter().any(|k| {
            *k == key
                || (!is_immediate(*k)
                    && !is_immediate(key)
                    // SAFETY: both are valid terms of this call.
                    && unsafe { rustler::sys::enif_is_identical(*k, key) } != 0)
        })
    }
}

thread_local! {
    static SCRATCH: RefCell<Buffers> = RefCell::new(Buffers::default());
}

/// Appends `term` as `%T` text or its shape, at most `max` bytes; true if
/// it was cut.
#[inline(always)]
pub fn write(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    max: usize,
    shape: bool,
    redact: &Redact,
    out: &mut Vec<u8>,
) -> bool {
    let mut text = BoundedText::new(out, max);
    walk(env, term, &mut text, shape, redact);
    text.finish()
}

/// `write` with the caller's buffers.
#[inline(always)]
pub fn write_with(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    max: usize,
    shape: bool,
    redact: &Redact,
    out: &mut Vec<u8>,
    buffers: &mut Buffers,
) -> bool {
    let mut text = BoundedText::new(out, max);
    // SAFETY: `term` is a live term of the call being served.
    if let Some(bytes) = unsafe { binary::read(term) } {
        write_binary_bytes(bytes, &mut text, shape);
    } else {
        let walk = Walk::new(env, shape, redact, &mut buffers.keys);
        run(
            &walk,
            term_word(term),
            &mut text,
            &mut buffers.frames,
            &mut buffers.iters,
            &mut buffers.leaves,
        );
    }
    text.finish()
}

/// Writes `root` into `text` until done or full: its `%T` text, or its
/// shape, with the values under `redact`'s keys left out.
#[inline]
pub fn walk(
    env: *mut ErlNifEnv,
    root: ErlNifTerm,
    text: &mut BoundedText,
    shape: bool,
    redact: &Redact,
) {
    // A binary (many messages are) needs none of the walk's buffers.
    // SAFETY: `root` is a live term of the call being served.
    if let Some(bytes) = unsafe { binary::read(root) } {
        write_binary_bytes(bytes, text, shape);
        return;
    }
    with_scratch(env, root, text, shape, redact);
}

/// `walk` with this thread's buffers.
fn with_scratch(
    env: *mut ErlNifEnv,
    root: ErlNifTerm,
    text: &mut BoundedText,
    shape: bool,
    redact: &Redact,
) {
    let mut done = false;
    let _ = SCRATCH.try_with(|scratch| {
        if let Ok(mut scratch) = scratch.try_borrow_mut() {
            let Buffers {
                frames,
                iters,
                keys,
                leaves,
            } = &mut *scratch;
            let walk = Walk::new(env, shape, redact, keys);
            run(&walk, term_word(root), text, frames, iters, leaves);
            done = true;
        }
    });
    if !done {
        // Re-entered on this thread, or its buffers are gone (thread exit):
        // fresh buffers for this call.
        let mut keys = Vec::new();
        let walk = Walk::new(env, shape, redact, &mut keys);
        run(
            &walk,
            term_word(root),
            text,
            &mut Vec::new(),
            &mut Iters::default(),
            &mut LeafTexts::default(),
        );
    }
}

/// Appends the redacted keys to `out`.
fn append_keys(env: *mut ErlNifEnv, mut list: ErlNifTerm, out: &mut Vec<ErlNifTerm>) {
    while let Some((key, tail)) = list_cell(env, list) {
        out.push(key);
        list = tail;
    }
}

/// Clears this thread's buffers after a walk that never finished.
pub fn reset(env: *mut ErlNifEnv) {
    let _ = SCRATCH.try_with(|scratch| {
        if let Ok(mut scratch) = scratch.try_borrow_mut() {
            scratch.reset(env);
        }
    });
}

fn run(
    walk: &Walk,
    root: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    iters: &mut Iters,
    leaves: &mut LeafTexts,
) {
    frames.clear();
    let mut next = Some(root);
    'walk: loop {
        // Down: the term, and the first child of each container opened.
        while let Some(term) = next {
            if text.is_full() {
                break 'walk;
            }
            next = start(walk, term, text, frames, iters, leaves);
        }
        // Up: what follows, from the innermost open container.
        next = climb(walk, text, frames, iters, leaves);
        if next.is_none() {
            break;
        }
    }
    frames.clear();
    iters.destroy_all(walk.env);
}

/// Writes `term` if it is a leaf, or an empty container; else writes the
/// container's opening, pushes its frame and answers its first child.
#[inline(always)]
fn start(
    walk: &Walk,
    term: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    iters: &mut Iters,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    // SAFETY: the walk reads only live terms of the call being served.
    let kind = unsafe { walk.reader.kind(term) };
    match kind {
        Kind::Cons(head, tail) if walk.shape => {
            shape_list_start(walk, term, head, tail, text, frames, leaves)
        }
        // A list whose head is no character is no string: opened here.
        Kind::Cons(head, tail) if list_char(head).is_none() => {
            text.byte(b'[');
            list_from(walk, head, tail, text, frames, leaves)
        }
        Kind::Cons(head, tail) => list_start(walk, term, head, tail, text, frames, leaves),
        Kind::Tuple(elems) => tuple_start(walk, elems, text, frames, leaves),
        Kind::Map(small) => {
            let (keys, values) = small.words();
            text.put(b"#{");
            if keys.is_empty() {
                text.byte(b'}');
                return None;
            }
            let mut at = Pairs {
                keys: keys.as_ptr(),
                values: values.as_ptr(),
                end: keys.as_ptr_range().end,
                at_value: false,
            };
            let child = pairs_from(walk, &mut at, text, leaves)?;
            frames.push(Frame::Pairs(at));
            Some(child)
        }
        Kind::Other => other_start(walk, term, text, frames, iters, leaves),
        // Their shapes are told through enif.
        Kind::Big | Kind::ExportFun(_) | Kind::LocalFun | Kind::Float if walk.shape => {
            other_start(walk, term, text, frames, iters, leaves)
        }
        Kind::Atom
        | Kind::LocalId
        | Kind::Small(_)
        | Kind::Nil
        | Kind::Binary
        | Kind::Ref
        | Kind::Big
        | Kind::ExportFun(_)
        | Kind::LocalFun
        | Kind::Float => {
            write_leaf_kind(walk, term, kind, text, leaves);
            None
        }
    }
}

/// Writes `term`, a leaf of `kind`.
#[inline(always)]
fn write_leaf_kind(
    walk: &Walk,
    term: usize,
    kind: Kind,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) {
    match kind {
        Kind::Atom | Kind::LocalId => {
            if !leaves.write(term, text) {
                let env = walk.env;
                leaves.write_and_keep(term, text, |text| identifier_or_atom(env, term, text));
            }
        }
        Kind::Small(n) if walk.shape => shape::write_small(n, text),
        Kind::Small(n) => write_small(n, text),
        // Kept like an atom's: the next `[]` is one lookup in line.
        Kind::Nil => leaves.write_and_keep(term, text, |text| text.put(b"[]")),
        Kind::Binary => write_binary_of(walk, term, text),
        Kind::Ref => {
            let mut buf = [0u8; REF_TEXT_MAX];
            // SAFETY: the walk reads only live terms of the call being
            // served; `kind` said the reference is written here.
            match unsafe { walk.reader.write_reference(term, &mut buf) } {
                Some(ref_text) => text.put_medium(ref_text),
                None => write_identifier(term_of_word(term), text),
            }
        }
        Kind::Big => write_big_of(walk, term, text),
        // SAFETY: the walk reads only live terms of the call being
        // served; `kind` said this is a float.
        Kind::Float => write_float_value(unsafe { walk.reader.float(term) }, text),
        // Kept by the entry's address: export entries are never freed.
        Kind::ExportFun(entry) => {
            if !leaves.write(entry, text) {
                leaves.write_and_keep(entry, text, |text| write_leaf(term_of_word(term), text));
            }
        }
        // Kept by the fields its text depends on, read from its entry.
        Kind::LocalFun => {
            // SAFETY: the walk reads only live terms of the call being
            // served; `kind` said this is a local fun read in place.
            let fun = unsafe { walk.reader.local_fun(term) };
            if !leaves.write_fun(fun, text) {
                leaves.write_and_keep_fun(fun, text, |text| write_leaf(term_of_word(term), text));
            }
        }
        Kind::Cons(..) | Kind::Tuple(_) | Kind::Map(_) | Kind::Other => {}
    }
}

/// A binary or bitstring (`Kind::Binary`): read and written here, or by
/// enif when its form is not read in place.
#[inline(always)]
fn write_binary_of(walk: &Walk, term: usize, text: &mut BoundedText) {
    // SAFETY: the walk reads only live terms of the call being served.
    match unsafe { walk.reader.bytes(term) } {
        Some(bytes) => write_binary_bytes(bytes, text, walk.shape),
        None => write_bits_of(walk, term, text),
    }
}

/// A bitstring that is not whole bytes, or a binary in a form not read
/// in place: its text (or shape) from its bits, or from enif.
#[inline(never)]
fn write_bits_of(walk: &Walk, term: usize, text: &mut BoundedText) {
    if walk.shape {
        return write_binary(walk.env, term_of_word(term), text, true);
    }
    // SAFETY: a binary's term is boxed, and the walk reads only live
    // terms of the call being served: its object starts with its header.
    write_bits_at(walk, term, unsafe { *object(term) }, text)
}

/// `leaf` of a sub-binary (`Reader::is_first_header` up to OTP 26, the
/// form of every bitstring that is not whole bytes): its text from its
/// bits read in place (`write_bits`: `<<1:3>>` one load from a table and
/// one store). One of whole bytes from a byte's start is written as any
/// binary; else (another bit offset, its original not read in place)
/// through `write_bits_at`. Always true: it was a leaf.
#[inline(never)]
fn write_sub(walk: &Walk, term: usize, header: usize, text: &mut BoundedText) -> bool {
    // SAFETY: the walk reads only live terms of the call being served;
    // its caller saw a sub-binary's header.
    match unsafe { walk.reader.sub_bits(term) } {
        Some(bits) if bits.size % 8 != 0 => write_bits(bits, text),
        Some(bits) if bits.offset == 0 => write_sub_bytes(bits.bytes, text),
        _ => write_bits_at(walk, term, header, text),
    }
    true
}

/// `write_sub` of a sub-binary of whole bytes: out of line, so that the
/// registers its text needs are not saved for every bitstring.
#[inline(never)]
fn write_sub_bytes(bytes: &[u8], text: &mut BoundedText) {
    write_binary_bytes(bytes, text, false);
}

/// `leaf` of a heap bitstring of one data word (`Reader::is_first_header`
/// from OTP 27): `<<1:3>>` and `<<"abc">>` alike, its bits written as
/// `write_sub` writes them, its bytes read as the word (as `leaf_kind`
/// reads a heap binary's). Always true: it was a leaf.
#[inline(never)]
fn write_word(walk: &Walk, term: usize, header: usize, text: &mut BoundedText) -> bool {
    // SAFETY: the walk reads only live terms of the call being served;
    // its caller saw the header of a heap bitstring of one data word.
    match unsafe { walk.reader.word_bits(term) } {
        Some(bits) if bits.size % 8 != 0 => write_bits(bits, text),
        // SAFETY: the object's one data word (word 2, which `word_bits`
        // read), alive for the call; its first `len` bytes are the
        // binary's. Taken from the object, not from the shorter slice.
        Some(bits) => unsafe {
            write_heap_binary(object(term).add(2).cast::<u64>(), bits.bytes.len(), text)
        },
        None => write_bits_at(walk, term, header, text),
    }
    true
}

/// `write_bits_of` of a bitstring whose header, `header`, the caller
/// read (a heap bitstring not whole bytes, or a sub-binary).
#[inline(never)]
fn write_bits_at(walk: &Walk, term: usize, header: usize, text: &mut BoundedText) {
    // SAFETY: the walk reads only live terms of the call being served;
    // `header` is this one's.
    match unsafe { walk.reader.bits_at(term, header) } {
        Some(bits) => write_bits(bits, text),
        None => write_binary(walk.env, term_of_word(term), text, false),
    }
}

/// A bignum (`Kind::Big`): its digits' text.
#[inline(always)]
fn write_big_of(walk: &Walk, term: usize, text: &mut BoundedText) {
    // SAFETY: the walk reads only live terms of the call being served.
    match unsafe { walk.reader.big(term) } {
        Some((negative, digits)) => write_big(negative, digits, text),
        None => write_leaf(term_of_word(term), text),
    }
}

/// After a term: writes what follows it in the innermost open container,
/// closing the containers it ends, and answers the next term to write;
/// `None` when the root is done or the text is full.
#[inline(always)]
fn climb(
    walk: &Walk,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    iters: &mut Iters,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    while let Some(top) = frames.last_mut() {
        if text.is_full() {
            return None;
        }
        match top {
            Frame::Tuple { next, end } => {
                // SAFETY: `next..end` are the tuple's elements not written.
                match unsafe { elements_from(walk, next, *end, true, text, leaves) } {
                    Some(elem) => return Some(elem),
                    None => {
                        frames.pop();
                    }
                }
            }
            Frame::List { tail } => {
                let rest = *tail;
                frames.pop();
                if let Some(next) = list_after(walk, rest, text, frames, leaves) {
                    return Some(next);
                }
            }
            Frame::ListEnd => {
                frames.pop();
                text.byte(b']');
            }
            Frame::Pairs(at) => {
                let next = if at.at_value {
                    pair_after_value(walk, at, text, leaves)
                } else {
                    pair_after_key(walk, at, text, leaves)
                };
                match next {
                    Some(term) => return Some(term),
                    None => {
                        frames.pop();
                    }
                }
            }
            Frame::Redacted => {
                frames.pop();
                text.put(b",<redacted>}");
            }
            Frame::Iter {
                backward,
                first,
                pending,
            } => match *pending {
                Pending::Value(value) => {
                    *pending = Pending::Pair;
                    text.put(b"=>");
                    return Some(value);
                }
                Pending::Redacted => {
                    *pending = Pending::Pair;
                    text.put(b"=><redacted>");
                }
                Pending::Pair => match iterated_pair(walk.env, *backward, iters) {
                    Some((key, value)) => {
                        if !*first {
                            text.byte(b',');
                        }
                        *first = false;
                        *pending = if walk.redacts(key) {
                            Pending::Redacted
                        } else {
                            Pending::Value(value)
                        };
                        return Some(key);
                    }
                    None => {
                        frames.pop();
                        text.byte(b'}');
                    }
                },
            },
        }
    }
    None
}

/// An atom's text, or a local pid's: what `leaf_texts` keeps.
fn identifier_or_atom(env: *mut ErlNifEnv, term: usize, text: &mut BoundedText) {
    if crate::vm::is_atom_word(term_of_word(term)) {
        write_atom(env, term_of_word(term), text);
    } else {
        write_identifier(term_of_word(term), text);
    }
}

/// A tuple's opening, and its elements up to the first container, which
/// it answers (a frame kept for the rest); `}` if there is none. A 2-tuple
/// whose first element is a redacted key gets `<redacted>` for its second.
#[inline(always)]
fn tuple_start(
    walk: &Walk,
    elems: &[usize],
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    text.byte(b'{');
    if let [first, _] = elems {
        if walk.redacts(*first) {
            frames.push(Frame::Redacted);
            return Some(*first);
        }
    }
    let range = elems.as_ptr_range();
    let mut next = range.start;
    // SAFETY: `next..end` are the tuple's elements.
    let elem = unsafe { elements_from(walk, &mut next, range.end, false, text, leaves) }?;
    frames.push(Frame::Tuple {
        next,
        end: range.end,
    });
    Some(elem)
}

/// Writes a tuple's elements from `*next` up to `end`, each after a `,`
/// (the first too if `comma`), as long as they are leaves; answers the
/// first container, `*next` moved past it. At `end`, writes `}` and
/// answers `None`, as it does once the text is full.
///
/// # Safety
/// `*next..end` are words of a live tuple's elements.
#[inline(always)]
unsafe fn elements_from(
    walk: &Walk,
    next: &mut *const usize,
    end: *const usize,
    mut comma: bool,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    while *next != end {
        if text.is_full() {
            return None;
        }
        if comma {
            text.byte(b',');
        }
        comma = true;
        // SAFETY: `*next` is before `end` (the caller's promise).
        let elem = unsafe { **next };
        // SAFETY: at most one past the last element.
        *next = unsafe { next.add(1) };
        if !leaf(walk, elem, text, leaves) {
            return Some(elem);
        }
    }
    text.byte(b'}');
    None
}

/// A small map's pairs from the one at `at` (its key not written yet), as
/// long as keys and values are leaves; answers the first container, `at`
/// saying where it is. At the end, writes `}` and answers `None`, as it
/// does once the text is full.
#[inline(always)]
fn pairs_from(
    walk: &Walk,
    at: &mut Pairs,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    loop {
        if text.is_full() {
            return None;
        }
        // SAFETY: `keys` is before `end`: a key of the map.
        let key = unsafe { *at.keys };
        if !leaf(walk, key, text, leaves) {
            at.at_value = false;
            return Some(key);
        }
        if walk.redacts(key) {
            text.put(b"=><redacted>");
        } else {
            text.put(b"=>");
            // SAFETY: the value of that key.
            let value = unsafe { *at.values };
            if !leaf(walk, value, text, leaves) {
                at.at_value = true;
                return Some(value);
            }
        }
        if !next_pair(at, text) {
            return None;
        }
    }
}

/// After the key at `at`, written by the walk (a container): `=>` and its
/// value, then the pairs after it, as `pairs_from`.
fn pair_after_key(
    walk: &Walk,
    at: &mut Pairs,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    // SAFETY: `keys` is before `end`: the key just written.
    let key = unsafe { *at.keys };
    if walk.redacts(key) {
        text.put(b"=><redacted>");
    } else {
        text.put(b"=>");
        // SAFETY: the value of that key.
        let value = unsafe { *at.values };
        if text.is_full() || !leaf(walk, value, text, leaves) {
            at.at_value = true;
            return Some(value);
        }
    }
    pair_after_value(walk, at, text, leaves)
}

/// After the value of the pair at `at`: the pairs after it, as
/// `pairs_from`.
fn pair_after_value(
    walk: &Walk,
    at: &mut Pairs,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    if !next_pair(at, text) {
        return None;
    }
    pairs_from(walk, at, text, leaves)
}

/// Moves `at` to the next pair and writes `,`; at the end, writes `}` and
/// answers false.
#[inline(always)]
fn next_pair(at: &mut Pairs, text: &mut BoundedText) -> bool {
    // SAFETY: at most one past the last pair.
    let (keys, values) = unsafe { (at.keys.add(1), at.values.add(1)) };
    if keys == at.end {
        text.byte(b'}');
        return false;
    }
    at.keys = keys;
    at.values = values;
    text.byte(b',');
    true
}

/// Writes `term` if it is a leaf: true if it was. An atom or local pid
/// whose text is kept, or a small integer, is written here; other
/// immediates are told by `leaf_slow`, boxed terms by `leaf_boxed`.
#[inline(always)]
fn leaf(walk: &Walk, term: usize, text: &mut BoundedText, leaves: &mut LeafTexts) -> bool {
    let word = term_of_word(term);
    if let Some(n) = small_int(word) {
        if !walk.shape {
            write_small(n, text);
            return true;
        }
    }
    if is_immediate(word) {
        return leaves.write(term, text) || leaf_slow(walk, term, text, leaves);
    }
    // A list cell, in place or through enif, is never a leaf.
    if term & 0b11 != BOXED {
        return false;
    }
    // SAFETY: a live boxed term's object starts with its header.
    let header = unsafe { *object(term) };
    !walk.reader.is_container_header(header) && leaf_boxed(walk, term, header, text, leaves)
}

/// `leaf` of a boxed term that is no container read in place, `header`
/// its object's header: a sub-binary (up to OTP 26, every bitstring not
/// whole bytes; `write_sub`) or a heap bitstring of one data word (from
/// OTP 27, every one of up to 64 bits; `write_word`) told by one
/// comparison and sent to its bits, anything else to `leaf_kind`. Saves
/// no register: the leaves `leaf_kind` writes pay one comparison and a
/// jump more, and `leaf`, inlined in every container's loop, is no
/// larger.
#[inline(never)]
fn leaf_boxed(
    walk: &Walk,
    term: usize,
    header: usize,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> bool {
    if walk.reader.is_first_header(header) && !walk.shape {
        if walk.reader.first_in_word() {
            return write_word(walk, term, header, text);
        }
        return write_sub(walk, term, header, text);
    }
    leaf_kind(walk, term, header, text, leaves)
}

/// `leaf_boxed` of any other boxed term, told by its kind without
/// reading the header again: a heap binary (the commonest boxed leaf)
/// written from its words here, a bitstring of the forms its header tells
/// sent to its bits.
#[inline(never)]
fn leaf_kind(
    walk: &Walk,
    term: usize,
    header: usize,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> bool {
    // SAFETY: the walk reads only live terms of the call being served;
    // `header` is this one's.
    let kind = unsafe { walk.reader.boxed_kind_of(term, header) };
    if let Kind::Binary = kind {
        if !walk.shape {
            // SAFETY: as above.
            match unsafe { walk.reader.binary_leaf(term, header) } {
                BinaryLeaf::Words(words, len) => {
                    // SAFETY: `binary_leaf` answers the object's data words.
                    unsafe { write_heap_binary(words, len, text) };
                    return true;
                }
                BinaryLeaf::Bits => {
                    write_bits_at(walk, term, header, text);
                    return true;
                }
                BinaryLeaf::Other => {}
            }
        }
    }
    write_leaf_if(walk, term, kind, text, leaves)
}

/// `leaf` for what it does not write in line.
#[inline(never)]
fn leaf_slow(walk: &Walk, term: usize, text: &mut BoundedText, leaves: &mut LeafTexts) -> bool {
    // SAFETY: the walk reads only live terms of the call being served.
    let kind = unsafe { walk.reader.kind(term) };
    write_leaf_if(walk, term, kind, text, leaves)
}

/// Writes `term`, of `kind`, if it is a leaf: true if it was.
#[inline(always)]
fn write_leaf_if(
    walk: &Walk,
    term: usize,
    kind: Kind,
    text: &mut BoundedText,
    leaves: &mut LeafTexts,
) -> bool {
    match kind {
        Kind::Atom | Kind::LocalId | Kind::Small(_) | Kind::Nil | Kind::Binary | Kind::Ref => {
            write_leaf_kind(walk, term, kind, text, leaves);
            true
        }
        Kind::Big | Kind::ExportFun(_) | Kind::LocalFun | Kind::Float if !walk.shape => {
            write_leaf_kind(walk, term, kind, text, leaves);
            true
        }
        _ => false,
    }
}

/// A term the words did not tell: its type from enif, then the leaf's
/// text, or a list, tuple or map read through enif.
#[inline(never)]
fn other_start(
    walk: &Walk,
    term: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    iters: &mut Iters,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    let env = walk.env;
    let raw = term_of_word(term);
    let kind = term_type(env, raw);
    if write_leaf_of(env, raw, kind, text, walk.shape) {
        return None;
    }
    match kind {
        TYPE_LIST => match walk.lists.cell(term) {
            Some((head, tail)) if walk.shape => {
                shape_list_start(walk, term, head, tail, text, frames, leaves)
            }
            Some((head, tail)) => list_start(walk, term, head, tail, text, frames, leaves),
            None => {
                text.put(b"[]");
                None
            }
        },
        TYPE_TUPLE => {
            // SAFETY: the walk ends within this NIF call.
            match unsafe { tuple_elements(env, raw) } {
                Some(elems) => {
                    // SAFETY: a term is one word: the elements, as words.
                    let words = unsafe {
                        std::slice::from_raw_parts(elems.as_ptr().cast::<usize>(), elems.len())
                    };
                    tuple_start(walk, words, text, frames, leaves)
                }
                None => {
                    write_leaf(raw, text);
                    None
                }
            }
        }
        TYPE_MAP => {
            map_start(env, raw, text, frames, iters);
            None
        }
        _ => {
            write_leaf(raw, text);
            None
        }
    }
}

/// Writes `term`, of type `kind`, if it is a leaf: its `%T` text, or in
/// `shape` its type and size. False for a list, tuple or map, which the
/// walk opens.
fn write_leaf_of(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    kind: c_int,
    text: &mut BoundedText,
    shape: bool,
) -> bool {
    match kind {
        TYPE_LIST | TYPE_TUPLE | TYPE_MAP => return false,
        TYPE_ATOM => write_atom(env, term, text),
        TYPE_PID | TYPE_PORT | TYPE_REFERENCE => write_identifier(term, text),
        TYPE_BITSTRING => write_binary(env, term, text, shape),
        TYPE_INTEGER if shape => shape::write_integer(env, term, text),
        TYPE_FLOAT if shape => shape::write_float(text),
        TYPE_FUN if shape => shape::write_fun(text),
        _ if shape => shape::write_other(text),
        TYPE_INTEGER => write_integer(env, term, text),
        TYPE_FLOAT => write_float(env, term, text),
        _ => write_leaf(term, text),
    }
    true
}

/// A list, `list` its first cell: a string if it is a non-empty proper
/// list of printable characters, else `[...]`. One pass: the string is
/// written while the list is checked, and taken back at the first element
/// that is not a printable character. Once the text is full, the check
/// goes on alone up to `scan_bound` elements; a list printable that far
/// stays a string.
fn list_start(
    walk: &Walk,
    list: usize,
    head: usize,
    tail: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    if list_char(head).is_none() {
        return open_list(walk, head, tail, text, frames, leaves);
    }
    let mark = text.mark();
    let bound = text.scan_bound();
    let mut rest = list;
    let mut seen = 0usize;
    text.byte(b'"');
    loop {
        let Some((elem, next)) = walk.lists.cell(rest) else {
            if walk.lists.is_empty(rest) {
                text.byte(b'"');
                return None;
            }
            break;
        };
        let Some(c) = list_char(elem) else {
            break;
        };
        seen += 1;
        if !text.is_full() {
            write_char(c, text);
        } else if seen >= bound {
            return None;
        }
        rest = next;
    }
    text.rollback(mark);
    open_list(walk, head, tail, text, frames, leaves)
}

/// A list in `shape`: a printable list as its length, else `[...]`.
fn shape_list_start(
    walk: &Walk,
    list: usize,
    head: usize,
    tail: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    if list_char(head).is_some() && shape::write_string(&walk.lists, list, text) {
        return None;
    }
    open_list(walk, head, tail, text, frames, leaves)
}

/// A list's `[`, and its elements up to the first container, which it
/// answers (a frame kept for the rest); `]` if there is none.
fn open_list(
    walk: &Walk,
    head: usize,
    tail: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    text.byte(b'[');
    list_from(walk, head, tail, text, frames, leaves)
}

/// A list's elements from `head` (`tail` the rest), each after the one
/// before, as long as they are leaves: answers the first container, with
/// a frame for what follows it. At the end writes `]`, after `|` and an
/// improper tail if there is one; answers `None` then, as it does once
/// the text is full.
#[inline(always)]
fn list_from(
    walk: &Walk,
    mut head: usize,
    mut tail: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    loop {
        if text.is_full() {
            return None;
        }
        if !leaf(walk, head, text, leaves) {
            frames.push(Frame::List { tail });
            return Some(head);
        }
        match walk.lists.cell(tail) {
            Some((next, rest)) => {
                text.byte(b',');
                (head, tail) = (next, rest);
            }
            None => return list_end(walk, tail, text, frames, leaves),
        }
    }
}

/// After a list's element, `rest` the list after it: the elements that
/// follow, as `list_from`.
fn list_after(
    walk: &Walk,
    rest: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    match walk.lists.cell(rest) {
        Some((head, tail)) => {
            text.byte(b',');
            list_from(walk, head, tail, text, frames, leaves)
        }
        None => list_end(walk, rest, text, frames, leaves),
    }
}

/// A list's end, `tail` not a cell: `]`, or `|`, the improper tail and
/// `]`; a tail that is a container is answered, with a frame for `]`.
#[inline(always)]
fn list_end(
    walk: &Walk,
    tail: usize,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    leaves: &mut LeafTexts,
) -> Option<usize> {
    if !walk.lists.is_empty(tail) {
        text.byte(b'|');
        if text.is_full() || !leaf(walk, tail, text, leaves) {
            frames.push(Frame::ListEnd);
            return Some(tail);
        }
    }
    text.byte(b']');
    None
}

#[inline]
fn write_char(c: u8, text: &mut BoundedText) {
    match c {
        b'"' => text.put(b"\\\""),
        b'\n' => text.put(b"\\n"),
        0x80.. => text.put(&[0xC0 | (c >> 6), 0x80 | (c & 0x3F)]),
        _ => text.byte(c),
    }
}

/// A map read through enif (a large one, or a small one whose layout was
/// not confirmed at load): `#{`, and an iterator for its pairs.
fn map_start(
    env: *mut ErlNifEnv,
    map: ErlNifTerm,
    text: &mut BoundedText,
    frames: &mut Vec<Frame>,
    iters: &mut Iters,
) {
    let mut size = 0;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_map_size(env, map, &mut size) } == 0 {
        write_leaf(map, text);
        return;
    }
    text.put(b"#{");
    if size == 0 {
        text.byte(b'}');
        return;
    }
    // Up to 32 keys (a flat map) the iterator goes in key order, as %T
    // and maps:to_list/1 do; beyond (a hash map) it goes in maps:to_list/1's
    // order or its reverse, depending on the release (learned at load).
    let backward = map::iterates_backward(size);
    let start = if backward {
        ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_TAIL
    } else {
        ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD
    };
    let iter = iters.push();
    // SAFETY: `iter` is ours until destroyed in `iterated_pair` or `run`.
    if unsafe { rustler::sys::enif_map_iterator_create(env, map, iter, start) } == 0 {
        iters.pop();
        text.stop();
        return;
    }
    frames.push(Frame::Iter {
        backward,
        first: true,
        pending: Pending::Pair,
    });
}

/// The next pair of the map whose iterator is on top of the iterator
/// stack, the iterator moved past it; `None` at its end, the iterator
/// destroyed.
fn iterated_pair(env: *mut ErlNifEnv, backward: bool, iters: &mut Iters) -> Option<(usize, usize)> {
    let iter = iters.top()?;
    let (mut key, mut value) = (ErlNifTerm::default(), ErlNifTerm::default());
    // SAFETY: `iter` is a live iterator of this walk.
    if unsafe { rustler::sys::enif_map_iterator_get_pair(env, iter, &mut key, &mut value) } == 0 {
        // SAFETY: live, and dropped from the stack right after.
        unsafe { rustler::sys::enif_map_iterator_destroy(env, iter) };
        iters.pop();
        return None;
    }
    // SAFETY: as above.
    unsafe {
        if backward {
            rustler::sys::enif_map_iterator_prev(env, iter);
        } else {
            rustler::sys::enif_map_iterator_next(env, iter);
        }
    }
    Some((term_word(key), term_word(value)))
}
