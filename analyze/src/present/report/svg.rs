//! The report's charts (lines, a scatter, a histogram), drawn by
//! plotters into SVG that the page holds inline. Plotters draws the axes,
//! the labels and the marks; [`finish`] then makes its drawing the page's:
//! an opening tag without the namespace link (SVG inside HTML needs none,
//! and the page names no address outside itself) and, on each mark, the
//! `<title>` the browser shows on hover. Its text names a generic font
//! family: no font file is read or fetched. No size beyond the points
//! given: callers thin their series first ([`thin`]).

use std::fmt::Write as _;
use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, SegmentValue, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::markup::escape;

/// The drawing's size in SVG units (it scales to the page's width).
const W: u32 = 880;
const H: u32 = 300;

/// Colours of the series, in order.
const COLORS: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];
/// The page's colours (page.css): text, muted text, grid, frame.
const FG: RGBColor = RGBColor(0x1d, 0x23, 0x2a);
const MUTED: RGBColor = RGBColor(0x5b, 0x66, 0x72);
const GRID: RGBColor = RGBColor(0xec, 0xef, 0xf2);
const FRAME: RGBColor = RGBColor(0x9a, 0xa5, 0xb0);
/// The bars' and the slow calls' colours.
const BAR: RGBColor = COLORS[0];
const DOT: RGBColor = COLORS[1];

/// How an axis's values read.
#[derive(Clone, Copy)]
pub struct Axis {
    /// The axis's label.
    pub label: &'static str,
    /// Logarithmic (values ≤ 0 are left out).
    pub log: bool,
    /// A value as people read it.
    pub format: fn(f64) -> String,
}

/// A line of a [`lines`] chart.
pub struct Line {
    /// Its name in the legend.
    pub name: String,
    /// Its points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (a second measure of the same row).
    pub dashed: bool,
    /// Index into the colours of the series.
    pub color: usize,
}

/// A point of a [`scatter`] chart with what hovering it tells.
pub struct Dot {
    /// Where.
    pub x: f64,
    /// Where.
    pub y: f64,
    /// Its `<title>`.
    pub title: String,
}

/// At most `max` of `points`, evenly spaced in order (the first and the
/// last kept).
pub fn thin<T: Clone>(points: &[T], max: usize) -> Vec<T> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let step = (points.len() - 1) as f64 / (max - 1) as f64;
    (0..max)
        .map(|i| points[((i as f64 * step).round() as usize).min(points.len() - 1)].clone())
        .collect()
}

/// At most `max` of `dots`: the x range cut into buckets, each keeping
/// its highest dots, so that the shape and the outliers stay.
pub fn thin_dots(mut dots: Vec<Dot>, max: usize) -> Vec<Dot> {
    if dots.len() <= max {
        return dots;
    }
    let per_bucket = 10;
    let buckets = (max / per_bucket).max(1);
    let lo = dots.iter().map(|d| d.x).fold(f64::MAX, f64::min);
    let hi = dots.iter().map(|d| d.x).fold(f64::MIN, f64::max);
    let width = ((hi - lo) / buckets as f64).max(f64::MIN_POSITIVE);
    let bucket = |d: &Dot| (((d.x - lo) / width) as usize).min(buckets - 1);
    dots.sort_by(|a, b| bucket(a).cmp(&bucket(b)).then(b.y.total_cmp(&a.y)));
    let mut kept = Vec::with_capacity(max);
    let mut last = (usize::MAX, 0);
    for d in dots {
        let b = bucket(&d);
        last = if b == last.0 { (b, last.1 + 1) } else { (b, 1) };
        if last.1 <= per_bucket {
            kept.push(d);
        }
    }
    kept
}

/// A line or a dot: its points (one for a dot), its style, and what
/// [`finish`] adds to its element.
struct Mark {
    points: Vec<(f64, f64)>,
    style: ShapeStyle,
    attrs: String,
    title: String,
}

#[derive(Clone, Copy)]
enum Shape {
    Line,
    Dot,
}

/// An axis's coordinates, linear or logarithmic as its [`Axis`] says.
enum Scale {
    Linear(RangedCoordf64),
    Log(LogCoord<f64>),
}

impl Scale {
    /// The axis over `values`: whole decades on a log axis (which leaves
    /// out values ≤ 0), from 0 (or below) with a little room above on a
    /// linear one.
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Scale {
        let (lo, hi) = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        match (lo <= hi, log) {
            (false, true) => Scale::Log((1.0..10.0).log_scale().into()),
            (false, false) => Scale::Linear((0.0..1.0).into()),
            (true, true) => {
                let lo = 10f64.powf(lo.log10().floor());
                let hi = 10f64.powf(hi.log10().ceil()).max(lo * 10.0);
                Scale::Log((lo..hi).log_scale().into())
            }
            (true, false) => {
                let lo = lo.min(0.0);
                let hi = if hi > lo { hi } else { lo + 1.0 };
                Scale::Linear((lo..hi + (hi - lo) * 0.04).into())
            }
        }
    }
}

