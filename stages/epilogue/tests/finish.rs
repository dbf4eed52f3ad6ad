//! The epilogue on a real 2 KiB proof: a valid proof is written with its result; an invalid
//! one is an error naming the job and partition, and nothing is written.
//!
//! The proof is made here with bellperson's prover over the test parameters
//! (`$CUZK_TEST_PARAM_CACHE`, default /var/tmp/cuzk-test-params).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use cuzk_c1::{C1Input, GivenIds};
use cuzk_epilogue::{finish_job, result_path, EpilogueError, PartitionProof};
use cuzk_synthesis::with_porep_circuits;

use common::ProveWithBellperson;

fn c1() -> &'static C1Input {
    static C1: OnceLock<C1Input> = OnceLock::new();
    C1.get_or_init(|| {
        // SETTINGS is read once per process: set the cache before any filecoin code runs.
        let cache = std::env::var("CUZK_TEST_PARAM_CACHE")
            .unwrap_or_else(|_| "/var/tmp/cuzk-test-params".to_string());
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", cache);
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json");
        C1Input::read(&file, GivenIds::default()).unwrap()
    })
}

fn partition_proofs() -> &'static [PartitionProof] {
    static PROOFS: OnceLock<Vec<PartitionProof>> = OnceLock::new();
    PROOFS.get_or_init(|| with_porep_circuits(c1(), ProveWithBellperson).unwrap())
}

fn out_dir() -> PathBuf {
    tempfile::tempdir().unwrap().keep()
}

#[test]
fn valid_proof_is_written_with_its_result() {
    let dir = out_dir();
    let proof_path = dir.join("a.proof");
    let timings = BTreeMap::from([("prove".to_string(), Duration::from_millis(1500))]);
    let finished = finish_job("job-a", c1(), partition_proofs(), timings, &proof_path).unwrap();

    assert_eq!(finished.proof, partition_proofs()[0].0.to_vec());
    assert_eq!(std::fs::read(&proof_path).unwrap(), finished.proof);
    assert_eq!(finished.result_path, result_path(&proof_path));
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&finished.result_path).unwrap()).unwrap();
    assert_eq!(result["job"], "job-a");
    assert_eq!(result["miner_id"], 1000);
    assert_eq!(result["timings_ms"]["prove"], 1500.0);
    assert!(result["timings_ms"]["verify"].is_number());
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "proof and result only"
    );
}

#[test]
fn invalid_proof_names_job_and_partition_and_writes_nothing() {
    let mut tampered = partition_proofs().to_vec();
    // B negated is still a valid G2 point (flip the sign bit of its compressed form).
    tampered[0].0[48] ^= 0x20;
    let dir = out_dir();
    let proof_path = dir.join("bad.proof");
    let err = finish_job("job-bad", c1(), &tampered, BTreeMap::new(), &proof_path).unwrap_err();

    match &err {
        EpilogueError::InvalidProof {
            job, partitions, ..
        } => {
            assert_eq!(job, "job-bad");
            assert_eq!(partitions, &[0]);
        }
        other => panic!("expected InvalidProof, got {other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("job job-bad") && message.contains("partition 0"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn wrong_partition_count_is_refused_before_verifying() {
    let two = [partition_proofs()[0], partition_proofs()[0]];
    let dir = out_dir();
    let err = finish_job("job-2", c1(), &two, BTreeMap::new(), &dir.join("p")).unwrap_err();
    assert!(
        matches!(
            err,
            EpilogueError::PartitionCount {
                found: 2,
                expected: 1,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn garbage_points_are_named_by_partition() {
    let garbage = [PartitionProof([0xff; 192])];
    let dir = out_dir();
    let err = finish_job("job-g", c1(), &garbage, BTreeMap::new(), &dir.join("p")).unwrap_err();
    assert!(
        matches!(
            err,
            EpilogueError::MalformedPartitionProof { partition: 0, .. }
        ),
        "{err}"
    );
}
