//! Field extraction, one function per event, named after it: each reads
//! the terms the runtime handed over, writes the event's string fields
//! into the per-thread buffers and calls the event's emitter
//! (`emit::<event>`), whose parameters are the fields of its row in
//! `native/events.table`. `write_event`, generated from the table, picks
//! the function of an event.

use crate::decimal::{decimal, DECIMAL_MAX};
use crate::events::{EventId, Route};
use crate::format::{write_field_with, FieldKind, TermOptions, WalkBuffers};
use crate::ident_cache::IdentCache;
use crate::lttng::{emit, Text};
use crate::text_cache::{self, TextCache};
use crate::vm::{enif, is_atom_word, is_local_pid, map, small_int, term, term_word};
use rustler::sys::ErlNifTerm as ERL_NIF_TERM;
use rustler::{Env, Term};
use std::cell::{Cell, RefCell};

include!(concat!(env!("OUT_DIR"), "/event_dispatch.rs"));

rustler::atoms! {
    extra,
    wordsize,
    heap_block_size,
    old_heap_block_size,
}

/// The highest arity a function can have: a longer argument list is not
/// one the runtime passes, and walking it would cost without bound.
const MAX_ARITY: u32 = 255;
/// GC info lists hold about a dozen items; look no further than this.
const MAX_GC_INFO_ITEMS: usize = 64;
const UNDEFINED: &[u8] = b"undefined";

/// Arguments that no runtime call has: the event is not emitted.
pub struct Malformed;

/// The texts of an event's string fields, first to third. They grow once
/// to the largest text written (at most the byte limit for terms, a few
/// KiB for code locations) and stay there.
#[derive(Default)]
pub struct FieldTexts {
    /// The texts of pids and atoms seen on this thread.
    idents: IdentCache,
    /// The texts of the code locations of call events seen on this
    /// thread, for the call events' short path (`short_path`) to lend.
    locations: LocationCache,
    /// The buffers of the walks over term fields.
    walk: WalkBuffers,
    first: Vec<u8>,
    second: Vec<u8>,
    third: Vec<u8>,
}

impl FieldTexts {
    /// What the short paths (`short_path`) use of this thread's texts.
    pub fn lending(&mut self) -> Lending<'_> {
        Lending {
            idents: &self.idents,
            locations: &self.locations,
            message: &mut self.third,
            walk: &mut self.walk,
        }
    }

    pub fn clear(&mut self) {
        self.first.clear();
        self.second.clear();
        self.third.clear();
    }

    /// Ends an event of three string fields.
    fn emit3(&mut self, emit: fn(Text, Text, Text)) -> Written {
        emit(
            Text::terminate(&mut self.first),
            Text::terminate(&mut self.second),
            Text::terminate(&mut self.third),
        );
        Ok(())
    }

    /// Ends an event of two string fields.
    fn emit2(&mut self, emit: fn(Text, Text)) -> Written {
        emit(
            Text::terminate(&mut self.first),
            Text::terminate(&mut self.second),
        );
        Ok(())
    }
}

thread_local! {
    /// This thread's field buffers, reused by every event on it: made at
    /// its first event and kept for the thread's life (the VM's scheduler
    /// threads run until it stops), so that a reference to them is
    /// `'static` and is taken out of the thread-local's `with` as a copy.
    static FIELD_TEXTS: Cell<Option<&'static RefCell<FieldTexts>>> = const { Cell::new(None) };
}

/// Runs `write` with this thread's field buffers; `None` if they are in
/// use already (an event cannot start inside another) or gone (the thread
/// is exiting). Inlined, with `write`: the event's code stays in one
/// function.
#[inline(always)]
pub fn with_field_texts<R>(write: impl FnOnce(&mut FieldTexts) -> R) -> Option<R> {
    let texts = match FIELD_TEXTS.try_with(Cell::get).ok()? {
        Some(texts) => texts,
        None => first_field_texts()?,
    };
    let mut texts = texts.try_borrow_mut().ok()?;
    Some(write(&mut texts))
}

