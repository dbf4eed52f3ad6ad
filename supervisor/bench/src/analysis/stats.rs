//! Percentiles of durations.

use serde::Serialize;

/// Count and percentiles of a set of durations, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub count: usize,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    pub total_ms: f64,
}

/// The nearest-rank percentile of sorted values: the smallest value with at least `p` %
/// of the values at or below it (always one of the values, never an interpolation, so a
/// reported p50 can be found in the log).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "percentile of nothing");
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `None` for no values.
pub fn summarize(values_ms: &[f64]) -> Option<Summary> {
    if values_ms.is_empty() {
        return None;
    }
    let mut sorted = values_ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    let total_ms: f64 = sorted.iter().sum();
    Some(Summary {
        count: sorted.len(),
        p50_ms: percentile(&sorted, 50.0),
        p90_ms: percentile(&sorted, 90.0),
        p99_ms: percentile(&sorted, 99.0),
        max_ms: sorted[sorted.len() - 1],
        mean_ms: total_ms / sorted.len() as f64,
        total_ms,
    })
}

pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 5.0);
        assert_eq!(percentile(&v, 90.0), 9.0);
        assert_eq!(percentile(&v, 99.0), 10.0);
        assert_eq!(percentile(&[7.0], 50.0), 7.0);
        assert_eq!(percentile(&[7.0, 8.0], 0.0), 7.0);
    }

    #[test]
    fn summary_of_unsorted_values() {
        let s = summarize(&[30.0, 10.0, 20.0]).unwrap();
        assert_eq!(
            (s.count, s.p50_ms, s.max_ms, s.mean_ms, s.total_ms),
            (3, 20.0, 30.0, 20.0, 60.0)
        );
        assert!(summarize(&[]).is_none());
    }
}
