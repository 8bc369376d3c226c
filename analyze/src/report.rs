//! `report OUTDIR`: every analysis in one Markdown page (`index.md`) with
//! SVG plots beside it (SVG: no font files needed). The page is made from
//! the same tables as the text and JSON outputs.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use crate::analysis::calls::Calls;
use crate::analysis::rates::Rates;
use crate::analysis::Analysis;
use crate::stats::{log2_bucket_floor, Log2Buckets};
use crate::table::{format_ns, summary_line, Shown, Summary, Table, Unit};

/// Duration rows plotted per table (the first ones: tables are sorted
/// worst first).
const PLOTTED_ROWS: usize = 4;
const SIZE: (u32, u32) = (900, 420);

/// The page being written: what an analysis adds to it besides its tables
/// ([`Analysis::report`]).
pub struct Page<'a> {
    /// The directory of the page and its plots.
    pub dir: &'a Path,
    /// The summary of the run.
    pub summary: &'a Summary,
    /// The Markdown so far.
    pub text: String,
}

impl Page<'_> {
    /// Draws `plot` into `dir/file` and links it under `heading`.
    pub fn plot(
        &mut self,
        heading: &str,
        file: &str,
        plot: impl FnOnce(&Path) -> PlotResult,
    ) -> Result<(), String> {
        plot(&self.dir.join(file)).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let _ = writeln!(
            self.text,
            "## {heading}\n\n![{}]({file})\n",
            heading.to_lowercase()
        );
        Ok(())
    }
}

/// `rates`' part of the page: events per second.
pub fn rates_section(page: &mut Page, rates: &Rates) -> Result<(), String> {
    page.plot("Events per second", "events-per-second.svg", |path| {
        plot_rates(path, rates)
    })
}

/// `calls`' part of the page: the slow calls over time.
pub fn slow_calls_section(page: &mut Page, calls: &Calls) -> Result<(), String> {
    if calls.slow_calls().is_empty() {
        page.text
            .push_str("No call was slower than the --slower-than threshold.\n\n");
        return Ok(());
    }
    let summary = page.summary;
    page.plot("Slow calls over time", "slow-calls.svg", |path| {
        plot_slow_calls(path, summary, calls)
    })
}

/// Writes `index.md` and its plots into `dir` (created if needed).
pub fn write(
    dir: &Path,
    summary: &Summary,
    tables: &[Table],
    analyses: &[Box<dyn Analysis>],
) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let mut page = Page {
        dir,
        summary,
        text: String::from("# dyntrace-analyze report\n\n"),
    };
    let _ = writeln!(page.text, "{}\n", summary_line(summary));
    for line in summary.notices() {
        let _ = writeln!(page.text, "{line}\n");
    }
    for a in analyses {
        a.report(&mut page)?;
    }
    let mut page = page.text;
    for t in tables.iter().filter(|t| t.shown != Shown::JsonOnly) {
        let _ = writeln!(page, "## {}\n", t.title);
        page.push_str(&markdown_table(t, summary));
        for (i, row) in t.rows.iter().take(PLOTTED_ROWS).enumerate() {
            let Some(hist) = row.hist.as_ref().filter(|h| h.iter().any(|&c| c > 0)) else {
                continue;
            };
            let label = row_label(t, row);
            let svg = format!("{}-{}.svg", t.key, i + 1);
            plot_histogram(&dir.join(&svg), &format!("{}: {label}", t.key), hist)
                .map_err(|e| fail(&e))?;
            let _ = writeln!(page, "![{label}]({svg})\n");
        }
    }
    std::fs::write(dir.join("index.md"), page).map_err(|e| fail(&e))
}

/// The row's text cells, joined: what it is about.
fn row_label(t: &Table, row: &crate::table::Row) -> String {
    let texts: Vec<String> = t
        .columns
        .iter()
        .zip(&row.cells)
        .filter(|(c, _)| matches!(c.unit, Unit::Text | Unit::Pid))
        .map(|(c, v)| crate::table::text_of(v, c.unit, 0))
        .collect();
    texts.join(" ")
}