/// Drops the walk a panic cut short in this thread's field buffers (see
/// `WalkBuffers::reset`).
pub fn reset_after_panic(env: *mut rustler::sys::ErlNifEnv) {
    with_field_texts(|texts| texts.walk.reset(env));
}

/// Makes this thread's field buffers, at its first event.
#[cold]
#[inline(never)]
fn first_field_texts() -> Option<&'static RefCell<FieldTexts>> {
    let texts: &'static RefCell<FieldTexts> = Box::leak(Box::default());
    FIELD_TEXTS.try_with(|slot| slot.set(Some(texts))).ok()?;
    Some(texts)
}

/// The caches a short path lends texts from, and the buffer of a
/// message's text (cleared by its writer).
pub struct Lending<'t> {
    pub idents: &'t IdentCache,
    pub locations: &'t LocationCache,
    pub message: &'t mut Vec<u8>,
    pub walk: &'t mut WalkBuffers,
}

/// What one `trace*` call handed over.
pub struct EventTerms<'a, 'o> {
    pub env: Env<'a>,
    pub route: &'static Route,
    pub options: &'o TermOptions<'a>,
    pub tracee: Term<'a>,
    pub term: Term<'a>,
    pub opts: Term<'a>,
}

type Written = Result<(), Malformed>;

/// `spawn`: pid = the new process, parent = the tracee, entry = the
/// `{M,F,Args}` in `extra`.
pub fn process_spawn(e: &EventTerms, t: &mut FieldTexts) -> Written {
    process(&mut t.idents, e.tracee, &mut t.second)?;
    process(&mut t.idents, e.term, &mut t.first)?;
    e.mfa(&mut t.idents, e.extra()?, &mut t.third);
    t.emit3(emit::process_spawn)
}

pub fn process_link(e: &EventTerms, t: &mut FieldTexts) -> Written {
    if !e.tracee.is_pid() {
        return Err(Malformed);
    }
    link(e, t, emit::process_link)
}

pub fn port_link(e: &EventTerms, t: &mut FieldTexts) -> Written {
    if !e.tracee.is_port() {
        return Err(Malformed);
    }
    link(e, t, emit::port_link)
}

/// from, to, and type `link` or `unlink`: the tracee is `from` for
/// `link`/`unlink`, `to` for `getting_linked`/`getting_unlinked`.
fn link(e: &EventTerms, t: &mut FieldTexts, emit: fn(Text, Text, Text)) -> Written {
    let (from, to, kind) = match e.route.tag {
        "link" => (e.tracee, e.term, "link"),
        "unlink" => (e.tracee, e.term, "unlink"),
        "getting_linked" => (e.term, e.tracee, "link"),
        "getting_unlinked" => (e.term, e.tracee, "unlink"),
        _ => return Err(Malformed),
    };
    identifier(&mut t.idents, from, &mut t.first)?;
    identifier(&mut t.idents, to, &mut t.second)?;
    t.third.extend_from_slice(kind.as_bytes());
    t.emit3(emit)
}

pub fn process_exit(e: &EventTerms, t: &mut FieldTexts) -> Written {
    process(&mut t.idents, e.tracee, &mut t.first)?;
    e.term_text(FieldKind::Reason, e.term, &mut t.second, &mut t.walk);
    t.emit2(emit::process_exit)
}

/// type = the tag, `register` or `unregister`.
pub fn process_register(e: &EventTerms, t: &mut FieldTexts) -> Written {
    process(&mut t.idents, e.tracee, &mut t.first)?;
    e.term_text(FieldKind::Name, e.term, &mut t.second, &mut t.walk);
    t.third.extend_from_slice(e.route.tag.as_bytes());
    t.emit3(emit::process_register)
}

/// entry = the current function; type = the tag (`in`, `out`, ...).
pub fn process_scheduled(e: &EventTerms, t: &mut FieldTexts) -> Written {
    process(&mut t.idents, e.tracee, &mut t.first)?;
    e.mfa(&mut t.idents, e.term, &mut t.second);
    t.third.extend_from_slice(e.route.tag.as_bytes());
    t.emit3(emit::process_scheduled)
}

