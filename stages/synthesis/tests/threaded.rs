//! A partition synthesized a run of challenges per thread, its combinations built or a, b, c
//! from the recorded R1CS, writes exactly what one-piece synthesis writes (every buffer: a,
//! b, c over the whole domain, inputs, aux and the three density bitmaps), on the real C1
//! fixtures.

use std::path::PathBuf;

use cuzk_c1::{C1Input, GivenIds};
use cuzk_kernels::witness::{
    first_difference, synthesize_into, CValues, CircuitShape, OwnedWitness,
};
use cuzk_synthesis::{
    with_porep_circuits, CircuitsVisitor, Combinations, PorepCircuits, Split, ThreadedSynthesis,
};
use filecoin_proofs::MerkleTreeTrait;

struct ThreadedAgainstOnePiece {
    threads: usize,
    combinations: Combinations,
}

impl CircuitsVisitor for ThreadedAgainstOnePiece {
    type Output = ();
    fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
        let synthesis = ThreadedSynthesis::with(self.threads, self.combinations);
        // Twice each partition: with the R1CS, the first records it and the second reuses it.
        for partition in (0..circuits.partitions()).flat_map(|p| [p, p]) {
            let whole = circuits.partition(partition).unwrap();
            let shape = CircuitShape::of(circuits.partition(partition).unwrap().circuit).unwrap();
            let mut one = OwnedWitness::new(shape);
            let one_shape =
                synthesize_into(whole.circuit, &shape, one.buffers(), CValues::Written).unwrap();

            // Buffers start as garbage, as a reused slot's do: nothing may depend on zeros.
            let mut threaded = OwnedWitness::new(shape);
            {
                let b = threaded.buffers();
                for v in [b.a, b.b, b.c, b.aux, b.inputs] {
                    v.fill(blstrs::Scalar::from(0xdead_beefu64));
                }
                for v in [b.a_aux_density, b.b_aux_density, b.b_input_density] {
                    v.fill(u64::MAX);
                }
            }
            let (threaded_shape, split) = synthesis
                .synthesize(
                    &circuits,
                    partition,
                    &shape,
                    threaded.buffers(),
                    CValues::Written,
                )
                .unwrap();
            let challenges = circuits.challenges(partition);
            assert_eq!(split, Split::Threads(self.threads.min(challenges)));
            assert_eq!(threaded_shape, one_shape);
            let differs = first_difference(&one.buffers(), &threaded.buffers());
            assert_eq!(
                differs, None,
                "partition {partition}, {:?}",
                self.combinations
            );
        }
    }
}

fn check(fixture: &str, threads: usize) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(fixture);
    let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
    for combinations in [Combinations::Built, Combinations::Recorded] {
        let visitor = ThreadedAgainstOnePiece {
            threads,
            combinations,
        };
        with_porep_circuits(&c1, visitor).unwrap();
    }
}

#[test]
fn two_kib_a_by_challenge_equals_one_piece() {
    check("porep-2KiB-a.c1.json", 2);
}

#[test]
fn two_kib_b_with_more_threads_than_challenges_equals_one_piece() {
    check("porep-2KiB-b.c1.json", 5);
}

#[test]
fn eight_mib_by_challenge_equals_one_piece() {
    check("porep-8MiB-a.c1.json", 2);
}

#[test]
fn one_thread_is_one_piece() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
    struct One;
    impl CircuitsVisitor for One {
        type Output = ();
        fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
            let shape = CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap();
            let mut w = OwnedWitness::new(shape);
            for combinations in [Combinations::Built, Combinations::Recorded] {
                let (_, split) = ThreadedSynthesis::with(1, combinations)
                    .synthesize(&circuits, 0, &shape, w.buffers(), CValues::Written)
                    .unwrap();
                assert_eq!(split, Split::OnePiece("one thread".into()));
            }
        }
    }
    with_porep_circuits(&c1, One).unwrap();
}

