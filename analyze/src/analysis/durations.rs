//! The columns every duration view shows, and their values.

use crate::model::stats::Durations;
use crate::model::table::{col, Cell, Column, Unit};

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
