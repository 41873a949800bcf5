//! A fixed-memory, mergeable histogram of `u64` values (latencies in ns,
//! buffer sizes in bytes) answering quantiles within a known relative
//! error.
//!
//! The first [`EXACT_VALUES`] values are kept as they are, so small groups
//! get exact quantiles. Past that, values go to log-linear buckets: every
//! power of two is split into [`SUB_BUCKETS`] equal buckets, so a bucket is
//! never wider than 1/128 of its lower bound; values below 256 have
//! buckets of width 1. Each bucket keeps its count and the sum of its
//! values' offsets from the bucket start, and a quantile answers with the
//! mean of the bucket holding the exact value: both lie in the bucket, so
//! the answer is within **1/128 (0.79 %)** of the exact one, and exact
//! whenever the bucket holds a single distinct value (the common case for
//! transfer sizes: 138, 4096, 16384). Buckets are allocated one power of
//! two at a time (2 KiB each) as values reach them: latencies spanning
//! 100 ns to 10 s use at most 54 KiB, whatever the number of values.
//!
//! Quantiles follow the nearest-rank definition that SQL's
//! `percentile_disc` and DuckDB's `quantile_disc` use: the smallest value
//! whose cumulative share reaches `q`.

use serde::Serialize;

/// log2 of [`SUB_BUCKETS`].
const SUB_BITS: u32 = 7;
/// Buckets per power of two.
pub const SUB_BUCKETS: usize = 1 << SUB_BITS;
/// Values kept exactly before the histogram switches to buckets.
pub const EXACT_VALUES: usize = 64;
/// Number of bucket rows: row 0 holds 0..128 (width 1), row `r` ≥ 1 holds
/// `[128 << (r-1), 128 << r)` in buckets of width `1 << (r-1)`.
const ROWS: usize = 64 - SUB_BITS as usize + 1;

/// Bound on the relative error of a bucketed quantile (1/128).
pub const RELATIVE_ERROR: f64 = 1.0 / SUB_BUCKETS as f64;

/// One power of two: per bucket, the count and the sum of the values'
/// offsets from the bucket start (`u64::MAX` once it would overflow; the
/// bucket then answers with its midpoint).
#[derive(Debug, Clone)]
struct Row {
    count: [u64; SUB_BUCKETS],
    offsets: [u64; SUB_BUCKETS],
}

impl Row {
    fn new() -> Box<Row> {
        Box::new(Row {
            count: [0; SUB_BUCKETS],
            offsets: [0; SUB_BUCKETS],
        })
    }
}

/// A histogram of `u64` values; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
    /// The values while there are at most [`EXACT_VALUES`]; emptied when
    /// the buckets take over.
    exact: Vec<u64>,
    /// Bucket rows, allocated when first reached; empty in exact mode.
    rows: Vec<Option<Box<Row>>>,
}

/// Row and column of the bucket holding `v`.
#[inline]
fn bucket_of(v: u64) -> (usize, usize) {
    if v < SUB_BUCKETS as u64 {
        return (0, v as usize);
    }
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    let row = shift as usize + 1;
    let col = ((v >> shift) as usize) - SUB_BUCKETS;
    (row, col)
}

