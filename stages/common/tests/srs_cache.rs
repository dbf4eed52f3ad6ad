//! The shared SRS segment never stands in for a point check it did not do: a load that owes
//! the file its full check maps a segment filled with that check, not one a trusted load
//! filled earlier; once checked (marker beside the file), loads reuse a segment, the
//! checked one first, so a file checked by one process is not decoded again by the next;
//! a file whose decode failed on its own bytes is refused at once until it is replaced.

use bellperson::groth16::{generate_random_parameters, Parameters};
use bellperson::{gadgets::boolean::AllocatedBit, Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use cuzk_stage_common::{is_fault_in_the_file, SrsCache};
use rand_chacha::rand_core::SeedableRng;
use std::path::{Path, PathBuf};

struct Bits(usize);

impl Circuit<Fr> for Bits {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for i in 0..self.0 {
            AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(i % 3 == 0))?;
        }
        Ok(())
    }
}

fn segments(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".seg"))
        .count()
}

#[test]
fn a_trusted_segment_does_not_skip_the_first_full_check() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let params: Parameters<Bls12> = generate_random_parameters(Bits(64), &mut rng).unwrap();
    let files = tempfile::tempdir().unwrap();
    let shm = tempfile::tempdir().unwrap();
    let path = files.path().join("p.params");
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    std::fs::write(&path, &bytes).unwrap();

    // An operator's --trust-params run fills a segment without the subgroup checks.
    let trusted = SrsCache::new(shm.path(), true)
        .get(&path)
        .unwrap()
        .l
        .to_vec();
    assert_eq!(segments(shm.path()), 1);
    assert!(!files.path().join("p.params.cuzk-checked").exists());

    // The next run without it owes the file its check: a segment of its own, the marker.
    let checked = SrsCache::new(shm.path(), false)
        .get(&path)
        .unwrap()
        .l
        .to_vec();
    assert_eq!(segments(shm.path()), 2);
    assert!(files.path().join("p.params.cuzk-checked").exists());
    assert_eq!(checked, trusted);
    assert_eq!(checked, *params.l);

    // Checked now: later loads reuse a segment.
    SrsCache::new(shm.path(), false).get(&path).unwrap();
    assert_eq!(segments(shm.path()), 2);
}

fn write_params(dir: &Path, bits: usize) -> (PathBuf, Parameters<Bls12>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let params: Parameters<Bls12> = generate_random_parameters(Bits(bits), &mut rng).unwrap();
    let path = dir.join("p.params");
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    (path, params)
}

/// What a second process does after the first checked the file: the marker makes its load
/// Trusted, and it must map the checked segment rather than decode a second copy.
#[test]
fn a_checked_segment_serves_the_trusted_loads_after_it() {
    let files = tempfile::tempdir().unwrap();
    let shm = tempfile::tempdir().unwrap();
    let (path, params) = write_params(files.path(), 64);

    let checked = SrsCache::new(shm.path(), false)
        .get(&path)
        .unwrap()
        .l
        .to_vec();
    assert!(files.path().join("p.params.cuzk-checked").exists());
    assert_eq!(segments(shm.path()), 1);

    for trust_params in [false, true] {
        let trusted = SrsCache::new(shm.path(), trust_params)
            .get(&path)
            .unwrap()
            .l
            .to_vec();
        assert_eq!(segments(shm.path()), 1, "trust_params {trust_params}");
        assert_eq!(trusted, checked);
    }
    assert_eq!(checked, *params.l);
}

/// A parameter file with a bad point fails every job of it; the process remembers that
/// and refuses the next job at once with the same error (at 32 GiB a decode takes
/// minutes), until the file is replaced.
#[test]
fn a_file_that_failed_its_decode_is_refused_at_once_until_replaced() {
    let files = tempfile::tempdir().unwrap();
    let shm = tempfile::tempdir().unwrap();
    let (path, params) = write_params(files.path(), 64);
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    // The last byte is the low byte of the last B_G2 point's y: (x, y ^ 1) is off the curve.
    *bad.last_mut().unwrap() ^= 1;
    std::fs::write(&path, &bad).unwrap();

    let mut cache = SrsCache::new(shm.path(), false);
    // Away for a moment (a cache fetched again): the machine's trouble, not the file's.
    let away = files.path().join("away");
    std::fs::rename(&path, &away).unwrap();
    let Err(missing) = cache.get(&path) else {
        panic!("a missing file is refused")
    };
    assert!(!is_fault_in_the_file(&missing), "{missing:#}");
    std::fs::rename(&away, &path).unwrap();
    let Err(first) = cache.get(&path) else {
        panic!("a bad point is refused")
    };
    assert!(is_fault_in_the_file(&first), "{first:#}");
    let first = format!("{first:#}");
    assert!(first.contains("invalid point"), "{first}");
    assert!(!first.contains("refused when"), "{first}");
    let Err(again) = cache.get(&path) else {
        panic!("still refused")
    };
    assert!(is_fault_in_the_file(&again), "{again:#}");
    let again = format!("{again:#}");
    assert!(
        again.contains("refused when this process last loaded it"),
        "{again}"
    );
    assert!(again.contains("invalid point"), "{again}");
    assert_eq!(segments(shm.path()), 0);

    // The operator puts a good copy in place (a new file renamed over the old one).
    let fresh = files.path().join("fresh");
    std::fs::write(&fresh, &good).unwrap();
    std::fs::rename(&fresh, &path).unwrap();
    assert_eq!(cache.get(&path).unwrap().l.to_vec(), *params.l);
}
