//! Per-analysis state machines. Each reads the event stream once through
//! [`Analysis::on_event`] and keeps only what is bounded by the number of
//! processes and code locations; [`Analysis::tables`] turns the state into
//! result tables at any time (live mode prints them repeatedly). A new
//! analysis is one module implementing the trait.

pub mod calls;
pub mod delivery;
pub mod gc;
pub mod genserver;
pub mod latency;
pub mod memory;
pub mod probes;
pub mod rates;
pub mod sched;
#[cfg(test)]
mod testing;

use crate::event::Event;
use crate::stats::Durations;
use crate::table::{col, Cell, Column, Summary, Table, Unit};

/// A streaming analysis.
pub trait Analysis {
    /// Feeds one event (already inside the time window and pid filter).
    fn on_event(&mut self, ev: &Event);
    /// Live, between reads: the wall clock reads `now_ns` (ns from the Unix
    /// epoch, as the trace's timestamps): what is held back for reordering
    /// may be handled as if an event of that time had been read, so that
    /// results do not wait for the next event.
    fn advance_to(&mut self, _now_ns: i64) {}
    /// The input has ended: handle anything held back.
    fn finish(&mut self) {}
    /// The results so far.
    fn tables(&self, summary: &Summary) -> Vec<Table>;
}

/// Per-process (or per-anything) state keyed by the text in the trace.
pub type ByText<V> = hashbrown::HashMap<Box<[u8]>, V, rustc_hash::FxBuildHasher>;

/// The entry for `key`, created with `make` the first time (one hash
/// lookup; the key is copied only when inserted).
pub fn entry<'m, V>(map: &'m mut ByText<V>, key: &[u8], make: impl FnOnce() -> V) -> &'m mut V {
    map.entry_ref(key).or_insert_with(make)
}

/// Keys sorted for stable output.
pub fn sorted_keys<V>(map: &ByText<V>) -> Vec<&[u8]> {
    let mut keys: Vec<&[u8]> = map.keys().map(|k| &k[..]).collect();
    keys.sort();
    keys
}

/// The columns every duration view shows: count, percentiles, max, total.
pub fn duration_columns() -> [Column; 7] {
    [
        col("count", "count", Unit::Count),
        col("p50_ns", "p50", Unit::Ns),
        col("p90_ns", "p90", Unit::Ns),
        col("p99_ns", "p99", Unit::Ns),
        col("p999_ns", "p99.9", Unit::Ns),
        col("max_ns", "max", Unit::Ns),
        col("total_ns", "total", Unit::Ns),
    ]
}

/// The values of [`duration_columns`].
pub fn duration_cells(d: &Durations) -> [Cell; 7] {
    [
        Cell::Num(d.count()),
        Cell::Num(d.quantile(0.5)),
        Cell::Num(d.quantile(0.9)),
        Cell::Num(d.quantile(0.99)),
        Cell::Num(d.quantile(0.999)),
        Cell::Num(d.max()),
        Cell::Num(d.total()),
    ]
}
