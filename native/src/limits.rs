//! `max_events`: how many more events a tracer may write, counted here.
//!
//! The count is an atomic in a NIF resource (an "event budget") that the
//! tracer state carries as `#{max_events => Budget}`: every process traced
//! with that state shares it, with no process and no mailbox in between.
//! `trace*` takes one unit before it writes, and writes nothing once none
//! is left; then `enabled(trace_status, ...)`, which the runtime asks when
//! a traced process sends, calls or is scheduled, answers `remove`, and
//! the runtime drops the tracee's flags itself (`remove` is an answer for
//! `trace_status` only).

use crate::vm::{is_immediate, map};
use rustler::sys::{
    enif_alloc_resource, enif_get_resource, enif_make_resource, enif_open_resource_type,
    enif_release_resource, ErlNifResourceFlags, ErlNifResourceType,
};
use rustler::{Atom, Env, Error, NifResult, Term};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

rustler::atoms! {
    max_events,
    trace,
    trace_status,
    remove,
}

/// The resource type of budgets, opened at load and taken over at upgrade,
/// so that budgets made by the previous code stay readable.
static BUDGET_TYPE: AtomicPtr<ErlNifResourceType> = AtomicPtr::new(ptr::null_mut());

/// Opens the budget resource type. Called from the NIF's load and upgrade:
/// created the first time, taken over when the type already exists.
pub fn init(env: Env) -> bool {
    let opened = [
        ErlNifResourceFlags::ERL_NIF_RT_CREATE,
        ErlNifResourceFlags::ERL_NIF_RT_TAKEOVER,
    ]
    .into_iter()
    .map(|flags| {
        let mut tried = flags;
        // SAFETY: called from load/upgrade with their environment; the
        // name is NUL-terminated; budgets hold a plain atomic, so no
        // destructor.
        unsafe {
            enif_open_resource_type(
                env.as_c_arg(),
                ptr::null(),
                c"dyntrace_event_budget".as_ptr(),
                None,
                flags,
                &mut tried,
            )
        }
    })
    .find(|opened| !opened.is_null());
    match opened {
        Some(kind) => {
            BUDGET_TYPE.store(kind.cast_mut(), Ordering::Release);
            true
        }
        None => false,
    }
}

/// The budget a term is, if it is one.
pub fn budget<'a>(term: Term<'a>) -> Option<&'a AtomicU64> {
    let kind = BUDGET_TYPE.load(Ordering::Acquire);
    if kind.is_null() {
        return None;
    }
    let mut obj: *const c_void = ptr::null();
    // SAFETY: on success `obj` points at a live budget, kept alive by
    // `term`, which lives as long as the call's environment.
    unsafe {
        if enif_get_resource(term.get_env().as_c_arg(), term.as_c_arg(), kind, &mut obj) == 0 {
            return None;
        }
        Some(&*obj.cast::<AtomicU64>())
    }
}

/// The budget under `max_events` in a map state, if it holds a valid one
/// (none in a state that is no map).
pub fn budget_in<'a>(map: Term<'a>) -> Option<&'a AtomicU64> {
    budget(map::get(map, max_events())?)
}

/// An `enabled*` answer with the budget applied: `remove` for
/// `trace_status` once the budget is spent. The other tags' answers stand
/// (`trace*` refuses an event past the budget), so the enabled check of
/// each event costs no budget lookup; `enabled::from_words` answers
/// those, and `trace_status` for states without a budget, before this is
/// called. Only map states carry a budget, and a map is never an
/// immediate.
#[inline]
pub fn gate(tag: Term, state: Term, answer: Atom) -> Atom {
    if is_immediate(state.as_c_arg()) || answer != trace() || trace_status() != tag {
        return answer;
    }
    match budget_in(state) {
        Some(left) if left.load(Ordering::Relaxed) == 0 => remove(),
        _ => answer,
    }
}

/// Takes one event from a budget: `false` when none is left (the event
/// must not be written). No budget always may write.
#[inline]
pub fn take(budget: Option<&AtomicU64>) -> bool {
    match budget {
        Some(left) => left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok(),
        None => true,
    }
}

/// A new budget of `n` events, for a tracer state's `max_events`.
#[rustler::nif]
fn new_event_budget(env: Env, n: u64) -> NifResult<Term> {
    let kind = BUDGET_TYPE.load(Ordering::Acquire);
    if kind.is_null() || n == 0 {
        return Err(Error::BadArg);
    }
    // SAFETY: the allocation is sized and aligned for an AtomicU64 (the
    // runtime aligns resources to 8 bytes), initialised before it is
    // shared; the term keeps it alive after our reference is released.
    unsafe {
        let obj = enif_alloc_resource(kind, std::mem::size_of::<AtomicU64>());
        if obj.is_null() {
            return Err(Error::BadArg);
        }
        obj.cast::<AtomicU64>().write(AtomicU64::new(n));
        let term = enif_make_resource(env.as_c_arg(), obj);
        enif_release_resource(obj);
        Ok(Term::new(env, term))
    }
}

/// The events a budget has left.
#[rustler::nif]
fn events_left(budget_term: Term) -> NifResult<u64> {
    budget(budget_term)
        .map(|left| left.load(Ordering::Relaxed))
        .ok_or(Error::BadArg)
}
