//! Per-job wall time (JOB_CLAIMED → JOB_DONE / JOB_FAILED) and throughput.

use std::collections::BTreeSet;

use serde::Serialize;

use super::pairing::{JobOutcome, Paired};
use super::stats::{ns_to_ms, summarize, Summary};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobStats {
    pub job: u64,
    pub name: Option<String>,
    pub outcome: JobOutcome,
    /// Seconds from the first event of the log to the claim.
    pub claimed_s: f64,
    /// Claim to done/failed; `None` while unfinished.
    pub wall_ms: Option<f64>,
    /// Distinct partitions with any stage event.
    pub partitions: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    pub done: usize,
    pub failed: usize,
    pub unfinished: usize,
    /// First to last event of the log.
    pub span_s: f64,
    /// Done jobs over the whole span (fill and drain included: what a batch delivers).
    pub proofs_per_min: f64,
    pub s_per_proof: Option<f64>,
    /// Between the first and the last JOB_DONE: (done − 1) / that time. The steady rate
    /// once the pipeline is full; needs two done jobs.
    pub steady_proofs_per_min: Option<f64>,
    /// From the first event of the log (the stages' start, for a log a `cuzk run` began)
    /// to the first JOB_DONE: how long a batch waits for its first proof, which a start's
    /// set-up (parameters loaded, circuits recorded, bases uploaded) lengthens.
    pub first_proof_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobsSummary {
    pub jobs: Vec<JobStats>,
    /// Wall time of done jobs.
    pub wall: Option<Summary>,
    pub throughput: Throughput,
}

pub fn jobs(p: &Paired) -> JobsSummary {
    let stats: Vec<JobStats> = p
        .jobs
        .iter()
        .map(|j| {
            let partitions: BTreeSet<u32> = p
                .intervals
                .iter()
                .filter(|i| i.job == Some(j.job))
                .filter_map(|i| i.partition)
                .collect();
            JobStats {
                job: j.job,
                name: j.name.clone(),
                outcome: j.outcome,
                claimed_s: (j.claimed_ns - p.first_ns) as f64 / 1e9,
                wall_ms: match j.outcome {
                    JobOutcome::Unfinished => None,
                    _ => j.end_ns.map(|end| ns_to_ms(end - j.claimed_ns)),
                },
                partitions: partitions.len(),
            }
        })
        .collect();
    let count = |o| stats.iter().filter(|j| j.outcome == o).count();
    let done = count(JobOutcome::Done);
    let walls: Vec<f64> = stats
        .iter()
        .filter(|j| j.outcome == JobOutcome::Done)
        .filter_map(|j| j.wall_ms)
        .collect();
    let span_s = (p.last_ns - p.first_ns) as f64 / 1e9;
    let mut done_at: Vec<u64> = p
        .jobs
        .iter()
        .filter(|j| j.outcome == JobOutcome::Done)
        .filter_map(|j| j.end_ns)
        .collect();
    done_at.sort_unstable();
    let steady = match (done_at.first(), done_at.last()) {
        (Some(a), Some(b)) if done >= 2 && b > a => {
            Some((done - 1) as f64 / ((b - a) as f64 / 1e9) * 60.0)
        }
        _ => None,
    };
    JobsSummary {
        throughput: Throughput {
            done,
            failed: count(JobOutcome::Failed),
            unfinished: count(JobOutcome::Unfinished),
            span_s,
            proofs_per_min: if span_s > 0.0 {
                done as f64 / span_s * 60.0
            } else {
                0.0
            },
            s_per_proof: (done > 0).then(|| span_s / done as f64),
            steady_proofs_per_min: steady,
            first_proof_s: done_at.first().map(|a| (a - p.first_ns) as f64 / 1e9),
        },
        wall: summarize(&walls),
        jobs: stats,
    }
}
