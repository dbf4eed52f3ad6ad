//! End-to-end tests of the `cuzk` binary on real C1 files: every bad input fails with a
//! non-zero exit and a message naming the file and the problem; a proof made by `cuzk prove`
//! verifies, and a tampered one does not.
//!
//! The 2 KiB Groth16 parameters are read from the test parameter cache,
//! `$CUZK_TEST_PARAM_CACHE` or /var/tmp/cuzk-test-params (CI's `.ci/run` makes them with
//! `cuzk params generate --sector-size 2KiB`). Missing parameters fail the tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use base64::Engine;
use serde_json::Value;

const FIXTURE_2KIB: &str = "porep-2KiB-a.c1.json";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn param_cache() -> PathBuf {
    std::env::var_os("CUZK_TEST_PARAM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/cuzk-test-params"))
}

/// A scratch directory kept for the whole test run (proofs are shared between tests).
fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .env_remove("FIL_PROOFS_PARAMETER_CACHE")
        .env_remove("FIL_PROOFS_VERIFY_PRODUCTION_PARAMS")
        .output()
        .expect("running cuzk")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Runs `cuzk verify` with `c1` and a proof file, against the test parameters.
fn verify(c1: &Path, proof: &Path, extra: &[&str]) -> Output {
    let cache = param_cache();
    let mut args = vec![
        "verify",
        "--c1",
        path_str(c1),
        "--proof",
        path_str(proof),
        "--param-cache",
        path_str(&cache),
    ];
    args.extend_from_slice(extra);
    cuzk(&args)
}

/// Asserts exit status 2 and a message naming `file` and containing `problem`.
fn assert_error(output: &Output, file: &Path, problem: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {message}");
    assert!(
        message.contains(path_str(file)),
        "no file name in: {message}"
    );
    assert!(message.contains(problem), "no {problem:?} in: {message}");
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, bytes).expect("writing a test file");
    path
}

/// The fixture's envelope and its decoded Phase1Out.
fn fixture_json() -> (Value, Value) {
    let envelope: Value =
        serde_json::from_slice(&std::fs::read(fixture(FIXTURE_2KIB)).unwrap()).unwrap();
    let inner = base64::engine::general_purpose::STANDARD
        .decode(envelope["Phase1Out"].as_str().unwrap())
        .unwrap();
    (envelope, serde_json::from_slice(&inner).unwrap())
}

fn encode_phase1(inner: &Value) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(inner.to_string()))
}

/// Any 192 bytes: for tests that fail before the proof is looked at.
fn dummy_proof() -> PathBuf {
    write("dummy.proof", &[0u8; 192])
}

/// The test parameters were generated on this machine: the subgroup check of all their
/// points (kernels' SRS tests cover it) would cost ~10 minutes of 2 cores per `cuzk prove`.
const TRUST_TEST_PARAMS: &str = "--trust-params";

/// A proof of the 2 KiB fixture made by `cuzk prove`, shared by the tests that need one.
fn fixture_proof() -> &'static Path {
    static PROOF: OnceLock<PathBuf> = OnceLock::new();
    PROOF.get_or_init(|| {
        let out = scratch().join("fixture.proof");
        let cache = param_cache();
        let output = cuzk(&[
            "prove",
            "--c1",
            path_str(&fixture(FIXTURE_2KIB)),
            "--out",
            path_str(&out),
            "--param-cache",
            path_str(&cache),
            TRUST_TEST_PARAMS,
        ]);
        assert!(output.status.success(), "cuzk prove: {}", stderr(&output));
        out
    })
}

