//! A C1 whose vanilla proofs parse but have a shape upstream storage-proofs-porep asserts on
//! (an empty `labeling_proofs`: `StackedCompound::circuit` indexes `[0]`; an empty
//! `drg_parents`: the circuit's synthesis asserts it is not) panics inside upstream while its
//! partition's circuit is built or synthesized. That panic is the partition's error, naming
//! the file, the partition and the panic's message, and the same synthesis goes on serving
//! other C1s: uncaught, it killed the synthesis process, whose restart took the same
//! partition again, for ever.
//!
//! The C1s are the real 2 KiB fixture (one partition, two challenges) with one challenge's
//! list emptied, given in the bare form (the envelope's `Phase1Out`, decoded).

use std::path::{Path, PathBuf};

use cuzk_c1::{C1Input, GivenIds};
use cuzk_kernels::witness::{CircuitShape, Evaluated, OwnedWitness};
use cuzk_synthesis::{
    with_porep_circuits, CircuitsVisitor, Combinations, ParamsShape, PorepCircuits, Split,
    ThreadedSynthesis,
};
use filecoin_proofs::MerkleTreeTrait;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json")
}

/// The fixture as a bare C1 (its SealCommitPhase1Output JSON, the envelope's base64
/// `Phase1Out`) with challenge `nth`'s `field` (a list: `labeling_proofs`, or
/// `drg_parents` of its replica column proofs) emptied, named `name` in errors.
fn tampered(name: &str, field: &str, nth: usize) -> C1Input {
    use base64::Engine;
    let envelope: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture()).unwrap()).unwrap();
    let bare = base64::engine::general_purpose::STANDARD
        .decode(envelope["Phase1Out"].as_str().unwrap())
        .unwrap();
    let mut c1: serde_json::Value = serde_json::from_slice(&bare).unwrap();
    let challenge = &mut c1["vanilla_proofs"]["StackedDrg2KiBV1"][0][nth];
    let list = match field {
        "drg_parents" => &mut challenge["replica_column_proofs"][field],
        _ => &mut challenge[field],
    };
    assert!(list.is_array(), "challenge {nth}'s {field}");
    *list = serde_json::Value::Array(vec![]);
    let json = serde_json::to_vec(&c1).unwrap();
    C1Input::from_bytes(Path::new(name), &json, GivenIds::default())
        .expect("the tampered C1 still parses")
}

/// The fixture's partition 0 shape: the slot capacity synthesis is given.
struct Shape;

impl CircuitsVisitor for Shape {
    type Output = CircuitShape;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap()
    }
}

/// Builds partition 0's circuit alone, as the one-piece path and `cuzk prove` do.
struct Build;

impl CircuitsVisitor for Build {
    type Output = Result<(), String>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        circuits.partition(0).map(|_| ()).map_err(|e| e.to_string())
    }
}

/// Synthesizes partition 0 as the synthesis stage does (`synthesize_into_slot`): a and b
/// left to the prover.
struct Synthesize<'s> {
    synthesis: &'s ThreadedSynthesis,
    capacity: CircuitShape,
}

impl CircuitsVisitor for Synthesize<'_> {
    type Output = Result<Split, String>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let mut w = OwnedWitness::new(self.capacity);
        self.synthesis
            .synthesize_for(
                &circuits,
                0,
                &self.capacity,
                w.buffers(),
                Evaluated::ByProver,
            )
            .map(|(_, split, _)| split)
            .map_err(|e| e.to_string())
    }
}

