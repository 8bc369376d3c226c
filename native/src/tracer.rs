//! The `erl_tracer` callbacks: the enabled check and the emission of one
//! event from the terms the runtime hands over.

use crate::events::{Class, EventId, LinkSide, Route};
use crate::format::{decimal, format_atom, format_term_bounded, DECIMAL_MAX};
use crate::ident_cache::write_identifier;
use crate::lttng::{self, Text};
use crate::{limits, options, routes, stats};
use rustler::sys::{enif_get_list_cell, enif_get_tuple, ErlNifTerm as ERL_NIF_TERM};
use rustler::{Atom, Env, Error, NifResult, Term};
use std::cell::RefCell;
use std::ffi::c_int;

rustler::atoms! {
    ok,
    trace,
    discard,
    trace_status,
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

/// `enabled*(Tag, State, Tracee)`: `trace` when `Tag`'s event is enabled in
/// a started LTTng session, `discard` otherwise. `trace_status` keeps the
/// tracer attached whatever LTTng's state, so that `lttng enable-event`
/// and `lttng start` after `erlang:trace/3` take effect at once.
///
/// The runtime asks `enabled(trace_status, ...)` before every event, so
/// that question is answered first, before any route lookup.
#[inline]
pub fn enabled(class: Option<Class>, tag: Term, tracee: Term) -> Atom {
    if trace_status() == tag {
        return trace();
    }
    match find_route(class, tag, tracee) {
        Some(route) if lttng::is_enabled(route.event) => trace(),
        _ => discard(),
    }
}

/// `trace*(Tag, State, Tracee, TraceTerm, Opts)`: emits the event and
/// returns `ok`. Arguments the runtime never passes give `badarg` (and are
/// counted) without emitting.
pub fn emit<'a>(
    env: Env<'a>,
    class: Option<Class>,
    tag: Term<'a>,
    state: Term<'a>,
    tracee: Term<'a>,
    term: Term<'a>,
    opts: Term<'a>,
) -> NifResult<Atom> {
    let Some(route) = find_route(class, tag, tracee) else {
        return Ok(ok());
    };
    // Sessions may have stopped since the enabled check: skip the work.
    if !lttng::is_enabled(route.event) || !limits::take(state) {
        return Ok(ok());
    }
    let event = Event {
        env,
        route,
        max_term_bytes: options::max_term_bytes_of(state),
        tracee,
        term,
        opts,
    };
    let emitted = SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => event.write(&mut scratch),
        Err(_) => Err(Malformed),
    });
    match emitted {
        Ok(()) => Ok(ok()),
        Err(Malformed) => {
            stats::count_bad_arguments();
            Err(Error::BadArg)
        }
    }
}

#[inline]
fn find_route(class: Option<Class>, tag: Term, tracee: Term) -> Option<&'static Route> {
    match class {
        Some(class) => routes::lookup(class, tag),
        None => routes::lookup_any(tag, tracee),
    }
}

/// Arguments that no runtime call has: the event is not emitted.
struct Malformed;

/// Per-thread field buffers, reused by every event on that scheduler.
/// They grow once to the largest text written (at most the byte limit for
/// terms, a few KiB for code locations) and stay there.
#[derive(Default)]
struct Scratch {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Scratch {
    fn emit3(&mut self, event: EventId) {
        let (a, b, c) = (&mut self.a, &mut self.b, &mut self.c);
        lttng::emit_s3(
            event,
            Text::terminate(a),
            Text::terminate(b),
            Text::terminate(c),
        );
    }

    fn emit2(&mut self, event: EventId) {
        lttng::emit_s2(
            event,
            Text::terminate(&mut self.a),
            Text::terminate(&mut self.b),
        );
    }
}

struct Event<'a> {
    env: Env<'a>,
    route: &'static Route,
    max_term_bytes: usize,
    tracee: Term<'a>,
    term: Term<'a>,
    opts: Term<'a>,
}