/// Lower bound and width of bucket (`row`, `col`).
fn bucket_range(row: usize, col: usize) -> (u64, u64) {
    if row == 0 {
        return (col as u64, 1);
    }
    let shift = row as u32 - 1;
    (((SUB_BUCKETS + col) as u64) << shift, 1u64 << shift)
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram::default()
    }

    /// Adds one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        self.sum += u128::from(v);
        if self.rows.is_empty() {
            if self.exact.len() < EXACT_VALUES {
                self.exact.push(v);
                return;
            }
            self.switch_to_buckets();
        }
        self.bucket_add(v);
    }

    #[inline]
    fn bucket_add(&mut self, v: u64) {
        let (row, col) = bucket_of(v);
        let r = self.rows[row].get_or_insert_with(Row::new);
        r.count[col] += 1;
        r.offsets[col] = r.offsets[col].saturating_add(v - bucket_range(row, col).0);
    }

    /// Moves the exact values into buckets.
    fn switch_to_buckets(&mut self) {
        self.rows = vec![None; ROWS];
        for v in std::mem::take(&mut self.exact) {
            self.bucket_add(v);
        }
    }

    /// Adds every value of `other`: merging histograms built on parts of
    /// the data gives the histogram of the whole.
    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        if other.rows.is_empty() {
            for &v in &other.exact {
                self.add(v);
            }
            return;
        }
        let (count, sum, min, max) = (other.count, other.sum, other.min, other.max);
        if self.rows.is_empty() {
            self.switch_to_buckets();
        }
        for (row, r) in other.rows.iter().enumerate() {
            let Some(r) = r else { continue };
            let mine = self.rows[row].get_or_insert_with(Row::new);
            for col in 0..SUB_BUCKETS {
                mine.count[col] += r.count[col];
                mine.offsets[col] = mine.offsets[col].saturating_add(r.offsets[col]);
            }
        }
        if self.count == 0 {
            self.min = min;
            self.max = max;
        } else {
            self.min = self.min.min(min);
            self.max = self.max.max(max);
        }
        self.count += count;
        self.sum += sum;
    }

    /// Smallest value (exact), or `None` when empty.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest value (exact), or `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// True while every value is kept exactly (quantiles are exact).
    pub fn is_exact(&self) -> bool {
        self.rows.is_empty()
    }

    /// The `q` quantile (0 ≤ q ≤ 1), nearest rank: exact while
    /// [`Histogram::is_exact`], within [`RELATIVE_ERROR`] otherwise.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        // The same float arithmetic as percentile_disc: ceil(q * n) - 1.
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count) - 1;
        self.at_rank(rank)
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The value of 0-based rank `rank` in ascending order (clamped to
    /// the last), with the accuracy of [`Histogram::quantile`]: for
    /// distributions assembled from several histograms (signed values
    /// kept as two), where a rank, not a share, is what is known.
    pub fn at_rank(&self, rank: u64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = rank.min(self.count - 1);
        if self.rows.is_empty() {
            let mut v = self.exact.clone();
            let (_, nth, _) = v.select_nth_unstable(rank as usize);
            return Some(*nth);
        }
        let mut seen = 0u64;
        for (row, r) in self.rows.iter().enumerate() {
            let Some(r) = r else { continue };
            for (col, &n) in r.count.iter().enumerate() {
                seen += n;
                if seen > rank {
                    let (low, width) = bucket_range(row, col);
                    let offset = match r.offsets[col] {
                        u64::MAX => width / 2,
                        sum => ((u128::from(sum) + u128::from(n / 2)) / u128::from(n)) as u64,
                    };
                    return Some((low + offset).clamp(self.min, self.max));
                }
            }
        }
        Some(self.max)
    }

    /// Counts per power-of-two bin: `(low, high, count)` for every
    /// non-empty bin `[low, high]` (0, 1, 2–3, 4–7, ...), in order.
    pub fn log2_bins(&self) -> Vec<(u64, u64, u64)> {
        let mut bins = [0u64; 65];
        let bin = |v: u64| {
            if v == 0 {
                0
            } else {
                64 - v.leading_zeros() as usize
            }
        };
        if self.rows.is_empty() {
            for &v in &self.exact {
                bins[bin(v)] += 1;
            }
        } else {
            for (row, r) in self.rows.iter().enumerate() {
                let Some(r) = r else { continue };
                for (col, &n) in r.count.iter().enumerate() {
                    if n > 0 {
                        bins[bin(bucket_range(row, col).0)] += n;
                    }
                }
            }
        }
        bins.iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| match i {
                0 => (0, 0, n),
                i => (1u64 << (i - 1), ((1u128 << i) - 1) as u64, n),
            })
            .collect()
    }

    /// The usual summary: count, min, p50, p90, p99, p99.9, max, mean.
    pub fn summary(&self) -> Summary {
        Summary {
            count: self.count,
            min: self.min(),
            p50: self.quantile(0.5),
            p90: self.quantile(0.9),
            p99: self.quantile(0.99),
            p99_9: self.quantile(0.999),
            max: self.max(),
            mean: (self.count > 0).then(|| self.sum as f64 / self.count as f64),
            exact: self.is_exact(),
        }
    }
}