/// pid = the opener, driver = the port's name (in `extra`).
pub fn port_open(e: &EventTerms, t: &mut FieldTexts) -> Written {
    port(&mut t.idents, e.tracee, &mut t.third)?;
    process(&mut t.idents, e.term, &mut t.first)?;
    e.term_text(FieldKind::Driver, e.extra()?, &mut t.second, &mut t.walk);
    t.emit3(emit::port_open)
}

pub fn port_exit(e: &EventTerms, t: &mut FieldTexts) -> Written {
    port(&mut t.idents, e.tracee, &mut t.first)?;
    e.term_text(FieldKind::Reason, e.term, &mut t.second, &mut t.walk);
    t.emit2(emit::port_exit)
}

/// The field `pid` holds the port; entry = the callback's name, or
/// `undefined`; type = the tag.
pub fn port_scheduled(e: &EventTerms, t: &mut FieldTexts) -> Written {
    port(&mut t.idents, e.tracee, &mut t.first)?;
    if e.term.is_atom() {
        e.term_text(FieldKind::Callback, e.term, &mut t.second, &mut t.walk);
    } else {
        t.second.extend_from_slice(UNDEFINED);
    }
    t.third.extend_from_slice(e.route.tag.as_bytes());
    t.emit3(emit::port_scheduled)
}

pub fn function_call(e: &EventTerms, t: &mut FieldTexts) -> Written {
    call(e, t, emit::function_call)
}

/// The return value in `extra` is not written.
pub fn function_return(e: &EventTerms, t: &mut FieldTexts) -> Written {
    call(e, t, emit::function_return)
}

/// pid, entry and depth 0: the runtime passes no call depth, and OTP's
/// backend writes 0 too. The entry's text is kept for the short path
/// (`short_path`), which lends it from then on.
fn call(e: &EventTerms, t: &mut FieldTexts, emit: fn(Text, Text, u32)) -> Written {
    process(&mut t.idents, e.tracee, &mut t.first)?;
    if let Some(key) = e.mfa(&mut t.idents, e.term, &mut t.second) {
        t.locations.keep(key, &t.second);
    }
    emit(
        Text::terminate(&mut t.first),
        Text::terminate(&mut t.second),
        0,
    );
    Ok(())
}

/// class = the exception class, from the `{Class, Value}` in `extra`.
pub fn function_exception(e: &EventTerms, t: &mut FieldTexts) -> Written {
    process(&mut t.idents, e.tracee, &mut t.first)?;
    e.mfa(&mut t.idents, e.term, &mut t.second);
    match e.tuple(e.extra()?) {
        Some([class, _]) if e.wrap(*class).is_atom() => {
            t.idents.write(e.wrap(*class), &mut t.third)
        }
        _ => return Err(Malformed),
    }
    t.emit3(emit::function_exception)
}

/// to = the receiver in `extra`: a pid or port, or the name a send to an
/// unregistered name went to. Ports send messages too.
pub fn message_send(e: &EventTerms, t: &mut FieldTexts) -> Written {
    identifier(&mut t.idents, e.tracee, &mut t.first)?;
    let to = e.extra()?;
    if identifier(&mut t.idents, to, &mut t.second).is_err() {
        e.term_text(FieldKind::Name, to, &mut t.second, &mut t.walk);
    }
    e.term_text(FieldKind::Message, e.term, &mut t.third, &mut t.walk);
    t.emit3(emit::message_send)
}

pub fn message_receive(e: &EventTerms, t: &mut FieldTexts) -> Written {
    identifier(&mut t.idents, e.tracee, &mut t.first)?;
    e.term_text(FieldKind::Message, e.term, &mut t.second, &mut t.walk);
    t.emit2(emit::message_receive)
}

pub fn gc_minor_start(e: &EventTerms, t: &mut FieldTexts) -> Written {
    gc(e, t, emit::gc_minor_start)
}

pub fn gc_minor_end(e: &EventTerms, t: &mut FieldTexts) -> Written {
    gc(e, t, emit::gc_minor_end)
}

pub fn gc_major_start(e: &EventTerms, t: &mut FieldTexts) -> Written {
    gc(e, t, emit::gc_major_start)
}

