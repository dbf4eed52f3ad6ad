//! With r and s fixed, our proof of a real 2 KiB C1's partition equals bellperson's
//! `create_proof` on the same circuit and parameters, byte for byte.
//!
//! Needs the 2 KiB test parameters in $CUZK_TEST_PARAM_CACHE (default
//! /var/tmp/cuzk-test-params): `cuzk params generate --sector-size 2KiB` makes them, and
//! `.ci/run` does so before the tests.

use std::path::PathBuf;

use bellperson::groth16::{create_proof, Parameters};
use blstrs::{Bls12, Scalar as Fr};
use cuzk_c1::{C1Input, GivenIds};
use cuzk_kernels::groth16;
use cuzk_kernels::srs::{Srs, Validation};
use cuzk_kernels::witness::{CValues, CircuitShape, OwnedWitness};
use cuzk_synthesis::{
    params_path, synthesize_partition, with_porep_circuits, CircuitsVisitor, PorepCircuits,
};
use filecoin_proofs::MerkleTreeTrait;

struct BothProvers {
    r: Fr,
    s: Fr,
}

impl CircuitsVisitor for BothProvers {
    type Output = (Vec<u8>, Vec<u8>);
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let path = params_path(&circuits);
        assert!(
            path.exists(),
            "{}: missing; run `cuzk params generate --sector-size 2KiB`",
            path.display()
        );

        let srs = Srs::read(&path, Validation::Trusted).expect("our SRS reader");
        let capacity = CircuitShape {
            num_constraints: srs.h.len() + 1,
            num_inputs: srs.vk.ic.len(),
            num_aux: srs.l.len(),
        };
        let mut w = OwnedWitness::new(capacity);
        let shape = synthesize_partition(
            circuits.partition(0).unwrap(),
            &capacity,
            w.buffers(),
            CValues::Written,
        )
        .unwrap();
        let ours = groth16::prove(&srs, &shape, w.buffers(), self.r, self.s)
            .unwrap()
            .0
            .to_bytes()
            .to_vec();
        drop((srs, w));

        let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
        let params = Parameters::<Bls12>::read(file, false).unwrap();
        let proof = create_proof(
            circuits.partition(0).unwrap().circuit,
            &params,
            self.r,
            self.s,
        )
        .unwrap();
        let mut theirs = vec![];
        proof.write(&mut theirs).unwrap();
        (ours, theirs)
    }
}

#[test]
fn two_kib_proof_equals_bellpersons_with_fixed_r_s() {
    let cache = std::env::var_os("CUZK_TEST_PARAM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/var/tmp/cuzk-test-params".into());
    // filecoin-proofs reads this once, on first use: set before anything touches it.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &cache);
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&fixture, GivenIds::default()).unwrap();
    let (r, s) = (Fr::from(0x1234_5678u64), Fr::from(0x9abc_def0u64));
    let (ours, theirs) = with_porep_circuits(&c1, BothProvers { r, s }).unwrap();
    assert_eq!(ours.len(), 192);
    assert_eq!(
        ours, theirs,
        "our proof differs from bellperson's for the same r, s"
    );
}