fn markdown_table(t: &Table, summary: &Summary) -> String {
    if t.rows.is_empty() {
        return "(none)\n\n".into();
    }
    let mut out = String::new();
    let titles = t.titles();
    let _ = writeln!(out, "| {} |", titles.join(" | "));
    let aligns: Vec<&str> = t
        .columns
        .iter()
        .map(|c| {
            if matches!(c.unit, Unit::Text | Unit::Pid) {
                "---"
            } else {
                "---:"
            }
        })
        .collect();
    let _ = writeln!(out, "|{}|", aligns.join("|"));
    for row in &t.rows {
        let cells: Vec<String> = row
            .cells
            .iter()
            .zip(&t.columns)
            .map(|(v, c)| crate::table::text_of(v, c.unit, summary.first_ns).replace('|', "\\|"))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    for note in &t.notes {
        let _ = writeln!(out, "\n{note}");
    }
    out.push('\n');
    out
}

/// What drawing a plot gives.
pub type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// A white SVG canvas and a chart builder with the house margins.
fn canvas(
    path: &Path,
) -> Result<DrawingArea<SVGBackend<'_>, plotters::coord::Shift>, Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root)
}

fn chart_builder<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    b
}

/// A power-of-two histogram: the x axis is logarithmic by construction.
fn plot_histogram(path: &Path, title: &str, hist: &Log2Buckets) -> PlotResult {
    let first = hist.iter().position(|&c| c > 0).unwrap_or(0);
    let last = hist.iter().rposition(|&c| c > 0).unwrap_or(first);
    let top = hist.iter().copied().max().unwrap_or(1).max(1);
    let root = canvas(path)?;
    let mut chart = chart_builder(&root, title).build_cartesian_2d(
        (first as u32..last as u32 + 1).into_segmented(),
        0u64..top + top / 10 + 1,
    )?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("duration (power-of-two buckets, lower bound)")
        .y_desc("count")
        .x_label_formatter(&|v| match v {
            SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => {
                format_ns(log2_bucket_floor(*i as usize))
            }
            SegmentValue::Last => String::new(),
        })
        .draw()?;
    chart.draw_series(
        Histogram::vertical(&chart)
            .style(BLUE.mix(0.7).filled())
            .margin(2)
            .data((first..=last).map(|i| (i as u32, hist[i]))),
    )?;
    root.present()?;
    Ok(())
}

/// Each slow call at its start time, its duration on a log scale.
fn plot_slow_calls(path: &Path, summary: &Summary, calls: &Calls) -> PlotResult {
    let points: Vec<(f64, f64)> = calls
        .slow_calls()
        .iter()
        .map(|c| {
            (
                (c.start_ns - summary.first_ns) as f64 / 1e9,
                c.duration_ns as f64 / 1e6,
            )
        })
        .collect();
    let max_x = points.iter().map(|p| p.0).fold(0.0, f64::max).max(1e-3) * 1.05;
    let max_y = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-3) * 2.0;
    let min_y = points
        .iter()
        .map(|p| p.1)
        .fold(f64::MAX, f64::min)
        .max(1e-6)
        / 2.0;
    let root = canvas(path)?;
    let mut chart = chart_builder(&root, "slow calls: duration by start time")
        .build_cartesian_2d(0f64..max_x, (min_y..max_y).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("seconds from the first event")
        .y_desc("duration (ms)")
        .draw()?;
    chart.draw_series(
        points
            .iter()
            .map(|&p| Circle::new(p, 3, RED.mix(0.6).filled())),
    )?;
    root.present()?;
    Ok(())
}

/// One line per event name.
fn plot_rates(path: &Path, rates: &Rates) -> PlotResult {
    let kinds = rates.kinds_present();
    let seconds = kinds.first().map_or(0, |k| rates.series(*k).count()) as u64;
    let top = kinds
        .iter()
        .flat_map(|k| rates.series(*k))
        .max()
        .unwrap_or(1)
        .max(1);
    let root = canvas(path)?;
    let mut chart = chart_builder(&root, "events per second")
        .build_cartesian_2d(0u64..seconds.max(1), 0u64..top + top / 10 + 1)?;
    chart
        .configure_mesh()
        .x_desc("second from the first event")
        .y_desc("events")
        .draw()?;
    for (i, kind) in kinds.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                rates.series(*kind).enumerate().map(|(s, n)| (s as u64, n)),
                color,
            ))?
            .label(kind.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
