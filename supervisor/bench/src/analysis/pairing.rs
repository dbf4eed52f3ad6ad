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

/// A stage of the pipeline, in the order a partition meets them (the same type the stage
/// processes use, so the log's names are one definition).
pub use cuzk_shm_layout::Stage;

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

impl JobOutcome {
    pub fn name(self) -> &'static str {
        match self {
            JobOutcome::Done => "done",
            JobOutcome::Failed => "failed",
            JobOutcome::Unfinished => "unfinished",
        }
    }
}

/// A gpu process readying its device for a job before the job's first partition
/// (`GPU_READIED`): the event ends it, its `total` step says when it began.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Readied {
    pub job: Option<u64>,
    pub pid: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// Everything the analysis needs, in log order.
#[derive(Debug, Default)]
pub struct Paired {
    pub intervals: Vec<Interval>,
    pub jobs: Vec<JobRecord>,
    /// The gpu processes' readyings (those whose event carries its total).
    pub readied: Vec<Readied>,
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
    let (first_ns, last_ns) = span_of(&events);
    let mut pairer = Pairer {
        p: Paired {
            first_ns,
            last_ns,
            events: events.len(),
            ..Paired::default()
        },
        open: HashMap::new(),
        jobs: HashMap::new(),
        synth_started: HashSet::new(),
        started: HashMap::new(),
    };
    for e in events {
        pairer.event(e);
    }
    pairer.finish()
}

/// The state of one pass over the log.
struct Pairer {
    p: Paired,
    open: HashMap<Key, Open>,
    /// Job id -> index in `p.jobs`, while the job is open.
    jobs: HashMap<u64, usize>,
    /// Partitions whose first synthesis has been seen.
    synth_started: HashSet<(Option<u64>, Option<u32>)>,
    /// The latest START of each stage's work per partition.
    started: HashMap<Key, u64>,
}

impl Pairer {
    fn event(&mut self, e: &TimelineEvent) {
        let life = self
            .p
            .pid_lifetimes
            .entry((e.stage.clone(), e.pid))
            .or_insert((e.mono_ns, e.mono_ns));
        life.1 = e.mono_ns;
        let name = e.event.as_str();
        if let Some(stage) = Stage::ALL.into_iter().find(|s| names::start_of(*s) == name) {
            self.start(stage, e);
        } else if let Some(stage) = Stage::ALL.into_iter().find(|s| names::end_of(*s) == name) {
            self.end(stage, e);
        } else {
            match name {
                names::GPU_QUEUE => self.open_wait(e, Stage::HostPrep, Stage::Gpu),
                names::SLOT_RETURNED => self.slot_returned(e),
                names::STAGE_EXIT if e.stage != "supervisor" => self.process_exit(e),
                names::JOB_CLAIMED => self.job_claimed(e),
                names::GPU_READIED => self.readied(e),
                names::JOB_DONE => self.job_ended(e, JobOutcome::Done),
                names::JOB_FAILED => self.job_ended(e, JobOutcome::Failed),
                _ => {}
            }
        }
    }

    fn start(&mut self, stage: Stage, e: &TimelineEvent) {
        let at = |phase| (phase, e.job, e.partition);
        // A second start of the same work: the first attempt was lost (process killed).
        self.close(at(Phase::Work(stage)), e, Ending::Interrupted);
        if stage == Stage::Synthesis && self.synth_started.insert((e.job, e.partition)) {
            // The first synthesis of a partition waited from its job's claim (for a slot
            // and a synthesis process), not from a queue event.
            let claimed = e
                .job
                .and_then(|j| self.jobs.get(&j))
                .map(|&i| self.p.jobs[i].claimed_ns);
            if let Some(t) = claimed {
                self.open_at(at(Phase::Wait(stage)), e, t);
            }
        }
        self.close(at(Phase::Wait(stage)), e, Ending::Complete);
        self.open_at(at(Phase::Work(stage)), e, e.mono_ns);
        self.started.insert(at(Phase::Work(stage)), e.mono_ns);
    }

    fn end(&mut self, stage: Stage, e: &TimelineEvent) {
        if !self.close(
            (Phase::Work(stage), e.job, e.partition),
            e,
            Ending::Complete,
        ) {
            self.p.orphan_ends += 1;
        }
        // What the partition waits for next (after host-prep, GPU_QUEUE opens the wait).
        match stage {
            Stage::Synthesis => self.open_wait(e, stage, Stage::HostPrep),
            Stage::Gpu => self.open_wait(e, stage, Stage::Epilogue),
            Stage::HostPrep | Stage::Epilogue => {}
        }
    }

