//! The report's charts: small inline SVG drawn here (lines, a scatter,
//! a histogram), styled by the page's CSS, each point or bar with a
//! `<title>` the browser shows on hover. No fonts, no scripts, no size
//! beyond the points given: callers thin their series first
//! ([`thin`]).

use std::fmt::Write as _;

use super::escape;

/// The drawing's size in SVG units (it scales to the page's width).
const W: f64 = 880.0;
const H: f64 = 300.0;
/// Room for the axes' labels.
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 40.0;

/// Colours of the series, in order (the page's CSS may not know them).
pub const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

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
    /// Index into [`COLORS`].
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

/// Maps values of an axis to SVG coordinates.
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    from: f64,
    to: f64,
}

impl Scale {
    fn new(values: impl Iterator<Item = f64>, log: bool, from: f64, to: f64) -> Scale {
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        for v in values.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > hi {
            (lo, hi) = (if log { 1.0 } else { 0.0 }, 1.0);
        }
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
            let step = nice_step(hi - lo);
            hi = (hi / step).ceil() * step;
        }
        Scale {
            lo,
            hi,
            log,
            from,
            to,
        }
    }

    fn at(&self, v: f64) -> f64 {
        let f = match self.log {
            true => {
                (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
            false => (v - self.lo) / (self.hi - self.lo),
        };
        self.from + f.clamp(0.0, 1.0) * (self.to - self.from)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            let every = ((b - a) / 6 + 1).max(1);
            return (a..=b)
                .step_by(every as usize)
                .map(|e| 10f64.powi(e))
                .collect();
        }
        let step = nice_step(self.hi - self.lo);
        let mut v = (self.lo / step).ceil() * step;
        let mut out = Vec::new();
        while v <= self.hi + step * 1e-9 {
            out.push(v);
            v += step;
        }
        out
    }
}

/// A 1-2-5 step giving about five ticks over `span`.
fn nice_step(span: f64) -> f64 {
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    mag * match n {
        n if n <= 1.0 => 1.0,
        n if n <= 2.0 => 2.0,
        n if n <= 5.0 => 5.0,
        _ => 10.0,
    }
}

fn open(out: &mut String, class: &str, label: &str) {
    let _ = write!(
        out,
        "<svg class=\"chart {class}\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        escape(label)
    );
}

fn axes(out: &mut String, x: &Scale, xa: &Axis, y: &Scale, ya: &Axis) {
    out.push_str("<g class=\"axis\">");
    for t in y.ticks() {
        let py = y.at(t);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{py:.1}\" y2=\"{py:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            py + 4.0,
            escape(&(ya.format)(t))
        );
    }
    for t in x.ticks() {
        let px = x.at(t);
        let _ = write!(
            out,
            "<line class=\"tick\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            H - BOTTOM,
            H - BOTTOM + 4.0,
            H - BOTTOM + 17.0,
            escape(&(xa.format)(t))
        );
    }
    let _ = write!(
        out,
        "<line class=\"frame\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{:.1}\"/>\
         <line class=\"frame\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
         <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text class=\"label\" transform=\"rotate(-90)\" x=\"{:.1}\" y=\"14\" \
         text-anchor=\"middle\">{}</text></g>",
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM,
        H - BOTTOM,
        (LEFT + W - RIGHT) / 2.0,
        H - 4.0,
        escape(xa.label),
        -(TOP + H - BOTTOM) / 2.0,
        escape(ya.label)
    );
}

/// Lines over a shared x axis, with a legend below the drawing (HTML, so
/// that long names wrap).
pub fn lines(label: &str, xa: Axis, ya: Axis, lines: &[Line]) -> String {
    let x = Scale::new(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)),
        xa.log,
        LEFT,
        W - RIGHT,
    );
    let y = Scale::new(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
        ya.log,
        H - BOTTOM,
        TOP,
    );
    let mut out = String::from("<figure>");
    open(&mut out, "lines", label);
    axes(&mut out, &x, &xa, &y, &ya);
    for l in lines {
        let color = COLORS[l.color % COLORS.len()];
        let dash = if l.dashed {
            " stroke-dasharray=\"5 3\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{color}\"{dash} points=\""
        );
        for &(px, py) in l.points.iter().filter(|p| !ya.log || p.1 > 0.0) {
            let _ = write!(out, "{:.1},{:.1} ", x.at(px), y.at(py));
        }
        let _ = write!(out, "\"><title>{}</title></polyline>", escape(&l.name));
    }
    out.push_str("</svg><figcaption class=\"legend\">");
    for l in lines {
        let _ = write!(
            out,
            "<span><i style=\"border-color:{}\" class=\"{}\"></i>{}</span>",
            COLORS[l.color % COLORS.len()],
            if l.dashed { "dashed" } else { "solid" },
            escape(&l.name)
        );
    }
    out.push_str("</figcaption></figure>");
    out
}

