//! Duration statistics: an HdrHistogram for percentiles (auto-resizing, so
//! its memory follows the largest value seen, not the number recorded) and
//! power-of-two buckets for DTrace-style `quantize` pictures; and the same
//! percentiles for signed integers (user probes' arguments).

use hdrhistogram::Histogram;

/// Power-of-two buckets: bucket `i` counts values in `[2^(i-1), 2^i)`,
/// bucket 0 counts zeros.
pub type Log2Buckets = [u64; 65];

/// Durations in nanoseconds.
#[derive(Clone)]
pub struct Durations {
    hist: Histogram<u64>,
    log2: Box<Log2Buckets>,
    max: u64,
    total: u64,
}

impl Durations {
    /// Empty statistics with `sigfig` significant decimal digits (1..=5).
    pub fn new(sigfig: u8) -> Durations {
        let hist = Histogram::new(sigfig.clamp(1, 5)).expect("1..=5 significant figures is valid");
        Durations {
            hist,
            log2: Box::new([0; 65]),
            max: 0,
            total: 0,
        }
    }

    /// Adds one duration.
    pub fn record(&mut self, ns: u64) {
        // Auto-resizing: `record` grows the histogram; saturate only beyond
        // what it can ever hold.
        if self.hist.record(ns).is_err() {
            self.hist.saturating_record(ns);
        }
        self.log2[log2_bucket(ns)] += 1;
        self.max = self.max.max(ns);
        self.total = self.total.saturating_add(ns);
    }

    /// Adds the durations `other` recorded, as if each were recorded
    /// here (the same percentiles, maximum, total and buckets).
    pub fn add(&mut self, other: &Durations) {
        if other.hist.is_empty() {
            return;
        }
        if self.hist.add(&other.hist).is_err() {
            // Only when the sum overflows the counts; as `record` then.
            for v in other.hist.iter_recorded() {
                self.hist
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        for (b, o) in self.log2.iter_mut().zip(other.log2.iter()) {
            *b += o;
        }
        self.max = self.max.max(other.max);
        self.total = self.total.saturating_add(other.total);
    }

    /// How many durations were recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The value at quantile `q` (0..=1), 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(q).min(self.max)
        }
    }

    /// The largest duration (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The sum of all durations (exact, saturating).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Power-of-two buckets.
    pub fn log2(&self) -> &Log2Buckets {
        &self.log2
    }
}

/// Signed integers: exact count, min and max; percentiles from two
/// HdrHistograms (values >= 0, and the magnitudes of negative values) with
/// 2 significant digits: exact below 256, within 1% above. A series of
/// zeros (a probe's integer that was never given) allocates nothing.
#[derive(Clone, Default)]
pub struct Ints {
    count: u64,
    min: i64,
    max: i64,
    /// Zeros recorded before the first histogram was needed.
    zeros: u64,
    non_negative: Option<Box<Histogram<u64>>>,
    negative: Option<Box<Histogram<u64>>>,
}

impl Ints {
    /// Adds one value.
    pub fn record(&mut self, v: i64) {
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        }
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if v == 0 && self.non_negative.is_none() {
            self.zeros += 1;
            return;
        }
        let (side, magnitude) = match v {
            0.. => (&mut self.non_negative, v as u64),
            _ => (&mut self.negative, v.unsigned_abs()),
        };
        let h = side.get_or_insert_with(new_int_histogram);
        // HdrHistogram tracks up to 2^63 - 1: |i64::MIN| is recorded as that.
        if h.record(magnitude).is_err() {
            h.saturating_record(magnitude.min(u64::MAX / 2));
        }
        if self.zeros > 0 {
            if let Some(h) = &mut self.non_negative {
                h.saturating_record_n(0, std::mem::take(&mut self.zeros));
            }
        }
    }

    /// How many values were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest value (exact), 0 when empty.
    pub fn min(&self) -> i64 {
        self.min
    }

    /// The largest value (exact), 0 when empty.
    pub fn max(&self) -> i64 {
        self.max
    }

    /// Whether any value was other than 0.
    pub fn any_non_zero(&self) -> bool {
        self.min != 0 || self.max != 0
    }

    /// The value at quantile `q` (0..=1): the `ceil(q * count)`-th
    /// smallest, as HdrHistogram ranks; 0 when empty.
    pub fn quantile(&self, q: f64) -> i64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let negatives = self.negative.as_ref().map_or(0, |h| h.len());
        let value = if rank <= negatives {
            // The rank-th smallest negative has the (negatives - rank + 1)-th
            // smallest magnitude.
            let h = self.negative.as_deref().expect("negatives were recorded");
            -i128::from(magnitude_at_rank(h, negatives - rank + 1))
        } else {
            self.non_negative
                .as_deref()
                .map_or(0, |h| i128::from(magnitude_at_rank(h, rank - negatives)))
        };
        // A bucket's highest value may pass the exact extremes.
        value.clamp(i128::from(self.min), i128::from(self.max)) as i64
    }
}

