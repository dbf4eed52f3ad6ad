//! NonInteractivePoRep end to end: a 2 KiB C1 of that type, sealed here by filecoin-proofs
//! (`cuzk fixture seal`), has 13 partitions whose proofs the epilogue aggregates with
//! SnarkPack; the aggregate must pass `verify_seal` (its NonInteractivePoRep path,
//! `verify_aggregate_seal_commit_proofs`), and a missing inner-product SRS must be named
//! before any proving.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::harness::{linked_param_cache, param_cache, Pipeline};
use crate::{counts, MINUTES};

const NI_2KIB: &str = "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep";
const SRS_FILE: &str = "v28-fil-inner-product-v1.srs";

fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .env_remove("FIL_PROOFS_PARAMETER_CACHE")
        .output()
        .expect("running cuzk")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A NonInteractivePoRep 2 KiB C1 sealed once per test run (well under a second), and the
/// test cache's random inner-product SRS made if it is not there yet (under a second; the
/// Groth16 parameters are the interactive type's, already in the cache).
fn ni_c1() -> &'static Path {
    static C1: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = C1.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = cuzk(&[
            "fixture",
            "seal",
            "--sector-size",
            "2KiB",
            "--proof-type",
            NI_2KIB,
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let path = PathBuf::from(text(&out.stdout).trim());
        let cache = param_cache();
        let out = cuzk(&[
            "params",
            "generate",
            "--sector-size",
            "2KiB",
            "--proof-type",
            NI_2KIB,
            "--param-cache",
            cache.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(cache.join(SRS_FILE).is_file());
        (dir, path)
    });
    path
}

/// A parameter cache with the test cache's 2 KiB Groth16 files (linked) and no SRS.
fn cache_without_srs() -> tempfile::TempDir {
    linked_param_cache()
}

/// Without the inner-product SRS, `cuzk prove` and `cuzk verify` stop at once (exit 2)
/// naming the file: nothing is proved that could not be aggregated or checked.
#[test]
fn a_missing_inner_product_srs_is_named_before_any_proving() {
    let c1 = ni_c1();
    let cache = cache_without_srs();
    let srs = cache.path().join(SRS_FILE);
    let out_dir = tempfile::tempdir().unwrap();
    let proof = out_dir.path().join("ni.proof");
    std::fs::write(&proof, [0u8; 192]).unwrap();
    let c1 = c1.to_str().unwrap();
    let cache = cache.path().to_str().unwrap();
    let prove_out = out_dir.path().join("proved.proof");
    for args in [
        vec!["prove", "--c1", c1, "--out", prove_out.to_str().unwrap()],
        vec!["verify", "--c1", c1, "--proof", proof.to_str().unwrap()],
    ] {
        let started = std::time::Instant::now();
        let out = cuzk(&[&args[..], &["--param-cache", cache]].concat());
        let message = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(srs.to_str().unwrap()), "{message}");
        assert!(message.contains("inner-product SRS"), "{message}");
        assert!(message.contains(NI_2KIB), "{message}");
        assert!(started.elapsed() < MINUTES, "{args:?} proved first");
    }
    assert!(!prove_out.exists());
}

