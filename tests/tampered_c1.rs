//! A C1 whose vanilla proof was tampered with (one byte of a Merkle path flipped) must not
//! become a proof: synthesis still runs, the circuit is unsatisfied, the proof fails the
//! verify_seal self-check, `cuzk prove` exits non-zero naming the file and the failing
//! partition, and nothing is written.
//!
//! Reads the 2 KiB parameters from $CUZK_TEST_PARAM_CACHE (default /var/tmp/cuzk-test-params).

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use serde_json::Value;

fn param_cache() -> PathBuf {
    std::env::var_os("CUZK_TEST_PARAM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/cuzk-test-params"))
}

/// The 2 KiB fixture with bit 0 of byte 5 of the first comm_d Merkle path hash flipped.
fn tampered_fixture(dir: &Path) -> PathBuf {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/porep-2KiB-a.c1.json");
    let mut envelope: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut inner: Value =
        serde_json::from_slice(&b64.decode(envelope["Phase1Out"].as_str().unwrap()).unwrap())
            .unwrap();
    let byte = &mut inner["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["comm_d_proofs"]["data"]
        ["Single"]["path"]["path"][0]["hashes"][0][5];
    let flipped = byte.as_u64().expect("a Merkle path byte") ^ 1;
    *byte = Value::from(flipped);
    envelope["Phase1Out"] = Value::from(b64.encode(serde_json::to_vec(&inner).unwrap()));
    let path = dir.join("tampered.c1.json");
    std::fs::write(&path, serde_json::to_vec(&envelope).unwrap()).unwrap();
    path
}

#[test]
fn tampered_vanilla_proof_fails_the_self_check_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c1 = tampered_fixture(dir.path());
    let out = dir.path().join("tampered.proof");
    let output = Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args([
            "prove",
            "--c1",
            c1.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args([
            "--param-cache",
            param_cache().to_str().unwrap(),
            "--trust-params",
        ])
        .env_remove("FIL_PROOFS_PARAMETER_CACHE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "a tampered C1 was proved: {stderr}"
    );
    assert!(
        stderr.contains("tampered.c1.json"),
        "error does not name the file: {stderr}"
    );
    assert!(
        stderr.contains("partition 0"),
        "error does not name the partition: {stderr}"
    );
    assert!(!out.exists(), "a proof file was written for a tampered C1");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "files left beside the C1: {leftovers:?}"
    );
}
