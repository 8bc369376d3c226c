//! `dyntrace`: an `erl_tracer` module that writes LTTng-UST events.
//!
//! This file is the library's entry: the NIF table the runtime loads and
//! the load callback, which runs every module's load-time step. The
//! modules, lowest first (each uses only modules below it;
//! `scripts/module-graph.sh` prints the graph and fails on a cycle):
//! - `vm`: term words and the VM's layouts, read in place where a check at
//!   load confirmed them, through enif otherwise; `stats`, the anomaly
//!   counters;
//! - `events`, the event table (generated from `native/events.table`);
//!   `lttng`, the C provider (enable states, typed emitters); `format`,
//!   term to text; `text_cache`, `ident_cache`, texts kept per thread;
//! - `limits` (`max_events`), `options` (the tracer state), `routes` (tag
//!   to event), `answers` (the callbacks' answer words), `fields` (each
//!   event's field extraction);
//! - `short_path` and `general_path`, the two ways of a `trace*` call;
//!   `enabled`, the `enabled*` answer; `panics`; `callbacks`, the 18 raw
//!   `erl_tracer` NIFs;
//! - the other NIFs, each file named for what it does: `term_text`
//!   (`format_term`), `event_list` (`events`, `enabled_events`), `probes`
//!   (user probes), `node_name`, `sample_events` (samplers' and
//!   snapshots' events), and `limits`' and `stats`' own.

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

mod answers;
mod callbacks;
mod decimal;
mod enabled;
mod event_list;
mod events;
mod fields;
mod format;
mod general_path;
mod ident_cache;
mod limits;
mod lttng;
#[cfg(test)]
mod no_vm;
mod node_name;
mod options;
mod panics;
mod probes;
mod routes;
mod sample_events;
mod short_path;
mod stats;
mod term_text;
#[cfg(test)]
mod test_random;
mod text_cache;
mod vm;

use rustler::codegen_runtime::{ErlNifEntry, ErlNifEnv, ErlNifFunc, ErlNifTerm};
use rustler::{Env, Term};
use std::ffi::{c_int, c_void, CString};

// rustler's `init!` leaves the `upgrade` callback unset, and
// then a second `l(dyntrace)` fails ("upgrade not supported"); ours sets it.

/// Any other load failure, already explained on stderr.
const LOAD_FAILED: c_int = 1;

/// Load and upgrade: the load info is the path of the probe provider
/// library, which the module passes from its `priv/` directory.
fn on_load(env: Env, load_info: Term) -> Result<(), c_int> {
    if let Err(why) = lttng::check_provider() {
        eprintln!("dyntrace: tracepoint provider mismatch: {why}");
        return Err(LOAD_FAILED);
    }
    if let Err(why) = routes::init(env) {
        eprintln!("dyntrace: {why}");
        return Err(LOAD_FAILED);
    }
    if !limits::init(env) {
        eprintln!("dyntrace: cannot open the event budget resource type");
        return Err(LOAD_FAILED);
    }
    // `{ProviderPath, HashMap, FirstKeyOfItsToList, Samples}`: the map
    // tells which way this release's iterator goes (format's big-map
    // order); the samples (references, aliases) which layouts it has.
    let Ok((path, map, first, samples)) = load_info.decode::<(Term, Term, Term, Vec<Term>)>()
    else {
        eprintln!("dyntrace: the load info must be {{ProviderPath, Map, Key, Samples}}");
        return Err(LOAD_FAILED);
    };
    let layouts = vm::init(env, map, first, &samples);
    for (read, what) in [
        (layouts.containers, "tuples and lists"),
        (layouts.maps, "maps"),
        (layouts.binaries, "binaries"),
        (layouts.references, "references"),
        (layouts.bitstrings, "bitstrings"),
        (layouts.bignums, "bignums"),
        (layouts.external_funs, "external funs"),
        (layouts.local_funs, "local funs"),
    ] {
        if !read {
            eprintln!("dyntrace: {what} are not laid out as expected; reading them through enif");
        }
    }
    answers::init(env);
    short_path::init(env);
    options::init();
    // The provider itself is opened by `open_provider/1`, on a dirty I/O
    // scheduler (LTTng-UST's start-up may wait for the session daemon).
    if path.decode_as_binary().is_err() {
        eprintln!("dyntrace: the provider library's path must be a binary");
        return Err(LOAD_FAILED);
    }
    Ok(())
}

/// `dyntrace:open_provider/1`, called by the module's on_load once the NIF
/// is loaded: opens the probe provider library at `path` (which starts
/// LTTng-UST in this process and waits for the session daemon's answer, up
/// to LTTNG_UST_REGISTER_TIMEOUT) on a dirty I/O scheduler. `true` when it
/// is open; when it cannot be (no liblttng-ust), `false`, and the module
/// logs the one line that says what to install. Opening it again is
/// harmless.
#[rustler::nif(schedule = "DirtyIo")]
fn open_provider(path: rustler::Binary) -> bool {
    CString::new(path.as_slice())
        .ok()
        .is_some_and(|path| lttng::load_provider(&path).is_ok())
}

fn guarded_load(env: *mut ErlNifEnv, load_info: ErlNifTerm) -> c_int {
    std::panic::catch_unwind(|| {
        // SAFETY: `env` and `load_info` are what the runtime passed us.
        let env = unsafe { Env::new_init_env(&env, env) };
        // SAFETY: `load_info` is a term of that environment.
        let load_info = unsafe { Term::new(env, load_info) };
        on_load(env, load_info)
    })
    .map_or(LOAD_FAILED, |loaded| loaded.err().unwrap_or(0))
}

extern "C" fn nif_load(env: *mut ErlNifEnv, _priv: *mut *mut c_void, info: ErlNifTerm) -> c_int {
    guarded_load(env, info)
}

extern "C" fn nif_upgrade(
    env: *mut ErlNifEnv,
    _priv: *mut *mut c_void,
    _old_priv: *mut *mut c_void,
    info: ErlNifTerm,
) -> c_int {
    guarded_load(env, info)
}

struct Entry(ErlNifEntry);
// SAFETY: built once, then only read by the runtime.
unsafe impl Sync for Entry {}
// SAFETY: as above: nothing writes it after it is built.
unsafe impl Send for Entry {}

static ENTRY: once_cell::sync::OnceCell<Entry> = once_cell::sync::OnceCell::new();

/// The symbol the runtime looks up in a NIF library.
///
/// # Safety
/// Called by the Erlang runtime only.
#[no_mangle]
pub unsafe extern "C" fn nif_init() -> *const ErlNifEntry {
    // SAFETY: the runtime calls nif_init once per load, before any NIF.
    unsafe { rustler::codegen_runtime::internal_write_symbols() };
    let entry = ENTRY.get_or_init(|| {
        let mut funcs: Vec<ErlNifFunc> =
            rustler::codegen_runtime::inventory::iter::<rustler::Nif>()
                .map(rustler::Nif::get_def)
                .collect();
        funcs.extend(callbacks::table());
        let funcs: &'static [ErlNifFunc] = Box::leak(funcs.into_boxed_slice());
        let mut entry = ErlNifEntry::new(c"dyntrace", funcs, nif_load);
        entry.upgrade = Some(nif_upgrade);
        Entry(entry)
    });
    &entry.0
}
