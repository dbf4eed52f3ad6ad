//! The shared SRS segment never stands in for a point check it did not do: a load that owes
//! the file its full check maps a segment filled with that check, not one a trusted load
//! filled earlier; once checked (marker beside the file), loads reuse a segment.

use bellperson::groth16::{generate_random_parameters, Parameters};
use bellperson::{gadgets::boolean::AllocatedBit, Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use cuzk_stage_common::SrsCache;
use rand_chacha::rand_core::SeedableRng;

struct Bits(usize);

impl Circuit<Fr> for Bits {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for i in 0..self.0 {
            AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(i % 3 == 0))?;
        }
        Ok(())
    }
}

fn segments(dir: &std::path::Path) -> usize {
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
