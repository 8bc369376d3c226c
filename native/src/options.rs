//! The tracer state: `[]` or a map of options, read on every event.

use crate::{limits, stats};
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
        // A map with a key nobody reads, or a bad `max_events`, is invalid.
        let size = state
            .map_size()
            .map_or(usize::MAX, |n| n - limits::known_keys(state));
        match state.map_get(max_term_bytes()) {
            Err(_) if size == 0 => return DEFAULT_MAX_TERM_BYTES,
            Ok(value) if size == 1 => {
                if let Some(n) = valid_max_term_bytes(value) {
                    return n;
                }
            }
            _ => {}
        }
    }
    stats::count_bad_tracer_state();
    DEFAULT_MAX_TERM_BYTES
}

/// A byte limit given as a term, if it is an integer in 64..=65536.
pub fn valid_max_term_bytes(value: Term) -> Option<usize> {
    value
        .decode::<usize>()
        .ok()
        .filter(|n| (MIN_MAX_TERM_BYTES..=MAX_MAX_TERM_BYTES).contains(n))
}