pub fn gc_major_end(e: &EventTerms, t: &mut FieldTexts) -> Written {
    gc(e, t, emit::gc_major_end)
}

/// pid, then need (start) or reclaimed (end) = `wordsize`, heap, old_heap
/// from the info list.
fn gc(e: &EventTerms, t: &mut FieldTexts, emit: fn(Text, u64, u64, u64)) -> Written {
    process(&mut t.idents, e.tracee, &mut t.first)?;
    let info = e.gc_info(e.term)?;
    emit(
        Text::terminate(&mut t.first),
        info.size,
        info.heap,
        info.old_heap,
    );
    Ok(())
}

impl<'a> EventTerms<'a, '_> {
    fn wrap(&self, raw: ERL_NIF_TERM) -> Term<'a> {
        // SAFETY: `raw` comes from a term of this same environment.
        unsafe { Term::new(self.env, raw) }
    }

    /// The elements of a tuple, without copying them.
    fn tuple(&self, term: Term<'a>) -> Option<&'a [ERL_NIF_TERM]> {
        // SAFETY: the slice lives no longer than 'a, this call's terms.
        unsafe { term::tuple(self.env.as_c_arg(), term.as_c_arg()) }
    }

    /// The head and tail of a list cell.
    fn cell(&self, list: Term<'a>) -> Option<(Term<'a>, Term<'a>)> {
        enif::list_cell(self.env.as_c_arg(), list.as_c_arg())
            .map(|(head, tail)| (self.wrap(head), self.wrap(tail)))
    }

    fn extra(&self) -> Result<Term<'a>, Malformed> {
        map::get(self.opts, extra()).ok_or(Malformed)
    }

    fn term_text(&self, kind: FieldKind, term: Term, out: &mut Vec<u8>, walk: &mut WalkBuffers) {
        write_field_with(term, self.options, kind, out, walk);
    }

    /// `Module:Function/Arity`, or `undefined` when there is no location
    /// (the runtime passes 0 for a process with no current function); the
    /// location's key when there is one.
    fn mfa(
        &self,
        idents: &mut IdentCache,
        term: Term<'a>,
        out: &mut Vec<u8>,
    ) -> Option<LocationKey> {
        let Some(location) = location(self.env, term) else {
            out.extend_from_slice(UNDEFINED);
            return None;
        };
        location.write(idents, out);
        Some(location.key())
    }

    /// The sizes a GC event reports, looked up by key in the info list.
    fn gc_info(&self, mut list: Term<'a>) -> Result<GcInfo, Malformed> {
        let mut info = GcInfo::default();
        for _ in 0..MAX_GC_INFO_ITEMS {
            let Some((item, tail)) = self.cell(list) else {
                break;
            };
            if let Some([key, value]) = self.tuple(item) {
                let value = self.wrap(*value).decode::<u64>().unwrap_or(0);
                let key = self.wrap(*key);
                if wordsize() == key {
                    info.size = value;
                } else if heap_block_size() == key {
                    info.heap = value;
                } else if old_heap_block_size() == key {
                    info.old_heap = value;
                }
            }
            list = tail;
        }
        if list.is_list() {
            Ok(info)
        } else {
            Err(Malformed)
        }
    }
}

#[derive(Default)]
struct GcInfo {
    size: u64,
    heap: u64,
    old_heap: u64,
}

/// A code location as the runtime hands it, `{Module, Function, Args}`
/// or `{Module, Function, Arity}`.
#[derive(Clone, Copy)]
pub struct Location<'a> {
    pub module: Term<'a>,
    pub function: Term<'a>,
    /// The length of `Args` when the runtime hands the argument list.
    pub arity: u32,
}

