//! Counters for what the tracer did not do as asked. Only anomalies are
//! counted: a shared counter per event would bounce a cache line between
//! schedulers on the hot path.

use rustler::{Atom, Encoder, Env, NifResult, Term};
use std::sync::atomic::{AtomicU64, Ordering};

static BAD_TRACER_STATE: AtomicU64 = AtomicU64::new(0);
static BAD_ARGUMENTS: AtomicU64 = AtomicU64::new(0);
static PANICS: AtomicU64 = AtomicU64::new(0);

/// An event used the default options because its tracer state was invalid.
pub fn count_bad_tracer_state() {
    BAD_TRACER_STATE.fetch_add(1, Ordering::Relaxed);
}

/// A `trace*` callback was called with arguments the runtime never passes.
pub fn count_bad_arguments() {
    BAD_ARGUMENTS.fetch_add(1, Ordering::Relaxed);
}

/// A NIF call panicked: it raised `badarg` instead, and its event (if
/// any) was not written.
pub fn count_panic() {
    PANICS.fetch_add(1, Ordering::Relaxed);
}

fn snapshot() -> [(&'static str, u64); 3] {
    [
        ("bad_tracer_state", BAD_TRACER_STATE.load(Ordering::Relaxed)),
        ("bad_arguments", BAD_ARGUMENTS.load(Ordering::Relaxed)),
        ("panics", PANICS.load(Ordering::Relaxed)),
    ]
}

/// `dyntrace:stats/0`: the anomaly counters, as a map.
#[rustler::nif]
fn stats(env: Env) -> NifResult<Term> {
    let mut map = rustler::types::map::map_new(env);
    for (name, count) in snapshot() {
        map = map.map_put(Atom::from_str(env, name)?, count.encode(env))?;
    }
    Ok(map)
}
