//! The batch summary: wall times, throughput, failures.

use serde::Serialize;

use super::{JobResult, Outcome};

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MinAvgMax {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

impl MinAvgMax {
    pub fn of(values: &[f64]) -> Option<MinAvgMax> {
        if values.is_empty() {
            return None;
        }
        Some(MinAvgMax {
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            avg: values.iter().sum::<f64>() / values.len() as f64,
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// Times in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchSummary {
    pub count: usize,
    pub done: usize,
    pub failed: usize,
    pub timed_out: usize,
    pub concurrency: usize,
    /// Most jobs the batch had in flight at once (= concurrency unless count is smaller).
    pub max_in_flight: usize,
    /// First submission to the last job seen finished (done, failed, or given up at the
    /// timeout).
    pub elapsed_s: f64,
    /// Of done jobs: submission to proof.
    pub wall_s: Option<MinAvgMax>,
    pub queue_s: Option<MinAvgMax>,
    pub proving_s: Option<MinAvgMax>,
    /// done / elapsed.
    pub proofs_per_min: f64,
    /// elapsed / done: the time each proof costs with this concurrency.
    pub s_per_proof: Option<f64>,
}

pub fn summarize(jobs: &[JobResult], concurrency: usize, max_in_flight: usize) -> BatchSummary {
    let count = |o| jobs.iter().filter(|j| j.outcome == o).count();
    let done: Vec<&JobResult> = jobs.iter().filter(|j| j.outcome == Outcome::Done).collect();
    let of = |f: fn(&JobResult) -> Option<f64>| {
        MinAvgMax::of(&done.iter().filter_map(|j| f(j)).collect::<Vec<_>>())
    };
    let elapsed_s = jobs
        .iter()
        .filter_map(|j| Some(j.submitted_s? + j.wall_s))
        .fold(0.0, f64::max);
    BatchSummary {
        count: jobs.len(),
        done: done.len(),
        failed: count(Outcome::Failed),
        timed_out: count(Outcome::TimedOut),
        concurrency,
        max_in_flight,
        elapsed_s,
        wall_s: of(|j| Some(j.wall_s)),
        queue_s: of(|j| j.queue_s),
        proving_s: of(|j| j.proving_s),
        proofs_per_min: if elapsed_s > 0.0 {
            done.len() as f64 / elapsed_s * 60.0
        } else {
            0.0
        },
        s_per_proof: (!done.is_empty()).then(|| elapsed_s / done.len() as f64),
    }
}
