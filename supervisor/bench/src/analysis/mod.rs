//! `cuzk-bench timeline`: what a timeline log says about the pipeline.
//!
//! [`pairing`] turns events into intervals (stage work and waits per partition); the other
//! modules each compute one view of them. [`analyze`] runs them all.
//!
//! Units: durations in milliseconds (`*_ms`), points in time in seconds from the first event
//! of the log (`*_s`).

pub mod bottleneck;
pub mod busy;
pub mod jobs;
pub mod occupancy;
pub mod pairing;
pub mod select;
pub mod stats;

use std::collections::BTreeMap;

use cuzk_shm_layout::timeline::TimelineEvent;
use serde::Serialize;

use bottleneck::Bottleneck;
use busy::GpuBusy;
use jobs::JobsSummary;
use occupancy::SlotOccupancy;
use pairing::{Ending, Paired, Phase, Stage};
use stats::{ns_to_ms, summarize, Summary};

/// What the command line can tell the analysis that the log may not.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Process count per stage (otherwise: the peak of overlapping process lifetimes).
    pub processes: BTreeMap<Stage, usize>,
    /// Slot count (otherwise: the slot numbers seen).
    pub slots: Option<usize>,
}

/// Durations of one phase (a stage's work or a wait) over all partitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseStats {
    pub phase: Phase,
    pub label: String,
    /// Of completed intervals only.
    pub durations: Option<Summary>,
    pub returned: usize,
    pub interrupted: usize,
}

/// One step of a stage (from an event's `steps_ms`, e.g. GPU_END's msm_h).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepStats {
    pub event: String,
    pub step: String,
    pub durations: Summary,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub events: usize,
    /// Lines that were not events (a torn last line after a crash).
    pub bad_lines: usize,
    /// END events with no START (the log began mid-run).
    pub orphan_ends: usize,
    /// Hand-off events written after the next stage started (see `Paired::out_of_order`).
    pub out_of_order: usize,
    pub span_s: f64,
    pub stages: Vec<PhaseStats>,
    pub waits: Vec<PhaseStats>,
    pub steps: Vec<StepStats>,
    pub gpus: Vec<GpuBusy>,
    pub slots: SlotOccupancy,
    pub jobs: JobsSummary,
    pub bottleneck: Bottleneck,
}

/// Analyses a log's events (any order). Returns the pairing too, for the waterfall.
pub fn analyze(events: &[TimelineEvent], bad_lines: usize, opts: &Options) -> (Analysis, Paired) {
    let mut sorted: Vec<&TimelineEvent> = events.iter().collect();
    sorted.sort_by_key(|e| e.mono_ns);
    let paired = pairing::pair(events);
    let phase_stats = |phase: Phase| {
        let of: Vec<_> = paired
            .intervals
            .iter()
            .filter(|i| i.phase == phase)
            .collect();
        let done: Vec<f64> = of
            .iter()
            .filter(|i| i.ending == Ending::Complete)
            .map(|i| ns_to_ms(i.duration_ns()))
            .collect();
        let count = |e| of.iter().filter(|i| i.ending == e).count();
        PhaseStats {
            phase,
            label: phase.label(),
            durations: summarize(&done),
            returned: count(Ending::Returned),
            interrupted: count(Ending::Interrupted),
        }
    };
    let present = |phase: Phase| paired.intervals.iter().any(|i| i.phase == phase);
    let stages = Stage::ALL
        .map(Phase::Work)
        .into_iter()
        .filter(|&p| present(p))
        .map(phase_stats)
        .collect();
    let waits = Stage::ALL
        .map(Phase::Wait)
        .into_iter()
        .filter(|&p| present(p))
        .map(phase_stats)
        .collect();
    let analysis = Analysis {
        events: events.len(),
        bad_lines,
        orphan_ends: paired.orphan_ends,
        out_of_order: paired.out_of_order,
        span_s: (paired.last_ns - paired.first_ns) as f64 / 1e9,
        stages,
        waits,
        steps: steps(&sorted),
        gpus: busy::gpu_busy(&paired.intervals, paired.first_ns, paired.last_ns),
        slots: occupancy::occupancy(&sorted, opts.slots),
        jobs: jobs::jobs(&paired),
        bottleneck: bottleneck::decide(bottleneck::loads(&paired, &opts.processes)),
    };
    (analysis, paired)
}

fn steps(events: &[&TimelineEvent]) -> Vec<StepStats> {
    let mut by_step: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for e in events {
        for (step, ms) in &e.steps_ms {
            by_step.entry((&e.event, step)).or_default().push(*ms);
        }
    }
    by_step
        .into_iter()
        .filter_map(|((event, step), values)| {
            Some(StepStats {
                event: event.to_string(),
                step: step.to_string(),
                durations: summarize(&values)?,
            })
        })
        .collect()
}
