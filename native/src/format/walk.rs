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
use super::field::Redact;
use super::leaf::{write_bignum, write_bitstring, write_identifier, write_leaf};
use super::shape;
use super::sink::Sink;
use crate::enif::{is_empty_list, list_cell, tuple_elements};
use crate::is_immediate;
use rustler::sys::{ErlNifEnv, ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm};
use std::cell::RefCell;
use std::ffi::c_int;
use std::io::Write;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

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

// `enif_term_type` values (erl_nif.h); declared here as a plain int so that
// a value this code does not know is not undefined behaviour.
const TYPE_ATOM: c_int = 1;
const TYPE_BITSTRING: c_int = 2;
const TYPE_FLOAT: c_int = 3;
const TYPE_FUN: c_int = 4;
const TYPE_INTEGER: c_int = 5;
const TYPE_LIST: c_int = 6;
const TYPE_MAP: c_int = 7;
const TYPE_PID: c_int = 8;
const TYPE_PORT: c_int = 9;
const TYPE_REFERENCE: c_int = 10;
const TYPE_TUPLE: c_int = 11;

extern "C" {
    #[link_name = "enif_term_type"]
    fn term_type(env: *mut ErlNifEnv, term: ErlNifTerm) -> c_int;
}

/// Writes `root` into `sink` until done or full: its `%T` text, or its
/// shape, with the values under `redact`'s keys left out.
#[inline]
pub fn walk(env: *mut ErlNifEnv, root: ErlNifTerm, sink: &mut Sink, shape: bool, redact: &Redact) {
    // A leaf (a binary, an atom, a number: many messages are) needs none of
    // the walk's buffers. A binary read in place needs no type query.
    // SAFETY: `root` is a live term of the call being served.
    if let Some(bytes) = unsafe { crate::binary_bytes::read(root) } {
        write_binary_bytes(bytes, sink, shape);
        return;
    }
    // SAFETY: `root` is a valid term of `env`.
    if !write_leaf_of(env, root, unsafe { term_type(env, root) }, sink, shape) {
        walk_container(env, root, sink, shape, redact);
    }
}

