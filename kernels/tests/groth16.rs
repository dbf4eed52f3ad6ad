//! Our prover against bellperson's: the same r, s give the same proof bytes, and
//! bellperson's verifier accepts them.

mod common;

use bellperson::groth16 as bp;
use bellperson::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use common::circuits::{Booleans, PowerChain, ShaChain};
use common::params_via_file;
use cuzk_kernels::groth16;
use cuzk_kernels::srs::Srs;
use cuzk_kernels::witness::{synthesize_into, CValues, CircuitShape, OwnedWitness};
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn our_proof<C: Circuit<Fr> + Clone>(circuit: &C, srs: &Srs, r: Fr, s: Fr) -> groth16::Proof {
    let shape = CircuitShape::of(circuit.clone()).unwrap();
    let mut w = OwnedWitness::new(shape);
    let shape = synthesize_into(circuit.clone(), &shape, w.buffers(), CValues::Written).unwrap();
    groth16::prove(srs, &shape, w.buffers(), r, s).unwrap().0
}

fn bellperson_bytes(p: &bp::Proof<Bls12>) -> Vec<u8> {
    let mut v = vec![];
    p.write(&mut v).unwrap();
    v
}

/// Proves with both provers (two r, s pairs, one of them zero) and checks bytes and verdict.
fn check_bit_exact<C: Circuit<Fr> + Clone + Send>(circuit: C, public: &[Fr], seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (params, srs) = params_via_file(&circuit, &mut rng);
    let pvk = bp::prepare_verifying_key(&params.vk);
    for (r, s) in [
        (Fr::random(&mut rng), Fr::random(&mut rng)),
        (Fr::ZERO, Fr::ZERO),
    ] {
        let ours = our_proof(&circuit, &srs, r, s);
        let theirs = bp::create_proof::<Bls12, _, _>(circuit.clone(), &params, r, s).unwrap();
        assert_eq!(
            ours.to_bytes().to_vec(),
            bellperson_bytes(&theirs),
            "proof bytes differ"
        );
        let parsed = bp::Proof::<Bls12>::read(&ours.to_bytes()[..]).unwrap();
        assert!(
            bp::verify_proof(&pvk, &parsed, public).unwrap(),
            "bellperson rejects our proof"
        );
    }
}

#[test]
fn booleans_bit_exact() {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let bits = (0..3000).map(|_| rng.gen()).collect();
    check_bit_exact(Booleans { bits }, &[], 11);
}

#[test]
fn large_scalars_bit_exact() {
    let mut rng = ChaCha8Rng::seed_from_u64(20);
    let c = PowerChain {
        x: Fr::random(&mut rng),
        ks: (0..2000).map(|_| Fr::random(&mut rng)).collect(),
        public: false,
        corrupt: false,
    };
    check_bit_exact(c, &[], 21);
}

#[test]
fn public_inputs_bit_exact() {
    let mut rng = ChaCha8Rng::seed_from_u64(30);
    let c = PowerChain {
        x: Fr::random(&mut rng),
        ks: (0..300).map(|_| Fr::random(&mut rng)).collect(),
        public: true,
        corrupt: false,
    };
    let public = c.public_inputs();
    check_bit_exact(c, &public, 31);
}

#[test]
fn sha256_gadget_bit_exact() {
    check_bit_exact(
        ShaChain {
            preimage: [7u8; 32],
            rounds: 2,
        },
        &[],
        41,
    );
}

#[test]
fn wrong_witness_fails_verification() {
    let mut rng = ChaCha8Rng::seed_from_u64(50);
    let good = PowerChain {
        x: Fr::random(&mut rng),
        ks: (0..200).map(|_| Fr::random(&mut rng)).collect(),
        public: true,
        corrupt: false,
    };
    let public = good.public_inputs();
    let (params, srs) = params_via_file(&good, &mut rng);
    let pvk = bp::prepare_verifying_key(&params.vk);
    let bad = PowerChain {
        corrupt: true,
        ..good.clone()
    };
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let proof = our_proof(&bad, &srs, r, s);
    let parsed = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(
        !bp::verify_proof(&pvk, &parsed, &public).unwrap(),
        "a proof of a wrong witness verified"
    );
    // The honest witness, same params, does verify: the failure is the witness's.
    let proof = our_proof(&good, &srs, r, s);
    let parsed = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(bp::verify_proof(&pvk, &parsed, &public).unwrap());
}

#[test]
fn params_for_another_circuit_are_refused() {
    let mut rng = ChaCha8Rng::seed_from_u64(60);
    let small = Booleans {
        bits: vec![true; 100],
    };
    let (_, srs) = params_via_file(&small, &mut rng);
    let big = Booleans {
        bits: vec![true; 300],
    };
    let shape = CircuitShape::of(big.clone()).unwrap();
    let mut w = OwnedWitness::new(shape);
    let shape = synthesize_into(big, &shape, w.buffers(), CValues::Written).unwrap();
    let err = groth16::prove(&srs, &shape, w.buffers(), Fr::ONE, Fr::ONE).unwrap_err();
    assert!(err.to_string().contains("parameters do not match"), "{err}");
}