impl<'a> Event<'a> {
    fn write(&self, s: &mut Scratch) -> Result<(), Malformed> {
        s.a.clear();
        s.b.clear();
        s.c.clear();
        let event = self.route.event;
        let tracee = self.tracee;
        if !tracee_fits(event, tracee) {
            return Err(Malformed);
        }
        match event {
            EventId::ProcessSpawn => {
                pid(self.term, &mut s.a)?;
                identifier(tracee, &mut s.b)?;
                self.mfa(self.extra()?, &mut s.c);
                s.emit3(event);
            }
            EventId::ProcessLink | EventId::PortLink => {
                let (from, to) = match self.route.side {
                    LinkSide::Tracee => (tracee, self.term),
                    LinkSide::Other => (self.term, tracee),
                };
                identifier(from, &mut s.a)?;
                identifier(to, &mut s.b)?;
                s.c.extend_from_slice(self.route.kind.as_bytes());
                s.emit3(event);
            }
            EventId::ProcessExit | EventId::PortExit => {
                identifier(tracee, &mut s.a)?;
                self.term_text(self.term, &mut s.b);
                s.emit2(event);
            }
            EventId::ProcessRegister => {
                identifier(tracee, &mut s.a)?;
                self.term_text(self.term, &mut s.b);
                s.c.extend_from_slice(self.route.kind.as_bytes());
                s.emit3(event);
            }
            EventId::ProcessScheduled => {
                identifier(tracee, &mut s.a)?;
                self.mfa(self.term, &mut s.b);
                s.c.extend_from_slice(self.route.kind.as_bytes());
                s.emit3(event);
            }
            EventId::PortOpen => {
                pid(self.term, &mut s.a)?;
                self.term_text(self.extra()?, &mut s.b);
                identifier(tracee, &mut s.c)?;
                s.emit3(event);
            }
            EventId::PortScheduled => {
                identifier(tracee, &mut s.a)?;
                if self.term.is_atom() {
                    self.term_text(self.term, &mut s.b);
                } else {
                    s.b.extend_from_slice(UNDEFINED);
                }
                s.c.extend_from_slice(self.route.kind.as_bytes());
                s.emit3(event);
            }
            EventId::FunctionCall | EventId::FunctionReturn => {
                identifier(tracee, &mut s.a)?;
                self.mfa(self.term, &mut s.b);
                // The runtime passes no call depth; OTP's backend writes 0 too.
                lttng::emit_call(
                    event,
                    Text::terminate(&mut s.a),
                    Text::terminate(&mut s.b),
                    0,
                );
            }
            EventId::FunctionException => {
                identifier(tracee, &mut s.a)?;
                self.mfa(self.term, &mut s.b);
                match self.tuple(self.extra()?) {
                    Some([class, _]) if self.wrap(*class).is_atom() => {
                        format_atom(self.wrap(*class), &mut s.c)
                    }
                    _ => return Err(Malformed),
                }
                s.emit3(event);
            }
            EventId::MessageSend => {
                identifier(tracee, &mut s.a)?;
                // A send to a name that is not registered has the name here.
                let to = self.extra()?;
                if identifier(to, &mut s.b).is_err() {
                    self.term_text(to, &mut s.b);
                }
                self.term_text(self.term, &mut s.c);
                s.emit3(event);
            }
            EventId::MessageReceive => {
                identifier(tracee, &mut s.a)?;
                self.term_text(self.term, &mut s.b);
                s.emit2(event);
            }
            EventId::GcMinorStart
            | EventId::GcMinorEnd
            | EventId::GcMajorStart
            | EventId::GcMajorEnd => {
                identifier(tracee, &mut s.a)?;
                let info = self.gc_info(self.term)?;
                lttng::emit_gc(
                    event,
                    Text::terminate(&mut s.a),
                    info.size,
                    info.heap,
                    info.old_heap,
                );
            }
        }
        Ok(())
    }

