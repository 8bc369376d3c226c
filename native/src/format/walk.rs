//! The walk over a term: an explicit work stack, no recursion, stopped as
//! soon as the budget is spent.
//!
//! Each container writes at least one byte before it pushes its children,
//! so the stack holds O(budget) items whatever the term's depth. The stack
//! and the map iterators live in per-thread buffers, reused from event to
//! event.
//!
//! The same walk writes `shape` (`Style::shape`: leaves as their type and
//! size, `shape`) and leaves out the values under redacted keys: in a map
//! pair or a 2-tuple whose key is one of `Style::redact`, the value is
//! written `<redacted>` and never looked at.

use super::atom::write_atom;
use super::bounded_text::BoundedText;
use super::decimal::{decimal, DECIMAL_MAX};
use super::leaf::{write_bignum, write_bitstring, write_identifier, write_leaf};
use super::payload::Redact;
use super::printable::{classify, list_char};
use super::shape;
use crate::vm::enif::{
    is_empty_list, list_cell, term_type, tuple_elements, TYPE_ATOM, TYPE_BITSTRING, TYPE_FLOAT,
    TYPE_FUN, TYPE_INTEGER, TYPE_LIST, TYPE_MAP, TYPE_PID, TYPE_PORT, TYPE_REFERENCE, TYPE_TUPLE,
};
use crate::vm::{binary, is_immediate, map};
use rustler::sys::{ErlNifEnv, ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm};
use std::cell::RefCell;
use std::ffi::c_int;
use std::io::Write;

/// What is left to do, innermost last.
#[derive(Clone, Copy)]
enum Work {
    Term(ErlNifTerm),
    Text(&'static [u8]),
    /// The rest of a list after an element: `,` and the next element, `|`
    /// and an improper tail, or nothing.
    ListTail(ErlNifTerm),
    /// The remaining elements of a tuple, each after a `,`.
    Tuple(*const ErlNifTerm, usize),
    /// The next pair of the map whose iterator is on top of the iterator
    /// stack.
    MapNext {
        first: bool,
        backward: bool,
    },
}

#[derive(Default)]
struct Scratch {
    work: Vec<Work>,
    iters: Iters,
    keys: Vec<ErlNifTerm>,
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

/// How a walk writes: `%T` text or shape, and the keys it redacts.
struct Style<'a> {
    shape: bool,
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

impl<'a> Style<'a> {
    fn new(shape: bool, redact: &Redact, keys: &'a mut Vec<ErlNifTerm>) -> Self {
        Style {
            shape,
            redact: redact.list().map(|list| list.as_c_arg()),
            keys: RefCell::new(Keys { read: false, keys }),
        }
    }