/// Partition 0 of the C1 with `field` of challenge `nth` emptied fails with the file, the
/// partition and `panic` (the upstream panic's message) in its error, by building it alone
/// (where `builds_alone` is false) and by synthesis on one and on two threads (challenge 1 on
/// a thread of its own); a well-formed C1 is synthesized afterwards by the same synthesis.
fn fails_its_partition_only(field: &str, nth: usize, builds_alone: bool, panic: &str) {
    let name = format!("empty-{field}-{nth}.c1.json");
    let bad = tampered(&name, field, nth);
    let good = C1Input::read(&fixture(), GivenIds::default()).unwrap();
    let capacity = with_porep_circuits(&good, Shape).unwrap();
    let names_it = |err: &str| {
        eprintln!("{err}");
        assert!(err.contains(&name), "does not name the file: {err}");
        assert!(
            err.contains("partition 0"),
            "does not name the partition: {err}"
        );
        assert!(
            err.contains(panic),
            "does not say what upstream said: {err}"
        );
    };

    let built = with_porep_circuits(&bad, Build).unwrap();
    match (built, builds_alone) {
        (Ok(()), true) => {}
        (Err(err), false) => names_it(&err),
        (built, _) => panic!("building partition 0 alone: {built:?}"),
    }
    for threads in [1, 2] {
        let synthesis = ThreadedSynthesis::with(threads, Combinations::Recorded);
        let run = |c1: &C1Input| {
            with_porep_circuits(
                c1,
                Synthesize {
                    synthesis: &synthesis,
                    capacity,
                },
            )
            .unwrap()
        };
        match run(&bad) {
            Err(err) => names_it(&err),
            Ok(split) => panic!("{threads} thread(s): synthesized ({split:?})"),
        }
        let split = run(&good).expect("a well-formed C1 after the malformed one");
        assert_eq!(
            split,
            if threads == 1 {
                Split::OnePiece("one thread".into())
            } else {
                Split::Threads(2)
            }
        );
    }
}

#[test]
fn empty_labeling_proofs_fail_their_partition_not_the_process() {
    for nth in [0, 1] {
        fails_its_partition_only("labeling_proofs", nth, false, "index out of bounds");
    }
}

#[test]
fn empty_drg_parents_fail_their_partition_not_the_process() {
    for nth in [0, 1] {
        fails_its_partition_only("drg_parents", nth, true, "!drg_parents_proofs.is_empty()");
    }
}

/// What the gpu process records from its first job (the R1CS when it makes a and b, C when
/// it folds C into L) is recorded from that job's C1: a C1 upstream panics on gives an
/// error naming the file, not a panic that kills the process at every restart. (With empty
/// labeling proofs C is still recorded: its challenge runs fail to build and it falls back
/// to the blank circuit, which reads no vanilla proof.)
#[test]
fn recording_a_malformed_c1s_circuit_is_an_error_not_a_panic() {
    let names_it = |what: &str, name: &str, panic: &str, got: Result<(), _>| {
        let err: cuzk_synthesis::SynthesisError =
            got.expect_err(&format!("{what} recorded from {name}"));
        let err = err.to_string();
        assert!(
            err.contains(name) && err.contains("partition 0"),
            "{what}: {err}"
        );
        assert!(err.contains(panic), "{what}: {err}");
    };
    for (field, panic, c_fails) in [
        ("drg_parents", "!drg_parents_proofs.is_empty()", true),
        ("labeling_proofs", "index out of bounds", false),
    ] {
        let name = format!("record-empty-{field}.c1.json");
        let bad = tampered(&name, field, 0);
        let r1cs = cuzk_synthesis::record_r1cs(&bad).map(|_| ());
        names_it("R1CS", &name, panic, r1cs);
        let c = cuzk_synthesis::record_c(&bad, 2).map(|_| ());
        if c_fails {
            names_it("C", &name, panic, c);
        } else {
            c.expect("C from the blank circuit");
        }
    }
}

