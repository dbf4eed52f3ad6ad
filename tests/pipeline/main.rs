//! End-to-end tests of `cuzk run` on real 2 KiB C1 files: real stage processes, real
//! shared memory, proofs checked with `cuzk verify` (filecoin-proofs verify_seal).
//!
//! Parameters: $CUZK_TEST_PARAM_CACHE (default /var/tmp/cuzk-test-params), made by
//! `cuzk params generate --sector-size 2KiB`. Each 2 KiB proof costs about a minute of
//! the 2-core CI machine, so each test proves several jobs in one supervisor run.

mod harness;
mod non_interactive;

use std::time::Duration;

use base64::Engine;
use cuzk_shm_layout::timeline::{names, read_log};
use cuzk_shm_layout::SlotState;
use harness::{fixture, linked_param_cache, Pipeline};
use serde_json::Value;

const MINUTES: Duration = Duration::from_secs(60);

/// The 2 KiB fixture with `edit` applied to the first challenge of its first partition's
/// vanilla proof (the JSON inside the envelope's base64 `Phase1Out`).
fn edited_c1(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut envelope: Value =
        serde_json::from_slice(&std::fs::read(fixture("porep-2KiB-a.c1.json")).unwrap()).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut inner: Value =
        serde_json::from_slice(&b64.decode(envelope["Phase1Out"].as_str().unwrap()).unwrap())
            .unwrap();
    edit(&mut inner["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]);
    envelope["Phase1Out"] = Value::from(b64.encode(serde_json::to_vec(&inner).unwrap()));
    serde_json::to_vec(&envelope).unwrap()
}

/// One Merkle-path byte flipped: it parses and synthesizes, but its proof cannot verify.
fn tampered_c1() -> Vec<u8> {
    edited_c1(|challenge| {
        let byte =
            &mut challenge["comm_d_proofs"]["data"]["Single"]["path"]["path"][0]["hashes"][0][5];
        *byte = Value::from(byte.as_u64().unwrap() ^ 1);
    })
}

/// The labeling proofs emptied: it parses and is admitted, and upstream's circuit builder
/// panics on it (it indexes `labeling_proofs[0]`).
fn panicking_c1() -> Vec<u8> {
    edited_c1(|challenge| {
        let labeling = &mut challenge["labeling_proofs"];
        assert!(labeling.is_array(), "the fixture's labeling proofs");
        *labeling = Value::Array(vec![]);
    })
}

fn counts(slots: u32, synthesis: u32, host_prep: u32, gpu: u32, epilogue: u32) -> String {
    format!(
        "slots = {slots}\n[stages.synthesis]\ncount = {synthesis}\n[stages.host_prep]\ncount = {host_prep}\n\
         [stages.gpu]\ncount = {gpu}\n[stages.epilogue]\ncount = {epilogue}\n\
         [restart]\ninitial_backoff_ms = 200\n"
    )
}

/// Several files at once, bad ones among them, two processes per stage where the stage
/// allows it, every stage kind killed with SIGKILL while the jobs are in flight, a live
/// rescale by SIGHUP, more jobs than slots: every good job ends in done/ with a proof
/// verify_seal accepts, every bad one in failed/ with its reason, no slot is leaked and
/// memory stays bounded by the slots.
#[test]
fn every_job_ends_verified_or_failed_despite_kills_and_bad_input() {
    let mut p = Pipeline::new(&counts(2, 2, 2, 1, 2));
    p.start(&[]);
    let a = fixture("porep-2KiB-a.c1.json");
    let b = fixture("porep-2KiB-b.c1.json");
    let good = [("a.json", &a), ("b.json", &b), ("a-again.json", &a)];
    for (name, src) in good {
        p.submit(src, name);
    }
    let full = std::fs::read(&a).unwrap();
    p.submit_bytes(b"{\"SectorNum\": 1, \"Phase1Out\": ", "malformed.json");
    p.submit_bytes(&full[..full.len() / 2], "truncated.json");
    p.submit_bytes(&tampered_c1(), "tampered.json");
    p.submit_bytes(&panicking_c1(), "panicking.json");
    // Not a C1 name: left alone in incoming/ with a warning.
    p.submit_bytes(b"notes", "README.txt");

    let arena_len = std::fs::metadata(p.arena().unwrap().path()).unwrap().len();
    let mut rss = vec![p.rss_kb()];
    // Each stage kind killed once while it holds a slot (the epilogue's slot work is a
    // few ms, so it is killed while a job is in the GPU stage instead).
    let mut killed = Vec::new();
    for busy in [
        SlotState::Synthesizing,
        SlotState::Prepping,
        SlotState::Proving,
    ] {
        killed.push(p.kill_owner_of(busy, 10 * MINUTES));
        rss.push(p.rss_kb());
    }
    p.wait_for("a job in the GPU stage", 10 * MINUTES, |p| {
        p.arena().is_some_and(|a| {
            (0..a.slot_count()).any(|s| a.slot_word(s).state == SlotState::Proving)
        })
    });
    let epilogue = p.stage_pid("epilogue").unwrap();
    // SAFETY: kill(2) on a stage of this test's supervisor.
    unsafe { libc::kill(epilogue as i32, libc::SIGKILL) };
    killed.push(epilogue);

    // Scale synthesis down live: the config file says 1 now.
    p.write_config(&counts(2, 1, 2, 1, 2));
    p.signal(libc::SIGHUP);
    // A retiring synthesis process finishes the partition it holds first (minutes here).
    p.wait_for("synthesis scaled to 1", 10 * MINUTES, |p| {
        p.status().is_some_and(|s| {
            s["stages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["stage"] == "synthesis")
                .count()
                == 1
        })
    });

    p.wait_for("all seven C1 files to end", 40 * MINUTES, |p| {
        rss.push(p.rss_kb());
        p.files("done", ".proof").len() + p.files("failed", ".reason").len() == 7
    });
    let proofs = p.files("done", ".proof");
    assert_eq!(
        proofs,
        ["a-again.proof", "a.proof", "b.proof"],
        "{}",
        p.logs()
    );
    for (name, src) in good {
        let proof = name.replace(".json", ".proof");
        assert!(
            p.verifies(src, &proof),
            "{proof} does not verify\n{}",
            p.logs()
        );
    }
    assert_eq!(
        p.files("failed", ".reason"),
        [
            "malformed.reason",
            "panicking.reason",
            "tampered.reason",
            "truncated.reason"
        ]
    );
    let reason = |n| std::fs::read_to_string(p.data.join("failed").join(n)).unwrap();
    // Upstream's panic on the C1's data failed that job, named, and no synthesis process
    // died of it (the one restart the log shows below is the kill).
    assert!(
        reason("panicking.reason").contains("panicking.json")
            && reason("panicking.reason").contains("partition 0")
            && reason("panicking.reason").contains("panicked"),
        "{}",
        reason("panicking.reason")
    );
    assert!(
        reason("tampered.reason").contains("partition 0"),
        "{}",
        reason("tampered.reason")
    );
    assert!(
        reason("truncated.reason").contains("truncated.json"),
        "{}",
        reason("truncated.reason")
    );
    assert!(
        p.files("failed", ".json").len() == 4,
        "inputs kept beside their reasons"
    );
    assert!(p.files("working", "").is_empty());
    assert_eq!(p.files("incoming", ""), ["README.txt"]);

    p.wait_for("status to show all slots free", MINUTES, |p| {
        p.status().is_some_and(|s| {
            s["slots"]
                .as_array()
                .unwrap()
                .iter()
                .all(|x| x["state"] == "free")
                && s["jobs"].as_array().unwrap().is_empty()
        })
    });
    let status = p.status().unwrap();
    // Each kill was seen and answered with a restart. (The status keeps restart counts per
    // process position; the SIGHUP above may have retired the synthesis position that was
    // killed, so the supervisor's log is the record for every stage.)
    let logs = p.logs();
    for stage in ["synthesis", "host-prep", "gpu", "epilogue"] {
        assert!(
            logs.lines().any(|l| l.contains(&format!("cuzk: {stage} #"))
                && l.contains("SIGKILL")
                && l.contains("restart scheduled")),
            "{stage} was killed but no restart was scheduled\n{logs}"
        );
    }
    // Only the kill ended a synthesis process: the panic on panicking.json did not.
    let synthesis_exits = logs
        .lines()
        .filter(|l| l.contains("cuzk: synthesis #") && l.contains("restart scheduled"))
        .count();
    assert_eq!(synthesis_exits, 1, "{logs}");
    for stage in ["host-prep", "gpu", "epilogue"] {
        let restarts: u64 = status["stages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["stage"] == stage)
            .map(|x| x["restarts"].as_u64().unwrap())
            .sum();
        assert!(
            restarts >= 1,
            "{stage} was killed but not restarted: {status}"
        );
    }
    assert_eq!(status["done_total"], 3);
    assert_eq!(status["failed_total"], 4);
    // Memory: the arena never grows, shared memory is the arena plus one SRS segment, and
    // the processes' private memory does not grow with the number of jobs (seven jobs
    // through two slots): the last samples stay within the early peak plus a margin for
    // allocator noise.
    assert_eq!(
        std::fs::metadata(p.arena().unwrap().path()).unwrap().len(),
        arena_len
    );
    assert!(
        p.shm_bytes() < arena_len + 1_300_000_000,
        "shared memory beyond arena + SRS"
    );
    let early = rss[..rss.len() / 3].iter().max().copied().unwrap_or(0);
    let late = rss[rss.len() * 2 / 3..].iter().max().copied().unwrap_or(0);
    eprintln!(
        "rss early peak {early} kB, late peak {late} kB, {} samples",
        rss.len()
    );
    assert!(
        late <= early + early / 4 + 200_000,
        "memory grew: {early} kB then {late} kB"
    );

    // What an operator sees: `cuzk status` in both forms, while running and after.
    let (code, text) = p.cuzk_status(&[]);
    assert_eq!(code, Some(0), "{text}");
    for want in [
        "running",
        "3 done, 4 failed",
        "slots:",
        "synthesis",
        "host-prep",
        "gpu",
        "epilogue",
    ] {
        assert!(text.contains(want), "status lacks {want:?}:\n{text}");
    }
    let (code, json) = p.cuzk_status(&["--json"]);
    assert_eq!(code, Some(0));
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["running"], true);
    assert_eq!(json["done_total"], 3);

    p.signal(libc::SIGTERM);
    assert_eq!(p.wait_exit(2 * MINUTES), Some(0), "{}", p.logs());
    let (code, text) = p.cuzk_status(&[]);
    assert_eq!(
        code,
        Some(3),
        "a stopped supervisor is reported as not running: {text}"
    );
    assert!(text.contains("NOT RUNNING"), "{text}");
}

/// The supervisor itself killed with SIGKILL in the middle of a job, restarted; then
/// SIGTERM while busy drains and exits 0, and a restart finishes the rest: every job
/// proved exactly once into done/, nothing left in working/. B_G2 is computed by the gpu
/// stage here (`b_g2_msm = "gpu"`, the default on machines with GPUs; the CPU device
/// without one), so its proofs verifying checks that path too.
#[test]
fn supervisor_crash_and_drain_lose_nothing_and_prove_nothing_twice() {
    let mut p = Pipeline::new(&format!("b_g2_msm = \"gpu\"\n{}", counts(1, 1, 1, 1, 1)));
    p.start(&[]);
    let a = fixture("porep-2KiB-a.c1.json");
    let b = fixture("porep-2KiB-b.c1.json");
    p.submit(&a, "one.json");
    p.submit(&b, "two.json");
    p.submit(&a, "three.json");

    p.wait_for("the first job in the GPU stage", 10 * MINUTES, |p| {
        p.arena().is_some_and(|a| {
            (0..a.slot_count()).any(|s| a.slot_word(s).state == SlotState::Proving)
        })
    });
    let stage = p.stage_pid("gpu").unwrap();
    p.signal(libc::SIGKILL);
    p.wait_exit(MINUTES);
    // Its stages die with it (PDEATHSIG), so nothing keeps writing the old arena.
    p.wait_for("the stages to die with the supervisor", MINUTES, |_| {
        !std::path::Path::new(&format!("/proc/{stage}")).exists()
    });
    assert!(
        !p.files("working", ".json").is_empty(),
        "the claimed job stays in working/"
    );

    p.start(&[]);
    p.wait_for("a first proof", 20 * MINUTES, |p| {
        !p.files("done", ".proof").is_empty()
    });
    p.wait_for("another job in flight", 10 * MINUTES, |p| {
        p.arena()
            .is_some_and(|a| (0..a.slot_count()).any(|s| a.slot_word(s).state != SlotState::Free))
    });
    p.signal(libc::SIGTERM);
    assert_eq!(
        p.wait_exit(20 * MINUTES),
        Some(0),
        "drain did not exit cleanly\n{}",
        p.logs()
    );

    p.start(&["--exit-when-idle"]);
    assert_eq!(p.wait_exit(30 * MINUTES), Some(0), "{}", p.logs());
    assert_eq!(
        p.files("done", ".proof"),
        ["one.proof", "three.proof", "two.proof"]
    );
    for (name, src) in [("one", &a), ("two", &b), ("three", &a)] {
        assert!(
            p.verifies(src, &format!("{name}.proof")),
            "{name} does not verify"
        );
    }
    assert!(p.files("working", "").is_empty());
    assert!(p.files("incoming", "").is_empty());
    assert!(p.files("failed", "").is_empty(), "{}", p.logs());
    // B_G2 ran in the gpu stage, not in host-prep.
    let (events, _) = read_log(&p.data.join("timeline.jsonl")).unwrap();
    let has_b_g2 = |e: &&cuzk_shm_layout::TimelineEvent| {
        serde_json::to_value(e).unwrap()["steps_ms"]
            .get("msm_b_g2")
            .is_some()
    };
    let ends = |name| events.iter().filter(move |e| e.event == name);
    assert!(ends(names::GPU_END).count() >= 3 && ends(names::GPU_END).all(|e| has_b_g2(&e)));
    assert!(ends(names::PREP_END).count() >= 3 && !ends(names::PREP_END).any(|e| has_b_g2(&e)));
}

/// One real 2 KiB job through every stage (one process each) with `env` set for them:
/// its proof written and verified, nothing failed, and the stages' logs saying each of
/// `said` and none of `not_said`. Returns the finished pipeline for further looks.
fn one_2kib_job_proves_and_verifies(
    env: &[(&str, &str)],
    said: &[&str],
    not_said: &[&str],
) -> Pipeline {
    let a = fixture("porep-2KiB-a.c1.json");
    one_job_proves_and_verifies(
        &counts(1, 1, 1, 1, 1),
        &std::fs::read(&a).unwrap(),
        env,
        said,
        not_said,
    )
}

/// [`one_2kib_job_proves_and_verifies`] with the configuration and the submitted bytes
/// given (the proof is verified against the fixture, MinerID and all).
fn one_job_proves_and_verifies(
    config: &str,
    c1: &[u8],
    env: &[(&str, &str)],
    said: &[&str],
    not_said: &[&str],
) -> Pipeline {
    let mut p = Pipeline::new(config);
    let a = fixture("porep-2KiB-a.c1.json");
    p.submit_bytes(c1, "a.json");
    p.start_with_env(&["--exit-when-idle"], env);
    assert_eq!(p.wait_exit(30 * MINUTES), Some(0), "{}", p.logs());
    assert_eq!(p.files("done", ".proof"), ["a.proof"], "{}", p.logs());
    assert!(p.verifies(&a, "a.proof"), "a does not verify");
    assert!(p.files("failed", "").is_empty(), "{}", p.logs());
    let logs = p.logs();
    for s in said {
        assert!(logs.contains(s), "no {s:?} in the logs:\n{logs}");
    }
    for s in not_said {
        assert!(!logs.contains(s), "{s:?} in the logs:\n{logs}");
    }
    p
}

/// a and b left to the prover (the default; `CUZK_SYNTHESIS_AB` unset, which every stage
/// reads): the supervisor sizes the slots without room for them, synthesis writes the
/// assignment only, the gpu stage records the R1CS of the job's proof type and its device
/// (here the CPU's) makes a and b from it, every row checked; the proofs verify. The gpu
/// stage records the R1CS while it waits for the job's first partition (GPU_READIED
/// before the first GPU_START: here ~2.3 s of recording against ~4.9 s of synthesis and
/// host-prep), once.
#[test]
fn a_and_b_left_to_the_prover_by_default_prove_and_verify() {
    let p = one_2kib_job_proves_and_verifies(
        &[],
        &[
            "no a and b: the prover makes them",
            "a and b left to the prover (CUZK_SYNTHESIS_AB=prover, the default)",
            "a and b are made by this device from the assignment",
            "cuzk-gpu: readied for job 1 before its first partition",
        ],
        &[],
    );
    let logs = p.logs();
    assert_eq!(logs.matches("cuzk-gpu: R1CS of").count(), 1, "{logs}");
    let (events, _) = read_log(&p.data.join("timeline.jsonl")).unwrap();
    let first = |name| {
        events
            .iter()
            .filter(|e| e.event == name && e.job == Some(1))
            .map(|e| e.mono_ns)
            .min()
    };
    let (readied, started) = (first(names::GPU_READIED), first(names::GPU_START));
    assert!(
        readied.is_some() && readied < started,
        "GPU_READIED {readied:?} not before the first GPU_START {started:?}"
    );
    // Its steps: the R1CS recording and the whole readying, which began after the claim
    // (the waterfall draws it from there).
    let event = events
        .iter()
        .find(|e| e.event == names::GPU_READIED && e.job == Some(1))
        .unwrap();
    let step = |k| event.steps_ms.get(k).copied().unwrap_or(0.0);
    let (record, total) = (step("record_circuit"), step(names::READIED_TOTAL));
    assert!(0.0 < record && record <= total, "{:?}", event.steps_ms);
    let began_ns = event.mono_ns - (total * 1e6) as u64;
    assert!(began_ns >= first(names::JOB_CLAIMED).unwrap(), "{event:?}");
}

/// `CUZK_SYNTHESIS_AB=synthesis`: the slots keep room for a and b, synthesis writes them
/// (every row checked there), the gpu stage records no R1CS and its device takes the
/// slot's a and b; the proofs verify. The file is a lotus envelope as lotus writes it, with
/// no MinerID: the prover id comes from the configured `miner_id` (the fixture's 1000), and
/// the proof verifies against the fixture's own ids.
#[test]
fn a_and_b_written_by_synthesis_prove_and_verify() {
    let mut envelope: Value =
        serde_json::from_slice(&std::fs::read(fixture("porep-2KiB-a.c1.json")).unwrap()).unwrap();
    assert_eq!(envelope["MinerID"], 1000);
    envelope.as_object_mut().unwrap().remove("MinerID");
    one_job_proves_and_verifies(
        &format!("miner_id = 1000\n{}", counts(1, 1, 1, 1, 1)),
        &serde_json::to_vec(&envelope).unwrap(),
        &[("CUZK_SYNTHESIS_AB", "synthesis")],
        &["a and b written by synthesis (CUZK_SYNTHESIS_AB=synthesis)"],
        &[
            "no a and b: the prover makes them",
            "a and b are made by this device from the assignment",
        ],
    );
}

/// Slots hold no c (synthesis leaves C's values out; every prover makes c = a∘b, here the
/// CPU device). With `CUZK_GPU_H_FORM=folded` the gpu stage also records the circuit's C
/// for a prover that folds it into L, a run of challenges per thread for the job's proof
/// type; on the CPU device the proof is the coefficient form's and must verify.
#[test]
fn folded_form_records_c_and_the_cpu_device_still_proves() {
    // "entries; a run of challenges per thread": C recorded by runs of challenges.
    one_2kib_job_proves_and_verifies(
        &[("CUZK_GPU_H_FORM", "folded")],
        &["entries; a run of challenges per thread"],
        &[],
    );
}

/// The epilogue that becomes the job's finisher dies (aborts, through the test hook
/// `CUZK_TEST_EPILOGUE_ABORT_ONCE`) before writing the proof: it still held the job's last
/// slot, so recovery gives the slot back, the restarted epilogue redoes it, finds the job
/// complete, takes the finish over from the dead pid and writes the verified proof.
#[test]
fn a_finisher_that_dies_before_writing_leaves_the_job_to_its_restart() {
    let marker = std::env::temp_dir().join(format!(
        "cuzk-test-epilogue-abort-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let p = one_2kib_job_proves_and_verifies(
        &[("CUZK_TEST_EPILOGUE_ABORT_ONCE", marker.to_str().unwrap())],
        &["aborting as a job's finisher"],
        &[],
    );
    assert!(marker.exists(), "the hook never fired");
    let _ = std::fs::remove_file(&marker);
    let logs = p.logs();
    assert!(
        logs.lines().any(|l| l.contains("cuzk: epilogue #")
            && l.contains("1 slot(s) recovered")
            && l.contains("restart scheduled")),
        "the finisher's death did not leave its slot to recovery\n{logs}"
    );
}

/// done/ and failed/ unwritable while jobs are in flight (each replaced by a plain file:
/// writes there fail, as on a full disk), then mended: the epilogue holding a verified
/// proof keeps it and retries the write, the supervisor keeps running and retries moving
/// the failed job, and no stage exits. Once mended, the good job's proof is in done/ and
/// verifies, the bad one is in failed/ with its reason, and nothing was proved twice.
#[test]
fn an_unwritable_drop_directory_pauses_the_jobs_and_loses_none() {
    let mut p = Pipeline::new(&counts(2, 1, 1, 1, 2));
    let a = fixture("porep-2KiB-a.c1.json");
    p.submit(&a, "a.json");
    p.submit_bytes(&tampered_c1(), "t.json");
    p.start(&["--exit-when-idle"]);
    p.wait_for("both jobs claimed", 5 * MINUTES, |p| {
        p.files("working", ".json").len() == 2
    });
    let dirs = ["done", "failed"].map(|d| p.data.join(d));
    for dir in &dirs {
        std::fs::rename(dir, dir.with_extension("away")).unwrap();
        std::fs::write(dir, b"not a directory").unwrap();
    }
    p.wait_for("both writes failing", 20 * MINUTES, |p| {
        let logs = p.logs();
        logs.contains("job a.json: writing the verified proof")
            && logs.contains("the job and its slot wait")
            && logs.contains("cuzk: moving failed jobs to failed/ failed")
    });
    assert!(p.files("working", ".json").len() == 2, "{}", p.logs());
    p.wait_for("the trouble in status.json", MINUTES, |p| {
        p.status().is_some_and(|s| {
            s["trouble"]
                .as_str()
                .is_some_and(|t| t.contains("moving failed jobs to failed/ failing"))
        })
    });
    // done/ mended first: the proof lands there though failed/ is still broken.
    for dir in &dirs {
        std::fs::remove_file(dir).unwrap();
        std::fs::rename(dir.with_extension("away"), dir).unwrap();
        if dir.ends_with("done") {
            p.wait_for("a's proof, failed/ still broken", 5 * MINUTES, |p| {
                p.files("done", ".proof") == ["a.proof"]
            });
        }
    }
    assert_eq!(p.wait_exit(10 * MINUTES), Some(0), "{}", p.logs());
    assert_eq!(p.files("done", ".proof"), ["a.proof"], "{}", p.logs());
    assert!(p.verifies(&a, "a.proof"), "a does not verify");
    assert_eq!(
        p.files("failed", ""),
        ["t.json", "t.reason"],
        "{}",
        p.logs()
    );
    let reason = std::fs::read_to_string(p.data.join("failed/t.reason")).unwrap();
    // Its data fails the recorded R1CS's check on the prover (or, with a and b made by
    // synthesis, its proof fails verification): either way a reason naming the partition.
    assert!(reason.contains("reason: partition 0: "), "{reason}");
    assert!(p.files("working", "").is_empty(), "{}", p.logs());
    let logs = p.logs();
    assert!(
        logs.contains("cuzk: moving failed jobs to failed/ works again"),
        "{logs}"
    );
    assert!(
        !logs.contains("restart scheduled"),
        "a stage exited\n{logs}"
    );
    assert_eq!(
        logs.matches(") claimed").count(),
        2,
        "claimed once each\n{logs}"
    );
}

/// CUDA errors on a partition, through the test hook `CUZK_TEST_GPU_ERRORS` (the CPU device
/// has none to provoke): the first try ends in a retryable error, the slot goes back and
/// the same process tries again; that try loses its context, the process exits and is
/// restarted; the third try proves. Both count in the job record (2 of the 4 that would
/// fail the job), and the proof verifies.
#[test]
fn cuda_errors_on_a_partition_are_retried_and_the_proof_verifies() {
    let markers = tempfile::tempdir().unwrap();
    let p = one_2kib_job_proves_and_verifies(
        &[("CUZK_TEST_GPU_ERRORS", markers.path().to_str().unwrap())],
        &[
            "CUDA error in `CUZK_TEST_GPU_ERRORS`",
            "(context still usable)",
            "device context lost",
        ],
        &[],
    );
    for marker in ["retryable", "context-lost"] {
        assert!(
            markers.path().join(marker).exists(),
            "no {marker} error made"
        );
    }
    let logs = p.logs();
    assert!(
        logs.lines()
            .any(|l| l.contains("cuzk: gpu #") && l.contains("restart scheduled")),
        "the lost context did not restart the gpu process\n{logs}"
    );
}

/// A verifying key gone while the supervisor runs (a parameter cache being fetched again)
/// is this machine's trouble, not the file's: the job waits in incoming/, the status says
/// why, and it is proved once the key is back; nothing goes to failed/.
#[test]
fn a_job_waits_in_incoming_while_its_verifying_key_is_away() {
    let cache = linked_param_cache();
    let vk = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "vk"))
        .expect("the 2 KiB verifying key in the test parameter cache");
    let mut p = Pipeline::new(&counts(1, 1, 1, 1, 1));
    p.write_config_with_cache(cache.path(), &counts(1, 1, 1, 1, 1));
    p.start(&[]);
    let away = vk.with_extension("away");
    std::fs::rename(&vk, &away).unwrap();
    let a = fixture("porep-2KiB-a.c1.json");
    p.submit(&a, "a.json");
    p.wait_for("a.json waiting, the status saying why", 2 * MINUTES, |p| {
        p.status().is_some_and(|s| {
            s["trouble"].as_str().is_some_and(|t| {
                t.contains("1 file(s) wait in incoming/") && t.contains(vk.to_str().unwrap())
            })
        })
    });
    assert_eq!(p.files("incoming", ".json"), ["a.json"], "{}", p.logs());
    assert!(p.files("failed", "").is_empty(), "{}", p.logs());
    std::fs::rename(&away, &vk).unwrap();
    // Well inside the 10 minutes after which a waiting file is checked anyway: noticed
    // because the key came back.
    p.wait_for("a's proof, once the key is back", 4 * MINUTES, |p| {
        p.files("done", ".proof") == ["a.proof"]
    });
    assert!(p.verifies(&a, "a.proof"), "a does not verify");
    p.wait_for("the trouble gone from the status", MINUTES, |p| {
        p.status().is_some_and(|s| s["trouble"].is_null())
    });
    p.signal(libc::SIGTERM);
    assert_eq!(p.wait_exit(5 * MINUTES), Some(0), "{}", p.logs());
    assert!(p.files("failed", "").is_empty(), "{}", p.logs());
    let logs = p.logs();
    assert!(logs.contains("a.json waits in incoming/"), "{logs}");
    assert_eq!(logs.matches(") claimed").count(), 1, "claimed once\n{logs}");
}

/// The parameter file gone after its job was admitted (a cache fetched again) is this
/// machine's trouble too: host-prep, unable to load the proving key, gives the slot back
/// uncounted and restarts after back-off while the job waits in working/; once the file is
/// back the job is proved and verifies, and nothing goes to failed/. Before, host-prep
/// failed the job at once.
#[test]
fn an_admitted_job_waits_while_its_parameter_file_is_away() {
    let cache = linked_param_cache();
    let params = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "params"))
        .expect("the 2 KiB parameters in the test parameter cache");
    let mut p = Pipeline::new(&counts(1, 1, 1, 1, 1));
    p.write_config_with_cache(cache.path(), &counts(1, 1, 1, 1, 1));
    p.start(&[]);
    let a = fixture("porep-2KiB-a.c1.json");
    p.submit(&a, "a.json");
    // Admitted (claimed into working/), then the file goes, before host-prep's first
    // partition (its synthesis takes seconds).
    p.wait_for("a.json claimed", 2 * MINUTES, |p| {
        p.files("working", ".json") == ["a.json"]
    });
    let away = params.with_extension("away");
    std::fs::rename(&params, &away).unwrap();
    p.wait_for("host-prep giving the slot back", 3 * MINUTES, |p| {
        p.logs()
            .contains("the SRS cannot be loaded on this machine, its jobs wait")
    });
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(p.files("working", ".json"), ["a.json"], "{}", p.logs());
    assert!(p.files("failed", "").is_empty(), "{}", p.logs());
    std::fs::rename(&away, &params).unwrap();
    p.wait_for(
        "a's proof, once the parameters are back",
        5 * MINUTES,
        |p| p.files("done", ".proof") == ["a.proof"],
    );
    assert!(p.verifies(&a, "a.proof"), "a does not verify");
    p.signal(libc::SIGTERM);
    assert_eq!(p.wait_exit(5 * MINUTES), Some(0), "{}", p.logs());
    assert!(p.files("failed", "").is_empty(), "{}", p.logs());
}
