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
    synthesize_blocks_into, synthesize_into, BlockLayout, BlocksError, CircuitShape,
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

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Synthesizes partition `partition` into `bufs`, a run of challenges per thread; in
    /// one piece when there is one thread, the partition has one challenge, or its circuit
    /// does not split. Writes exactly what one-piece synthesis writes.
    pub fn synthesize<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        capacity: &CircuitShape,
        mut bufs: WitnessBuffers<'_>,
    ) -> Result<(CircuitShape, Split), ThreadedError> {
        let challenges = circuits.challenges(partition);
        let why_not = if self.threads < 2 {
            Some("one thread".to_string())
        } else if challenges < 2 {
            Some(format!("{challenges} challenge(s)"))
        } else {
            match self.layout(circuits, partition)? {
                Ok(layout) => {
                    let runs = layout
                        .runs(self.threads)
                        .into_iter()
                        .map(|run| Ok((run.clone(), circuits.challenge_run(partition, run)?)))
                        .collect::<Result<Vec<_>, SynthesisError>>()?;
                    let n = runs.len();
                    match synthesize_blocks_into(runs, &layout, capacity, &mut bufs) {
                        Ok(shape) => return Ok((shape, Split::Threads(n))),
                        Err(BlocksError::Witness(e)) => return Err(e.into()),
                        Err(BlocksError::NotBlocks(why)) => {
                            self.forget(circuits, partition);
                            Some(why)
                        }
                    }
                }
                Err(why) => Some(why),
            }
        };
        let whole = circuits.partition(partition)?;
        let shape = synthesize_into(whole.circuit, capacity, bufs.reborrow())?;
        Ok((shape, Split::OnePiece(why_not.unwrap_or_default())))
    }

    fn layout<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
    ) -> Result<Result<BlockLayout, String>, SynthesisError> {
        let challenges = circuits.challenges(partition);
        let key = (format!("{:?}", circuits.c1().proof_type()), challenges);
        if let Some(known) = self.known.lock().expect("layouts lock").get(&key) {
            return Ok(known.ok_or_else(|| "its layout did not split before".to_string()));
        }
        let measured = match BlockLayout::measure(
            circuits.prefix_circuit(),
            circuits.challenge_run(partition, 0..1)?,
            challenges,
        ) {
            Ok(layout) => Ok(layout),
            Err(BlocksError::NotBlocks(why)) => Err(why),
            Err(BlocksError::Witness(e)) => Err(e.to_string()),
        };
        self.known
            .lock()
            .expect("layouts lock")
            .insert(key, measured.as_ref().ok().copied());
        Ok(measured)
    }

    /// Marks a layout that did not hold for a circuit: that circuit type goes in one piece.
    fn forget<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
    ) {
        let key = (
            format!("{:?}", circuits.c1().proof_type()),
            circuits.challenges(partition),
        );
        self.known.lock().expect("layouts lock").insert(key, None);
    }
}
