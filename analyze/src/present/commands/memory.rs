//! `memory`: its options and memory over time on the report page.

use clap::Args;

use super::registered::Registered;
use crate::analysis::memory::{
    proc_label, Memory, Process, Series, CATEGORIES, DEFAULT_LEAK_WINDOWS, TEXT_ROWS,
};
use crate::engine::identity::Identity;
use crate::model::table::format_bytes;
use crate::present::report::svg::{lines, Axis, Line};
use crate::present::report::Page;

/// `memory`'s own options.
#[derive(Args, Clone, Debug)]
#[group(skip)]
pub struct MemoryOptions {
    /// A series that grew in every one of this many equal parts of its
    /// span is flagged as a leak candidate
    #[arg(long, default_value_t = DEFAULT_LEAK_WINDOWS, value_parser = clap::value_parser!(u64).range(2..=1000))]
    pub leak_windows: u64,
}

impl Registered for Memory {
    const NAME: &'static str = "memory";
    const ABOUT: &'static str = "Memory over time from dyntrace:memory/1's samples: per category, \
                                 allocator and process, growth first to last, leak candidates";
    type Options = MemoryOptions;
    fn new(options: MemoryOptions) -> Result<Memory, String> {
        Ok(Memory::with_leak_windows(options.leak_windows))
    }
    /// In `report`, `findings` runs it inside (one pass, the report's
    /// options) and shows its tables.
    fn for_report(_: MemoryOptions) -> Option<Result<Memory, String>> {
        None
    }

    /// Memory over time: `erlang:memory/0`'s categories, and the
    /// processes of the highest peak (when the trace has samples).
    fn report(&self, page: &mut Page, _who: &Identity) -> Result<(), String> {
        if self.series.is_empty() && self.procs.is_empty() {
            return Ok(());
        }
        let several = self.series.iter().any(|((t, _), _)| *t != 0);
        let bytes = Axis {
            label: "bytes",
            log: false,
            format: |v| format_bytes(v),
        };
        let line = |name: String, s: &Series, i: usize| Line {
            name,
            points: s
                .points()
                .into_iter()
                .map(|(t, v)| (page.seconds(t), v as f64))
                .collect(),
            dashed: false,
            color: i,
        };
        let mut body = String::new();
        let categories: Vec<Line> = self
            .series
            .iter()
            .filter(|((_, name), _)| {
                CATEGORIES.contains(&name.as_str()) && !name.ends_with("_used")
            })
            .enumerate()
            .map(|(i, ((trace, name), s))| line(self.series_name(*trace, name, several), s, i))
            .collect();
        if !categories.is_empty() {
            body.push_str("<h3>Per category (erlang:memory/0)</h3>");
            body.push_str(&lines(
                "memory per category",
                page.time_axis(),
                bytes,
                &categories,
            )?);
        }
        let mut procs: Vec<&Process> = self.procs.iter().collect();
        procs.sort_by(|a, b| {
            b.memory
                .peak()
                .cmp(&a.memory.peak())
                .then(a.pid.cmp(&b.pid))
        });
        let top: Vec<Line> = procs
            .iter()
            .take(TEXT_ROWS)
            .enumerate()
            .map(|(i, p)| line(proc_label(p), &p.memory, i))
            .collect();
        if !top.is_empty() {
            let _ = std::fmt::Write::write_fmt(
                &mut body,
                format_args!("<h3>The {} processes of the highest peak</h3>", top.len()),
            );
            body.push_str(&lines("process memory", page.time_axis(), bytes, &top)?);
        }
        page.section("memory", "Memory over time", body);
        Ok(())
    }
}