fn new_int_histogram() -> Box<Histogram<u64>> {
    Box::new(Histogram::new(2).expect("2 significant figures is valid"))
}

/// The `rank`-th smallest value (1-based) a histogram holds.
fn magnitude_at_rank(h: &Histogram<u64>, rank: u64) -> u64 {
    let mut seen = 0;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= rank {
            return h.highest_equivalent(v.value_iterated_to());
        }
    }
    h.max()
}

/// The power-of-two bucket of `ns`: 0 for 0, else 1 + floor(log2 ns).
pub fn log2_bucket(ns: u64) -> usize {
    (u64::BITS - ns.leading_zeros()) as usize
}

/// The smallest value bucket `i` holds.
pub fn log2_bucket_floor(i: usize) -> u64 {
    if i == 0 {
        0
    } else {
        1u64 << (i - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Durations added from another set (of a larger range, and into an
    /// empty one) give what recording each of them gives.
    #[test]
    fn added_as_if_recorded() {
        let values = |from: u64, n: u64| (0..n).map(move |i| from + i * i * 7919 % 1_000_003);
        let mut whole = Durations::new(2);
        let mut parts = Durations::new(2);
        let mut empty = Durations::new(2);
        for (from, n) in [(10, 300), (5_000_000, 200), (3, 50)] {
            let mut part = Durations::new(2);
            values(from, n).for_each(|v| {
                whole.record(v);
                part.record(v);
            });
            parts.add(&part);
            if from == 10 {
                empty.add(&part);
                assert_eq!(empty.quantile(0.99), part.quantile(0.99));
            }
        }
        parts.add(&Durations::new(2));
        assert_eq!(parts.count(), whole.count());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(parts.quantile(q), whole.quantile(q), "{q}");
        }
        assert_eq!((parts.max(), parts.total()), (whole.max(), whole.total()));
        assert_eq!(parts.log2(), whole.log2());
    }

    #[test]
    fn percentiles_and_buckets() {
        let mut d = Durations::new(3);
        for ns in 1..=1000u64 {
            d.record(ns * 1000);
        }
        assert_eq!(d.count(), 1000);
        assert_eq!(d.max(), 1_000_000);
        let p50 = d.quantile(0.5);
        assert!((499_000..=501_000).contains(&p50), "{p50}");
        assert_eq!(d.log2().iter().sum::<u64>(), 1000);
        assert_eq!(log2_bucket(0), 0);
        assert_eq!(log2_bucket(1), 1);
        assert_eq!(log2_bucket(1024), 11);
        assert_eq!(log2_bucket_floor(11), 1024);
    }

    #[test]
    fn signed_integers_rank_across_zero() {
        let mut ints = Ints::default();
        for v in -50..=49i64 {
            ints.record(v);
        }
        assert_eq!((ints.count(), ints.min(), ints.max()), (100, -50, 49));
        assert_eq!(ints.quantile(0.0), -50);
        assert_eq!(ints.quantile(0.01), -50);
        assert_eq!(ints.quantile(0.5), -1);
        assert_eq!(ints.quantile(0.51), 0);
        assert_eq!(ints.quantile(0.99), 48);
        assert_eq!(ints.quantile(1.0), 49);
    }

    #[test]
    fn zeros_before_the_first_value_count() {
        let mut ints = Ints::default();
        assert!(!ints.any_non_zero());
        for _ in 0..3 {
            ints.record(0);
        }
        assert!(ints.non_negative.is_none());
        assert_eq!(ints.quantile(0.5), 0);
        ints.record(7);
        assert!(ints.any_non_zero());
        assert_eq!((ints.quantile(0.75), ints.quantile(1.0)), (0, 7));
        let mut large = Ints::default();
        large.record(i64::MIN);
        large.record(i64::MAX);
        assert_eq!(
            (large.quantile(0.5), large.quantile(1.0)),
            (i64::MIN, i64::MAX)
        );
        let mut spread = Ints::default();
        for v in [1_000_000i64; 10] {
            spread.record(v);
        }
        spread.record(1_010_000);
        // Within 1% above 256, and never past the exact max.
        assert!((spread.quantile(0.5) - 1_000_000).abs() <= 10_000);
    }
}