#[test]
fn malformed_json_is_refused() {
    let c1 = write("malformed.c1.json", br#"{"SectorNum": 11, "Phase1Out": ]"#);
    assert_error(&verify(&c1, &dummy_proof(), &[]), &c1, "malformed JSON");
}

#[test]
fn truncated_file_is_refused() {
    let bytes = std::fs::read(fixture(FIXTURE_2KIB)).unwrap();
    let c1 = write("truncated.c1.json", &bytes[..bytes.len() / 2]);
    assert_error(&verify(&c1, &dummy_proof(), &[]), &c1, "truncated C1 file");
}

#[test]
fn bad_base64_is_refused() {
    let (mut envelope, _) = fixture_json();
    envelope["Phase1Out"] = Value::String("eyJyZWdp*c3RlcmVk".to_string());
    let c1 = write("bad-base64.c1.json", envelope.to_string().as_bytes());
    assert_error(&verify(&c1, &dummy_proof(), &[]), &c1, "not valid base64");
}

#[test]
fn unsupported_proof_type_is_refused_by_name() {
    let (mut envelope, mut inner) = fixture_json();
    inner["registered_proof"] = Value::String("StackedDrgWinning2KiBV1".to_string());
    envelope["Phase1Out"] = encode_phase1(&inner);
    let c1 = write("unsupported.c1.json", envelope.to_string().as_bytes());
    let output = verify(&c1, &dummy_proof(), &[]);
    assert_error(&output, &c1, "unsupported proof type");
    assert!(stderr(&output).contains("StackedDrgWinning2KiBV1"));
}

#[test]
fn wrong_sector_size_in_the_envelope_is_refused() {
    let (mut envelope, _) = fixture_json();
    envelope["SectorSize"] = Value::from(8u64 << 20);
    let c1 = write("wrong-size.c1.json", envelope.to_string().as_bytes());
    assert_error(
        &verify(&c1, &dummy_proof(), &[]),
        &c1,
        "sector size mismatch",
    );
}

#[test]
fn missing_prover_id_is_refused() {
    let (mut envelope, _) = fixture_json();
    envelope.as_object_mut().unwrap().remove("MinerID");
    let c1 = write("no-miner.c1.json", envelope.to_string().as_bytes());
    let output = verify(&c1, &dummy_proof(), &[]);
    assert_error(&output, &c1, "missing prover id");
    assert!(stderr(&output).contains("--miner-id"));
}

#[test]
fn bare_c1_without_sector_number_is_refused() {
    let (_, inner) = fixture_json();
    let c1 = write("bare-no-ids.c1.json", inner.to_string().as_bytes());
    let output = verify(&c1, &dummy_proof(), &["--miner-id", "1000"]);
    assert_error(&output, &c1, "missing sector number");
}

#[test]
fn missing_parameter_file_is_named() {
    let empty_cache = scratch().join("empty-param-cache");
    std::fs::create_dir_all(&empty_cache).unwrap();
    let output = cuzk(&[
        "verify",
        "--c1",
        path_str(&fixture(FIXTURE_2KIB)),
        "--proof",
        path_str(&dummy_proof()),
        "--param-cache",
        path_str(&empty_cache),
    ]);
    assert_error(&output, &empty_cache, "missing parameter file");
    assert!(stderr(&output).contains(".vk"), "{}", stderr(&output));
}

#[test]
fn truncated_parameter_file_is_named() {
    let real_vk = test_param_file(".vk");
    let cut_cache = scratch().join("truncated-param-cache");
    std::fs::create_dir_all(&cut_cache).unwrap();
    let bytes = std::fs::read(&real_vk).unwrap();
    let cut_vk = cut_cache.join(real_vk.file_name().unwrap());
    std::fs::write(&cut_vk, &bytes[..bytes.len() - 100]).unwrap();

    let output = cuzk(&[
        "verify",
        "--c1",
        path_str(&fixture(FIXTURE_2KIB)),
        "--proof",
        path_str(&dummy_proof()),
        "--param-cache",
        path_str(&cut_cache),
    ]);
    assert_error(&output, &cut_vk, "unreadable parameter file");
}

/// The 2 KiB parameter file of the test cache with the given extension.
fn test_param_file(extension: &str) -> PathBuf {
    std::fs::read_dir(param_cache())
        .expect("the test parameter cache exists (cuzk params generate --sector-size 2KiB)")
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.contains("poseidon_hasher-8-0-0-sha256") && name.ends_with(extension)
        })
        .expect("the 2 KiB parameters are in the test parameter cache")
}

/// A parameter cache holding the real 2 KiB `.vk` and, if given, these bytes as `.params`.
fn cache_with_params(name: &str, params: Option<&[u8]>) -> (PathBuf, PathBuf) {
    let dir = scratch().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let vk = test_param_file(".vk");
    std::fs::copy(&vk, dir.join(vk.file_name().unwrap())).unwrap();
    let params_path = dir.join(test_param_file(".params").file_name().unwrap());
    if let Some(bytes) = params {
        std::fs::write(&params_path, bytes).unwrap();
    }
    (dir, params_path)
}

