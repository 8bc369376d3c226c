//! Duration statistics: an HdrHistogram for percentiles (auto-resizing, so
//! its memory follows the largest value seen, not the number recorded) and
//! power-of-two buckets for DTrace-style `quantize` pictures.

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
}