/// The fixture as a bare C1 with the comm_d Merkle path of every challenge one level
/// longer (its last level repeated) or shorter (its last level dropped): it parses, and
/// upstream builds a circuit of another size from it without a panic.
fn path_of_another_length(name: &str, longer: bool) -> C1Input {
    use base64::Engine;
    let envelope: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture()).unwrap()).unwrap();
    let bare = base64::engine::general_purpose::STANDARD
        .decode(envelope["Phase1Out"].as_str().unwrap())
        .unwrap();
    let mut c1: serde_json::Value = serde_json::from_slice(&bare).unwrap();
    for challenge in c1["vanilla_proofs"]["StackedDrg2KiBV1"][0]
        .as_array_mut()
        .unwrap()
    {
        let path = challenge["comm_d_proofs"]["data"]["Single"]["path"]["path"]
            .as_array_mut()
            .unwrap();
        if longer {
            path.push(path.last().unwrap().clone());
        } else {
            path.pop();
        }
    }
    let json = serde_json::to_vec(&c1).unwrap();
    C1Input::from_bytes(Path::new(name), &json, GivenIds::default())
        .expect("the C1 with a path of another length still parses")
}

/// Synthesizes partition 0 as the synthesis stage does, held to `params`.
struct SynthesizeExact<'s> {
    synthesis: &'s ThreadedSynthesis,
    capacity: CircuitShape,
    params: Option<ParamsShape>,
}

impl CircuitsVisitor for SynthesizeExact<'_> {
    type Output = Result<Split, String>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let mut w = OwnedWitness::new(self.capacity);
        self.synthesis
            .synthesize_exact(
                &circuits,
                0,
                &self.capacity,
                w.buffers(),
                Evaluated::ByProver,
                self.params.as_ref(),
            )
            .map(|(_, split, _)| split)
            .map_err(|e| e.to_string())
    }
}

/// A C1 whose Merkle paths are a level too long or too short fails its partition, named,
/// whether it comes first to a synthesis process (its layout and recording would be
/// measured from it) or after a good one; and the good C1 after it is synthesized on its
/// threads as before. Before, the bad C1's layout or recording, or its mark "not blocks",
/// stayed with the process and failed (or slowed to one thread) every later job.
#[test]
fn a_merkle_path_of_another_length_fails_its_job_and_no_later_one() {
    let good = C1Input::read(&fixture(), GivenIds::default()).unwrap();
    let capacity = with_porep_circuits(&good, Shape).unwrap();
    let params = ParamsShape {
        num_inputs: capacity.num_inputs,
        num_aux: capacity.num_aux,
        domain_size: capacity.domain_size(),
    };
    // Room for the longer path's circuit: the slots of a larger sector size.
    let roomy = CircuitShape {
        num_constraints: capacity.num_constraints * 2,
        num_inputs: capacity.num_inputs,
        num_aux: capacity.num_aux * 2,
    };
    for longer in [true, false] {
        let name = format!("path-{}.c1.json", if longer { "longer" } else { "shorter" });
        let bad = path_of_another_length(&name, longer);
        for (room, good_first) in [(capacity, false), (roomy, false), (roomy, true)] {
            // `checked` false: the parameter file unreadable when the bad C1 came, so
            // nothing holds it to their shape (it may then be synthesized, unchecked).
            for checked in [true, false] {
                let synthesis = ThreadedSynthesis::with(2, Combinations::Recorded);
                let run = |c1: &C1Input, checked: bool| {
                    with_porep_circuits(
                        c1,
                        SynthesizeExact {
                            synthesis: &synthesis,
                            capacity: room,
                            params: checked.then_some(params),
                        },
                    )
                    .unwrap()
                };
                let case =
                    format!("{name}, room {room:?}, good first {good_first}, checked {checked}");
                if good_first {
                    assert_eq!(run(&good, true), Ok(Split::Threads(2)), "{case}");
                }
                // Refused by the buffers (the slot path names the file around it), or, with
                // room for it, by the parameters' shape.
                match run(&bad, checked) {
                    Err(err) => assert!(
                        err.contains("than the buffers hold")
                            || (err.contains(&name)
                                && err.contains("not of StackedDrg2KiBV1_1's shape")),
                        "{case}: {err}"
                    ),
                    Ok(split) => assert!(!checked, "{case}: synthesized ({split:?})"),
                }
                for _ in 0..2 {
                    assert_eq!(run(&good, true), Ok(Split::Threads(2)), "{case}: after it");
                }
            }
        }
    }
}
