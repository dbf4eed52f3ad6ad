//! `cuzk-bench batch`: N copies of one C1 through a running supervisor's drop directory,
//! C in flight at a time, each timed from the moment it is renamed into `incoming/`.
//!
//! The drop-directory contract (supervisor/dropdir): a writer puts a complete file into
//! `incoming/` by renaming it in; the supervisor claims it by renaming it to `working/`;
//! a finished job has `done/<stem>.json` (its result) and then `done/<stem>.proof`, renamed
//! in last, so "the proof exists" means "complete"; a failed one has `failed/<stem>.reason`.
//! Everything here is observed from outside by polling the file names, every `poll`.

mod summary;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::Serialize;

pub use summary::{summarize, BatchSummary, MinAvgMax};

#[derive(Debug, Clone)]
pub struct BatchConfig {
    pub c1: PathBuf,
    pub count: usize,
    pub concurrency: usize,
    pub data_dir: PathBuf,
    /// Give up this long after the first submission; jobs not finished then are timed out.
    pub timeout: Option<Duration>,
    /// How often the directories are looked at: the resolution of every time measured.
    pub poll: Duration,
    /// Makes this run's file names unique (`<stem>-b<run_id>-<i>.json`).
    pub run_id: String,
}

impl BatchConfig {
    /// A run id from the clock and the pid: unique across runs on one machine.
    pub fn fresh_run_id() -> String {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("{ms:x}{:x}", std::process::id() % 0x1000)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Done,
    Failed,
    TimedOut,
}

/// One job as the batch saw it. Times in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobResult {
    pub index: usize,
    /// The job's name in the drop directory (file name without `.json`).
    pub name: String,
    pub outcome: Outcome,
    /// From the batch's first submission to this one's (`None`: never submitted).
    pub submitted_s: Option<f64>,
    /// Submission (renamed into incoming/) to its proof or reason file seen.
    pub wall_s: f64,
    /// Until it left incoming/ (claimed by the supervisor); `None` if never seen to leave.
    pub queue_s: Option<f64>,
    /// From leaving incoming/ to done or failed.
    pub proving_s: Option<f64>,
    /// failed/<stem>.reason, for a failed job.
    pub reason: Option<String>,
    /// done/<stem>.json as the supervisor wrote it (its own timings), for a done job.
    pub result: Option<serde_json::Value>,
}

/// What the caller sees while the batch runs (progress, printing).
pub trait Observer {
    fn submitted(&mut self, _index: usize, _name: &str) {}
    fn finished(&mut self, _job: &JobResult) {}
}

/// Ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

#[derive(Debug, Clone, Serialize)]
pub struct BatchReport {
    pub jobs: Vec<JobResult>,
    pub summary: BatchSummary,
}

struct InFlight {
    index: usize,
    name: String,
    submitted: Instant,
    left_queue: Option<Instant>,
}

pub fn run(cfg: &BatchConfig, observer: &mut dyn Observer) -> Result<BatchReport> {
    if cfg.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let dirs = Dirs::new(&cfg.data_dir)?;
    let bytes = std::fs::read(&cfg.c1).with_context(|| format!("reading {}", cfg.c1.display()))?;
    let stem = cfg
        .c1
        .file_stem()
        .and_then(|s| s.to_str())
        .with_context(|| format!("{}: no usable file name", cfg.c1.display()))?;

    let mut jobs = Vec::with_capacity(cfg.count);
    let mut in_flight: Vec<InFlight> = Vec::new();
    let mut next = 0;
    let start = Instant::now();
    let deadline = cfg.timeout.map(|t| start + t);
    let mut max_in_flight = 0;
    while jobs.len() < cfg.count {
        while next < cfg.count && in_flight.len() < cfg.concurrency {
            let name = format!("{stem}-b{}-{next}", cfg.run_id);
            // Stamped before the file appears: the prover may see it before submit returns.
            let submitted = Instant::now();
            dirs.submit(&name, &bytes)?;
            observer.submitted(next, &name);
            in_flight.push(InFlight {
                index: next,
                name,
                submitted,
                left_queue: None,
            });
            next += 1;
        }
        max_in_flight = max_in_flight.max(in_flight.len());
        std::thread::sleep(cfg.poll);
        let now = Instant::now();
        let timed_out = deadline.is_some_and(|d| now >= d);
        let mut still = Vec::with_capacity(in_flight.len());
        for mut job in in_flight {
            if job.left_queue.is_none() && !dirs.queued(&job.name) {
                job.left_queue = Some(now);
            }
            let outcome = match dirs.outcome(&job.name)? {
                Some(seen) => Some(seen),
                None if timed_out => Some(Seen::TimedOut),
                None => None,
            };
            match outcome {
                Some(seen) => {
                    let result = finish(job, seen, start, now);
                    observer.finished(&result);
                    jobs.push(result);
                }
                None => still.push(job),
            }
        }
        in_flight = still;
        if timed_out {
            // Never submitted: timed out too, with no time of their own.
            for index in next..cfg.count {
                jobs.push(JobResult {
                    index,
                    name: format!("{stem}-b{}-{index}", cfg.run_id),
                    outcome: Outcome::TimedOut,
                    submitted_s: None,
                    wall_s: 0.0,
                    queue_s: None,
                    proving_s: None,
                    reason: Some("not submitted before the timeout".into()),
                    result: None,
                });
            }
            break;
        }
    }
    jobs.sort_by_key(|j| j.index);
    let summary = summarize(&jobs, cfg.concurrency, max_in_flight);
    Ok(BatchReport { jobs, summary })
}

