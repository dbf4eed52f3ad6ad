//! Busy time: the union of a process's intervals, and the idle gaps between them.

use serde::Serialize;

use super::pairing::{Interval, Phase, Stage};
use super::stats::{ns_to_ms, summarize, Summary};

/// Merges `[start, end)` spans into disjoint ones, in time order (overlapping work of one
/// process, e.g. an upload beside a compute, is counted once).
pub fn union(mut spans: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    spans.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

pub fn total_ns(spans: &[(u64, u64)]) -> u64 {
    spans.iter().map(|(s, e)| e - s).sum()
}

/// Busy time of one process over `pid`'s intervals of `stage` that count as busy.
pub fn busy_spans(intervals: &[Interval], stage: Stage, pid: u32) -> Vec<(u64, u64)> {
    union(
        intervals
            .iter()
            .filter(|i| i.phase == Phase::Work(stage) && i.pid == pid && i.is_busy_time())
            .map(|i| (i.start_ns, i.end_ns))
            .collect(),
    )
}

/// One idle stretch of a GPU process between two pieces of work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gap {
    /// Seconds from the first event of the log.
    pub start_s: f64,
    pub length_ms: f64,
}

/// How busy one GPU process was over the whole log (first to last event).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuBusy {
    pub pid: u32,
    /// GPU_START → GPU_END intervals it completed.
    pub partitions: usize,
    pub busy_ms: f64,
    /// busy / span.
    pub busy_fraction: f64,
    /// From the first event of the log to this process's first GPU work (pipeline fill).
    pub lead_in_ms: f64,
    /// From its last GPU work to the last event (pipeline drain).
    pub tail_ms: f64,
    /// Idle stretches between its pieces of work (the GPU starved while work existed).
    pub gaps: Option<Summary>,
    /// The longest gaps, longest first (at most 5).
    pub largest_gaps: Vec<Gap>,
}

/// One entry per pid that did GPU work, ordered by pid.
pub fn gpu_busy(intervals: &[Interval], first_ns: u64, last_ns: u64) -> Vec<GpuBusy> {
    let mut pids: Vec<u32> = intervals
        .iter()
        .filter(|i| i.phase == Phase::Work(Stage::Gpu))
        .map(|i| i.pid)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    let span = last_ns.saturating_sub(first_ns).max(1);
    pids.into_iter()
        .map(|pid| {
            let spans = busy_spans(intervals, Stage::Gpu, pid);
            let partitions = intervals
                .iter()
                .filter(|i| i.phase == Phase::Work(Stage::Gpu) && i.pid == pid)
                .filter(|i| i.ending == super::pairing::Ending::Complete)
                .count();
            let mut gaps: Vec<Gap> = spans
                .windows(2)
                .map(|w| Gap {
                    start_s: (w[0].1 - first_ns) as f64 / 1e9,
                    length_ms: ns_to_ms(w[1].0 - w[0].1),
                })
                .collect();
            let lengths: Vec<f64> = gaps.iter().map(|g| g.length_ms).collect();
            gaps.sort_by(|a, b| b.length_ms.total_cmp(&a.length_ms));
            gaps.truncate(5);
            let busy = total_ns(&spans);
            GpuBusy {
                pid,
                partitions,
                busy_ms: ns_to_ms(busy),
                busy_fraction: busy as f64 / span as f64,
                lead_in_ms: spans.first().map_or(0.0, |s| ns_to_ms(s.0 - first_ns)),
                tail_ms: spans
                    .last()
                    .map_or(0.0, |s| ns_to_ms(last_ns.saturating_sub(s.1))),
                gaps: summarize(&lengths),
                largest_gaps: gaps,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlaps_and_touching_spans() {
        let u = union(vec![(5, 7), (0, 2), (1, 3), (3, 4), (10, 12)]);
        assert_eq!(u, vec![(0, 4), (5, 7), (10, 12)]);
        assert_eq!(total_ns(&u), 8);
    }
}
