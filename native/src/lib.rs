//! `dyntrace`: an `erl_tracer` module that writes LTTng-UST events.
//!
//! The NIF entry points live here; the event table is `events`, the tag
//! lookup `routes`, the callbacks `tracer`, the term printer `format`, the
//! C provider's interface `lttng`.

mod events;
mod format;
mod lttng;
mod options;
mod routes;
mod stats;
mod tracer;

use events::{Class, EventId};
use rustler::codegen_runtime::{ErlNifEntry, ErlNifEnv, ErlNifFunc, ErlNifTerm};
use rustler::types::binary::NewBinary;
use rustler::{Atom, Binary, Encoder, Env, NifResult, Term};
use std::ffi::{c_int, c_void};

/// One `enabled_<class>/3` + `trace_<class>/5` pair per trace class.
macro_rules! class_callbacks {
    ($($class:ident: $enabled:ident, $trace:ident;)*) => {$(
        #[rustler::nif]
        fn $enabled<'a>(tag: Term<'a>, _state: Term<'a>, tracee: Term<'a>) -> Atom {
            tracer::enabled(Some(Class::$class), tag, tracee)
        }

        #[rustler::nif]
        fn $trace<'a>(
            env: Env<'a>,
            tag: Term<'a>,
            state: Term<'a>,
            tracee: Term<'a>,
            term: Term<'a>,
            opts: Term<'a>,
        ) -> NifResult<Atom> {
            tracer::emit(env, Some(Class::$class), tag, state, tracee, term, opts)
        }
    )*};
}

class_callbacks! {
    Procs: enabled_procs, trace_procs;
    Ports: enabled_ports, trace_ports;
    RunningProcs: enabled_running_procs, trace_running_procs;
    RunningPorts: enabled_running_ports, trace_running_ports;
    Call: enabled_call, trace_call;
    Send: enabled_send, trace_send;
    Receive: enabled_receive, trace_receive;
    GarbageCollection: enabled_garbage_collection, trace_garbage_collection;
}

#[rustler::nif]
fn enabled<'a>(tag: Term<'a>, _state: Term<'a>, tracee: Term<'a>) -> Atom {
    tracer::enabled(None, tag, tracee)
}

#[rustler::nif]
fn trace<'a>(
    env: Env<'a>,
    tag: Term<'a>,
    state: Term<'a>,
    tracee: Term<'a>,
    term: Term<'a>,
    opts: Term<'a>,
) -> NifResult<Atom> {
    tracer::emit(env, None, tag, state, tracee, term, opts)
}

/// The text a `message`/`reason` field would hold for `term` under the
/// byte limit `max_term_bytes`.
#[rustler::nif]
fn format_term<'a>(
    env: Env<'a>,
    term: Term<'a>,
    max_term_bytes: Term<'a>,
) -> NifResult<Binary<'a>> {
    let max = max_term_bytes
        .decode::<usize>()
        .ok()
        .filter(|n| (options::MIN_MAX_TERM_BYTES..=options::MAX_MAX_TERM_BYTES).contains(n))
        .ok_or(rustler::Error::BadArg)?;
    let mut text = Vec::with_capacity(max);
    format::format_term_bounded(term, max, &mut text);
    let mut bin = NewBinary::new(env, text.len());
    bin.as_mut_slice().copy_from_slice(&text);
    Ok(bin.into())
}

/// The events enabled in a started LTTng session right now.
#[rustler::nif]
fn enabled_events(env: Env) -> Vec<Atom> {
    EventId::ALL
        .iter()
        .filter(|event| lttng::is_enabled(**event))
        .filter_map(|event| Atom::from_str(env, event.name()).ok())
        .collect()
}

/// The anomaly counters, as a map.
#[rustler::nif]
fn stats(env: Env) -> NifResult<Term> {
    let mut map = rustler::types::map::map_new(env);
    for (name, count) in stats::snapshot() {
        map = map.map_put(Atom::from_str(env, name)?, count.encode(env))?;
    }
    Ok(map)
}

// ---------------------------------------------------------------------------
// Library entry. rustler's `init!` leaves the `upgrade` callback unset, and
// then a second `l(dyntrace)` fails ("upgrade not supported"); ours sets it.

fn on_load(env: Env) -> bool {
    if let Err(why) = lttng::check_provider() {
        eprintln!("dyntrace: tracepoint provider mismatch: {why}");
        return false;
    }
    routes::init(env);
    true
}

fn guarded_load(env: *mut ErlNifEnv) -> c_int {
    std::panic::catch_unwind(|| {
        // SAFETY: `env` is the load environment the runtime passed us.
        let env = unsafe { Env::new_init_env(&env, env) };
        on_load(env)
    })
    .map_or(1, |loaded| c_int::from(!loaded))
}

extern "C" fn nif_load(env: *mut ErlNifEnv, _priv: *mut *mut c_void, _info: ErlNifTerm) -> c_int {
    guarded_load(env)
}

extern "C" fn nif_upgrade(
    env: *mut ErlNifEnv,
    _priv: *mut *mut c_void,
    _old_priv: *mut *mut c_void,
    _info: ErlNifTerm,
) -> c_int {
    guarded_load(env)
}

struct Entry(ErlNifEntry);
// SAFETY: built once, then only read by the runtime.
unsafe impl Sync for Entry {}
unsafe impl Send for Entry {}

static ENTRY: once_cell::sync::OnceCell<Entry> = once_cell::sync::OnceCell::new();

/// The symbol the runtime looks up in a NIF library.
///
/// # Safety
/// Called by the Erlang runtime only.
#[no_mangle]
pub unsafe extern "C" fn nif_init() -> *const ErlNifEntry {
    rustler::codegen_runtime::internal_write_symbols();
    let entry = ENTRY.get_or_init(|| {
        let funcs: Vec<ErlNifFunc> = rustler::codegen_runtime::inventory::iter::<rustler::Nif>()
            .map(rustler::Nif::get_def)
            .collect();
        let funcs: &'static [ErlNifFunc] = Box::leak(funcs.into_boxed_slice());
        let mut entry = ErlNifEntry::new(c"dyntrace", funcs, nif_load);
        entry.upgrade = Some(nif_upgrade);
        Entry(entry)
    });
    &entry.0
}