/// The pipeline refuses a NonInteractivePoRep job at admission when the SRS is missing and
/// was missing at its start (a machine that never had it, whose files would otherwise wait
/// for ever): to failed/ with a reason naming the file, nothing proved, the supervisor
/// exits 0. (One gone while it runs makes the file wait instead, as the verifying key's
/// absence does in `a_job_waits_in_incoming_while_its_verifying_key_is_away`.)
#[test]
fn the_pipeline_refuses_a_non_interactive_job_without_its_srs() {
    let c1 = ni_c1();
    let cache = cache_without_srs();
    let mut p = Pipeline::new(&counts(1, 1, 1, 1, 1));
    p.write_config_with_cache(cache.path(), &counts(1, 1, 1, 1, 1));
    p.submit(c1, "ni.json");
    p.start(&["--exit-when-idle"]);
    assert_eq!(p.wait_exit(5 * MINUTES), Some(0), "{}", p.logs());
    assert!(p.files("done", "").is_empty(), "{}", p.logs());
    assert!(p.files("incoming", ".json").is_empty(), "{}", p.logs());
    let reason = std::fs::read_to_string(p.data.join("failed/ni.reason")).unwrap();
    for said in [
        cache.path().join(SRS_FILE).to_str().unwrap(),
        "inner-product SRS",
        "lacked it at its start",
    ] {
        assert!(reason.contains(said), "no {said:?} in: {reason}");
    }
    let timeline = std::fs::read_to_string(p.data.join("timeline.jsonl")).unwrap_or_default();
    assert!(!timeline.contains("SYNTH_START"), "{timeline}");
}

/// The pipeline proves the 13 partitions across its slots, aggregates them and writes the
/// aggregate only once `verify_seal` accepted it; `cuzk verify` accepts it too and
/// rejects it with one byte flipped. A second job of the same C1, whose partition 5 the gpu
/// stage gets wrong (test hook `CUZK_TEST_WRONG_SUM`: H doubled), goes to failed/ with a
/// reason naming partition 5 alone: a rejected aggregate is diagnosed by its partition
/// proofs, each checked against the verifying key.
#[test]
fn a_non_interactive_porep_job_is_aggregated_and_verifies() {
    let c1 = ni_c1();
    let mut p = Pipeline::new(&counts(2, 2, 1, 1, 1));
    p.submit(c1, "ni.json");
    p.submit(c1, "ni-wrong.json");
    p.start_with_env(
        &["--exit-when-idle"],
        &[("CUZK_TEST_WRONG_SUM", "ni-wrong.json:5")],
    );
    assert_eq!(p.wait_exit(40 * MINUTES), Some(0), "{}", p.logs());
    assert_eq!(p.files("done", ".proof"), ["ni.proof"], "{}", p.logs());
    assert_eq!(
        p.files("failed", ""),
        ["ni-wrong.json", "ni-wrong.reason"],
        "{}",
        p.logs()
    );
    let reason = std::fs::read_to_string(p.data.join("failed/ni-wrong.reason")).unwrap();
    assert!(reason.contains("invalid proof"), "{reason}");
    assert!(reason.contains("partition 5:"), "{reason}");
    let named = (0..13)
        .filter(|k| reason.contains(&format!("partition {k}:")))
        .count();
    assert_eq!(named, 1, "only partition 5 is bad: {reason}");
    assert!(p.verifies(c1, "ni.proof"), "the aggregate does not verify");
    let done = p.data.join("done");
    let aggregate = std::fs::read(done.join("ni.proof")).unwrap();
    // SnarkPack's aggregate, not 13 proofs of 192 bytes laid end to end.
    assert_ne!(aggregate.len(), 13 * 192);
    let mut flipped = aggregate.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 1;
    std::fs::write(done.join("flipped.proof"), &flipped).unwrap();
    // verify_seal refuses it: exit 1 (invalid), or exit 2 with its own error when the
    // flipped byte breaks a point's encoding; never a failure to read the files.
    let out = cuzk(&[
        "verify",
        "--c1",
        c1.to_str().unwrap(),
        "--proof",
        done.join("flipped.proof").to_str().unwrap(),
        "--param-cache",
        param_cache().to_str().unwrap(),
    ]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    match out.status.code() {
        Some(1) => assert!(said.contains("invalid"), "{said}"),
        Some(2) => assert!(said.contains("verify_seal could not run"), "{said}"),
        other => panic!("exit {other:?}: {said}"),
    }
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(done.join("ni.json")).unwrap()).unwrap();
    assert_eq!(result["proof_type"], NI_2KIB);
    assert_eq!(result["proof_len"], aggregate.len());
}
