//! Which stage bounds throughput.
//!
//! The rule: each stage's *utilisation* is its busy time (per process, the union of its
//! intervals; summed over processes) divided by (its process count × the span of the log).
//! The stage with the highest utilisation is the bottleneck: in a pipeline that runs
//! steadily every stage passes the same partitions, so the one whose processes are busiest
//! is the one that cannot go faster; adding a process there is what raises throughput.
//! When no stage is busy half the time the pipeline is starved (too few jobs in flight,
//! too few slots, or the input arrives slowly) and the stage named is only the busiest.
//!
//! The capacity of a stage (partitions per minute at its mean duration with every process
//! busy) is reported beside it as a second view; over a long run the two agree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::busy::{busy_spans, total_ns};
use super::pairing::{Ending, Interval, Paired, Phase, Stage};
use super::stats::ns_to_ms;

/// Below this utilisation the busiest stage is not called a bound.
pub const STARVED_BELOW: f64 = 0.5;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageLoad {
    pub stage: Stage,
    /// Processes of the stage (peak of overlapping process lifetimes in the log, or the
    /// count given on the command line).
    pub processes: usize,
    pub busy_ms: f64,
    /// busy / (processes × span).
    pub utilisation: f64,
    /// Completed partitions and their mean duration.
    pub completed: usize,
    pub mean_ms: Option<f64>,
    /// processes × 60 000 / mean_ms: partitions per minute the stage could pass.
    pub capacity_per_min: Option<f64>,
    /// Start-up inside the work: over the processes, how much each one's first completed
    /// partition exceeded the stage's median, where it took more than
    /// [`STARTUP_FACTOR`] times the median (parameters loaded, kernels compiled on first use).
    pub startup_ms: f64,
    /// (busy − start-up) / (processes × span): the utilisation a longer run tends to.
    pub utilisation_without_startup: f64,
}

/// A process's first partition this many times the stage's median counts as start-up.
pub const STARTUP_FACTOR: f64 = 3.0;

/// See [`StageLoad::startup_ms`]; needs three completed partitions for a median to mean much.
fn startup_ns(work: &[&Interval], pids: &[u32]) -> u64 {
    let mut done: Vec<u64> = work
        .iter()
        .filter(|i| i.ending == Ending::Complete)
        .map(|i| i.duration_ns())
        .collect();
    if done.len() < 3 {
        return 0;
    }
    done.sort_unstable();
    let median = done[(done.len() - 1) / 2];
    pids.iter()
        .filter_map(|&pid| {
            let first = work
                .iter()
                .filter(|i| i.pid == pid && i.ending == Ending::Complete)
                .min_by_key(|i| i.start_ns)?;
            let d = first.duration_ns();
            (d as f64 > STARTUP_FACTOR * median as f64).then(|| d - median)
        })
        .sum()
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bottleneck {
    /// The stage with the highest utilisation; `None` when no stage did any work.
    pub stage: Option<Stage>,
    pub utilisation: f64,
    /// No stage reached [`STARVED_BELOW`]: the pipeline is fed too slowly.
    pub starved: bool,
    /// The stage with the lowest capacity (the second view), for comparison.
    pub lowest_capacity: Option<Stage>,
    pub loads: Vec<StageLoad>,
}

/// Loads of the stages that appear in the log; `given` overrides process counts.
pub fn loads(p: &Paired, given: &BTreeMap<Stage, usize>) -> Vec<StageLoad> {
    let span = p.last_ns.saturating_sub(p.first_ns).max(1);
    Stage::ALL
        .into_iter()
        .filter_map(|stage| {
            let work: Vec<_> = p
                .intervals
                .iter()
                .filter(|i| i.phase == Phase::Work(stage))
                .collect();
            if work.is_empty() {
                return None;
            }
            let mut pids: Vec<u32> = work.iter().map(|i| i.pid).collect();
            pids.sort_unstable();
            pids.dedup();
            let busy: u64 = pids
                .iter()
                .map(|&pid| total_ns(&busy_spans(&p.intervals, stage, pid)))
                .sum();
            let processes = given
                .get(&stage)
                .copied()
                .unwrap_or_else(|| peak_processes(p, stage))
                .max(1);
            let done: Vec<u64> = work
                .iter()
                .filter(|i| i.ending == Ending::Complete)
                .map(|i| i.duration_ns())
                .collect();
            let mean_ms =
                (!done.is_empty()).then(|| ns_to_ms(done.iter().sum::<u64>()) / done.len() as f64);
            let startup = startup_ns(&work, &pids);
            let capacity = processes as f64 * span as f64;
            Some(StageLoad {
                startup_ms: ns_to_ms(startup),
                utilisation_without_startup: busy.saturating_sub(startup) as f64 / capacity,
                stage,
                processes,
                busy_ms: ns_to_ms(busy),
                utilisation: busy as f64 / (processes as f64 * span as f64),
                completed: done.len(),
                mean_ms,
                capacity_per_min: mean_ms
                    .filter(|&m| m > 0.0)
                    .map(|m| processes as f64 * 60_000.0 / m),
            })
        })
        .collect()
}

/// The most processes of `stage` alive at once, a process living from its first to its last
/// event: a restarted process replaces the one that died instead of adding to the count.
fn peak_processes(p: &Paired, stage: Stage) -> usize {
    let mut changes: Vec<(u64, i32)> = p
        .pid_lifetimes
        .iter()
        .filter(|((name, _), _)| name == stage.name())
        .flat_map(|(_, &(first, last))| [(first, 1), (last, -1)])
        .collect();
    // At equal times the start comes first, so a process with a single event counts.
    changes.sort_by_key(|&(t, d)| (t, -d));
    let (mut alive, mut peak) = (0, 0);
    for (_, d) in changes {
        alive += d;
        peak = peak.max(alive);
    }
    peak as usize
}

pub fn decide(loads: Vec<StageLoad>) -> Bottleneck {
    let busiest = loads
        .iter()
        .max_by(|a, b| a.utilisation.total_cmp(&b.utilisation));
    let lowest_capacity = loads
        .iter()
        .filter_map(|l| l.capacity_per_min.map(|c| (l.stage, c)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(s, _)| s);
    let utilisation = busiest.map_or(0.0, |l| l.utilisation);
    Bottleneck {
        stage: busiest.map(|l| l.stage),
        utilisation,
        starved: utilisation < STARVED_BELOW,
        lowest_capacity,
        loads,
    }
}