impl Ranged for Scale {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        match self {
            Scale::Linear(s) => s.map(value, limit),
            Scale::Log(s) => s.map(value, limit),
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match self {
            Scale::Linear(s) => s.key_points(hint),
            Scale::Log(s) => s.key_points(hint),
        }
    }

    fn range(&self) -> Range<f64> {
        match self {
            Scale::Linear(s) => s.range(),
            Scale::Log(s) => s.range(),
        }
    }
}

/// Text `px` SVG units high (plotters writes a font's size divided by
/// 1.24).
fn font(px: f64) -> FontDesc<'static> {
    ("sans-serif", px * 1.24).into_font()
}

/// An axis as [`plot`] draws it: its coordinates, its label, how its
/// values read.
struct Ruler<'a, R: Ranged> {
    coord: R,
    label: &'a str,
    format: &'a dyn Fn(&R::ValueType) -> String,
}

type Chart<'a, 'b, X> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Scale>>;

/// Draws the axes (labels, grid lines at the y axis's ticks) into `buf`
/// and has `marks` draw over them.
fn plot<X>(
    buf: &mut String,
    x: Ruler<X>,
    y: Ruler<Scale>,
    marks: impl FnOnce(&mut Chart<X>) -> Result<(), DrawingAreaErrorKind<std::io::Error>>,
) -> Result<(), String>
where
    X: Ranged + ValueFormatter<X::ValueType>,
{
    let fail = |e: DrawingAreaErrorKind<std::io::Error>| format!("drawing a chart: {e}");
    let root = SVGBackend::with_string(buf, (W, H)).into_drawing_area();
    let mut chart = ChartBuilder::on(&root)
        .margin_top(14)
        .margin_right(16)
        .x_label_area_size(40)
        .y_label_area_size(78)
        .build_cartesian_2d(x.coord, y.coord)
        .map_err(fail)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(FRAME)
        .x_labels(8)
        .y_labels(6)
        .label_style(font(11.0).color(&MUTED))
        .axis_desc_style(font(12.0).color(&FG))
        .x_desc(x.label)
        .y_desc(y.label)
        .x_label_formatter(x.format)
        .y_label_formatter(y.format)
        .draw()
        .map_err(fail)?;
    marks(&mut chart).map_err(fail)?;
    root.present().map_err(fail)
}