    fn wrap(&self, raw: ERL_NIF_TERM) -> Term<'a> {
        // SAFETY: `raw` comes from a term of this same environment.
        unsafe { Term::new(self.env, raw) }
    }

    /// The elements of a tuple, without copying them.
    fn tuple(&self, term: Term<'a>) -> Option<&'a [ERL_NIF_TERM]> {
        let mut arity: c_int = 0;
        let mut elems: *const ERL_NIF_TERM = std::ptr::null();
        // SAFETY: on success `elems` points at `arity` terms that live as
        // long as the tuple, that is, as long as this environment.
        unsafe {
            if enif_get_tuple(self.env.as_c_arg(), term.as_c_arg(), &mut arity, &mut elems) == 0 {
                return None;
            }
            Some(std::slice::from_raw_parts(elems, arity as usize))
        }
    }

    /// The head and tail of a list cell.
    fn cell(&self, list: Term<'a>) -> Option<(Term<'a>, Term<'a>)> {
        let (mut head, mut tail) = (ERL_NIF_TERM::default(), ERL_NIF_TERM::default());
        // SAFETY: plain out-parameters.
        let found = unsafe {
            enif_get_list_cell(self.env.as_c_arg(), list.as_c_arg(), &mut head, &mut tail)
        };
        (found != 0).then(|| (self.wrap(head), self.wrap(tail)))
    }

    fn extra(&self) -> Result<Term<'a>, Malformed> {
        self.opts.map_get(extra()).map_err(|_| Malformed)
    }

    fn term_text(&self, term: Term, out: &mut Vec<u8>) {
        format_term_bounded(term, self.max_term_bytes, out);
    }

    /// `Module:Function/Arity`, the arity being the length when the runtime
    /// hands the argument list; `undefined` when there is no location (the
    /// runtime passes 0 for a process with no current function).
    fn mfa(&self, term: Term<'a>, out: &mut Vec<u8>) {
        let written = self.tuple(term).and_then(|elems| match elems {
            [m, f, a] => {
                let (m, f, a) = (self.wrap(*m), self.wrap(*f), self.wrap(*a));
                if !(m.is_atom() && f.is_atom()) {
                    return None;
                }
                let arity = a.decode::<u32>().ok().or_else(|| self.list_length(a))?;
                format_atom(m, out);
                out.push(b':');
                format_atom(f, out);
                out.push(b'/');
                out.extend_from_slice(decimal(u64::from(arity), &mut [0; DECIMAL_MAX]));
                Some(())
            }
            _ => None,
        });
        if written.is_none() {
            out.clear();
            out.extend_from_slice(UNDEFINED);
        }
    }

    /// The length of a proper list of at most MAX_ARITY elements.
    fn list_length(&self, mut list: Term<'a>) -> Option<u32> {
        let mut len = 0;
        while !list.is_empty_list() {
            let (_, tail) = self.cell(list)?;
            len += 1;
            if len > MAX_ARITY {
                return None;
            }
            list = tail;
        }
        Some(len)
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

/// Whether `tracee` is of the kind `event` is about: a process event's
/// `pid` never holds a port, nor a port event's `port` a pid. Ports send
/// and receive messages too.
fn tracee_fits(event: EventId, tracee: Term) -> bool {
    match event {
        EventId::PortOpen | EventId::PortExit | EventId::PortLink | EventId::PortScheduled => {
            tracee.is_port()
        }
        EventId::MessageSend | EventId::MessageReceive => tracee.is_pid() || tracee.is_port(),
        _ => tracee.is_pid(),
    }
}

/// A pid, exactly and in full; anything else is not a process here.
fn pid(term: Term, out: &mut Vec<u8>) -> Result<(), Malformed> {
    if term.is_pid() {
        write_identifier(term, out);
        Ok(())
    } else {
        Err(Malformed)
    }
}

/// Pids and ports, exactly and in full; anything else is not an identifier.
fn identifier(term: Term, out: &mut Vec<u8>) -> Result<(), Malformed> {
    if term.is_pid() || term.is_port() {
        write_identifier(term, out);
        Ok(())
    } else {
        Err(Malformed)
    }
}
