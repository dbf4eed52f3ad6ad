//! C recorded from the blank 2 KiB PoRep circuit against a real witness: C·z equals, row
//! for row, the c that synthesis writes for the real C1's partition (what folding C into L
//! relies on: `cuzk_kernels::groth16::folded`), and so does a∘b (what every prover makes
//! c from: a slot holds no c).

use std::path::PathBuf;

use blstrs::Scalar as Fr;
use cuzk_c1::{C1Input, GivenIds};
use cuzk_kernels::witness::matrix::R1csMatrix;
use cuzk_kernels::witness::{synthesize_into, CValues, CircuitShape, OwnedWitness};
use cuzk_synthesis::{with_porep_circuits, CircuitsVisitor, PorepCircuits};
use filecoin_proofs::MerkleTreeTrait;

struct BlankCAgainstWitness;

impl CircuitsVisitor for BlankCAgainstWitness {
    type Output = ();
    fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
        let cm = R1csMatrix::record_c(circuits.blank_circuit()).expect("blank circuit records");
        let partition = circuits.partition(0).expect("partition 0 builds");
        let shape = CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap();
        let mut w = OwnedWitness::new(shape);
        let shape =
            synthesize_into(partition.circuit, &shape, w.buffers(), CValues::Written).unwrap();
        let bufs = w.buffers();
        assert_eq!(
            (cm.num_inputs, cm.num_aux),
            (shape.num_inputs, shape.num_aux)
        );
        // bellperson's `input · 0 = 0` rows follow the circuit's own.
        assert_eq!(cm.rows + shape.num_inputs, shape.num_constraints);
        let c = cm.apply(&bufs.inputs[..shape.num_inputs], &bufs.aux[..shape.num_aux]);
        let differing = c
            .iter()
            .zip(&bufs.c[..cm.rows])
            .filter(|(x, y)| x != y)
            .count();
        assert_eq!(differing, 0, "rows where C·z differs from the witness's c");
        assert!(bufs.c[cm.rows..].iter().all(|v| *v == Fr::from(0u64)));
        // c = a∘b on the whole domain: the circuit's rows, the inputs' `input · 0 = 0` rows
        // and the zero padding.
        let n = shape.domain_size();
        let not_ab = (0..n)
            .filter(|&j| bufs.a[j] * bufs.b[j] != bufs.c[j])
            .count();
        assert_eq!(not_ab, 0, "rows where a·b differs from the witness's c");
        let s = cm.stats();
        println!("2 KiB C: {s:?}");
        // Every nonzero c sits in a row whose C is not empty.
        assert!(s.empty_rows > 0 && s.entries > 0);
    }
}

#[test]
fn blank_circuits_c_and_a_times_b_give_the_real_witness_c() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
    with_porep_circuits(&c1, BlankCAgainstWitness).unwrap();
}

/// C recorded a run of challenges per thread (`record_c` on two threads, from the real
/// circuit cut into runs) equals C recorded from the blank circuit in one piece: the same
/// entries in the same order and the same coefficient table.
#[test]
fn c_recorded_by_challenge_runs_equals_the_blank_circuits() {
    struct Blank;
    impl CircuitsVisitor for Blank {
        type Output = R1csMatrix;
        fn visit<Tree: 'static + MerkleTreeTrait>(
            self,
            circuits: PorepCircuits<'_, Tree>,
        ) -> R1csMatrix {
            R1csMatrix::record_c(circuits.blank_circuit()).unwrap()
        }
    }
    for fixture in ["porep-2KiB-a.c1.json", "porep-8MiB-a.c1.json"] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(fixture);
        let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
        let blank = with_porep_circuits(&c1, Blank).unwrap();
        let (by_runs, split) = cuzk_synthesis::record_c(&c1, 2).unwrap();
        assert_eq!(split, cuzk_synthesis::Split::Threads(2), "{fixture}");
        assert_eq!(
            (by_runs.rows, by_runs.num_inputs, by_runs.num_aux),
            (blank.rows, blank.num_inputs, blank.num_aux),
            "{fixture}"
        );
        assert!(
            by_runs.coeffs == blank.coeffs,
            "{fixture}: coefficients differ"
        );
        assert!(
            by_runs.entries == blank.entries,
            "{fixture}: entries differ"
        );
    }
}
