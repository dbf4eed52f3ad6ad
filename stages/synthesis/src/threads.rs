//! A partition synthesized by several threads, a run of its challenges each.
//!
//! A PoRep partition's circuit is a short prefix and one block of identical shape per
//! challenge (18 a partition at 32 GiB, 2 at 2 KiB and 8 MiB), each block referencing only
//! the prefix and itself: `cuzk_kernels::witness::blocks` synthesizes such a circuit a run
//! of blocks per thread, straight into the same buffers. The layout (where each block's
//! rows and variables start) is measured once per proof type and challenge count.

use std::collections::HashMap;
use std::sync::Mutex;

use cuzk_kernels::witness::{
    synthesize_blocks_into, synthesize_into, BlockLayout, BlocksError, CValues, CircuitShape,
    WitnessBuffers, WitnessError,
};
use filecoin_proofs::MerkleTreeTrait;

use crate::{PorepCircuits, SynthesisError};

/// How a partition was synthesized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// A run of challenges per thread, this many threads.
    Threads(usize),
    /// In one piece, and why (one thread asked for, one challenge, or the circuit is not
    /// a prefix and blocks of one shape).
    OnePiece(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ThreadedError {
    #[error(transparent)]
    Circuit(#[from] SynthesisError),
    #[error(transparent)]
    Witness(#[from] WitnessError),
}

/// A process's partition synthesis: how many threads, and the challenge layouts measured
/// so far, by proof type and challenges a partition (`None` where a circuit turned out not
/// to split: it is then synthesized in one piece).
pub struct ThreadedSynthesis {
    threads: usize,
    known: Mutex<HashMap<(String, usize), Option<BlockLayout>>>,
}

impl ThreadedSynthesis {
    pub fn new(threads: usize) -> Self {
        ThreadedSynthesis {
            threads: threads.max(1),
            known: Mutex::default(),
        }
    }

    /// Synthesizes partition `partition` into `bufs`, a run of challenges per thread; in
    /// one piece when there is one thread, the partition has one challenge, or its circuit
    /// does not split. Writes exactly what one-piece synthesis writes with the same `c`
    /// ([`CValues::LeftOut`]: `bufs.c` is not written, for a prover with C folded into L).
    pub fn synthesize<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        capacity: &CircuitShape,
        mut bufs: WitnessBuffers<'_>,
        c: CValues,
    ) -> Result<(CircuitShape, Split), ThreadedError> {
        let challenges = circuits.challenges(partition);
        let why_not = if self.threads < 2 {
            "one thread".to_string()
        } else if challenges < 2 {
            format!("{challenges} challenge(s)")
        } else {
            match self.layout(circuits, partition)? {
                Ok(layout) => {
                    let runs = layout
                        .runs(self.threads)
                        .into_iter()
                        .map(|run| Ok((run.clone(), circuits.challenge_run(partition, run)?)))
                        .collect::<Result<Vec<_>, SynthesisError>>()?;
                    let n = runs.len();
                    match synthesize_blocks_into(runs, &layout, capacity, &mut bufs, c) {
                        Ok(shape) => return Ok((shape, Split::Threads(n))),
                        Err(BlocksError::Witness(e)) => return Err(e.into()),
                        // This partition only: the next may get its threads.
                        Err(BlocksError::NoThread(why)) => why,
                        Err(BlocksError::NotBlocks(why)) => {
                            self.mark_one_piece(circuits, partition);
                            why
                        }
                    }
                }
                Err(why) => why,
            }
        };
        let whole = circuits.partition(partition)?.circuit;
        let shape = synthesize_into(whole, capacity, bufs.reborrow(), c)?;
        Ok((shape, Split::OnePiece(why_not)))
    }

    /// A layout's key: the proof type and the challenges a partition.
    fn key<Tree: 'static + MerkleTreeTrait>(
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
    ) -> (String, usize) {
        (
            format!("{:?}", circuits.c1().proof_type()),
            circuits.challenges(partition),
        )
    }

    fn layout<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
    ) -> Result<Result<BlockLayout, String>, SynthesisError> {
        let key = Self::key(circuits, partition);
        if let Some(known) = self.known.lock().expect("layouts lock").get(&key) {
            return Ok(known.ok_or_else(|| "its layout did not split before".to_string()));
        }
        let measured = match BlockLayout::measure(
            circuits.prefix_circuit(),
            circuits.challenge_run(partition, 0..1)?,
            key.1,
        ) {
            Ok(layout) => Ok(layout),
            Err(BlocksError::NotBlocks(why) | BlocksError::NoThread(why)) => Err(why),
            Err(BlocksError::Witness(e)) => Err(e.to_string()),
        };
        self.known
            .lock()
            .expect("layouts lock")
            .insert(key, measured.as_ref().ok().copied());
        Ok(measured)
    }

    /// Marks a circuit type whose layout did not hold: it goes in one piece from now on.
    fn mark_one_piece<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
    ) {
        let key = Self::key(circuits, partition);
        self.known.lock().expect("layouts lock").insert(key, None);
    }
}
