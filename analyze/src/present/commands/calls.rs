//! `calls`: its options and its slow calls over time on the report page.

use super::registered::Registered;
use crate::analysis::calls::{Calls, REPORT_SLOWER_THAN_NS};
use crate::engine::identity::Identity;
use crate::model::table::format_ns;
use crate::present::cli::parse_duration;
use crate::present::report::{duration_axis, svg, Page, MAX_POINTS};

/// `calls`' options.
#[derive(clap::Args, Clone, Debug)]
#[group(skip)]
pub struct CallsOptions {
    /// List each call at least this long (e.g. 1ms; `report`: 1ms unless given)
    #[arg(long, value_parser = parse_duration)]
    pub slower_than: Option<u64>,
    /// At most this many slow calls listed
    #[arg(long, default_value_t = 10_000)]
    pub max_slow: usize,
    /// The processes were traced with the return_to flag
    #[arg(long)]
    pub return_to: bool,
}

impl Registered for Calls {
    const NAME: &'static str = "calls";
    const ABOUT: &'static str = "Function durations per code location (function_call -> return)";
    type Options = CallsOptions;
    fn new(o: CallsOptions) -> Result<Calls, String> {
        Ok(Calls::new(o.slower_than, o.max_slow, o.return_to))
    }
    fn for_report(o: CallsOptions) -> Option<Result<Calls, String>> {
        let slower_than = o.slower_than.unwrap_or(REPORT_SLOWER_THAN_NS);
        Some(Ok(Calls::new(Some(slower_than), o.max_slow, o.return_to)))
    }

    /// The slow calls over time: each at its start, its duration on a
    /// log scale (the slowest of each stretch of time when there are more
    /// than the page draws).
    fn report(&self, page: &mut Page, who: &Identity) -> Result<(), String> {
        let threshold = format_ns(self.slower_than_ns.unwrap_or(0));
        if self.slow.is_empty() {
            let body = format!("<p class=\"none\">No call took {threshold} or longer.</p>");
            page.section("slow-calls", "Slow calls over time", body);
            return Ok(());
        }
        let dots: Vec<svg::Dot> = self
            .slow
            .iter()
            .map(|c| svg::Dot {
                x: page.seconds(c.start_ns),
                y: c.duration_ns as f64,
                title: format!(
                    "{} {} took {} at +{:.6} s",
                    String::from_utf8_lossy(self.slow_entry(c)),
                    who.label(&c.pid),
                    format_ns(c.duration_ns),
                    page.seconds(c.start_ns)
                ),
            })
            .collect();
        let listed = dots.len();
        let dots = svg::thin_dots(dots, MAX_POINTS);
        let mut body = format!(
            "<p>{} calls of {threshold} or longer (--slower-than); {} drawn",
            self.slow_total,
            dots.len()
        );
        if dots.len() < listed || self.slow_total > listed as u64 {
            body.push_str(" (the slowest of each stretch of time among those listed)");
        }
        body.push_str(".</p>");
        body.push_str(&svg::scatter(
            "slow calls: duration by start time",
            page.time_axis(),
            duration_axis("duration (log scale)"),
            &dots,
            "slow-call",
        )?);
        page.section("slow-calls", "Slow calls over time", body);
        Ok(())
    }
}