/// Dots, each with its title; `class` names them for the page (and its
/// tests).
pub fn scatter(label: &str, xa: Axis, ya: Axis, dots: &[Dot], class: &str) -> String {
    let x = Scale::new(dots.iter().map(|d| d.x), xa.log, LEFT, W - RIGHT);
    let y = Scale::new(dots.iter().map(|d| d.y), ya.log, H - BOTTOM, TOP);
    let mut out = String::from("<figure>");
    open(&mut out, "scatter", label);
    axes(&mut out, &x, &xa, &y, &ya);
    for d in dots {
        let _ = write!(
            out,
            "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\"><title>{}</title></circle>",
            x.at(d.x),
            y.at(d.y),
            escape(&d.title)
        );
    }
    out.push_str("</svg></figure>");
    out
}

/// Bars of counts over labelled buckets (a histogram whose buckets are
/// already logarithmic: powers of two).
pub fn bars(label: &str, ya: Axis, buckets: &[(String, u64)]) -> String {
    let n = buckets.len().max(1) as f64;
    let mut y = Scale::new(buckets.iter().map(|b| b.1 as f64), ya.log, H - BOTTOM, TOP);
    if ya.log {
        // A count of 1 stands as high as from 1/2 to 1.
        y.lo = 0.5;
    }
    let width = (W - LEFT - RIGHT) / n;
    let mut out = String::from("<figure>");
    open(&mut out, "bars", label);
    // The x axis: bucket labels, a few of them.
    let x = Scale {
        lo: 0.0,
        hi: n,
        log: false,
        from: LEFT,
        to: W - RIGHT,
    };
    let none = Axis {
        label: "",
        log: false,
        format: |_| String::new(),
    };
    let no_ticks = Scale {
        lo: 1.0,
        hi: 0.0,
        ..x
    };
    axes(&mut out, &no_ticks, &none, &y, &ya);
    let every = (buckets.len() / 8).max(1);
    for (i, (name, count)) in buckets.iter().enumerate() {
        let px = x.at(i as f64);
        let top = y.at(*count as f64);
        if *count > 0 {
            let _ = write!(
                out,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\">\
                 <title>{}: {count}</title></rect>",
                px + 1.0,
                (width - 2.0).max(1.0),
                (H - BOTTOM - top).max(0.5),
                escape(name)
            );
        }
        if i % every == 0 {
            let _ = write!(
                out,
                "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                px + width / 2.0,
                H - BOTTOM + 17.0,
                escape(name)
            );
        }
    }
    let _ = write!(
        out,
        "<text class=\"axis label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">\
         duration (power-of-two buckets, lower bound; log scale)</text></svg></figure>",
        (LEFT + W - RIGHT) / 2.0,
        H - 4.0,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn scales_map_values_into_the_drawing() {
        let s = Scale::new([0.0, 93.0].into_iter(), false, 0.0, 100.0);
        assert_eq!(s.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(s.at(50.0), 50.0);
        let l = Scale::new([2e3, 5e6].into_iter(), true, 0.0, 100.0);
        assert_eq!((l.lo, l.hi), (1e3, 1e7));
        assert_eq!(l.at(1e5), 50.0);
    }

    #[test]
    fn charts_escape_their_text_and_title_each_dot() {
        let axis = Axis {
            label: "t",
            log: false,
            format: |v| format!("{v}"),
        };
        let svg = scatter(
            "slow <calls>",
            axis,
            axis,
            &[Dot {
                x: 1.0,
                y: 2.0,
                title: "m:f/1 <0.9.0>".into(),
            }],
            "slow-call",
        );
        assert!(svg.contains("aria-label=\"slow &lt;calls&gt;\""), "{svg}");
        assert_eq!(svg.matches("class=\"slow-call\"").count(), 1);
        assert!(svg.contains("<title>m:f/1 &lt;0.9.0&gt;</title>"));
    }
}