    /// Whether `key` is one of the redacted keys: identical terms only
    /// (`1` is not `1.0`). Immediates (atoms, small integers) are equal
    /// exactly when their words are, so only boxed keys need the VM.
    #[inline]
    fn redacts(&self, env: *mut ErlNifEnv, key: ErlNifTerm) -> bool {
        let Some(list) = self.redact else {
            return false;
        };
        // Never borrowed elsewhere; if it were, hiding is the safe answer.
        let Ok(mut keys) = self.keys.try_borrow_mut() else {
            return true;
        };
        if !keys.read {
            keys.keys.clear();
            append_keys(env, list, keys.keys);
            keys.read = true;
        }
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
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
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
    // A leaf (a binary, an atom, a number: many messages are) needs none of
    // the walk's buffers. A binary read in place needs no type query.
    // SAFETY: `root` is a live term of the call being served.
    if let Some(bytes) = unsafe { binary::read(root) } {
        write_binary_bytes(bytes, text, shape);
        return;
    }
    if !write_leaf_of(env, root, term_type(env, root), text, shape) {
        walk_container(env, root, text, shape, redact);
    }
}

/// `walk` for a list, tuple or map, with this thread's buffers.
fn walk_container(
    env: *mut ErlNifEnv,
    root: ErlNifTerm,
    text: &mut BoundedText,
    shape: bool,
    redact: &Redact,
) {
    let mut done = false;
    let _ = SCRATCH.try_with(|scratch| {
        if let Ok(mut scratch) = scratch.try_borrow_mut() {
            let Scratch { work, iters, keys } = &mut *scratch;
            let style = Style::new(shape, redact, keys);
            run(env, root, text, &style, work, iters);
            done = true;
        }
    });
    if !done {
        // Re-entered on this thread, or its buffers are gone (thread exit):
        // fresh buffers for this call.
        let mut keys = Vec::new();
        let style = Style::new(shape, redact, &mut keys);
        run(
            env,
            root,
            text,
            &style,
            &mut Vec::new(),
            &mut Iters::default(),
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
            scratch.work.clear();
            scratch.iters.destroy_all(env);
        }
    });
}

fn run(
    env: *mut ErlNifEnv,
    root: ErlNifTerm,
    text: &mut BoundedText,
    style: &Style,
    work: &mut Vec<Work>,
    iters: &mut Iters,
) {
    work.clear();
    work.push(Work::Term(root));
    while let Some(item) = work.pop() {
        if text.is_full() {
            break;
        }
        match item {
            Work::Term(term) => term_start(env, term, text, style, work, iters),
            Work::Text(bytes) => text.put(bytes),
            Work::ListTail(tail) => match list_cell(env, tail) {
                Some((head, tail)) => {
                    text.byte(b',');
                    work.push(Work::ListTail(tail));
                    work.push(Work::Term(head));
                }
                None if is_empty_list(env, tail) => {}
                None => {
                    text.byte(b'|');
                    work.push(Work::Term(tail));
                }
            },
            Work::Tuple(elems, left) => {
                text.byte(b',');
                // SAFETY: `left` more elements follow `elems` in the tuple.
                let elem = unsafe { *elems };
                if left > 1 {
                    // SAFETY: as above; left > 1, so the next one exists.
                    work.push(Work::Tuple(unsafe { elems.add(1) }, left - 1));
                }
                work.push(Work::Term(elem));
            }
            Work::MapNext { first, backward } => {
                map_next(env, first, backward, text, style, work, iters)
            }
        }
    }
    work.clear();
    iters.destroy_all(env);
}

fn term_start(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    text: &mut BoundedText,
    style: &Style,
    work: &mut Vec<Work>,
    iters: &mut Iters,
) {
    let kind = term_type(env, term);
    if write_leaf_of(env, term, kind, text, style.shape) {
        return;
    }
    match kind {
        TYPE_LIST if style.shape => shape_list_start(env, term, text, work),
        TYPE_LIST => list_start(env, term, text, work),
        TYPE_TUPLE => {
            // SAFETY: the walk ends within this NIF call.
            let Some(elems) = (unsafe { tuple_elements(env, term) }) else {
                write_leaf(term, text);
                return;
            };
            text.byte(b'{');
            if let [key, _] = elems {
                if style.redacts(env, *key) {
                    work.push(Work::Text(b",<redacted>}"));
                    work.push(Work::Term(*key));
                    return;
                }
            }
            work.push(Work::Text(b"}"));
            if let Some((first, rest)) = elems.split_first() {
                if !rest.is_empty() {
                    work.push(Work::Tuple(rest.as_ptr(), rest.len()));
                }
                work.push(Work::Term(*first));
            }
        }
        TYPE_MAP => map_start(env, term, text, work, iters),
        _ => write_leaf(term, text),
    }
}

/// Writes `term`, of type `kind`, if it is a leaf: its `%T` text, or in
/// `shape` its type and size. False for a list, tuple or map, which the
/// walk opens.
#[inline]
fn write_leaf_of(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    kind: c_int,
    text: &mut BoundedText,
    shape: bool,
) -> bool {
    match kind {
        TYPE_LIST | TYPE_TUPLE | TYPE_MAP => return false,
        TYPE_ATOM => {
            write_atom(env, term, text);
        }
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

/// A list: a string if it is a non-empty proper list of printable
/// characters, else `[...]`. One pass: the string is written while the
/// list is checked, and taken back at the first element that is not a
/// printable character. Once the text is full, the check goes on alone up
/// to `scan_bound` elements; a list printable that far stays a string.
fn list_start(env: *mut ErlNifEnv, list: ErlNifTerm, text: &mut BoundedText, work: &mut Vec<Work>) {
    let Some((head, tail)) = list_cell(env, list) else {
        text.put(b"[]");
        return;
    };
    if list_char(env, head).is_none() {
        return open_list(env, head, tail, text, work);
    }
    let mark = text.mark();
    let bound = text.scan_bound();
    let mut rest = list;
    let mut seen = 0usize;
    text.byte(b'"');
    loop {
        let Some((elem, next)) = list_cell(env, rest) else {
            if is_empty_list(env, rest) {
                text.byte(b'"');
                return;
            }
            break;
        };
        let Some(c) = list_char(env, elem) else {
            break;
        };
        seen += 1;
        if !text.is_full() {
            write_char(c, text);
        } else if seen >= bound {
            return;
        }
        rest = next;
    }
    text.rollback(mark);
    open_list(env, head, tail, text, work);
}

/// A list in `shape`: a printable list as its length, else `[...]`.
fn shape_list_start(
    env: *mut ErlNifEnv,
    list: ErlNifTerm,
    text: &mut BoundedText,
    work: &mut Vec<Work>,
) {
    let Some((head, tail)) = list_cell(env, list) else {
        text.put(b"[]");
        return;
    };
    if list_char(env, head).is_none() || !shape::write_string(env, list, text) {
        open_list(env, head, tail, text, work);
    }
}

fn open_list(
    env: *mut ErlNifEnv,
    head: ErlNifTerm,
    tail: ErlNifTerm,
    text: &mut BoundedText,
    work: &mut Vec<Work>,
) {
    text.byte(b'[');
    work.push(Work::Text(b"]"));
    if !is_empty_list(env, tail) {
        work.push(Work::ListTail(tail));
    }
    work.push(Work::Term(head));
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

fn write_integer(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let (mut small, mut unsigned) = (0i64, 0u64);
    // SAFETY: out-pointers to locals.
    if unsafe { rustler::sys::enif_get_int64(env, term, &mut small) } != 0 {
        write_decimal(small < 0, small.unsigned_abs(), text);
    // SAFETY: as above.
    } else if unsafe { rustler::sys::enif_get_uint64(env, term, &mut unsigned) } != 0 {
        write_decimal(false, unsigned, text);
    } else {
        write_bignum(term, text);
    }
}

/// `%.6e` with an exponent of at least two digits, as the VM (C's printf)
/// writes it: `1.500000e+00`. Rust's `{:.6e}` rounds the exact binary value
/// to nearest, ties to even, as glibc's printf does; it writes the exponent
/// bare (`1.500000e0`).
fn write_float(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText) {
    let mut x = 0f64;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_double(env, term, &mut x) } == 0 {
        write_leaf(term, text);
        return;
    }
    let mut buf = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    if write!(cursor, "{x:.6e}").is_err() {
        write_leaf(term, text);
        return;
    }
    let len = cursor.position() as usize;
    let printed = &buf[..len];
    let Some(e) = printed.iter().position(|b| *b == b'e') else {
        write_leaf(term, text);
        return;
    };
    let (mantissa, exponent) = (&printed[..e], &printed[e + 1..]);
    let (sign, digits) = match exponent.split_first() {
        Some((b'-', digits)) => (b'-', digits),
        _ => (b'+', exponent),
    };
    text.put(mantissa);
    text.put(&[b'e', sign]);
    if digits.len() < 2 {
        text.byte(b'0');
    }
    text.put(digits);
}

fn write_decimal(negative: bool, n: u64, text: &mut BoundedText) {
    let mut buf = [0u8; DECIMAL_MAX];
    let digits = decimal(n, &mut buf);
    if negative {
        text.byte(b'-');
    }
    text.put(digits);
}

/// A binary's text, or its shape; a bitstring that is not whole bytes
/// as the VM writes it, or as its shape.
fn write_binary(env: *mut ErlNifEnv, term: ErlNifTerm, text: &mut BoundedText, shape: bool) {
    // SAFETY: `term` is a term of the call being served, which outlives
    // this function.
    match unsafe { binary::bytes(env, term) } {
        Some(bytes) => write_binary_bytes(bytes, text, shape),
        None if shape => text.put(b"<<_/bitstring>>"),
        None => write_bitstring(term, text),
    }
}

/// A binary's text, or its shape, from its bytes.
#[inline]
fn write_binary_bytes(bytes: &[u8], text: &mut BoundedText, shape: bool) {
    if shape {
        shape::write_binary_size(bytes.len(), text);
    } else {
        write_bytes(bytes, text);
    }
}

/// A binary's text, from its bytes.
fn write_bytes(bytes: &[u8], text: &mut BoundedText) {
    // Each byte writes at least one byte of text, so no more than the scan
    // bound can be written before the text is full.
    let scanned = &bytes[..bytes.len().min(text.scan_bound())];
    let (printable, quoted) = classify(scanned);
    let printable = printable && !bytes.is_empty();
    if printable && !quoted && scanned.len() == bytes.len() {
        // The common case, a text binary read whole: one write.
        text.put_parts([b"<<\"", scanned, b"\">>"]);
        return;
    }
    if printable && !quoted {
        text.put(b"<<\"");
        text.put(scanned);
        if text.is_full() {
            return;
        }
    } else if printable {
        text.put(b"<<\"");
        for (i, run) in scanned.split(|b| *b == b'"').enumerate() {
            if i > 0 {
                text.put(b"\\\"");
            }
            text.put(run);
            if text.is_full() {
                return;
            }
        }
    } else {
        text.put(b"<<");
        if let Some((first, rest)) = scanned.split_first() {
            text.put(&BYTE_TEXT[usize::from(*first)].comma_text()[1..]);
            for &b in rest {
                if text.is_full() {
                    return;
                }
                text.put(BYTE_TEXT[usize::from(b)].comma_text());
            }
        }
    }
    if scanned.len() < bytes.len() {
        // Not reached: the text filled up within the scanned bytes.
        text.stop();
        return;
    }
    text.put(if printable { b"\">>" } else { b">>" });
}

/// `,N` for a byte N: the text of a binary's elements after the first.
#[derive(Clone, Copy)]
struct ByteText {
    text: [u8; 4],
    len: u8,
}

impl ByteText {
    fn comma_text(&self) -> &[u8] {
        &self.text[..usize::from(self.len)]
    }
}

static BYTE_TEXT: [ByteText; 256] = byte_texts();

const fn byte_texts() -> [ByteText; 256] {
    let mut table = [ByteText {
        text: [0; 4],
        len: 0,
    }; 256];
    let mut n = 0;
    while n < 256 {
        let (h, t, u) = ((n / 100) as u8, ((n / 10) % 10) as u8, (n % 10) as u8);
        table[n] = if n >= 100 {
            ByteText {
                text: [b',', b'0' + h, b'0' + t, b'0' + u],
                len: 4,
            }
        } else if n >= 10 {
            ByteText {
                text: [b',', b'0' + t, b'0' + u, 0],
                len: 3,
            }
        } else {
            ByteText {
                text: [b',', b'0' + u, 0, 0],
                len: 2,
            }
        };
        n += 1;
    }
    table
}

fn map_start(
    env: *mut ErlNifEnv,
    map: ErlNifTerm,
    text: &mut BoundedText,
    work: &mut Vec<Work>,
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
    // SAFETY: `iter` is ours until destroyed in `map_next` or `run`.
    if unsafe { rustler::sys::enif_map_iterator_create(env, map, iter, start) } == 0 {
        iters.pop();
        text.stop();
        return;
    }
    work.push(Work::Text(b"}"));
    work.push(Work::MapNext {
        first: true,
        backward,
    });
}

fn map_next(
    env: *mut ErlNifEnv,
    first: bool,
    backward: bool,
    text: &mut BoundedText,
    style: &Style,
    work: &mut Vec<Work>,
    iters: &mut Iters,
) {
    let Some(iter) = iters.top() else {
        return;
    };
    let (mut key, mut value) = (ErlNifTerm::default(), ErlNifTerm::default());
    // SAFETY: `iter` is a live iterator of this walk.
    if unsafe { rustler::sys::enif_map_iterator_get_pair(env, iter, &mut key, &mut value) } == 0 {
        // SAFETY: live, and dropped from the stack right after.
        unsafe { rustler::sys::enif_map_iterator_destroy(env, iter) };
        iters.pop();
        return;
    }
    // SAFETY: as above.
    unsafe {
        if backward {
            rustler::sys::enif_map_iterator_prev(env, iter);
        } else {
            rustler::sys::enif_map_iterator_next(env, iter);
        }
    }
    if !first {
        text.byte(b',');
    }
    work.push(Work::MapNext {
        first: false,
        backward,
    });
    if style.redacts(env, key) {
        work.push(Work::Text(b"=><redacted>"));
    } else {
        work.push(Work::Term(value));
        work.push(Work::Text(b"=>"));
    }
    work.push(Work::Term(key));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_texts_are_each_byte_after_a_comma() {
        for (n, byte) in BYTE_TEXT.iter().enumerate() {
            assert_eq!(byte.comma_text(), format!(",{n}").as_bytes());
        }
    }
}
