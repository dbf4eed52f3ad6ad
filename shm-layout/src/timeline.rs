//! Timeline events: one JSON object per line, appended by every stage process and the
//! supervisor to one log, read back by `cuzk-bench timeline`.
//!
//! Each line is written with a single `write(2)` on an `O_APPEND` file, so lines from many
//! processes never interleave (Linux appends each write atomically on a local file
//! system). Timestamps are CLOCK_MONOTONIC, comparable across the processes of one boot.
//! Event names follow the ones operators know from upstream where they fit
//! (SYNTH_START, SYNTH_END, GPU_QUEUE, GPU_START, GPU_END).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::clock::{monotonic_ns, unix_ns};

/// The event names, in the order a partition meets them.
pub mod names {
    pub const JOB_CLAIMED: &str = "JOB_CLAIMED";
    pub const SYNTH_START: &str = "SYNTH_START";
    pub const SYNTH_END: &str = "SYNTH_END";
    pub const PREP_START: &str = "PREP_START";
    pub const PREP_END: &str = "PREP_END";
    /// The slot became ready for the GPU stage (host-prep finished).
    pub const GPU_QUEUE: &str = "GPU_QUEUE";
    /// The gpu stage readied its device for a job before the job's first partition came
    /// (R1CS or C recorded, prover made, SRS uploaded), with the steps' times and their
    /// whole, `READIED_TOTAL`, which ends at the event.
    pub const GPU_READIED: &str = "GPU_READIED";
    /// `GPU_READIED`'s step holding the whole readying's time.
    pub const READIED_TOTAL: &str = "total";
    pub const GPU_START: &str = "GPU_START";
    pub const GPU_END: &str = "GPU_END";
    pub const EPILOGUE_START: &str = "EPILOGUE_START";
    pub const EPILOGUE_END: &str = "EPILOGUE_END";
    pub const VERIFY: &str = "VERIFY";
    pub const JOB_DONE: &str = "JOB_DONE";
    pub const JOB_FAILED: &str = "JOB_FAILED";
    /// A stage gave a slot back without finishing (error, failed job, recovery).
    pub const SLOT_RETURNED: &str = "SLOT_RETURNED";
    pub const STAGE_EXIT: &str = "STAGE_EXIT";
    pub const STAGE_START: &str = "STAGE_START";

    use crate::Stage;

    /// The event a stage writes when it starts working on a partition.
    pub fn start_of(stage: Stage) -> &'static str {
        match stage {
            Stage::Synthesis => SYNTH_START,
            Stage::HostPrep => PREP_START,
            Stage::Gpu => GPU_START,
            Stage::Epilogue => EPILOGUE_START,
        }
    }

    /// The event a stage writes when it is done with a partition.
    pub fn end_of(stage: Stage) -> &'static str {
        match stage {
            Stage::Synthesis => SYNTH_END,
            Stage::HostPrep => PREP_END,
            Stage::Gpu => GPU_END,
            Stage::Epilogue => EPILOGUE_END,
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEvent {
    /// CLOCK_MONOTONIC, ns.
    pub mono_ns: u64,
    /// Wall clock, ns since the epoch (for people; order by `mono_ns`).
    pub unix_ns: u64,
    pub event: String,
    /// "supervisor", "synthesis", "host-prep", "gpu", "epilogue".
    pub stage: String,
    pub pid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<u64>,
    /// The C1 file name, on job-level events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Step durations in milliseconds (e.g. the GPU's upload, ntt, msm_h, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub steps_ms: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Where a partition-level event happened.
#[derive(Debug, Clone, Copy, Default)]
pub struct At {
    pub job: Option<u64>,
    pub partition: Option<u32>,
    pub slot: Option<u32>,
}

impl At {
    pub fn slot(job: u64, partition: u32, slot: u32) -> Self {
        At {
            job: Some(job),
            partition: Some(partition),
            slot: Some(slot),
        }
    }

    pub fn job(job: u64) -> Self {
        At {
            job: Some(job),
            ..At::default()
        }
    }
}

/// A process's handle on the log. Without a path it discards events (nothing is written),
/// so a stage always has one to call.
pub struct Timeline {
    file: Option<File>,
    stage: &'static str,
    pid: u32,
}

impl Timeline {
    pub fn open(path: Option<&Path>, stage: &'static str) -> std::io::Result<Timeline> {
        let file = match path {
            Some(p) => Some(OpenOptions::new().create(true).append(true).open(p)?),
            None => None,
        };
        Ok(Timeline {
            file,
            stage,
            pid: std::process::id(),
        })
    }

    pub fn disabled(stage: &'static str) -> Timeline {
        Timeline {
            file: None,
            stage,
            pid: std::process::id(),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.file.is_some()
    }

    pub fn emit(&self, event: &str, at: At) {
        self.emit_full(event, at, None, &[], None);
    }

    pub fn emit_steps(&self, event: &str, at: At, steps_ms: &[(&str, f64)]) {
        self.emit_full(event, at, None, steps_ms, None);
    }

    /// Writes one line. A failing write is reported once on stderr and otherwise ignored:
    /// the log must never stop a proof.
    pub fn emit_full(
        &self,
        event: &str,
        at: At,
        job_name: Option<&str>,
        steps_ms: &[(&str, f64)],
        detail: Option<&str>,
    ) {
        let Some(mut file) = self.file.as_ref() else {
            return;
        };
        let e = TimelineEvent {
            mono_ns: monotonic_ns(),
            unix_ns: unix_ns(),
            event: event.to_string(),
            stage: self.stage.to_string(),
            pid: self.pid,
            job: at.job,
            job_name: job_name.map(str::to_string),
            partition: at.partition,
            slot: at.slot,
            steps_ms: steps_ms.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            detail: detail.map(str::to_string),
        };
        let mut line = serde_json::to_vec(&e).expect("a timeline event always serializes");
        line.push(b'\n');
        // One write: O_APPEND makes it atomic with respect to the other writers.
        if let Err(err) = file.write_all(&line) {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| eprintln!("timeline: cannot append: {err}"));
        }
    }
}

/// Reads a whole log; a line that is not an event (a torn last line after a crash) is
/// skipped and counted.
pub fn read_log(path: &Path) -> std::io::Result<(Vec<TimelineEvent>, usize)> {
    let text = std::fs::read_to_string(path)?;
    let mut events = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str(line) {
            Ok(e) => events.push(e),
            Err(_) => bad += 1,
        }
    }
    events.sort_by_key(|e: &TimelineEvent| e.mono_ns);
    Ok((events, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_through_the_log() {
        // A fresh directory: a log left by an earlier run under the same pid would be
        // appended to.
        let dir = std::env::temp_dir().join(format!(
            "cuzk-timeline-{}-{}",
            std::process::id(),
            crate::clock::unix_ns()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        let t = Timeline::open(Some(&path), "gpu").unwrap();
        t.emit(names::GPU_START, At::slot(3, 1, 0));
        t.emit_steps(names::GPU_END, At::slot(3, 1, 0), &[("msm_h", 12.5)]);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"torn")
            .unwrap();
        let (events, bad) = read_log(&path).unwrap();
        assert_eq!(bad, 1);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event, "GPU_START");
        assert_eq!(events[1].steps_ms["msm_h"], 12.5);
        assert_eq!(events[1].partition, Some(1));
        assert!(events[0].mono_ns <= events[1].mono_ns);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
