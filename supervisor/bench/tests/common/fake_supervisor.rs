//! A stand-in for the supervisor's drop-directory side, on a thread: it claims complete
//! files from incoming/ (incoming → working) after `claim_after`, and `prove_for` later
//! writes done/<stem>.json then done/<stem>.proof (or failed/<stem>.reason and moves the
//! input to failed/), in the order the real supervisor uses. It counts how many jobs it
//! ever saw in flight at once (in incoming/ or working/), and writes a timeline to
//! `<data_dir>/timeline.jsonl` as the real one would (JOB_CLAIMED, the proving as one
//! GPU_START → GPU_END, JOB_DONE / JOB_FAILED).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, Timeline};

pub struct FakeSupervisor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<usize>>,
}

pub struct Behaviour {
    pub claim_after: Duration,
    pub prove_for: Duration,
    /// Jobs whose name ends with this fail instead.
    pub fail_suffix: Option<&'static str>,
}

impl FakeSupervisor {
    pub fn start(data_dir: &Path, behaviour: Behaviour) -> FakeSupervisor {
        for d in ["incoming", "working", "done", "failed"] {
            std::fs::create_dir_all(data_dir.join(d)).unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let dir = data_dir.to_path_buf();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || serve(&dir, &behaviour, &flag));
        FakeSupervisor {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops it; returns the most jobs it saw in flight at once.
    pub fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for FakeSupervisor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn c1_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.starts_with('.') && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
}

fn write_then_rename(path: &Path, bytes: &[u8]) {
    let temp = path.with_file_name(format!(
        ".{}.tmp",
        path.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&temp, bytes).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

fn serve(dir: &Path, b: &Behaviour, stop: &AtomicBool) -> usize {
    let (incoming, working) = (dir.join("incoming"), dir.join("working"));
    let log = dir.join("timeline.jsonl");
    let supervisor = Timeline::open(Some(&log), "supervisor").unwrap();
    let gpu = Timeline::open(Some(&log), "gpu").unwrap();
    let mut first_seen: HashMap<PathBuf, Instant> = HashMap::new();
    // Claimed file -> (when, job id).
    let mut claimed: HashMap<PathBuf, (Instant, u64)> = HashMap::new();
    let mut next_job = 0;
    let mut max_in_flight = 0;
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        let queued = c1_files(&incoming);
        max_in_flight = max_in_flight.max(queued.len() + claimed.len());
        for path in queued {
            let seen = *first_seen.entry(path.clone()).or_insert(now);
            if now - seen >= b.claim_after {
                let target = working.join(path.file_name().unwrap());
                std::fs::rename(&path, &target).unwrap();
                next_job += 1;
                let name = target.file_name().unwrap().to_string_lossy().to_string();
                supervisor.emit_full(
                    names::JOB_CLAIMED,
                    At::job(next_job),
                    Some(&name),
                    &[],
                    None,
                );
                gpu.emit(names::GPU_START, At::slot(next_job, 0, 0));
                claimed.insert(target, (now, next_job));
            }
        }
        let finished: Vec<PathBuf> = claimed
            .iter()
            .filter(|(_, &(at, _))| now - at >= b.prove_for)
            .map(|(p, _)| p.clone())
            .collect();
        for path in finished {
            let (_, job) = claimed.remove(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            gpu.emit(names::GPU_END, At::slot(job, 0, 0));
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            if b.fail_suffix.is_some_and(|s| stem.ends_with(s)) {
                write_then_rename(
                    &dir.join("failed").join(format!("{stem}.reason")),
                    b"time: 2026-11-29T14:00:00Z\nreason: the fake supervisor fails this one\n",
                );
                std::fs::rename(&path, dir.join("failed").join(path.file_name().unwrap())).unwrap();
            } else {
                let result = serde_json::json!({ "job": stem, "timings_ms": { "total": 1.5 } });
                write_then_rename(
                    &dir.join("done").join(format!("{stem}.json")),
                    result.to_string().as_bytes(),
                );
                write_then_rename(&dir.join("done").join(format!("{stem}.proof")), &[7; 192]);
                std::fs::remove_file(&path).unwrap();
                gpu.emit_full(names::JOB_DONE, At::job(job), Some(&name), &[], None);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    max_in_flight
}
