//! `cuzk-bench synth` through the real supervisor and its four stage processes, on the
//! "tiny" synthetic shape (the 32 GiB partition's statistics at test size): every job
//! gets a result record and no proof, every partition passes every stage in order, the
//! summary agrees with the raw events, the waterfall is drawn, a file that is not a
//! synthetic job is refused with its reason, and the synthetic SRS segment is removed.
//!
//! Needs the workspace's binaries beside cuzk-bench (`cargo test --release --workspace`
//! builds them; README's test command).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cuzk_shm_layout::timeline::{names, read_log};

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cuzk-bench synth --shape tiny` with its summary as JSON, the arena and SRS in `shm`.
fn synth(
    bins: &Path,
    data: &Path,
    shm: &Path,
    jobs: u32,
    partitions: u32,
    extra: &[&str],
    run_extra: &[&str],
) -> std::process::Output {
    Command::new(bins.join("cuzk-bench"))
        .args(["synth", "--shape", "tiny", "--json", "--timeout", "240"])
        .args([
            "--jobs",
            &jobs.to_string(),
            "--partitions",
            &partitions.to_string(),
        ])
        .args(extra)
        .arg("--data-dir")
        .arg(data)
        .args(["--", "--slots", "2", "--arena-dir"])
        .arg(shm)
        .args(run_extra)
        .output()
        .unwrap()
}

/// The run's timeline log in its data directory (`synth-<time>.timeline.jsonl`).
fn timeline_log(data: &Path) -> PathBuf {
    std::fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".timeline.jsonl"))
        .expect("a timeline log in the data directory")
}

fn nothing_in(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn synthetic_jobs_run_through_every_stage_and_write_no_proof() {
    let bins = bin_dir();
    for b in [
        "cuzk",
        "cuzk-synthesis",
        "cuzk-host-prep",
        "cuzk-gpu",
        "cuzk-epilogue",
    ] {
        assert!(
            bins.join(b).is_file(),
            "{b} is not built beside cuzk-bench: run the tests with `cargo test --release --workspace`"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let shm = dir.path().join("shm");
    std::fs::create_dir_all(data.join("incoming")).unwrap();
    // A C1-looking file dropped into a synthetic instance: refused, with the reason.
    std::fs::write(data.join("incoming/real.json"), br#"{"SectorNum": 5}"#).unwrap();

    let out = synth(&bins, &data, &shm, 2, 3, &[], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "synth failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let s = &v["synth"];
    assert_eq!(s["jobs_done"], 2);
    assert_eq!(s["partitions_proved"], 6);
    assert_eq!(s["gpu_processes"], 1);
    let t = &v["jobs"]["throughput"];
    assert_eq!(t["done"], 2, "the analysis counts both jobs done");
    assert_eq!(
        t["failed"], 0,
        "a file refused at admission never became a job"
    );

    // Results: a record per job, never a proof.
    let done: Vec<String> = std::fs::read_dir(data.join("done"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(done.len(), 2, "{done:?}");
    assert!(
        done.iter().all(|n| n.ends_with(".synthetic.json")),
        "{done:?}"
    );
    for n in &done {
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(data.join("done").join(n)).unwrap()).unwrap();
        assert_eq!(r["partitions"], 3);
        assert_eq!(r["synthetic"], "tiny");
        assert!(r["proof"].as_str().unwrap().starts_with("none"));
    }
    let reason = std::fs::read_dir(data.join("failed"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "reason"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .expect("real.json refused with a reason file");
    assert!(reason.contains("not a synthetic job"), "{reason}");
    assert!(nothing_in(&data.join("working")));

    // Every partition through the four stages, in order.
    let log = timeline_log(&data);
    let (events, bad) = read_log(&log).unwrap();
    assert_eq!(bad, 0);
    let mut per_partition: BTreeMap<(u64, u32), Vec<(u64, &str)>> = BTreeMap::new();
    for e in &events {
        if let (Some(job), Some(p)) = (e.job, e.partition) {
            per_partition
                .entry((job, p))
                .or_default()
                .push((e.mono_ns, e.event.as_str()));
        }
    }
    assert_eq!(per_partition.len(), 6);
    let order = [
        names::SYNTH_START,
        names::SYNTH_END,
        names::PREP_START,
        names::PREP_END,
        names::GPU_START,
        names::GPU_END,
        names::EPILOGUE_START,
        names::EPILOGUE_END,
    ];
    for (key, evs) in &mut per_partition {
        evs.sort();
        let seen: Vec<&str> = evs
            .iter()
            .map(|(_, n)| *n)
            .filter(|n| order.contains(n))
            .collect();
        assert_eq!(seen, order, "partition {key:?}");
    }
    let gpu_ends = events.iter().filter(|e| e.event == names::GPU_END).count();
    assert_eq!(gpu_ends, 6);

    // The waterfall beside the log, and the synthetic SRS gone from shared memory.
    let svg = std::fs::read_to_string(format!("{}.waterfall.svg", log.display())).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<rect"));
    let left: Vec<_> = std::fs::read_dir(&shm)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.iter().all(|n| !n.to_string_lossy().ends_with(".seg")),
        "{left:?}"
    );

    // Where B_G2 is computed shows in the timeline: host-prep by default without GPUs (the
    // first run), the gpu stage with `--b-g2-msm gpu`, nowhere with --skip-b-g2 (the jobs
    // still complete).
    let b_g2_steps = |data: &Path| {
        let log = timeline_log(data);
        let (events, _) = read_log(&log).unwrap();
        let count = |stage: &str| {
            let ends: Vec<_> = events.iter().filter(|e| e.event == stage).collect();
            let with = ends
                .iter()
                .filter(|e| {
                    serde_json::to_value(e).unwrap()["steps_ms"]
                        .get("msm_b_g2")
                        .is_some()
                })
                .count();
            (ends.len(), with)
        };
        (count(names::PREP_END), count(names::GPU_END))
    };
    assert_eq!(b_g2_steps(&data), ((6, 6), (6, 0)));
    let data2 = dir.path().join("data2");
    let out = synth(&bins, &data2, &shm, 1, 2, &[], &["--b-g2-msm", "gpu"]);
    assert!(out.status.success());
    assert_eq!(b_g2_steps(&data2), ((2, 0), (2, 2)));
    let data3 = dir.path().join("data3");
    let out = synth(
        &bins,
        &data3,
        &shm,
        1,
        2,
        &["--skip-b-g2"],
        &["--b-g2-msm", "gpu"],
    );
    assert!(out.status.success());
    assert_eq!(b_g2_steps(&data3), ((2, 0), (2, 0)));
}

/// One job of 126 partitions, the count of a 32/64 GiB NonInteractivePoRep, past the first
/// word of the job record's done bits: every partition passes every stage once, the job
/// completes once (one result record) and nothing is left in working/.
#[test]
fn a_job_of_126_partitions_runs_through_every_stage_once() {
    let bins = bin_dir();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let shm = dir.path().join("shm");
    let out = synth(&bins, &data, &shm, 1, 126, &["--skip-b-g2"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "synth failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["synth"]["jobs_done"], 1);
    assert_eq!(v["synth"]["partitions_proved"], 126);
    let done: Vec<PathBuf> = std::fs::read_dir(data.join("done"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(done.len(), 1, "{done:?}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&done[0]).unwrap()).unwrap();
    assert_eq!(r["partitions"], 126);
    assert!(nothing_in(&data.join("working")));
    let log = timeline_log(&data);
    let (events, _) = read_log(&log).unwrap();
    let finished = events.iter().filter(|e| e.event == names::JOB_DONE).count();
    assert_eq!(finished, 1, "the job finished once");
    for name in [names::GPU_END, names::EPILOGUE_END] {
        let mut partitions: Vec<u32> = events
            .iter()
            .filter(|e| e.event == name)
            .filter_map(|e| e.partition)
            .collect();
        partitions.sort();
        assert_eq!(partitions, (0..126).collect::<Vec<_>>(), "{name}");
    }
}