/// Without C (C folded into L): the split synthesis writes what one-piece synthesis without
/// C writes, and neither touches c.
#[test]
fn two_kib_without_c_by_challenge_equals_one_piece_without_c() {
    struct WithoutC;
    impl CircuitsVisitor for WithoutC {
        type Output = ();
        fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
            let shape = CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap();
            let garbage = blstrs::Scalar::from(0x5eed_u64);
            let mut one = OwnedWitness::new(shape);
            let mut split = OwnedWitness::new(shape);
            for w in [&mut one, &mut split] {
                w.buffers().c.fill(garbage);
            }
            let whole = circuits.partition(0).unwrap().circuit;
            synthesize_into(whole, &shape, one.buffers(), CValues::LeftOut).unwrap();
            for combinations in [Combinations::Built, Combinations::Recorded] {
                split.buffers().c.fill(garbage);
                let (_, how) = ThreadedSynthesis::with(2, combinations)
                    .synthesize(&circuits, 0, &shape, split.buffers(), CValues::LeftOut)
                    .unwrap();
                assert_eq!(how, Split::Threads(2));
                assert!(
                    split.buffers().c.iter().all(|v| *v == garbage),
                    "c was written ({combinations:?})"
                );
                let differs = first_difference(&one.buffers(), &split.buffers());
                assert_eq!(differs, None, "{combinations:?}");
            }
        }
    }
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
    with_porep_circuits(&c1, WithoutC).unwrap();
}

/// a and b left to the prover (`Evaluated::ByProver`): synthesized from the recorded R1CS,
/// on one thread or a run of challenges per thread, the assignment and the densities are
/// one-piece synthesis's and a, b, c are not touched (or, as in a slot sized without them,
/// have no room at all); with the combinations built (no recording) a and b are written
/// after all, and it says so.
#[test]
fn two_kib_with_a_and_b_left_to_the_prover_writes_the_assignment_only() {
    use cuzk_kernels::witness::Evaluated;
    struct LeftToProver;
    impl CircuitsVisitor for LeftToProver {
        type Output = ();
        fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
            let shape = CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap();
            let garbage = blstrs::Scalar::from(0x5eed_u64);
            let mut one = OwnedWitness::new(shape);
            let whole = circuits.partition(0).unwrap().circuit;
            synthesize_into(whole, &shape, one.buffers(), CValues::LeftOut).unwrap();
            for (threads, combinations, no_room) in [
                (1, Combinations::Recorded, false),
                (2, Combinations::Recorded, false),
                (1, Combinations::Recorded, true),
                (2, Combinations::Recorded, true),
                (2, Combinations::Built, false),
            ] {
                let mut w = OwnedWitness::new(shape);
                {
                    let b = w.buffers();
                    for v in [b.a, b.b, b.c, b.inputs, b.aux] {
                        v.fill(garbage);
                    }
                }
                let mut bufs = w.buffers();
                if no_room {
                    (bufs.a, bufs.b) = (&mut [], &mut []);
                }
                let (got, _, what) = ThreadedSynthesis::with(threads, combinations)
                    .synthesize_for(&circuits, 0, &shape, bufs, Evaluated::ByProver)
                    .unwrap();
                assert_eq!(got, shape);
                let (mine, theirs) = (w.buffers(), one.buffers());
                assert_eq!(mine.inputs, theirs.inputs, "{threads} {combinations:?}");
                assert_eq!(mine.aux, theirs.aux, "{threads} {combinations:?}");
                assert_eq!(mine.a_aux_density, theirs.a_aux_density);
                assert_eq!(mine.b_aux_density, theirs.b_aux_density);
                assert_eq!(mine.b_input_density, theirs.b_input_density);
                assert!(mine.c.iter().all(|v| *v == garbage), "c was written");
                match combinations {
                    Combinations::Recorded => {
                        assert_eq!(what, Evaluated::ByProver);
                        for v in [&*mine.a, &*mine.b] {
                            assert!(v.iter().all(|x| *x == garbage), "a or b was written");
                        }
                    }
                    Combinations::Built => {
                        assert_eq!(what, Evaluated::Here(CValues::LeftOut));
                        assert_eq!(mine.a, theirs.a);
                        assert_eq!(mine.b, theirs.b);
                    }
                }
            }
        }
    }
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
    with_porep_circuits(&c1, LeftToProver).unwrap();
}