impl Location<'_> {
    /// Appends `Module:Function/Arity`.
    pub fn write(&self, idents: &mut IdentCache, out: &mut Vec<u8>) {
        self.write_with(|atom, out| idents.write(atom, out), out);
    }

    /// Appends `Module:Function/Arity`, the atoms written by `atom` (the
    /// same text as `format_atom`'s, cached or not).
    pub fn write_with(&self, mut atom: impl FnMut(Term, &mut Vec<u8>), out: &mut Vec<u8>) {
        atom(self.module, out);
        out.push(b':');
        atom(self.function, out);
        out.push(b'/');
        out.extend_from_slice(decimal(u64::from(self.arity), &mut [0; DECIMAL_MAX]));
    }

    /// What identifies it among all locations: the two atoms' words and
    /// the arity.
    pub fn key(&self) -> LocationKey {
        LocationKey {
            module: term_word(self.module.as_c_arg()),
            function: term_word(self.function.as_c_arg()),
            arity: self.arity,
        }
    }
}

/// A code location by its atoms' words (atoms are never collected, so
/// the words name them for the node's life) and its arity.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LocationKey {
    module: usize,
    function: usize,
    arity: u32,
}

impl text_cache::Key for LocationKey {
    /// No atom's word is 0.
    const EMPTY: LocationKey = LocationKey {
        module: 0,
        function: 0,
        arity: 0,
    };

    #[inline(always)]
    fn mix(&self) -> u64 {
        let bits = self.module ^ self.function.rotate_left(29) ^ self.arity as usize;
        (bits as u64).wrapping_mul(text_cache::MIX)
    }
}

/// The texts of code locations, `Module:Function/Arity` and its NUL: a
/// slot is two cache lines, and a longer text (long atoms) is not kept.
pub type LocationCache = TextCache<LocationKey, 128, 103>;

/// `term` as a code location, if it is one.
#[inline]
pub fn location<'a>(env: Env<'a>, term: Term<'a>) -> Option<Location<'a>> {
    // SAFETY: the slice lives no longer than 'a, this call's terms.
    let elems = unsafe { enif::tuple_elements(env.as_c_arg(), term.as_c_arg()) }?;
    let [m, f, a] = elems else {
        return None;
    };
    location_of(env, *m, *f, *a)
}

/// `Module`, `Function` and `Arity` or `Args` (terms of this call) as a
/// code location, if they are one.
#[inline]
pub fn location_of<'a>(
    env: Env<'a>,
    m: ERL_NIF_TERM,
    f: ERL_NIF_TERM,
    a: ERL_NIF_TERM,
) -> Option<Location<'a>> {
    if !(is_atom_word(m) && is_atom_word(f)) {
        return None;
    }
    let arity = small_int(a)
        .and_then(|n| u32::try_from(n).ok())
        .or_else(|| list_length(env, a))?;
    // SAFETY: terms of this call.
    let [module, function] = [m, f].map(|word| unsafe { Term::new(env, word) });
    Some(Location {
        module,
        function,
        arity,
    })
}

/// The length of a proper list of at most MAX_ARITY elements.
fn list_length(env: Env, mut list: ERL_NIF_TERM) -> Option<u32> {
    let env = env.as_c_arg();
    let mut len = 0;
    while !enif::is_empty_list(env, list) {
        let (_, tail) = enif::list_cell(env, list)?;
        len += 1;
        if len > MAX_ARITY {
            return None;
        }
        list = tail;
    }
    Some(len)
}

/// A pid, exactly and in full; anything else is not a process here.
#[inline]
fn process(idents: &mut IdentCache, term: Term, out: &mut Vec<u8>) -> Written {
    if is_local_pid(term.as_c_arg()) || term.is_pid() {
        idents.write(term, out);
        Ok(())
    } else {
        Err(Malformed)
    }
}

/// A port, exactly and in full.
#[inline]
fn port(idents: &mut IdentCache, term: Term, out: &mut Vec<u8>) -> Written {
    if term.is_port() {
        idents.write(term, out);
        Ok(())
    } else {
        Err(Malformed)
    }
}

/// Pids and ports, exactly and in full; anything else is not an identifier.
#[inline]
fn identifier(idents: &mut IdentCache, term: Term, out: &mut Vec<u8>) -> Written {
    if is_local_pid(term.as_c_arg()) || term.is_pid() || term.is_port() {
        idents.write(term, out);
        Ok(())
    } else {
        Err(Malformed)
    }
}
