//! Hand-made timeline logs for the tests, and the pictures read back.

#![allow(dead_code)] // each test file uses a part

pub mod fake_supervisor;
pub mod sim;
pub mod svg;

use std::collections::BTreeMap;

use cuzk_shm_layout::timeline::TimelineEvent;

/// An arbitrary CLOCK_MONOTONIC origin, so that no code can rely on times starting at 0.
pub const T0_NS: u64 = 5_000_000_000_000;

/// Builds events with times in milliseconds from [`T0_NS`].
#[derive(Default)]
pub struct Log {
    pub events: Vec<TimelineEvent>,
}

impl Log {
    /// A partition-level event at (job, partition, slot).
    pub fn at(
        &mut self,
        ms: f64,
        event: &str,
        stage: &str,
        pid: u32,
        (job, partition, slot): (u64, u32, u32),
    ) -> &mut TimelineEvent {
        self.push(ms, event, stage, pid);
        let e = self.events.last_mut().unwrap();
        e.job = Some(job);
        e.partition = Some(partition);
        e.slot = Some(slot);
        e
    }

    /// A job-level event.
    pub fn job(
        &mut self,
        ms: f64,
        event: &str,
        stage: &str,
        pid: u32,
        job: u64,
        name: &str,
    ) -> &mut TimelineEvent {
        self.push(ms, event, stage, pid);
        let e = self.events.last_mut().unwrap();
        e.job = Some(job);
        e.job_name = Some(name.to_string());
        e
    }

    pub fn push(&mut self, ms: f64, event: &str, stage: &str, pid: u32) -> &mut TimelineEvent {
        self.events.push(TimelineEvent {
            mono_ns: T0_NS + (ms * 1e6).round() as u64,
            unix_ns: 1_795_960_800_000_000_000 + (ms * 1e6).round() as u64,
            event: event.to_string(),
            stage: stage.to_string(),
            pid,
            job: None,
            job_name: None,
            partition: None,
            slot: None,
            steps_ms: BTreeMap::new(),
            detail: None,
        });
        self.events.last_mut().unwrap()
    }

    /// One partition through all four stages, each on its process, with the queue events.
    /// `t` = [synth start, synth end, prep start, prep end (= GPU_QUEUE), gpu start, gpu end,
    /// epilogue start, epilogue end]; `pids` = [synthesis, host-prep, gpu, epilogue].
    pub fn partition(&mut self, job: u64, partition: u32, slot: u32, t: [f64; 8], pids: [u32; 4]) {
        let at = (job, partition, slot);
        self.at(t[0], "SYNTH_START", "synthesis", pids[0], at);
        self.at(t[1], "SYNTH_END", "synthesis", pids[0], at);
        self.at(t[2], "PREP_START", "host-prep", pids[1], at);
        self.at(t[3], "PREP_END", "host-prep", pids[1], at);
        self.at(t[3], "GPU_QUEUE", "host-prep", pids[1], at);
        self.at(t[4], "GPU_START", "gpu", pids[2], at);
        self.at(t[5], "GPU_END", "gpu", pids[2], at);
        self.at(t[6], "EPILOGUE_START", "epilogue", pids[3], at);
        self.at(t[7], "EPILOGUE_END", "epilogue", pids[3], at);
    }

    /// The log as JSON lines.
    pub fn to_jsonl(&self) -> String {
        self.events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect()
    }
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[track_caller]
pub fn assert_close(a: f64, b: f64) {
    assert!(close(a, b), "{a} != {b}");
}
