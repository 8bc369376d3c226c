//! `rates`: events per second on the report page.

use super::registered::{NoOptions, Registered};
use crate::analysis::rates::Rates;
use crate::engine::identity::Identity;
use crate::present::report::{count_axis, svg, Page, MAX_POINTS};

impl Registered for Rates {
    const NAME: &'static str = "rates";
    const ABOUT: &'static str = "Events per second per event name";
    type Options = NoOptions;
    fn new(_: NoOptions) -> Result<Rates, String> {
        Ok(Rates::default())
    }

    /// Events per second, a line per event name (averaged over a few
    /// seconds a point when the trace is long).
    fn report(&self, page: &mut Page, _who: &Identity) -> Result<(), String> {
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
}
