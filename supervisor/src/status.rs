//! What `cuzk run` is doing, written by the supervisor to `<data_dir>/status.json` every
//! second (atomically), and `cuzk status`, which reads and shows it.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cuzk_shm_layout::{Arena, SlotState};
use serde::{Deserialize, Serialize};

use crate::children::Children;

#[derive(Debug, Serialize, Deserialize)]
pub struct Status {
    pub pid: u32,
    pub updated_unix_ms: u64,
    pub draining: bool,
    pub data_dir: PathBuf,
    pub arena: PathBuf,
    /// C1 files waiting in incoming/.
    pub queued: usize,
    pub jobs: Vec<JobStatus>,
    pub slots: Vec<SlotStatus>,
    pub stages: Vec<ProcessStatus>,
    pub done_total: u64,
    pub failed_total: u64,
    /// Jobs proved and verified in the last ten minutes, per minute (failed ones not counted).
    pub throughput_per_min: f64,
    /// What of the supervisor's own work is failing now (a drop directory it cannot
    /// write, a stage it cannot start; trouble.rs) and the slots a live stage has held too
    /// long (stalled.rs), if anything.
    #[serde(default)]
    pub trouble: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct JobStatus {
    pub id: u64,
    pub name: String,
    pub partitions: u32,
    pub done: u32,
    pub failed: bool,
    /// Each partition's place: "waiting", a slot state ("synthesizing", "prepped", ...),
    /// or "done".
    pub partition_states: Vec<String>,
    pub age_s: f64,
}

/// Jobs of more partitions than this show their states as counts in one line (a
/// NonInteractivePoRep job at 32 GiB has 126 partitions).
const STATES_LISTED_UP_TO: usize = 16;

impl JobStatus {
    /// The partitions' states for a line: each one in partition order for a small job,
    /// else how many are in each state, in the order the states first appear (partitions
    /// are taken in order, so done ones come first and waiting ones last).
    pub fn states_line(&self) -> String {
        if self.partition_states.len() <= STATES_LISTED_UP_TO {
            return self.partition_states.join(" ");
        }
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for state in &self.partition_states {
            match counts.iter_mut().find(|(s, _)| s == state) {
                Some((_, n)) => *n += 1,
                None => counts.push((state, 1)),
            }
        }
        counts
            .iter()
            .map(|(state, n)| format!("{n} {state}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SlotStatus {
    pub slot: u32,
    pub state: String,
    pub job: Option<u64>,
    pub partition: Option<u32>,
    pub owner_pid: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ProcessStatus {
    pub stage: String,
    pub index: usize,
    pub pid: Option<u32>,
    pub restarts: u32,
    pub up_s: f64,
}

/// Job completions seen by the supervisor, for the throughput figure.
#[derive(Default)]
pub struct Throughput {
    /// When each proof of the last ten minutes was finished: proved and verified ones only,
    /// so a run of refused files never reads as proofs a minute.
    proved: VecDeque<Instant>,
    pub done_total: u64,
    pub failed_total: u64,
}

impl Throughput {
    pub fn record(&mut self, ok: bool) {
        if ok {
            self.proved.push_back(Instant::now());
            self.done_total += 1;
        } else {
            self.failed_total += 1;
        }
    }

    fn per_min(&mut self) -> f64 {
        const WINDOW: Duration = Duration::from_secs(600);
        while self.proved.front().is_some_and(|t| t.elapsed() > WINDOW) {
            self.proved.pop_front();
        }
        self.proved.len() as f64 / 10.0
    }
}

fn state_name(s: SlotState) -> String {
    format!("{s:?}").to_lowercase()
}

pub struct Snapshot<'a> {
    pub arena: &'a Arena,
    pub children: &'a Children,
    pub data_dir: &'a Path,
    pub queued: usize,
    pub draining: bool,
    pub trouble: Option<String>,
}

impl Status {
    pub fn collect(s: Snapshot<'_>, throughput: &mut Throughput) -> Status {
        let arena = s.arena;
        let slots: Vec<SlotStatus> = (0..arena.slot_count())
            .map(|i| {
                let w = arena.slot_word(i);
                let h = arena.slot_header(i);
                let busy = w.state != SlotState::Free;
                SlotStatus {
                    slot: i,
                    state: state_name(w.state),
                    job: busy.then(|| h.job_id.load(Ordering::Relaxed)),
                    partition: busy.then(|| h.partition.load(Ordering::Relaxed)),
                    owner_pid: (w.owner_pid != 0).then_some(w.owner_pid),
                }
            })
            .collect();
        let jobs = arena
            .active_jobs()
            .map(|j| {
                let done = j.done_bits();
                let partition_states = (0..j.num_partitions())
                    .map(|p| {
                        if done.has(p) {
                            return "done".to_string();
                        }
                        slots
                            .iter()
                            .find(|s| s.job == Some(j.job_id()) && s.partition == Some(p))
                            .map_or_else(|| "waiting".to_string(), |s| s.state.clone())
                    })
                    .collect();
                JobStatus {
                    id: j.job_id(),
                    name: j.name(),
                    partitions: j.num_partitions(),
                    done: done.count(),
                    failed: j.is_failed(),
                    partition_states,
                    age_s: cuzk_shm_layout::clock::unix_ns().saturating_sub(j.created_unix_ns())
                        as f64
                        / 1e9,
                }
            })
            .collect();
        let stages = s
            .children
            .positions()
            .iter()
            .map(|p| ProcessStatus {
                stage: p.kind.as_str().to_string(),
                index: p.index,
                pid: p.child.as_ref().map(|c| c.id()),
                restarts: p.restarts,
                up_s: if p.child.is_some() {
                    p.started.elapsed().as_secs_f64()
                } else {
                    0.0
                },
            })
            .collect();
        Status {
            pid: std::process::id(),
            updated_unix_ms: cuzk_shm_layout::clock::unix_ns() / 1_000_000,
            draining: s.draining,
            data_dir: s.data_dir.to_path_buf(),
            arena: arena.path().to_path_buf(),
            queued: s.queued,
            jobs,
            slots,
            stages,
            done_total: throughput.done_total,
            failed_total: throughput.failed_total,
            throughput_per_min: throughput.per_min(),
            trouble: s.trouble,
        }
    }

    /// Replaces the status file atomically (temp name, rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("{}: writing status", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("{}: publishing status", path.display()))
    }
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The data directory of the `cuzk run` to ask (default: ./cuzk-data, or data_dir
    /// from --config).
    #[arg(long, env = "CUZK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// The configuration file `cuzk run` was started with (as `cuzk run`, CUZK_CONFIG).
    #[arg(long, env = "CUZK_CONFIG")]
    pub config: Option<PathBuf>,
    /// Print the status as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn show(args: &StatusArgs) -> Result<std::process::ExitCode> {
    let data_dir = match (&args.data_dir, &args.config) {
        (Some(d), _) => d.clone(),
        (None, config) => {
            let env = |k: &str| std::env::var(k).ok();
            crate::config::Config::load(config.as_deref(), &env, &Default::default())?.data_dir
        }
    };
    let path = data_dir.join("status.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        // Never started here (or another data directory): not running, which is what a
        // health check asks (exit 3), with the place looked at.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "cuzk: {}: no status: no `cuzk run` has served {}",
                path.display(),
                data_dir.display()
            );
            if args.json {
                // Something a JSON reader can take, saying the same.
                println!("{}", serde_json::json!({ "running": false }));
            }
            return Ok(std::process::ExitCode::from(NOT_RUNNING));
        }
        Err(e) => return Err(e).with_context(|| format!("{}: reading the status", path.display())),
    };
    let status: Status = serde_json::from_str(&text)?;
    let age_ms =
        (cuzk_shm_layout::clock::unix_ns() / 1_000_000).saturating_sub(status.updated_unix_ms);
    let alive = !cuzk_shm_layout::recovery::pid_is_dead(status.pid) && age_ms < 5_000;
    if args.json {
        let mut v = serde_json::to_value(&status)?;
        v["running"] = serde_json::Value::Bool(alive);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(exit_code(alive));
    }
    println!(
        "cuzk run pid {} — {} (status {:.1} s old){}",
        status.pid,
        if alive { "running" } else { "NOT RUNNING" },
        age_ms as f64 / 1e3,
        if status.draining { ", draining" } else { "" }
    );
    println!(
        "jobs: {} queued, {} active, {} done, {} failed since start; {:.2} proofs/min (last 10 min)",
        status.queued,
        status.jobs.len(),
        status.done_total,
        status.failed_total,
        status.throughput_per_min
    );
    if let Some(t) = &status.trouble {
        println!("TROUBLE: {t}");
    }
    for j in &status.jobs {
        println!(
            "  job {:>4} {:<40} {}/{} partitions done{}  [{}]  {:.0} s",
            j.id,
            j.name,
            j.done,
            j.partitions,
            if j.failed { " FAILED" } else { "" },
            j.states_line(),
            j.age_s
        );
    }
    println!("slots:");
    for s in &status.slots {
        let what = match (s.job, s.partition) {
            (Some(j), Some(p)) => format!("job {j} partition {p}"),
            _ => String::new(),
        };
        println!("  {:>2} {:<13} {what}", s.slot, s.state);
    }
    println!("stages:");
    for p in &status.stages {
        println!(
            "  {:<10} #{} pid {:<8} restarts {:<3} up {:.0} s",
            p.stage,
            p.index,
            p.pid.map_or("-".to_string(), |p| p.to_string()),
            p.restarts,
            p.up_s
        );
    }
    Ok(exit_code(alive))
}

/// `cuzk status`'s exit status when no supervisor is serving the data directory, with
/// `--json` or without (LSB's "program is not running").
const NOT_RUNNING: u8 = 3;

fn exit_code(alive: bool) -> std::process::ExitCode {
    if alive {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(NOT_RUNNING)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(states: &[&str]) -> JobStatus {
        JobStatus {
            id: 1,
            name: "ni.json".to_string(),
            partitions: states.len() as u32,
            done: states.iter().filter(|s| **s == "done").count() as u32,
            failed: false,
            partition_states: states.iter().map(|s| s.to_string()).collect(),
            age_s: 1.0,
        }
    }

    #[test]
    fn a_large_job_shows_counts_a_small_one_each_state() {
        assert_eq!(
            job(&["done", "proving", "waiting"]).states_line(),
            "done proving waiting"
        );
        let mut states = vec!["done"; 40];
        states.extend(["proving", "prepped", "synthesizing", "synthesizing"]);
        states.extend(vec!["waiting"; 82]);
        assert_eq!(
            job(&states).states_line(),
            "40 done, 1 proving, 1 prepped, 2 synthesizing, 82 waiting"
        );
    }

    #[test]
    fn only_proved_jobs_count_as_proofs_a_minute() {
        let mut t = Throughput::default();
        for _ in 0..20 {
            t.record(false);
        }
        t.record(true);
        assert_eq!((t.done_total, t.failed_total), (1, 20));
        assert_eq!(t.per_min(), 0.1);
    }

    /// A health check reads the exit status, with `--json` too: 3 when the status is
    /// stale (its supervisor gone) and when there is none at all.
    #[test]
    fn status_exits_3_when_no_supervisor_serves_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let args = |json| StatusArgs {
            data_dir: Some(dir.path().to_path_buf()),
            config: None,
            json,
        };
        let not_running = std::process::ExitCode::from(NOT_RUNNING);
        for json in [false, true] {
            assert_eq!(
                show(&args(json)).unwrap(),
                not_running,
                "no status.json, json {json}"
            );
        }
        let stale = Status {
            pid: std::process::id(),
            updated_unix_ms: 0,
            draining: false,
            data_dir: dir.path().to_path_buf(),
            arena: dir.path().join("arena"),
            queued: 0,
            jobs: Vec::new(),
            slots: Vec::new(),
            stages: Vec::new(),
            done_total: 0,
            failed_total: 0,
            throughput_per_min: 0.0,
            trouble: None,
        };
        stale.write(&dir.path().join("status.json")).unwrap();
        for json in [false, true] {
            assert_eq!(
                show(&args(json)).unwrap(),
                not_running,
                "stale status, json {json}"
            );
        }
    }
}