fn prove_with_cache(cache: &Path) -> Output {
    let out = scratch().join(format!(
        "{}.proof",
        cache.file_name().unwrap().to_string_lossy()
    ));
    cuzk(&[
        "prove",
        "--c1",
        path_str(&fixture(FIXTURE_2KIB)),
        "--out",
        path_str(&out),
        "--param-cache",
        path_str(cache),
    ])
}

#[test]
fn prove_names_a_missing_params_file() {
    let (cache, params) = cache_with_params("no-params-cache", None);
    assert_error(
        &prove_with_cache(&cache),
        &params,
        "parameter file not found",
    );
}

#[test]
fn prove_names_a_truncated_params_file() {
    // The first MiB of the real file: the verifying key and the start of `h`.
    let mut head = vec![0u8; 1 << 20];
    std::io::Read::read_exact(
        &mut std::fs::File::open(test_param_file(".params")).unwrap(),
        &mut head,
    )
    .unwrap();
    let (cache, params) = cache_with_params("cut-params-cache", Some(&head));
    assert_error(&prove_with_cache(&cache), &params, "truncated");
}

#[test]
fn unreadable_proof_file_is_named() {
    let absent = scratch().join("absent.proof");
    assert_error(
        &verify(&fixture(FIXTURE_2KIB), &absent, &[]),
        &absent,
        "cannot read the proof",
    );
}