/// The quantiles `stats` reports for one distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub count: u64,
    /// Smallest value (exact).
    pub min: Option<u64>,
    /// Median.
    pub p50: Option<u64>,
    /// 90th percentile.
    pub p90: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// 99.9th percentile.
    pub p99_9: Option<u64>,
    /// Largest value (exact).
    pub max: Option<u64>,
    /// Arithmetic mean (exact).
    pub mean: Option<f64>,
    /// True when the quantiles are exact; otherwise each is within 1/128
    /// of the exact nearest-rank value (and exact when its bucket holds
    /// one distinct value).
    pub exact: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest-rank quantile of sorted values, as percentile_disc.
    fn exact_q(sorted: &[u64], q: f64) -> u64 {
        let n = sorted.len() as u64;
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n) - 1;
        sorted[rank as usize]
    }

    #[test]
    fn buckets_tile_the_range() {
        for v in [0, 1, 63, 64, 65, 127, 128, 129, 138, 16384, 16511, u64::MAX] {
            let (row, col) = bucket_of(v);
            let (low, width) = bucket_range(row, col);
            assert!(low <= v && v - low < width, "{v}: [{low}, +{width})");
            assert!(width == 1 || width as f64 <= low as f64 / SUB_BUCKETS as f64);
        }
        assert_eq!(bucket_of(138), (1, 10), "138 lies in the width-1 row");
        assert_eq!(
            bucket_range(bucket_of(16384).0, bucket_of(16384).1),
            (16384, 128)
        );
    }

    #[test]
    fn small_sets_are_exact_and_large_ones_within_the_bound() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [1usize, 2, 5, 64, 65, 1000, 100_000] {
            let values: Vec<u64> = (0..n).map(|_| 100 + next() % 10_000_000).collect();
            let mut h = Histogram::new();
            values.iter().for_each(|&v| h.add(v));
            let mut sorted = values.clone();
            sorted.sort_unstable();
            for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
                let want = exact_q(&sorted, q);
                let got = h.quantile(q).unwrap();
                if n <= EXACT_VALUES {
                    assert_eq!(got, want, "n={n} q={q}");
                } else {
                    let err = (got as f64 - want as f64).abs() / want as f64;
                    assert!(err <= RELATIVE_ERROR, "n={n} q={q}: {got} vs {want}");
                }
            }
            assert_eq!(h.min(), sorted.first().copied());
            assert_eq!(h.max(), sorted.last().copied());
        }
    }

    #[test]
    fn single_valued_buckets_answer_exactly() {
        let mut h = Histogram::new();
        for i in 0..10_000u64 {
            h.add(if i % 10 == 0 { 4096 } else { 16384 });
        }
        assert!(!h.is_exact());
        assert_eq!(h.quantile(0.05), Some(4096));
        assert_eq!(h.quantile(0.5), Some(16384));
    }

    #[test]
    fn merging_equals_adding_everything() {
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in 0..5000u64 {
            let x = v * v % 7919 + 1;
            if v % 3 == 0 { &mut a } else { &mut b }.add(x);
            all.add(x);
        }
        let mut small = Histogram::new();
        small.add(42);
        a.merge(&b);
        a.merge(&small);
        all.add(42);
        assert_eq!(a.summary(), all.summary());
        assert_eq!(a.log2_bins(), all.log2_bins());
    }

    #[test]
    fn log2_bins_group_by_power_of_two() {
        let mut h = Histogram::new();
        for v in [0, 1, 2, 3, 138, 138, 200] {
            h.add(v);
        }
        assert_eq!(
            h.log2_bins(),
            vec![(0, 0, 1), (1, 1, 1), (2, 3, 2), (128, 255, 3)]
        );
    }
}