    /// SLOT_RETURNED: from a stage, that stage gave its work back (returned); from the
    /// supervisor (recovery after a crash), the work of whichever stage held it was lost.
    /// Either way the partition is no longer waiting for anything.
    fn slot_returned(&mut self, e: &TimelineEvent) {
        let by_stage = Stage::from_name(&e.stage);
        for stage in Stage::ALL {
            let ending = match by_stage {
                Some(s) if s == stage => Ending::Returned,
                Some(_) => continue,
                None => Ending::Interrupted,
            };
            self.close((Phase::Work(stage), e.job, e.partition), e, ending);
        }
        for stage in Stage::ALL {
            self.open.remove(&(Phase::Wait(stage), e.job, e.partition));
        }
    }

    /// The process says it is leaving: whatever work it holds open is lost.
    fn process_exit(&mut self, e: &TimelineEvent) {
        let keys: Vec<Key> = self
            .open
            .iter()
            .filter(|(k, o)| o.pid == e.pid && matches!(k.0, Phase::Work(_)))
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            self.close(k, e, Ending::Interrupted);
        }
    }

    fn readied(&mut self, e: &TimelineEvent) {
        let Some(total_ms) = e.steps_ms.get(names::READIED_TOTAL) else {
            return;
        };
        // Not before the log's first event (a readying the log began inside).
        let start_ns = e
            .mono_ns
            .saturating_sub((total_ms * 1e6) as u64)
            .max(self.p.first_ns);
        self.p.readied.push(Readied {
            job: e.job,
            pid: e.pid,
            start_ns,
            end_ns: e.mono_ns,
        });
    }

    fn job_claimed(&mut self, e: &TimelineEvent) {
        let Some(job) = e.job else { return };
        if let Some(i) = self.jobs.remove(&job) {
            // Claimed again before it ended: a supervisor restart requeued it.
            self.p.jobs[i].end_ns = Some(e.mono_ns);
        }
        self.jobs.insert(job, self.p.jobs.len());
        self.p.jobs.push(JobRecord {
            job,
            name: e.job_name.clone(),
            claimed_ns: e.mono_ns,
            end_ns: None,
            outcome: JobOutcome::Unfinished,
            detail: None,
        });
    }

    fn job_ended(&mut self, e: &TimelineEvent, outcome: JobOutcome) {
        let Some(i) = e.job.and_then(|j| self.jobs.remove(&j)) else {
            return;
        };
        let rec = &mut self.p.jobs[i];
        rec.end_ns = Some(e.mono_ns);
        rec.outcome = outcome;
        rec.detail = e.detail.clone();
        if rec.name.is_none() {
            rec.name = e.job_name.clone();
        }
    }

    /// Opens the partition's wait for `next` after `prev` finished, unless `next` already
    /// started since `prev` did (the event was written after the hand-off: out of order).
    fn open_wait(&mut self, e: &TimelineEvent, prev: Stage, next: Stage) {
        let since = self.started.get(&(Phase::Work(prev), e.job, e.partition));
        let next_started = self.started.get(&(Phase::Work(next), e.job, e.partition));
        match (since, next_started) {
            (Some(since), Some(next_at)) if next_at >= since => self.p.out_of_order += 1,
            _ => self.open_at((Phase::Wait(next), e.job, e.partition), e, e.mono_ns),
        }
    }

    fn open_at(&mut self, key: Key, e: &TimelineEvent, start_ns: u64) {
        let open = Open {
            slot: e.slot,
            pid: e.pid,
            start_ns,
        };
        self.open.insert(key, open);
    }

    /// Closes the open interval under `key` at `e`; false when none was open.
    fn close(&mut self, key: Key, e: &TimelineEvent, ending: Ending) -> bool {
        match self.open.remove(&key) {
            Some(mut o) => {
                o.slot = o.slot.or(e.slot);
                self.p.intervals.push(interval(key, o, e.mono_ns, ending));
                true
            }
            None => false,
        }
    }

    fn finish(mut self) -> Paired {
        let p = &mut self.p;
        // What is still open when the log ends was cut off.
        let mut left: Vec<(Key, Open)> = self.open.drain().collect();
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
        self.p
    }
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