#[test]
fn proved_fixture_verifies_and_its_result_holds_the_proof() {
    let proof_path = fixture_proof();
    let proof = std::fs::read(proof_path).unwrap();
    assert_eq!(proof.len(), 192, "one 2 KiB partition");

    let result: Value =
        serde_json::from_slice(&std::fs::read(format!("{}.json", proof_path.display())).unwrap())
            .unwrap();
    let recorded = base64::engine::general_purpose::STANDARD
        .decode(result["proof_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(recorded, proof);
    assert_eq!(result["proof_type"], "StackedDrg2KiBV1_1");
    assert_eq!(result["sector_num"], 11);
    for step in ["read_c1", "load_params", "partition0.synthesis", "verify"] {
        assert!(
            result["timings_ms"][step].is_number(),
            "no {step} in {result}"
        );
    }

    let output = verify(&fixture(FIXTURE_2KIB), proof_path, &[]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert!(stdout(&output).starts_with("valid"), "{}", stdout(&output));
}

#[test]
fn bare_c1_verifies_with_ids_from_flags() {
    let (_, inner) = fixture_json();
    let c1 = write("bare.c1.json", inner.to_string().as_bytes());
    let output = verify(
        &c1,
        fixture_proof(),
        &["--miner-id", "1000", "--sector-num", "11"],
    );
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));

    // The same proof claimed for another sector is invalid.
    let output = verify(
        &c1,
        fixture_proof(),
        &["--miner-id", "1000", "--sector-num", "12"],
    );
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
}

#[test]
fn tampered_proof_is_invalid_and_names_the_partition() {
    let mut proof = std::fs::read(fixture_proof()).unwrap();
    // Swap A and C: both stay valid G1 points, the proof no longer verifies.
    let a: Vec<u8> = proof[..48].to_vec();
    let c: Vec<u8> = proof[144..].to_vec();
    proof[..48].copy_from_slice(&c);
    proof[144..].copy_from_slice(&a);
    let tampered = write("tampered.proof", &proof);

    let output = verify(&fixture(FIXTURE_2KIB), &tampered, &[]);
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
    let message = stdout(&output);
    assert!(message.starts_with("invalid"), "{message}");
    assert!(message.contains("partition 0"), "{message}");
}

#[test]
fn conflicting_miner_id_is_refused() {
    let c1 = fixture(FIXTURE_2KIB);
    let output = verify(&c1, &dummy_proof(), &["--miner-id", "1001"]);
    assert_error(&output, &c1, "contradicts");
}

#[test]
fn production_sizes_need_allow_large() {
    let output = cuzk(&["params", "generate", "--sector-size", "32GiB"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--allow-large"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn sealed_fixture_proves_and_verifies() {
    let out = scratch().join("sealed");
    let output = cuzk(&[
        "fixture",
        "seal",
        "--sector-size",
        "2KiB",
        "--out",
        path_str(&out),
        "--seed",
        "3",
        "--miner-id",
        "1234",
        "--sector-num",
        "77",
    ]);
    assert!(output.status.success(), "seal: {}", stderr(&output));
    let c1 = PathBuf::from(stdout(&output).trim());
    let envelope: Value = serde_json::from_slice(&std::fs::read(&c1).unwrap()).unwrap();
    assert_eq!(envelope["MinerID"], 1234);
    assert_eq!(envelope["SectorNum"], 77);
    assert_eq!(envelope["SectorSize"], 2048);

    let proof = out.join("sealed.proof");
    let cache = param_cache();
    let output = cuzk(&[
        "prove",
        "--c1",
        path_str(&c1),
        "--out",
        path_str(&proof),
        "--param-cache",
        path_str(&cache),
        TRUST_TEST_PARAMS,
    ]);
    assert!(output.status.success(), "prove: {}", stderr(&output));
    let output = verify(&c1, &proof, &[]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
}

#[test]
fn params_generate_keeps_complete_parameters() {
    let cache = param_cache();
    let output = cuzk(&[
        "params",
        "generate",
        "--sector-size",
        "2KiB",
        "--param-cache",
        path_str(&cache),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("already present"),
        "{}",
        stderr(&output)
    );
    for extension in [".meta", ".params", ".vk"] {
        let file = test_param_file(extension);
        assert!(
            stdout(&output).contains(path_str(&file)),
            "{}",
            stdout(&output)
        );
    }
}

#[test]
fn params_generate_refuses_a_partial_params_file() {
    let dir = scratch().join("partial-param-cache");
    std::fs::create_dir_all(&dir).unwrap();
    let partial = dir.join(test_param_file(".params").file_name().unwrap());
    std::fs::write(&partial, b"interrupted").unwrap();
    let output = cuzk(&[
        "params",
        "generate",
        "--sector-size",
        "2KiB",
        "--param-cache",
        path_str(&dir),
    ]);
    assert_error(&output, &partial, "interrupted generation");
}

/// A health check (`cuzk status --json` under a monitoring agent) on a data directory no
/// `cuzk run` has served: exit 3 and one JSON object saying `"running": false` on stdout,
/// the directory named on stderr; with a status file left by a supervisor that is gone,
/// the same exit and `"running": false` beside the last status.
#[test]
fn status_json_says_not_running_where_no_supervisor_serves() {
    let dir = scratch().join("status-never-served");
    std::fs::create_dir_all(&dir).unwrap();
    let output = cuzk(&["status", "--json", "--data-dir", path_str(&dir)]);
    assert_eq!(output.status.code(), Some(3), "stderr: {}", stderr(&output));
    let v: Value = serde_json::from_str(&stdout(&output)).expect("status --json is JSON");
    assert_eq!(v["running"], Value::Bool(false), "{v}");
    assert!(
        stderr(&output).contains(path_str(&dir.join("status.json"))),
        "{}",
        stderr(&output)
    );

    // A status written long ago by a process that no longer exists.
    let stale = serde_json::json!({
        "pid": u32::MAX - 1, "updated_unix_ms": 0, "draining": false,
        "data_dir": path_str(&dir), "arena": path_str(&dir.join("arena")),
        "queued": 2, "jobs": [], "slots": [], "stages": [],
        "done_total": 7, "failed_total": 1, "throughput_per_min": 0.0, "trouble": null,
    });
    std::fs::write(dir.join("status.json"), stale.to_string()).unwrap();
    let output = cuzk(&["status", "--json", "--data-dir", path_str(&dir)]);
    assert_eq!(output.status.code(), Some(3), "stderr: {}", stderr(&output));
    let v: Value = serde_json::from_str(&stdout(&output)).expect("status --json is JSON");
    assert_eq!(v["running"], Value::Bool(false), "{v}");
    assert_eq!(v["done_total"], 7, "{v}");
    let text = cuzk(&["status", "--data-dir", path_str(&dir)]);
    assert_eq!(text.status.code(), Some(3), "stderr: {}", stderr(&text));
    assert!(stdout(&text).contains("NOT RUNNING"), "{}", stdout(&text));
}