/// `walk` for a list, tuple or map, with this thread's buffers.
fn walk_container(
    env: *mut ErlNifEnv,
    root: ErlNifTerm,
    sink: &mut Sink,
    shape: bool,
    redact: &Redact,
) {
    let mut done = false;
    let _ = SCRATCH.try_with(|scratch| {
        if let Ok(mut scratch) = scratch.try_borrow_mut() {
            let Scratch { work, iters, keys } = &mut *scratch;
            let style = Style::new(shape, redact, keys);
            run(env, root, sink, &style, work, iters);
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
            sink,
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
    sink: &mut Sink,
    style: &Style,
    work: &mut Vec<Work>,
    iters: &mut Iters,
) {
    work.clear();
    work.push(Work::Term(root));
    while let Some(item) = work.pop() {
        if sink.is_full() {
            break;
        }
        match item {
            Work::Term(term) => term_start(env, term, sink, style, work, iters),
            Work::Text(text) => sink.put(text),
            Work::ListTail(tail) => match list_cell(env, tail) {
                Some((head, tail)) => {
                    sink.byte(b',');
                    work.push(Work::ListTail(tail));
                    work.push(Work::Term(head));
                }
                None if is_empty_list(env, tail) => {}
                None => {
                    sink.byte(b'|');
                    work.push(Work::Term(tail));
                }
            },
            Work::Tuple(elems, left) => {
                sink.byte(b',');
                // SAFETY: `left` more elements follow `elems` in the tuple.
                let elem = unsafe { *elems };
                if left > 1 {
                    // SAFETY: as above; left > 1, so the next one exists.
                    work.push(Work::Tuple(unsafe { elems.add(1) }, left - 1));
                }
                work.push(Work::Term(elem));
            }
            Work::MapNext { first, backward } => {
                map_next(env, first, backward, sink, style, work, iters)
            }
        }
    }
    work.clear();
    iters.destroy_all(env);
}

fn term_start(
    env: *mut ErlNifEnv,
    term: ErlNifTerm,
    sink: &mut Sink,
    style: &Style,
    work: &mut Vec<Work>,
    iters: &mut Iters,
) {
    // SAFETY: `term` is a valid term of `env`.
    let kind = unsafe { term_type(env, term) };
    if write_leaf_of(env, term, kind, sink, style.shape) {
        return;
    }
    match kind {
        TYPE_LIST if style.shape => shape_list_start(env, term, sink, work),
        TYPE_LIST => list_start(env, term, sink, work),
        TYPE_TUPLE => {
            // SAFETY: the walk ends within this NIF call.
            let Some(elems) = (unsafe { tuple_elements(env, term) }) else {
                write_leaf(term, sink);
                return;
            };
            sink.byte(b'{');
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
        TYPE_MAP => map_start(env, term, sink, work, iters),
        _ => write_leaf(term, sink),
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
    sink: &mut Sink,
    shape: bool,
) -> bool {
    match kind {
        TYPE_LIST | TYPE_TUPLE | TYPE_MAP => return false,
        TYPE_ATOM => {
            write_atom(env, term, sink);
        }
        TYPE_PID | TYPE_PORT | TYPE_REFERENCE => write_identifier(term, sink),
        TYPE_BITSTRING => write_binary(env, term, sink, shape),
        TYPE_INTEGER if shape => shape::write_integer(env, term, sink),
        TYPE_FLOAT if shape => shape::write_float(sink),
        TYPE_FUN if shape => shape::write_fun(sink),
        _ if shape => shape::write_other(sink),
        TYPE_INTEGER => write_integer(env, term, sink),
        TYPE_FLOAT => write_float(env, term, sink),
        _ => write_leaf(term, sink),
    }
    true
}

/// The character a list element stands for in a printable string.
pub(super) fn list_char(env: *mut ErlNifEnv, elem: ErlNifTerm) -> Option<u8> {
    let mut c: c_int = 0;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_int(env, elem, &mut c) } == 0 {
        return None;
    }
    let c = u8::try_from(c).ok()?;
    // The VM's rule: Latin-1 characters that are not controls, and the
    // four spaces ' ', '\n', '\t', '\r'.
    let printable = matches!(c, b' '..=0x7E | 0xA0..=0xFF | b'\n' | b'\t' | b'\r');
    printable.then_some(c)
}

/// A list: a string if it is a non-empty proper list of printable
/// characters, else `[...]`. One pass: the string is written while the
/// list is checked, and taken back at the first element that is not a
/// printable character. Once the text is full, the check goes on alone up
/// to `scan_bound` elements; a list printable that far stays a string.
fn list_start(env: *mut ErlNifEnv, list: ErlNifTerm, sink: &mut Sink, work: &mut Vec<Work>) {
    let Some((head, tail)) = list_cell(env, list) else {
        sink.put(b"[]");
        return;
    };
    if list_char(env, head).is_none() {
        return open_list(env, head, tail, sink, work);
    }
    let mark = sink.mark();
    let bound = sink.scan_bound();
    let mut rest = list;
    let mut seen = 0usize;
    sink.byte(b'"');
    loop {
        let Some((elem, next)) = list_cell(env, rest) else {
            if is_empty_list(env, rest) {
                sink.byte(b'"');
                return;
            }
            break;
        };
        let Some(c) = list_char(env, elem) else {
            break;
        };
        seen += 1;
        if !sink.is_full() {
            write_char(c, sink);
        } else if seen >= bound {
            return;
        }
        rest = next;
    }
    sink.rollback(mark);
    open_list(env, head, tail, sink, work);
}

/// A list in `shape`: a printable list as its length, else `[...]`.
fn shape_list_start(env: *mut ErlNifEnv, list: ErlNifTerm, sink: &mut Sink, work: &mut Vec<Work>) {
    let Some((head, tail)) = list_cell(env, list) else {
        sink.put(b"[]");
        return;
    };
    if list_char(env, head).is_none() || !shape::write_string(env, list, sink) {
        open_list(env, head, tail, sink, work);
    }
}

fn open_list(
    env: *mut ErlNifEnv,
    head: ErlNifTerm,
    tail: ErlNifTerm,
    sink: &mut Sink,
    work: &mut Vec<Work>,
) {
    sink.byte(b'[');
    work.push(Work::Text(b"]"));
    if !is_empty_list(env, tail) {
        work.push(Work::ListTail(tail));
    }
    work.push(Work::Term(head));
}

#[inline]
fn write_char(c: u8, sink: &mut Sink) {
    match c {
        b'"' => sink.put(b"\\\""),
        b'\n' => sink.put(b"\\n"),
        0x80.. => sink.put(&[0xC0 | (c >> 6), 0x80 | (c & 0x3F)]),
        _ => sink.byte(c),
    }
}

fn write_integer(env: *mut ErlNifEnv, term: ErlNifTerm, sink: &mut Sink) {
    let (mut small, mut unsigned) = (0i64, 0u64);
    // SAFETY: out-pointers to locals.
    if unsafe { rustler::sys::enif_get_int64(env, term, &mut small) } != 0 {
        write_decimal(small < 0, small.unsigned_abs(), sink);
    // SAFETY: as above.
    } else if unsafe { rustler::sys::enif_get_uint64(env, term, &mut unsigned) } != 0 {
        write_decimal(false, unsigned, sink);
    } else {
        write_bignum(term, sink);
    }
}

/// `%.6e` with an exponent of at least two digits, as the VM (C's printf)
/// writes it: `1.500000e+00`. Rust's `{:.6e}` rounds the exact binary value
/// to nearest, ties to even, as glibc's printf does; it writes the exponent
/// bare (`1.500000e0`).
fn write_float(env: *mut ErlNifEnv, term: ErlNifTerm, sink: &mut Sink) {
    let mut x = 0f64;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_double(env, term, &mut x) } == 0 {
        write_leaf(term, sink);
        return;
    }
    let mut buf = [0u8; 64];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    if write!(cursor, "{x:.6e}").is_err() {
        write_leaf(term, sink);
        return;
    }
    let len = cursor.position() as usize;
    let text = &buf[..len];
    let Some(e) = text.iter().position(|b| *b == b'e') else {
        write_leaf(term, sink);
        return;
    };
    let (mantissa, exponent) = (&text[..e], &text[e + 1..]);
    let (sign, digits) = match exponent.split_first() {
        Some((b'-', digits)) => (b'-', digits),
        _ => (b'+', exponent),
    };
    sink.put(mantissa);
    sink.put(&[b'e', sign]);
    if digits.len() < 2 {
        sink.byte(b'0');
    }
    sink.put(digits);
}

fn write_decimal(negative: bool, n: u64, sink: &mut Sink) {
    let mut buf = [0u8; DECIMAL_MAX];
    let digits = decimal(n, &mut buf);
    if negative {
        sink.byte(b'-');
    }
    sink.put(digits);
}

/// The bytes of a binary: read in place when the form allows
/// (`binary_bytes`), else through `enif_inspect_binary`; `None` for a
/// bitstring that is not whole bytes.
///
/// # Safety
/// `term` must be a live term of `env`'s call, which outlives 'a.
pub unsafe fn bytes_of<'a>(env: *mut ErlNifEnv, term: ErlNifTerm) -> Option<&'a [u8]> {
    // SAFETY: the caller's promise, passed on.
    unsafe { crate::binary_bytes::read(term).or_else(|| crate::enif::inspect_binary(env, term)) }
}

/// The most digits a u64 has.
pub const DECIMAL_MAX: usize = 20;

/// The decimal digits of `n`, written at the end of `buf`.
pub fn decimal(mut n: u64, buf: &mut [u8; DECIMAL_MAX]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// A binary's text, or its shape; a bitstring that is not whole bytes
/// as the VM writes it, or as its shape.
fn write_binary(env: *mut ErlNifEnv, term: ErlNifTerm, sink: &mut Sink, shape: bool) {
    // SAFETY: `term` is a term of the call being served, which outlives
    // this function.
    match unsafe { bytes_of(env, term) } {
        Some(bytes) => write_binary_bytes(bytes, sink, shape),
        None if shape => sink.put(b"<<_/bitstring>>"),
        None => write_bitstring(term, sink),
    }
}

/// A binary's text, or its shape, from its bytes.
#[inline]
fn write_binary_bytes(bytes: &[u8], sink: &mut Sink, shape: bool) {
    if shape {
        shape::write_binary_size(bytes.len(), sink);
    } else {
        write_bytes(bytes, sink);
    }
}

/// A binary's text, from its bytes.
fn write_bytes(bytes: &[u8], sink: &mut Sink) {
    // Each byte writes at least one byte of text, so no more than the scan
    // bound can be written before the text is full.
    let scanned = &bytes[..bytes.len().min(sink.scan_bound())];
    let (printable, quoted) = classify(scanned);
    let printable = printable && !bytes.is_empty();
    if printable && !quoted && scanned.len() == bytes.len() {
        // The common case, a text binary read whole: one write.
        sink.put_parts([b"<<\"", scanned, b"\">>"]);
        return;
    }
    if printable && !quoted {
        sink.put(b"<<\"");
        sink.put(scanned);
        if sink.is_full() {
            return;
        }
    } else if printable {
        sink.put(b"<<\"");
        for (i, run) in scanned.split(|b| *b == b'"').enumerate() {
            if i > 0 {
                sink.put(b"\\\"");
            }
            sink.put(run);
            if sink.is_full() {
                return;
            }
        }
    } else {
        sink.put(b"<<");
        if let Some((first, rest)) = scanned.split_first() {
            sink.put(&BYTE_TEXT[usize::from(*first)].comma_text()[1..]);
            for &b in rest {
                if sink.is_full() {
                    return;
                }
                sink.put(BYTE_TEXT[usize::from(b)].comma_text());
            }
        }
    }
    if scanned.len() < bytes.len() {
        // Not reached: the text filled up within the scanned bytes.
        sink.stop();
        return;
    }
    sink.put(if printable { b"\">>" } else { b">>" });
}

/// Whether every byte is printable ASCII (32 to 126), as a binary must be
/// to print as `<<"...">>`, and whether one is `"`. This runs on every
/// traced binary message: sixteen bytes a step with SSE2, which every
/// x86-64 processor has.
#[cfg(target_arch = "x86_64")]
fn classify(bytes: &[u8]) -> (bool, bool) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128,
    };
    const LANES: usize = 16;
    let (blocks, rest) = bytes.as_chunks::<LANES>();
    // The bytes after the last whole block: the last 16 bytes (again some
    // of a block before), or, in a shorter binary, all of them padded with
    // spaces (printable, not a quote).
    let mut padded = [b' '; LANES];
    let last: &[u8; LANES] = match bytes.last_chunk::<LANES>() {
        Some(last) if !rest.is_empty() => last,
        _ => {
            padded[..rest.len()].copy_from_slice(rest);
            &padded
        }
    };
    // SAFETY: SSE2 is part of x86-64 itself, so every processor this code
    // runs on has these instructions; each load reads one 16-byte array.
    unsafe {
        let low = _mm_set1_epi8(b' ' as i8);
        let delete = _mm_set1_epi8(0x7F);
        let quote_byte = _mm_set1_epi8(b'"' as i8);
        let (mut bad, mut quote) = (_mm_setzero_si128(), _mm_setzero_si128());
        let mut scan = |block: &[u8; LANES]| {
            let x = _mm_loadu_si128(block.as_ptr().cast());
            // As signed bytes, 128 and up are below 32 too.
            let outside = _mm_or_si128(_mm_cmplt_epi8(x, low), _mm_cmpeq_epi8(x, delete));
            bad = _mm_or_si128(bad, outside);
            quote = _mm_or_si128(quote, _mm_cmpeq_epi8(x, quote_byte));
        };
        blocks.iter().for_each(&mut scan);
        scan(last);
        (_mm_movemask_epi8(bad) == 0, _mm_movemask_epi8(quote) != 0)
    }
}

/// `classify` eight bytes a step, where SSE2 is not there.
#[cfg(not(target_arch = "x86_64"))]
fn classify(bytes: &[u8]) -> (bool, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Whether some byte of `x` is zero (exact as a whole, per word).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let (mut bad, mut quote) = (0u64, 0u64);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // Bytes of 128 and up, below 32, or 127.
        bad |=
            (x & HIGHS) | (x.wrapping_sub(0x20 * ONES) & !x & HIGHS) | has_zero(x ^ (0x7F * ONES));
        quote |= has_zero(x ^ (u64::from(b'"') * ONES));
    }
    let rest = chunks.remainder();
    let printable = bad == 0 && rest.iter().all(|b| (b' '..0x7F).contains(b));
    (printable, quote != 0 || rest.contains(&b'"'))
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
    sink: &mut Sink,
    work: &mut Vec<Work>,
    iters: &mut Iters,
) {
    let mut size = 0;
    // SAFETY: out-pointer to a local.
    if unsafe { rustler::sys::enif_get_map_size(env, map, &mut size) } == 0 {
        write_leaf(map, sink);
        return;
    }
    sink.put(b"#{");
    if size == 0 {
        sink.byte(b'}');
        return;
    }
    // Up to 32 keys (a flat map) the iterator goes in key order, as %T
    // and maps:to_list/1 do; beyond (a hash map) it goes in maps:to_list/1's
    // order or its reverse, depending on the release (learned at load).
    let backward = size > MAX_FLAT_MAP_KEYS && HASH_MAP_BACKWARD.load(Ordering::Relaxed);
    let start = if backward {
        ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_TAIL
    } else {
        ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD
    };
    let iter = iters.push();
    // SAFETY: `iter` is ours until destroyed in `map_next` or `run`.
    if unsafe { rustler::sys::enif_map_iterator_create(env, map, iter, start) } == 0 {
        iters.pop();
        sink.stop();
        return;
    }
    work.push(Work::Text(b"}"));
    work.push(Work::MapNext {
        first: true,
        backward,
    });
}

/// The most keys a map stored flat has (the VM's MAP_SMALL_MAP_LIMIT).
const MAX_FLAT_MAP_KEYS: usize = 32;

/// Whether the enif iterator walks a hash map in the reverse of
/// maps:to_list/1's order: so on OTP 25, not on OTP 29.
static HASH_MAP_BACKWARD: AtomicBool = AtomicBool::new(true);

/// Learns the direction from a hash map and the first key maps:to_list/1
/// gives for it (the module passes both at load). Anything else keeps the
/// default.
pub fn learn_hash_map_order(env: *mut ErlNifEnv, map: ErlNifTerm, to_list_first: ErlNifTerm) {
    let mut size = 0;
    // SAFETY: out-pointer to a local; `map` is a term of `env`.
    if unsafe { rustler::sys::enif_get_map_size(env, map, &mut size) } == 0
        || size <= MAX_FLAT_MAP_KEYS
    {
        return;
    }
    let mut iter = MaybeUninit::<ErlNifMapIterator>::uninit();
    let (mut key, mut value) = (ErlNifTerm::default(), ErlNifTerm::default());
    // SAFETY: the iterator lives in a local and is destroyed before it
    // goes; `key` and `value` are out-pointers to locals.
    let found = unsafe {
        let head = ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD;
        if rustler::sys::enif_map_iterator_create(env, map, iter.as_mut_ptr(), head) == 0 {
            return;
        }
        let found =
            rustler::sys::enif_map_iterator_get_pair(env, iter.as_mut_ptr(), &mut key, &mut value);
        rustler::sys::enif_map_iterator_destroy(env, iter.as_mut_ptr());
        found
    };
    if found != 0 {
        // SAFETY: two terms of `env`.
        let same = unsafe { rustler::sys::enif_compare(key, to_list_first) } == 0;
        HASH_MAP_BACKWARD.store(!same, Ordering::Relaxed);
    }
}

fn map_next(
    env: *mut ErlNifEnv,
    first: bool,
    backward: bool,
    sink: &mut Sink,
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
        sink.byte(b',');
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

    fn text(n: u64) -> Vec<u8> {
        decimal(n, &mut [0; DECIMAL_MAX]).to_vec()
    }

    #[test]
    fn decimal_writes_every_digit() {
        assert_eq!(text(0), b"0");
        assert_eq!(text(7), b"7");
        assert_eq!(text(10), b"10");
        assert_eq!(text(1_000_000), b"1000000");
        assert_eq!(text(u64::MAX), b"18446744073709551615");
        assert_eq!(text(u64::MAX).len(), DECIMAL_MAX);
    }

    #[test]
    fn decimal_agrees_with_std() {
        for n in (0..64)
            .map(|s| (1u64 << s) - 1)
            .chain((0..20).map(|e| 10u64.pow(e)))
        {
            assert_eq!(text(n), n.to_string().into_bytes());
        }
    }

    #[test]
    fn classify_agrees_with_a_byte_by_byte_check() {
        let expected = |bytes: &[u8]| {
            (
                bytes.iter().all(|b| (b' '..0x7F).contains(b)),
                bytes.contains(&b'"'),
            )
        };
        // Every byte value at every position of a 1 to 40 byte text: short,
        // whole blocks, and a last block that overlaps the one before.
        for len in 1..=40 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    assert_eq!(classify(&text), expected(&text), "{text:?}");
                }
            }
        }
        assert_eq!(classify(b""), (true, false));
    }

    #[test]
    fn byte_texts_are_each_byte_after_a_comma() {
        for (n, byte) in BYTE_TEXT.iter().enumerate() {
            assert_eq!(byte.comma_text(), format!(",{n}").as_bytes());
        }
    }
}
