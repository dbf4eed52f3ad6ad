//! C of a C1's proof type: what a GPU prover folds into L (`cuzk_kernels::groth16::folded`).
//! Every partition of the proof type has this C. Recorded a run of challenges per thread
//! (`R1csMatrix::record_runs`) from partition 0's circuit cut into runs (recording calls no
//! witness closure: only the structure is read), or from the blank circuit in one piece.

use cuzk_c1::C1Input;
use cuzk_kernels::witness::matrix::R1csMatrix;
use cuzk_kernels::witness::{BlockLayout, BlocksError};
use filecoin_proofs::MerkleTreeTrait;

use crate::panics::caught;
use crate::recorded::recording_panicked;
use crate::{with_porep_circuits, CircuitsVisitor, PorepCircuits, Split, SynthesisError};

struct Record {
    threads: usize,
}

impl CircuitsVisitor for Record {
    type Output = Result<(R1csMatrix, Split), String>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let challenges = circuits.challenges(0);
        let mut why_not = format!("{} thread(s), {challenges} challenge(s)", self.threads);
        if self.threads >= 2 && challenges >= 2 {
            let by_runs = (|| {
                let layout = BlockLayout::measure(
                    circuits.prefix_circuit(),
                    circuits.challenge_run(0, 0..1).map_err(|e| e.to_string())?,
                    challenges,
                )
                .map_err(|e| e.to_string())?;
                let runs = layout
                    .runs(self.threads)
                    .into_iter()
                    .map(|run| Ok((run.clone(), circuits.challenge_run(0, run)?)))
                    .collect::<Result<Vec<_>, SynthesisError>>()
                    .map_err(|e| e.to_string())?;
                let n = runs.len();
                let c = R1csMatrix::record_c_runs(runs, &layout).map_err(|e| match e {
                    BlocksError::NotBlocks(why) | BlocksError::NoThread(why) => why,
                    BlocksError::Witness(e) => e.to_string(),
                })?;
                Ok((c, Split::Threads(n)))
            })();
            match by_runs {
                Ok(done) => return Ok(done),
                Err(why) => why_not = why,
            }
        }
        let c = R1csMatrix::record_c(circuits.blank_circuit()).map_err(|e| e.to_string())?;
        Ok((c, Split::OnePiece(why_not)))
    }
}

/// The circuit's C for `c1`'s proof type, on up to `threads` threads (no witness is
/// computed), and how it was split.
pub fn record_c(c1: &C1Input, threads: usize) -> Result<(R1csMatrix, Split), SynthesisError> {
    // Caught as `record_r1cs`'s recording is (the gpu process records C from its first job).
    caught(|| with_porep_circuits(c1, Record { threads }))
        .map_err(|message| recording_panicked(c1, message))??
        .map_err(|err| SynthesisError::Circuit {
            file: c1.file().to_path_buf(),
            partition: 0,
            reason: format!("recording the circuit's C: {err}"),
        })
}
