//! Pairing timeline events into intervals: each stage's work on a partition (START → END)
//! and the waits between stages (e.g. GPU_QUEUE → GPU_START).
//!
//! Intervals are keyed by (phase, job, partition). The slot rides along (from the start
//! event, else the end): a partition holds one slot at a time, and keying on it would lose a
//! pair whose end event left the slot out.
//!
//! A log from real processes has holes: a process killed with SIGKILL never writes its END.
//! Such an interval is *interrupted*: it ends where the loss was noticed (the same work
//! started again, the supervisor returned the slot, the process's STAGE_EXIT, or the end of
//! the log) and counts in no duration or busy time, because when the work stopped is unknown.
//! A stage that gives a slot back itself (SLOT_RETURNED from that stage) *returned* it: that
//! work did occupy the stage until then, so it counts as busy time, but not as a duration.

use std::collections::{BTreeMap, HashMap, HashSet};

use cuzk_shm_layout::timeline::{names, TimelineEvent};
use serde::Serialize;

/// A stage of the pipeline, in the order a partition meets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Synthesis,
    HostPrep,
    Gpu,
    Epilogue,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::Synthesis,
        Stage::HostPrep,
        Stage::Gpu,
        Stage::Epilogue,
    ];

    /// The name used in the log's `stage` field and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Synthesis => "synthesis",
            Stage::HostPrep => "host-prep",
            Stage::Gpu => "gpu",
            Stage::Epilogue => "epilogue",
        }
    }

    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }

    fn start_event(self) -> &'static str {
        match self {
            Stage::Synthesis => names::SYNTH_START,
            Stage::HostPrep => names::PREP_START,
            Stage::Gpu => names::GPU_START,
            Stage::Epilogue => names::EPILOGUE_START,
        }
    }

    fn end_event(self) -> &'static str {
        match self {
            Stage::Synthesis => names::SYNTH_END,
            Stage::HostPrep => names::PREP_END,
            Stage::Gpu => names::GPU_END,
            Stage::Epilogue => names::EPILOGUE_END,
        }
    }
}

/// What an interval measures: a stage working, or a partition waiting for that stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "stage")]
pub enum Phase {
    Work(Stage),
    /// Waiting for the stage: synthesis from JOB_CLAIMED (a slot and a synthesis process),
    /// host-prep from SYNTH_END, gpu from GPU_QUEUE, epilogue from GPU_END.
    Wait(Stage),
}