enum Seen {
    Done(Option<serde_json::Value>),
    Failed(String),
    TimedOut,
}

fn finish(job: InFlight, seen: Seen, start: Instant, now: Instant) -> JobResult {
    // A job done between two polls left the queue unseen: it counts as leaving at the end.
    let left = job.left_queue.unwrap_or(now);
    let (outcome, reason, result) = match seen {
        Seen::Done(result) => (Outcome::Done, None, result),
        Seen::Failed(reason) => (Outcome::Failed, Some(reason), None),
        Seen::TimedOut => (Outcome::TimedOut, None, None),
    };
    let left_queue = job.left_queue.is_some() || outcome != Outcome::TimedOut;
    JobResult {
        index: job.index,
        name: job.name,
        outcome,
        submitted_s: Some((job.submitted - start).as_secs_f64()),
        wall_s: (now - job.submitted).as_secs_f64(),
        queue_s: left_queue.then(|| (left - job.submitted).as_secs_f64()),
        proving_s: left_queue.then(|| (now - left).as_secs_f64()),
        reason,
        result,
    }
}

/// The four directories and what a job's files in them mean.
struct Dirs {
    incoming: PathBuf,
    done: PathBuf,
    failed: PathBuf,
}

impl Dirs {
    fn new(data_dir: &Path) -> Result<Dirs> {
        let incoming = data_dir.join("incoming");
        if !incoming.is_dir() {
            bail!(
                "{} is not a directory: is a supervisor running on this data directory (`cuzk run --data-dir {}`)?",
                incoming.display(),
                data_dir.display()
            );
        }
        Ok(Dirs {
            incoming,
            done: data_dir.join("done"),
            failed: data_dir.join("failed"),
        })
    }

    /// Writes the C1 under a dot name (which the supervisor skips as unfinished) and
    /// renames it in, so that only a complete file is ever seen.
    fn submit(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let temp = self.incoming.join(format!(".{name}.json.tmp"));
        let target = self.incoming.join(format!("{name}.json"));
        std::fs::write(&temp, bytes).with_context(|| format!("writing {}", temp.display()))?;
        std::fs::rename(&temp, &target)
            .with_context(|| format!("renaming {} into place", target.display()))
    }

    fn queued(&self, name: &str) -> bool {
        self.incoming.join(format!("{name}.json")).exists()
    }

    fn outcome(&self, name: &str) -> Result<Option<Seen>> {
        let proof = self.done.join(format!("{name}.proof"));
        if proof.exists() {
            // The result is renamed in before the proof, so it is complete by now; a result
            // that does not parse is kept out of the report, not fatal.
            let json = self.done.join(format!("{name}.json"));
            let result = std::fs::read(&json)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            return Ok(Some(Seen::Done(result)));
        }
        let reason = self.failed.join(format!("{name}.reason"));
        match std::fs::read_to_string(&reason) {
            Ok(text) => Ok(Some(Seen::Failed(text.trim().to_string()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", reason.display())),
        }
    }
}
