//! `rates`: events per second per event name, seconds counted from the
//! first event seen. Memory grows with the trace's duration in seconds
//! (one counter per event name a second), not with its number of events.

use crate::engine::analysis::Analysis;
use crate::engine::identity::Identity;
use crate::engine::summary::Summary;
use crate::model::event::{Event, Kind};
use crate::model::table::{col, Cell, Column, Shown, Table, Unit};

/// Seconds kept (about 11 days); later events count in the last second.
const MAX_SECONDS: usize = 1_000_000;

/// The `rates` state machine.
#[derive(Default)]
pub struct Rates {
    pub(crate) first_ns: Option<i64>,
    pub(crate) per_second: Vec<[u64; Kind::ALL.len()]>,
}

impl Rates {
    /// Events per second of `kind`, second by second.
    pub fn series(&self, kind: Kind) -> impl Iterator<Item = u64> + '_ {
        self.per_second.iter().map(move |s| s[kind as usize])
    }

    /// Kinds present in the trace, in the contract's order.
    pub fn kinds_present(&self) -> Vec<Kind> {
        Kind::ALL
            .iter()
            .copied()
            .filter(|k| self.per_second.iter().any(|s| s[*k as usize] > 0))
            .collect()
    }
}

impl Analysis for Rates {
    /// Counts by kind and time: no fields.
    fn needs_fields(&self, _kind: Kind) -> bool {
        false
    }

    fn on_event(&mut self, ev: &Event, _who: &Identity) {
        let Some(kind) = ev.kind() else { return };
        let first = *self.first_ns.get_or_insert(ev.ts_ns);
        let second =
            ((ev.ts_ns.saturating_sub(first).max(0) / 1_000_000_000) as usize).min(MAX_SECONDS - 1);
        if self.per_second.len() <= second {
            self.per_second.resize(second + 1, [0; Kind::ALL.len()]);
        }
        self.per_second[second][kind as usize] += 1;
    }

    fn tables(&self, _summary: &Summary) -> Vec<Table> {
        let mut long = Table::new(
            "rates",
            "Events per second",
            vec![
                col("second", "second", Unit::Count),
                col("event", "event", Unit::Text),
                col("count", "count", Unit::Count),
            ],
        );
        long.shown = Shown::JsonOnly;
        let kinds = self.kinds_present();
        let mut columns: Vec<Column> = vec![col("second", "second", Unit::Count)];
        columns.extend(kinds.iter().map(|k| col(k.name(), k.name(), Unit::Count)));
        let mut wide = Table::new(
            "rates_by_second",
            "Events per second (seconds from the first event)",
            columns,
        );
        wide.shown = Shown::TextOnly;
        for (second, counts) in self.per_second.iter().enumerate() {
            for k in &kinds {
                if counts[*k as usize] > 0 {
                    long.push(
                        vec![
                            Cell::Num(second as u64),
                            Cell::Text(k.name().into()),
                            Cell::Num(counts[*k as usize]),
                        ],
                        None,
                    );
                }
            }
            let mut cells = vec![Cell::Num(second as u64)];
            cells.extend(kinds.iter().map(|k| Cell::Num(counts[*k as usize])));
            wide.push(cells, None);
        }
        vec![long, wide]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::Script;

    #[test]
    fn counts_per_second_and_name() {
        let mut s = Script::default();
        s.ev(5_000_000_000, Kind::ProcessSpawn, &["<0.1.0>"]);
        s.ev(5_500_000_000, Kind::ProcessSpawn, &["<0.2.0>"]);
        s.ev(7_100_000_000, Kind::ProcessExit, &["<0.2.0>", "normal"]);
        let mut r = Rates::default();
        s.feed(&mut r);
        let t = &r.tables(&Summary::default())[0];
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.rows[0].cells,
            [
                Cell::Num(0),
                Cell::Text("process_spawn".into()),
                Cell::Num(2)
            ]
        );
        assert_eq!(
            t.rows[1].cells,
            [
                Cell::Num(2),
                Cell::Text("process_exit".into()),
                Cell::Num(1)
            ]
        );
    }
}
