//! A job's finish while its verifying key is away (paramfetch rewriting the parameter
//! cache): the proofs wait for the key instead of failing the job. With the key back the
//! proof is verified and written; asked to stop first, the job is left unwritten, not
//! failed, and nothing is in done/.
//!
//! Its own test binary: filecoin-proofs reads `FIL_PROOFS_PARAMETER_CACHE` once a
//! process, and this one points it at a cache of links to the test parameters
//! (`$CUZK_TEST_PARAM_CACHE`, default /var/tmp/cuzk-test-params) whose `.vk` comes and goes.

mod common;

use std::path::{Path, PathBuf};

use cuzk_c1::{C1Input, GivenIds};
use cuzk_epilogue::slot::{finish_job_to_dropdir, record_partition, JobOutcome};
use cuzk_epilogue::PartitionProof;
use cuzk_shm_layout::job::PROOF_BYTES;
use cuzk_shm_layout::{Arena, ArenaConfig, PartitionShape};
use cuzk_stage_common::{BG2Stage, JobSpec};
use cuzk_synthesis::with_porep_circuits;

use common::ProveWithBellperson;

const FIXTURE: &str = "porep-2KiB-a.c1.json";

/// A parameter cache of links to every test parameter file; returns it and the `.vk`
/// link's path (present).
fn linked_cache(dir: &Path) -> PathBuf {
    let source = PathBuf::from(
        std::env::var("CUZK_TEST_PARAM_CACHE")
            .unwrap_or_else(|_| "/var/tmp/cuzk-test-params".to_string()),
    );
    let cache = dir.join("params");
    std::fs::create_dir_all(&cache).unwrap();
    let mut vk = None;
    for entry in std::fs::read_dir(&source).expect("the test parameter cache") {
        let path = entry.unwrap().path();
        let link = cache.join(path.file_name().unwrap());
        std::os::unix::fs::symlink(&path, &link).unwrap();
        if path.extension().is_some_and(|e| e == "vk") {
            vk = Some(link);
        }
    }
    vk.expect("a .vk in the test parameter cache")
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(FIXTURE)
}

/// A job of the fixture in a record whose every partition is done with `proofs`, its C1
/// in `data/working/`.
fn proved_job<'a>(
    arena: &'a Arena,
    data: &Path,
    name: &str,
    proofs: &[PartitionProof],
) -> (cuzk_shm_layout::JobView<'a>, JobSpec) {
    let fixture = fixture();
    let working = data.join("working").join(name);
    std::fs::copy(&fixture, &working).unwrap();
    let spec = JobSpec {
        c1_path: working,
        miner_id: None,
        sector_num: None,
        params_path: PathBuf::new(),
        data_dir: data.to_path_buf(),
        claimed_unix_ns: 0,
        synthetic: None,
        b_g2: BG2Stage::HostPrep,
    };
    let job = arena
        .publish_job(name, &spec, &vec![(); proofs.len()])
        .unwrap();
    for (p, proof) in proofs.iter().enumerate() {
        let bytes: [u8; PROOF_BYTES] = proof.0;
        record_partition(&job, p as u32, &bytes).unwrap();
    }
    assert!(job.is_complete());
    (job, spec)
}

#[test]
fn a_finish_waits_for_its_verifying_key_instead_of_failing_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let vk = linked_cache(dir.path());
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", vk.parent().unwrap());
    let vk_target = std::fs::read_link(&vk).unwrap();
    let data = dir.path().join("data");
    for sub in ["incoming", "working", "done", "failed"] {
        std::fs::create_dir_all(data.join(sub)).unwrap();
    }
    let mut cfg = ArenaConfig::new("finish-waits", PartitionShape::new(5000, 8, 4000), 1);
    cfg.dir = dir.path().to_owned();
    let arena = Arena::create(&cfg).unwrap();
    let c1 = C1Input::read(&fixture(), GivenIds::default()).unwrap();
    let proofs = with_porep_circuits(&c1, ProveWithBellperson).unwrap();
    std::fs::remove_file(&vk).unwrap();

    // Asked to stop while the key is away: neither done nor failed.
    let (job, spec) = proved_job(&arena, &data, "stopped.json", &proofs);
    let mut seen = Vec::new();
    let outcome = finish_job_to_dropdir(&job, &spec, |e, attempt| {
        seen.push((format!("{e:#}"), attempt));
        false
    })
    .expect("the key's absence is not the job's failure");
    assert!(matches!(outcome, JobOutcome::Unwritten), "{outcome:?}");
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].0.contains(&vk.display().to_string())
            && seen[0].0.contains("missing parameter file"),
        "{}",
        seen[0].0
    );
    assert!(spec.c1_path.exists(), "the input stays in working/");
    assert_eq!(std::fs::read_dir(data.join("done")).unwrap().count(), 0);
    job.retire();

    // The key comes back while the job waits: verified and written.
    let (job, spec) = proved_job(&arena, &data, "waited.json", &proofs);
    let mut waits = 0;
    let outcome = finish_job_to_dropdir(&job, &spec, |e, attempt| {
        waits += 1;
        assert_eq!(attempt, 1, "{e:#}");
        std::os::unix::fs::symlink(&vk_target, &vk).unwrap();
        true
    })
    .expect("verified once the key is back");
    assert_eq!(waits, 1);
    let JobOutcome::Written(proof) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(proof, data.join("done/waited.proof"));
    assert!(proof.exists() && !spec.c1_path.exists());
    arena.remove().unwrap();
}
