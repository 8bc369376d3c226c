//! The tracer state: `[]` or a map of options, read on every event.

use crate::stats;
use rustler::Term;

pub const DEFAULT_MAX_TERM_BYTES: usize = 1024;
pub const MIN_MAX_TERM_BYTES: usize = 64;
pub const MAX_MAX_TERM_BYTES: usize = 65536;

rustler::atoms! {
    max_term_bytes,
}

/// The byte limit for term strings. A state we cannot read means the
/// defaults, and is counted (`dyntrace:stats()`), never silently obeyed
/// with some other limit.
#[inline]
pub fn max_term_bytes_of(state: Term) -> usize {
    if state.is_empty_list() {
        return DEFAULT_MAX_TERM_BYTES;
    }
    if state.is_map() {
        match state.map_get(max_term_bytes()) {
            Err(_) => return DEFAULT_MAX_TERM_BYTES,
            Ok(value) => {
                if let Ok(n) = value.decode::<usize>() {
                    if (MIN_MAX_TERM_BYTES..=MAX_MAX_TERM_BYTES).contains(&n) {
                        return n;
                    }
                }
            }
        }
    }
    stats::count_bad_tracer_state();
    DEFAULT_MAX_TERM_BYTES
}
