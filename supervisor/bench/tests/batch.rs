//! `cuzk-bench batch` against a fake supervisor on a thread (tests/common/fake_supervisor.rs):
//! counts, the concurrency kept, per-job times and the summary's arithmetic.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::assert_close;
use common::fake_supervisor::{Behaviour, FakeSupervisor};
use cuzk_bench::batch::{self, BatchConfig, Outcome, Quiet};

const C1: &[u8] = br#"{"SectorNum": 5, "Phase1Out": "e30=", "SectorSize": 2048}"#;

fn config(dir: &Path, count: usize, concurrency: usize) -> BatchConfig {
    let c1 = dir.join("porep-2KiB-a.json");
    std::fs::write(&c1, C1).unwrap();
    BatchConfig {
        c1,
        count,
        concurrency,
        data_dir: dir.join("data"),
        timeout: Some(Duration::from_secs(60)),
        poll: Duration::from_millis(5),
        run_id: "t1".into(),
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn keeps_concurrency_jobs_in_flight_and_sums_up() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 6, 2);
    let fake = FakeSupervisor::start(
        &cfg.data_dir,
        Behaviour {
            claim_after: Duration::from_millis(40),
            prove_for: Duration::from_millis(100),
            fail_suffix: Some("-3"),
        },
    );
    let report = batch::run(&cfg, &mut Quiet).unwrap();
    let seen_in_flight = fake.stop();

    let s = &report.summary;
    assert_eq!((s.count, s.done, s.failed, s.timed_out), (6, 5, 1, 0));
    assert_eq!(s.max_in_flight, 2);
    assert_eq!(
        seen_in_flight, 2,
        "the supervisor side never saw more than 2"
    );
    assert_eq!(report.jobs[3].outcome, Outcome::Failed);
    assert!(report.jobs[3]
        .reason
        .as_deref()
        .unwrap()
        .contains("fails this one"));
    for (i, job) in report.jobs.iter().enumerate() {
        assert_eq!(job.index, i);
        assert_eq!(job.name, format!("porep-2KiB-a-bt1-{i}"));
        // Claimed 40 ms after it appeared, finished 100 ms after that; each seen a poll
        // (5 ms) or so later: on a quiet machine queue ~0.045 s, proving ~0.1 s. The lower
        // bounds hold by construction (a job is stamped before its file appears); the upper
        // ones only catch a batch that stopped watching, with room for a loaded machine.
        let (queue, proving) = (job.queue_s.unwrap(), job.proving_s.unwrap());
        assert!((0.04..5.0).contains(&queue), "queue {queue}");
        assert!((0.0..5.0).contains(&proving), "proving {proving}");
        assert!(job.wall_s >= 0.14, "wall {}", job.wall_s);
        assert_close(job.wall_s, queue + proving);
        if job.outcome == Outcome::Done {
            assert_eq!(
                job.result.as_ref().unwrap()["job"],
                serde_json::json!(job.name)
            );
        }
    }
    // Three rounds of two: at least 3 x 140 ms.
    assert!(s.elapsed_s >= 0.42 && s.elapsed_s < 30.0, "{}", s.elapsed_s);
    let last_end = report
        .jobs
        .iter()
        .map(|j| j.submitted_s.unwrap() + j.wall_s)
        .fold(0.0, f64::max);
    assert_close(s.elapsed_s, last_end);
    assert_close(s.proofs_per_min, 5.0 / s.elapsed_s * 60.0);
    assert_close(s.s_per_proof.unwrap(), s.elapsed_s / 5.0);
    let done_walls: Vec<f64> = report
        .jobs
        .iter()
        .filter(|j| j.outcome == Outcome::Done)
        .map(|j| j.wall_s)
        .collect();
    let wall = s.wall_s.unwrap();
    assert_close(wall.avg, done_walls.iter().sum::<f64>() / 5.0);
    assert!(wall.min <= wall.avg && wall.avg <= wall.max);

    let data = &cfg.data_dir;
    assert!(names_in(&data.join("incoming")).is_empty());
    assert!(names_in(&data.join("working")).is_empty());
    assert_eq!(
        names_in(&data.join("done")).len(),
        10,
        "a proof and a result per done job"
    );
    assert_eq!(
        names_in(&data.join("failed")),
        ["porep-2KiB-a-bt1-3.json", "porep-2KiB-a-bt1-3.reason"]
    );
    let copy = std::fs::read(data.join("failed/porep-2KiB-a-bt1-3.json")).unwrap();
    assert_eq!(copy, C1, "each job is a byte copy of the C1");
}

#[test]
fn unclaimed_jobs_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), 3, 2);
    cfg.timeout = Some(Duration::from_millis(200));
    for d in ["incoming", "done", "failed"] {
        std::fs::create_dir_all(cfg.data_dir.join(d)).unwrap();
    }
    let report = batch::run(&cfg, &mut Quiet).unwrap();
    let s = &report.summary;
    assert_eq!((s.done, s.failed, s.timed_out), (0, 0, 3));
    assert!(s.elapsed_s >= 0.2 && s.elapsed_s < 5.0, "{}", s.elapsed_s);
    assert!(report.jobs[..2]
        .iter()
        .all(|j| j.queue_s.is_none() && j.submitted_s.is_some()));
    assert_eq!(report.jobs[2].submitted_s, None, "never submitted");
    assert_eq!(names_in(&cfg.data_dir.join("incoming")).len(), 2);
}

#[test]
fn a_data_directory_without_incoming_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 1, 1);
    let err = batch::run(&cfg, &mut Quiet).unwrap_err().to_string();
    assert!(err.contains("is a supervisor running"), "{err}");
}

#[test]
fn command_line_json_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 3, 3);
    let fake = FakeSupervisor::start(
        &cfg.data_dir,
        Behaviour {
            claim_after: Duration::ZERO,
            prove_for: Duration::from_millis(50),
            fail_suffix: None,
        },
    );
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cuzk-bench"));
        cmd.args([
            "batch",
            "--type",
            "porep",
            "--count",
            "3",
            "--concurrency",
            "3",
        ])
        .arg("--c1")
        .arg(&cfg.c1)
        .arg("--data-dir")
        .arg(&cfg.data_dir);
        if json {
            cmd.arg("--json");
        }
        cmd.arg("--timeline");
        cmd.output().unwrap()
    };
    let out = run(true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["done"], 3);
    assert_eq!(report["summary"]["max_in_flight"], 3);
    assert_eq!(report["jobs"].as_array().unwrap().len(), 3);
    // --timeline: this batch's jobs out of the supervisor's log, and their waterfall.
    let timeline = &report["timeline"];
    assert_eq!(timeline["jobs"]["throughput"]["done"], 3);
    assert_eq!(timeline["bottleneck"]["stage"], "gpu");
    let svg = timeline["waterfall"].as_str().unwrap();
    assert!(
        svg.ends_with(".waterfall.svg") && Path::new(svg).exists(),
        "{svg}"
    );

    let out = run(false);
    fake.stop();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches(": done, wall").count(), 3, "{text}");
    assert!(text.contains("summary: 3 jobs, 3 done, 0 failed"), "{text}");
    assert!(text.contains("proofs/min"), "{text}");
    // Only this batch's 3 jobs, though the log now holds both batches' 6.
    assert!(text.contains("timeline of this batch's jobs"), "{text}");
    assert!(text.contains("jobs: 3 done, 0 failed"), "{text}");
    let log = std::fs::read_to_string(cfg.data_dir.join("timeline.jsonl")).unwrap();
    assert_eq!(log.matches("JOB_DONE").count(), 6);
}