/// Plotters' drawing made the page's: its opening tag ours (classes, the
/// label for screen readers, no namespace), and the last `marks.len()`
/// `<tag>` elements (the marks, drawn after the axes, in order, one a
/// line) each given its attributes and hover title.
fn finish(svg: &str, class: &str, label: &str, tag: &str, marks: &[(String, String)]) -> String {
    let body = svg.split_once('>').map_or("", |(_, body)| body);
    let open = format!("<{tag} ");
    let total = body.lines().filter(|l| l.starts_with(&open)).count();
    let mut axes = total.saturating_sub(marks.len());
    let mut marks = marks.iter();
    let mut out = format!(
        "<svg class=\"chart {class}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        escape(label)
    );
    for line in body.lines() {
        match line.strip_prefix(&open).and_then(|l| l.strip_suffix("/>")) {
            Some(_) if axes > 0 => {
                axes -= 1;
                out.push_str(line);
            }
            Some(attrs) => {
                let (extra, title) = marks.next().map_or(("", ""), |m| (&m.0, &m.1));
                let sep = if extra.is_empty() { "" } else { " " };
                let _ = write!(
                    out,
                    "<{tag} {extra}{sep}{attrs}><title>{}</title></{tag}>",
                    escape(title)
                );
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Lines or dots over an x and a y axis (a log axis leaves out values
/// ≤ 0, and a mark left with no point).
fn xy(
    label: &str,
    class: &str,
    (xa, ya): (Axis, Axis),
    shape: Shape,
    mut marks: Vec<Mark>,
) -> Result<String, String> {
    for m in &mut marks {
        m.points.retain(|&(x, y)| {
            x.is_finite() && y.is_finite() && (!xa.log || x > 0.0) && (!ya.log || y > 0.0)
        });
    }
    marks.retain(|m| !m.points.is_empty());
    let all = || marks.iter().flat_map(|m| &m.points);
    let x = Scale::new(all().map(|p| p.0), xa.log);
    let y = Scale::new(all().map(|p| p.1), ya.log);
    let mut buf = String::new();
    plot(
        &mut buf,
        Ruler {
            coord: x,
            label: xa.label,
            format: &|v| (xa.format)(*v),
        },
        Ruler {
            coord: y,
            label: ya.label,
            format: &|v| (ya.format)(*v),
        },
        |chart| {
            for m in &marks {
                match shape {
                    Shape::Line => {
                        chart.draw_series(LineSeries::new(m.points.iter().copied(), m.style))
                    }
                    Shape::Dot => chart.draw_series([Circle::new(m.points[0], 4, m.style)]),
                }?;
            }
            Ok(())
        },
    )?;
    let tag = match shape {
        Shape::Line => "polyline",
        Shape::Dot => "circle",
    };
    let titles: Vec<(String, String)> = marks.into_iter().map(|m| (m.attrs, m.title)).collect();
    Ok(finish(&buf, class, label, tag, &titles))
}

/// Lines over a shared x axis, with a legend below the drawing (HTML, so
/// that long names wrap); hovering a line names it.
pub fn lines(label: &str, xa: Axis, ya: Axis, lines: &[Line]) -> Result<String, String> {
    let color = |l: &Line| COLORS[l.color % COLORS.len()];
    let marks = lines
        .iter()
        .map(|l| Mark {
            points: l.points.clone(),
            style: color(l).stroke_width(2),
            attrs: match l.dashed {
                true => "stroke-dasharray=\"5 3\"".into(),
                false => String::new(),
            },
            title: l.name.clone(),
        })
        .collect();
    let mut out = String::from("<figure>");
    out.push_str(&xy(label, "lines", (xa, ya), Shape::Line, marks)?);
    out.push_str("<figcaption class=\"legend\">");
    for l in lines {
        let RGBColor(r, g, b) = color(l);
        let _ = write!(
            out,
            "<span><i style=\"border-color:#{r:02x}{g:02x}{b:02x}\" class=\"{}\"></i>{}</span>",
            if l.dashed { "dashed" } else { "solid" },
            escape(&l.name)
        );
    }
    out.push_str("</figcaption></figure>");
    Ok(out)
}

/// Dots, each with its title; `class` names them for the page (and its
/// tests).
pub fn scatter(
    label: &str,
    xa: Axis,
    ya: Axis,
    dots: &[Dot],
    class: &str,
) -> Result<String, String> {
    let marks = dots
        .iter()
        .map(|d| Mark {
            points: vec![(d.x, d.y)],
            style: DOT.mix(0.55).filled(),
            attrs: format!("class=\"{class}\""),
            title: d.title.clone(),
        })
        .collect();
    let svg = xy(label, "scatter", (xa, ya), Shape::Dot, marks)?;
    Ok(format!("<figure>{svg}</figure>"))
}

/// Bars of counts over labelled buckets (a histogram whose buckets are
/// already logarithmic: powers of two), counts on `ya`; hovering a bar
/// tells its bucket and count.
pub fn bars(label: &str, ya: Axis, buckets: &[(String, u64)]) -> Result<String, String> {
    let drawn: Vec<(usize, &(String, u64))> = buckets
        .iter()
        .enumerate()
        .filter(|(_, b)| b.1 > 0)
        .collect();
    let mut y = Scale::new(drawn.iter().map(|b| b.1 .1 as f64), ya.log);
    if let Scale::Log(_) = y {
        // A count of 1 stands as high as from 1/2 to 1.
        let hi = y.range().end;
        y = Scale::Log((0.5..hi).log_scale().into());
    }
    let base = y.range().start;
    let name = |v: &SegmentValue<usize>| match v {
        SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => {
            buckets.get(*i).map_or(String::new(), |b| b.0.clone())
        }
        SegmentValue::Last => String::new(),
    };
    let bar = |&(i, (_, count)): &(usize, &(String, u64))| {
        let corners = [
            (SegmentValue::Exact(i), base),
            (SegmentValue::Exact(i + 1), *count as f64),
        ];
        let mut r = Rectangle::new(corners, BAR.mix(0.75).filled());
        r.set_margin(0, 0, 1, 1);
        r
    };
    let mut buf = String::new();
    plot(
        &mut buf,
        Ruler {
            coord: (0..buckets.len()).into_segmented(),
            label: "duration (power-of-two buckets, lower bound; log scale)",
            format: &name,
        },
        Ruler {
            coord: y,
            label: ya.label,
            format: &|v| (ya.format)(*v),
        },
        |chart| chart.draw_series(drawn.iter().map(bar)).map(|_| ()),
    )?;
    let titles: Vec<(String, String)> = drawn
        .iter()
        .map(|(_, (name, count))| ("class=\"bar\"".to_string(), format!("{name}: {count}")))
        .collect();
    let svg = finish(&buf, "bars", label, "rect", &titles);
    Ok(format!("<figure>{svg}</figure>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: Axis = Axis {
        label: "duration",
        log: true,
        format: |v| format!("{v}ns"),
    };
    const SECONDS: Axis = Axis {
        label: "seconds",
        log: false,
        format: |v| format!("+{v}"),
    };

    #[test]
    fn thinning_keeps_the_ends_and_spacing() {
        let v: Vec<u32> = (0..1000).collect();
        let t = thin(&v, 5);
        assert_eq!(t, vec![0, 250, 500, 749, 999]);
        assert_eq!(thin(&v[..3], 5), vec![0, 1, 2]);
        let dots: Vec<Dot> = (0..10_000)
            .map(|i| Dot {
                x: i as f64,
                y: if i == 4321 { 1e9 } else { (i % 7) as f64 },
                title: String::new(),
            })
            .collect();
        let kept = thin_dots(dots, 2000);
        assert_eq!(kept.len(), 2000);
        assert!(kept.iter().any(|d| d.y == 1e9), "the outlier stays");
    }

    #[test]
    fn log_axes_span_whole_decades() {
        let range = |v: &[f64], log| Scale::new(v.iter().copied(), log).range();
        assert_eq!(range(&[2e3, 0.0, 5e6], true), 1e3..1e7);
        assert_eq!(range(&[1e3], true), 1e3..1e4);
        assert_eq!(range(&[0.0, 100.0], false), 0.0..104.0);
        assert_eq!(range(&[], false), 0.0..1.0);
    }

    #[test]
    fn dots_keep_their_titles_and_name_no_address() {
        let dots = [
            (1.0, 2e3, "m:f/1 <0.9.0>"),
            (2.0, 0.0, "dropped"),
            (3.0, 5e6, "m:g/0"),
        ];
        let dots: Vec<Dot> = dots
            .iter()
            .map(|&(x, y, t)| Dot {
                x,
                y,
                title: t.into(),
            })
            .collect();
        let svg = scatter("slow <calls>", SECONDS, NS, &dots, "slow-call").expect("drawn");
        assert!(
            svg.starts_with("<figure><svg class=\"chart scatter\""),
            "{svg}"
        );
        assert!(svg.contains("aria-label=\"slow &lt;calls&gt;\""), "{svg}");
        assert_eq!(
            svg.matches("<circle").count(),
            2,
            "the 0 has no place on a log axis"
        );
        assert_eq!(svg.matches("<circle class=\"slow-call\"").count(), 2);
        assert!(
            svg.contains("><title>m:f/1 &lt;0.9.0&gt;</title></circle>"),
            "{svg}"
        );
        assert!(svg.contains("><title>m:g/0</title></circle>"), "{svg}");
        // The y axis: a label per decade from 1e3 to 1e7.
        for decade in ["1000ns", "10000ns", "100000ns", "1000000ns", "10000000ns"] {
            assert!(
                svg.contains(&format!("{decade}</text>")),
                "{decade} in {svg}"
            );
        }
        assert!(!svg.contains("http"), "no address: {svg}");
        assert!(!svg.contains("xmlns"), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches("</svg>").count(), 1);
    }

    #[test]
    fn lines_are_named_and_dashed_as_asked() {
        let line = |name: &str, dashed| Line {
            name: name.into(),
            points: vec![(0.0, 1e3), (1.0, 2e4), (2.0, 3e3)],
            dashed,
            color: 1,
        };
        let svg = lines(
            "trend",
            SECONDS,
            NS,
            &[line("a p99", false), line("a p50", true)],
        )
        .expect("drawn");
        assert_eq!(
            svg.matches("<polyline stroke-dasharray=\"5 3\"").count(),
            1,
            "{svg}"
        );
        assert!(svg.contains("><title>a p99</title></polyline>"), "{svg}");
        assert!(svg.contains("><title>a p50</title></polyline>"), "{svg}");
        assert!(svg.contains("stroke=\"#D62728\""), "{svg}");
        assert!(svg.contains("border-color:#d62728\" class=\"dashed\"></i>a p50</span>"));
    }

    #[test]
    fn bars_stand_from_below_one_and_tell_their_count() {
        let buckets: Vec<(String, u64)> = [("1 us", 0), ("2 us", 1), ("4 us", 250), ("8 us", 0)]
            .iter()
            .map(|&(n, c)| (n.to_string(), c))
            .collect();
        let count = Axis {
            label: "count",
            log: true,
            format: |v| format!("{v}"),
        };
        let svg = bars("dist", count, &buckets).expect("drawn");
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        assert!(svg.contains("><title>2 us: 1</title></rect>"), "{svg}");
        assert!(svg.contains("><title>4 us: 250</title></rect>"), "{svg}");
        for label in ["1 us", "2 us", "4 us", "8 us"] {
            assert!(svg.contains(&format!("{label}</text>")), "{label} in {svg}");
        }
    }
}