impl Phase {
    pub fn label(self) -> String {
        match self {
            Phase::Work(s) => s.name().to_string(),
            Phase::Wait(s) => format!("wait for {}", s.name()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    Complete,
    /// The stage gave the slot back unfinished (SLOT_RETURNED from that stage).
    Returned,
    /// No end seen (process killed, or the log stops): ends where that was noticed.
    Interrupted,
}

/// One stage's work on one partition, or one wait.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    pub phase: Phase,
    pub job: Option<u64>,
    pub partition: Option<u32>,
    pub slot: Option<u32>,
    /// The process that did the work (the start event's pid).
    pub pid: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub ending: Ending,
}

impl Interval {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// Counts as busy time of its process: it ended, completed or returned.
    pub fn is_busy_time(&self) -> bool {
        self.ending != Ending::Interrupted
    }
}

/// A job from JOB_CLAIMED to JOB_DONE or JOB_FAILED.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRecord {
    pub job: u64,
    pub name: Option<String>,
    pub claimed_ns: u64,
    pub end_ns: Option<u64>,
    pub outcome: JobOutcome,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobOutcome {
    Done,
    Failed,
    /// Claimed again (supervisor restart) or still running when the log ends.
    Unfinished,
}

/// Everything the analysis needs, in log order.
#[derive(Debug, Default)]
pub struct Paired {
    pub intervals: Vec<Interval>,
    pub jobs: Vec<JobRecord>,
    /// First and last event of the log.
    pub first_ns: u64,
    pub last_ns: u64,
    /// Events per stage name and pid: (first, last) time, for counting processes.
    pub pid_lifetimes: BTreeMap<(String, u32), (u64, u64)>,
    /// END events with no START (the log began mid-run).
    pub orphan_ends: usize,
    /// A stage's END (or GPU_QUEUE) written after the next stage had already started on the
    /// partition: the stage emitted it after handing the slot on. No wait is counted then.
    pub out_of_order: usize,
    pub events: usize,
}

type Key = (Phase, Option<u64>, Option<u32>);

struct Open {
    slot: Option<u32>,
    pid: u32,
    start_ns: u64,
}

/// Pairs `events` (any order; sorted here by `mono_ns`, stable).
pub fn pair(events: &[TimelineEvent]) -> Paired {
    let mut events: Vec<&TimelineEvent> = events.iter().collect();
    events.sort_by_key(|e| e.mono_ns);
    let mut p = Paired {
        first_ns: span_of(&events).0,
        last_ns: span_of(&events).1,
        events: events.len(),
        ..Paired::default()
    };
    let mut open: HashMap<Key, Open> = HashMap::new();
    let mut jobs: HashMap<u64, usize> = HashMap::new(); // job id -> index in p.jobs (open)
    let mut synth_started: HashSet<(Option<u64>, Option<u32>)> = HashSet::new();
    // The latest START of each stage's work per partition.
    let mut started: HashMap<Key, u64> = HashMap::new();
    for e in events {
        let life = p
            .pid_lifetimes
            .entry((e.stage.clone(), e.pid))
            .or_insert((e.mono_ns, e.mono_ns));
        life.1 = e.mono_ns;
        let at = |phase| (phase, e.job, e.partition);
        let name = e.event.as_str();
        if let Some(stage) = Stage::ALL.into_iter().find(|s| s.start_event() == name) {
            // A second start of the same work: the first attempt was lost (process killed).
            close(
                &mut p,
                &mut open,
                at(Phase::Work(stage)),
                e,
                Ending::Interrupted,
            );
            if stage == Stage::Synthesis && synth_started.insert((e.job, e.partition)) {
                // The first synthesis of a partition waited from its job's claim (for a
                // slot and a synthesis process), not from a queue event.
                let claimed = e
                    .job
                    .and_then(|j| jobs.get(&j))
                    .map(|&i| p.jobs[i].claimed_ns);
                if let Some(t) = claimed {
                    open_at(&mut open, at(Phase::Wait(stage)), e, t);
                }
            }
            close(
                &mut p,
                &mut open,
                at(Phase::Wait(stage)),
                e,
                Ending::Complete,
            );
            open_at(&mut open, at(Phase::Work(stage)), e, e.mono_ns);
            started.insert(at(Phase::Work(stage)), e.mono_ns);
        } else if let Some(stage) = Stage::ALL.into_iter().find(|s| s.end_event() == name) {
            if !close(
                &mut p,
                &mut open,
                at(Phase::Work(stage)),
                e,
                Ending::Complete,
            ) {
                p.orphan_ends += 1;
            }
            // What the partition waits for next.
            let next = match stage {
                Stage::Synthesis => Some(Stage::HostPrep),
                Stage::HostPrep => None, // GPU_QUEUE opens the GPU wait
                Stage::Gpu => Some(Stage::Epilogue),
                Stage::Epilogue => None,
            };
            if let Some(next) = next {
                open_wait(&mut p, &mut open, &started, e, stage, next);
            }
        } else {
            match name {
                names::GPU_QUEUE => {
                    open_wait(&mut p, &mut open, &started, e, Stage::HostPrep, Stage::Gpu)
                }
                names::SLOT_RETURNED => slot_returned(&mut p, &mut open, e),
                names::STAGE_EXIT if e.stage != "supervisor" => {
                    // The process says it is leaving: whatever it holds open is lost.
                    let keys: Vec<Key> = open
                        .iter()
                        .filter(|(k, o)| o.pid == e.pid && matches!(k.0, Phase::Work(_)))
                        .map(|(k, _)| *k)
                        .collect();
                    for k in keys {
                        close(&mut p, &mut open, k, e, Ending::Interrupted);
                    }
                }
                names::JOB_CLAIMED => {
                    if let Some(job) = e.job {
                        if let Some(i) = jobs.remove(&job) {
                            // Claimed again before it ended: a supervisor restart requeued it.
                            p.jobs[i].end_ns = Some(e.mono_ns);
                        }
                        jobs.insert(job, p.jobs.len());
                        p.jobs.push(JobRecord {
                            job,
                            name: e.job_name.clone(),
                            claimed_ns: e.mono_ns,
                            end_ns: None,
                            outcome: JobOutcome::Unfinished,
                            detail: None,
                        });
                    }
                }
                names::JOB_DONE | names::JOB_FAILED => {
                    if let Some(i) = e.job.and_then(|j| jobs.remove(&j)) {
                        let rec = &mut p.jobs[i];
                        rec.end_ns = Some(e.mono_ns);
                        rec.outcome = if name == names::JOB_DONE {
                            JobOutcome::Done
                        } else {
                            JobOutcome::Failed
                        };
                        rec.detail = e.detail.clone();
                        if rec.name.is_none() {
                            rec.name = e.job_name.clone();
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // What is still open when the log ends was cut off.
    let mut left: Vec<(Key, Open)> = open.drain().collect();
    left.sort_by_key(|(_, o)| o.start_ns);
    for (key, o) in left {
        p.intervals
            .push(interval(key, o, p.last_ns, Ending::Interrupted));
    }
    // Work noticed lost at a process's exit after the last job event ends with the span.
    for i in &mut p.intervals {
        i.end_ns = i.end_ns.min(p.last_ns.max(i.start_ns));
    }
    p.intervals.sort_by_key(|i| (i.start_ns, i.phase));
    p
}

/// The span the analysis covers: from the first to the last event about a job (claims,
/// stage work, hand-offs, verification), in time order. Process start-up and shut-down
/// (STAGE_START, STAGE_EXIT) lie outside it: a supervisor started long before the first job,
/// or stopped long after the last, would otherwise count as idle pipeline time. A log with
/// no job event spans all of its events.
pub fn span_of(sorted: &[&TimelineEvent]) -> (u64, u64) {
    let about_jobs = |e: &&&TimelineEvent| e.job.is_some();
    let first = sorted.iter().find(about_jobs).or(sorted.first());
    let last = sorted.iter().rev().find(about_jobs).or(sorted.last());
    (
        first.map_or(0, |e| e.mono_ns),
        last.map_or(0, |e| e.mono_ns),
    )
}

/// SLOT_RETURNED: from a stage, that stage gave its work back (returned); from the
/// supervisor (recovery after a crash), the work of whichever stage held it was lost.
/// Either way the partition is no longer waiting for anything.
fn slot_returned(p: &mut Paired, open: &mut HashMap<Key, Open>, e: &TimelineEvent) {
    let by_stage = Stage::from_name(&e.stage);
    for stage in Stage::ALL {
        let ending = match by_stage {
            Some(s) if s == stage => Ending::Returned,
            Some(_) => continue,
            None => Ending::Interrupted,
        };
        close(p, open, (Phase::Work(stage), e.job, e.partition), e, ending);
    }
    for stage in Stage::ALL {
        open.remove(&(Phase::Wait(stage), e.job, e.partition));
    }
}

/// Opens the partition's wait for `next` after `prev` finished, unless `next` already started
/// since `prev` did (the event was written after the hand-off: counted out of order).
fn open_wait(
    p: &mut Paired,
    open: &mut HashMap<Key, Open>,
    started: &HashMap<Key, u64>,
    e: &TimelineEvent,
    prev: Stage,
    next: Stage,
) {
    let since = started.get(&(Phase::Work(prev), e.job, e.partition));
    let next_started = started.get(&(Phase::Work(next), e.job, e.partition));
    match (since, next_started) {
        (Some(since), Some(next_at)) if next_at >= since => p.out_of_order += 1,
        _ => open_at(open, (Phase::Wait(next), e.job, e.partition), e, e.mono_ns),
    }
}

fn open_at(open: &mut HashMap<Key, Open>, key: Key, e: &TimelineEvent, start_ns: u64) {
    open.insert(
        key,
        Open {
            slot: e.slot,
            pid: e.pid,
            start_ns,
        },
    );
}

/// Closes the open interval under `key` at `e`; false when none was open.
fn close(
    p: &mut Paired,
    open: &mut HashMap<Key, Open>,
    key: Key,
    e: &TimelineEvent,
    ending: Ending,
) -> bool {
    match open.remove(&key) {
        Some(mut o) => {
            o.slot = o.slot.or(e.slot);
            p.intervals.push(interval(key, o, e.mono_ns, ending));
            true
        }
        None => false,
    }
}

fn interval(key: Key, o: Open, end_ns: u64, ending: Ending) -> Interval {
    Interval {
        phase: key.0,
        job: key.1,
        partition: key.2,
        slot: o.slot,
        pid: o.pid,
        start_ns: o.start_ns,
        end_ns: end_ns.max(o.start_ns),
        ending,
    }
}
