//! The partition circuits of the real C1 fixtures, checked against bellperson's test
//! constraint system and against the public inputs the verifier (`verify_seal`) derives.

use std::path::PathBuf;

use bellperson::util_cs::bench_cs::BenchCS;
use bellperson::util_cs::test_cs::TestConstraintSystem;
use bellperson::Circuit;
use blstrs::Scalar as Fr;
use cuzk_c1::{C1Input, GivenIds};
use cuzk_synthesis::{with_porep_circuits, CircuitsVisitor, PorepCircuits, SynthesisError};
use filecoin_proofs::MerkleTreeTrait;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// Synthesizes partition 0 into a `TestConstraintSystem` and checks it.
struct SatisfiedWithVerifierInputs;

impl CircuitsVisitor for SatisfiedWithVerifierInputs {
    type Output = usize;
    fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) -> usize {
        let c1 = circuits.c1();
        assert_eq!(circuits.partitions(), 1);
        let partition = circuits.partition(0).expect("partition 0 builds");

        let mut cs = TestConstraintSystem::<Fr>::new();
        partition.circuit.synthesize(&mut cs).expect("synthesis");
        assert!(
            cs.is_satisfied(),
            "unsatisfied: {:?}",
            cs.which_is_unsatisfied()
        );
        // The inputs the circuit allocates are the ones CompoundProof::generate_public_inputs
        // computes...
        assert!(cs.verify(&partition.public_inputs));
        // ... and the ones verify_seal derives from prover id, sector id, ticket and comm_d.
        let verifier_inputs = filecoin_proofs::get_seal_inputs::<Tree>(
            &c1.porep_config(),
            c1.comm_r(),
            c1.comm_d(),
            c1.prover_id().expect("fixture has MinerID"),
            c1.sector_id().expect("fixture has SectorNum"),
            c1.ticket(),
            c1.seed(),
        )
        .expect("get_seal_inputs");
        assert_eq!(verifier_inputs, vec![partition.public_inputs]);
        cs.num_constraints()
    }
}

#[test]
fn two_kib_partition_circuit_is_satisfied_and_matches_verifier_inputs() {
    let c1 = C1Input::read(&fixture("porep-2KiB-a.c1.json"), GivenIds::default()).unwrap();
    let constraints = with_porep_circuits(&c1, SatisfiedWithVerifierInputs).unwrap();
    assert_eq!(constraints, 2_687_921);
}

/// Counts the constraints of every partition without keeping them.
struct CountConstraints;

impl CircuitsVisitor for CountConstraints {
    type Output = Vec<usize>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Vec<usize> {
        (0..circuits.partitions())
            .map(|k| {
                let mut cs = BenchCS::<Fr>::new();
                circuits
                    .partition(k)
                    .unwrap()
                    .circuit
                    .synthesize(&mut cs)
                    .unwrap();
                cs.num_constraints()
            })
            .collect()
    }
}

#[test]
fn eight_mib_partition_has_the_known_constraint_count() {
    let c1 = C1Input::read(&fixture("porep-8MiB-a.c1.json"), GivenIds::default()).unwrap();
    assert_eq!(
        with_porep_circuits(&c1, CountConstraints).unwrap(),
        vec![3_844_929]
    );
}

struct BuildPartition(usize);

impl CircuitsVisitor for BuildPartition {
    type Output = Result<(), SynthesisError>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        circuits.partition(self.0).map(|_| ())
    }
}

#[test]
fn a_partition_past_the_last_is_refused_by_number() {
    let file = fixture("porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&file, GivenIds::default()).unwrap();
    let err = with_porep_circuits(&c1, BuildPartition(1))
        .unwrap()
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(
        err,
        SynthesisError::NoSuchPartition {
            partition: 1,
            partitions: 1,
            ..
        }
    ));
    assert!(message.contains(&*file.to_string_lossy()), "{message}");
}
