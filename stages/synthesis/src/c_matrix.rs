//! C of a C1's proof type, recorded from its blank circuit: what a GPU prover folds into L
//! (`cuzk_kernels::groth16::folded`). Every partition of the proof type has this C.

use cuzk_c1::C1Input;
use cuzk_kernels::witness::c_matrix::CMatrix;
use filecoin_proofs::MerkleTreeTrait;

use crate::{with_porep_circuits, CircuitsVisitor, PorepCircuits, SynthesisError};

struct Record;

impl CircuitsVisitor for Record {
    type Output = Result<CMatrix, bellperson::SynthesisError>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        CMatrix::record(circuits.blank_circuit())
    }
}

/// The circuit's C for `c1`'s proof type (its blank circuit: no witness is computed).
pub fn record_c(c1: &C1Input) -> Result<CMatrix, SynthesisError> {
    with_porep_circuits(c1, Record)?.map_err(|err| SynthesisError::Circuit {
        file: c1.file().to_path_buf(),
        partition: 0,
        reason: format!("recording the blank circuit's C: {err}"),
    })
}
