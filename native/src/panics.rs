//! What a panic caught at the NIF boundary leaves to do.

use crate::{fields, format, stats};
use rustler::sys::ErlNifEnv;

/// After a panic caught at the NIF boundary, still inside the same NIF
/// call: counts it (`dyntrace:stats()`, `panics`) and resets the
/// formatter's per-thread states (its own and the field buffers'), whose
/// map iterators belong to this call.
/// Out of line: the callbacks' common path keeps its registers.
#[cold]
#[inline(never)]
pub fn recover(env: *mut ErlNifEnv) {
    stats::count_panic();
    format::reset_after_panic(env);
    fields::reset_after_panic(env);
}
