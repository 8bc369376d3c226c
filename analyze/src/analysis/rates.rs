//! `rates`: events per second per event name, seconds counted from the
//! first event seen. Memory grows with the trace's duration in seconds
//! (one counter per event name a second), not with its number of events.

use super::{Analysis, NoOptions, Registered};
use crate::engine::identity::Identity;
use crate::model::event::{Event, Kind};
use crate::model::table::{col, Cell, Column, Shown, Table, Unit};
use crate::engine::summary::Summary;

/// Seconds kept (about 11 days); later events count in the last second.
const MAX_SECONDS: usize = 1_000_000;

impl Registered for Rates {
    const NAME: &'static str = "rates";
    const ABOUT: &'static str = "Events per second per event name";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Rates, String> {
        Ok(Rates::default())
    }
}

/// The `rates` state machine.
#[derive(Default)]
pub struct Rates {
    first_ns: Option<i64>,
    per_second: Vec<[u64; Kind::ALL.len()]>,
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

    /// Events per second, a line per event name (averaged over a few
    /// seconds a point when the trace is long).
    fn report(&self, page: &mut crate::present::report::Page, _who: &Identity) -> Result<(), String> {
        use crate::present::report::{count_axis, svg, MAX_POINTS};
        let seconds = self.per_second.len();
        let per_point = seconds.div_ceil(MAX_POINTS).max(1);
        let offset = self.first_ns.map_or(0.0, |f| page.seconds(f));
        let lines: Vec<svg::Line> = self
            .kinds_present()
            .into_iter()
            .enumerate()
            .map(|(i, k)| {
                let series: Vec<u64> = self.series(k).collect();
                svg::Line {
                    name: k.name().to_string(),
                    points: series
                        .chunks(per_point)
                        .enumerate()
                        .map(|(c, n)| {
                            let x = offset + (c * per_point) as f64;
                            (x, n.iter().sum::<u64>() as f64 / n.len() as f64)
                        })
                        .collect(),
                    dashed: false,
                    color: i,
                }
            })
            .collect();
        let body = match lines.is_empty() {
            true => "<p class=\"none\">No event.</p>".to_string(),
            false => {
                let mut b = String::new();
                if per_point > 1 {
                    b = format!("<p>Each point: the mean of {per_point} seconds.</p>");
                }
                b + &svg::lines(
                    "events per second",
                    page.time_axis(),
                    count_axis("events per second"),
                    &lines,
                )?
            }
        };
        page.section("rates", "Events per second", body);
        Ok(())
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
