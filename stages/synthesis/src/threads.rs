//! A partition synthesized by several threads, a run of its challenges each.
//!
//! A PoRep partition's circuit is a short prefix and one block of identical shape per
//! challenge (18 a partition at 32 GiB, 2 at 2 KiB and 8 MiB), each block referencing only
//! the prefix and itself: `cuzk_kernels::witness::blocks` synthesizes such a circuit a run
//! of blocks per thread, straight into the same buffers. The layout (where each block's
//! rows and variables start) is measured once per proof type and challenge count.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use bellperson::Circuit;
use blstrs::Scalar as Fr;
use cuzk_kernels::witness::{
    synthesize_blocks_into, synthesize_into, BlockLayout, BlocksError, CValues, CircuitShape,
    Evaluated, R1cs, R1csError, WitnessBuffers, WitnessError,
};
use filecoin_proofs::MerkleTreeTrait;

use crate::panics::{caught, Caught};
use crate::recorded::{Key, Recordings};
use crate::{Combinations, PorepCircuits, SynthesisError};

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
    known: Mutex<HashMap<Key, Option<BlockLayout>>>,
    /// With [`Combinations::Recorded`], each proof type's R1CS.
    recordings: Option<Recordings>,
    /// Keys whose layout and recording a partition of its parameters' exact shape has
    /// proved (`settle`); the others were measured from one C1 only and are dropped if its
    /// partition fails.
    proven: Mutex<HashSet<Key>>,
    /// Keys whose circuit did not split on the last partition: marked for good (one piece
    /// from then on) only once that partition is proved in one piece.
    not_blocks: Mutex<HashSet<Key>>,
}

impl ThreadedSynthesis {
    /// On `threads` threads, a, b, c from recorded R1CSs unless `CUZK_SYNTHESIS_R1CS=built`
    /// says otherwise ([`Combinations::from_env`]; a value it does not know is an error).
    pub fn new(threads: usize) -> Result<Self, String> {
        Ok(Self::with(threads, Combinations::from_env()?))
    }

    pub fn with(threads: usize, combinations: Combinations) -> Self {
        ThreadedSynthesis {
            threads: threads.max(1),
            known: Mutex::default(),
            recordings: (combinations == Combinations::Recorded).then(Recordings::default),
            proven: Mutex::default(),
            not_blocks: Mutex::default(),
        }
    }

    /// Settles what partition `partition`'s synthesis measured, recorded or found for its
    /// proof type: kept for good once a partition came out of the exact shape of its
    /// parameters (`proved`, `crate::exact`), dropped when a partition fails before any
    /// did. The layout and the recording are taken from a job's own C1, and a malformed one
    /// (a Merkle path of another length builds a circuit of another size, which upstream
    /// does not notice) would otherwise leave them to fail, or slow to one piece, every
    /// later job of the type in this process.
    pub(crate) fn settle<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        proved: bool,
    ) {
        let key = Self::key(circuits, partition);
        let not_blocks = self.not_blocks.lock().expect("marks lock").remove(&key);
        let mut proven = self.proven.lock().expect("proven lock");
        if proved {
            if not_blocks {
                self.known
                    .lock()
                    .expect("layouts lock")
                    .insert(key.clone(), None);
            }
            proven.insert(key);
        } else if !proven.contains(&key) {
            self.known.lock().expect("layouts lock").remove(&key);
            if let Some(recordings) = &self.recordings {
                recordings.drop_recording(&key);
            }
        }
    }

    /// Synthesizes partition `partition` into `bufs`, a run of challenges per thread; in
    /// one piece when there is one thread, the partition has one challenge, or its circuit
    /// does not split. With a recorded R1CS the circuit computes only its assignment and
    /// a, b, c come from the matrices; a partition that does not satisfy them (every row is
    /// checked) is synthesized again with its combinations built, and the recording is
    /// dropped. Writes exactly what one-piece synthesis writes with the same `c`
    /// ([`CValues::LeftOut`]: `bufs.c` is not written, for a prover with C folded into L).
    pub fn synthesize<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        capacity: &CircuitShape,
        bufs: WitnessBuffers<'_>,
        c: CValues,
    ) -> Result<(CircuitShape, Split), ThreadedError> {
        self.synthesize_for(circuits, partition, capacity, bufs, c.into())
            .map(|(shape, split, _)| (shape, split))
    }

    /// [`Self::synthesize`], with a and b left to the prover where `what` is
    /// [`Evaluated::ByProver`] and the partition is synthesized from a recorded R1CS; says
    /// what it wrote: a partition synthesized with its combinations built (no recording held,
    /// or one that did not fit) gets its a and b written, `c` as `Here` (here
    /// [`CValues::LeftOut`]: the prover makes c = a∘b).
    pub fn synthesize_for<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        capacity: &CircuitShape,
        bufs: WitnessBuffers<'_>,
        what: Evaluated,
    ) -> Result<(CircuitShape, Split, Evaluated), ThreadedError> {
        // A panic in upstream code on this partition's data is this partition's error
        // (`crate::panics`): on this thread caught here, on a run's own thread by `Caught`.
        let panicked = OnceLock::new();
        let synthesized =
            caught(|| self.synthesize_caught(circuits, partition, capacity, bufs, what, &panicked));
        match (panicked.into_inner(), synthesized) {
            (None, Ok(done)) => done,
            (Some(message), _) | (None, Err(message)) => Err(SynthesisError::Panicked {
                file: circuits.c1().file().to_path_buf(),
                partition,
                during: "synthesizing the circuit",
                message,
            }
            .into()),
        }
    }

    /// [`Self::synthesize_for`], a panic on a run's own thread kept in `panicked`.
    fn synthesize_caught<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        capacity: &CircuitShape,
        mut bufs: WitnessBuffers<'_>,
        what: Evaluated,
        panicked: &OnceLock<String>,
    ) -> Result<(CircuitShape, Split, Evaluated), ThreadedError> {
        let c = match what {
            Evaluated::Here(c) => c,
            Evaluated::ByProver => CValues::LeftOut,
        };
        let challenges = circuits.challenges(partition);
        let layout = if self.threads < 2 {
            Err("one thread".to_string())
        } else if challenges < 2 {
            Err(format!("{challenges} challenge(s)"))
        } else {
            self.layout(circuits, partition)?
        };
        if let Some(recordings) = &self.recordings {
            let key = Self::key(circuits, partition);
            let r1cs = recordings.get_or_record(&key, circuits, partition, layout.as_ref().ok())?;
            let from_r1cs = FromR1cs(&r1cs, what);
            match self.split(
                &from_r1cs,
                circuits,
                partition,
                layout.clone(),
                capacity,
                &mut bufs,
                panicked,
            )? {
                Ok((shape, split)) => return Ok((shape, split, what)),
                Err(R1csError::Witness(e)) => return Err(e.into()),
                Err(unfit) if bufs.a.is_empty() => {
                    // A slot sized without a and b cannot take the built combinations'.
                    recordings.drop_recording(&key);
                    return Err(SynthesisError::Circuit {
                        file: circuits.c1().file().to_path_buf(),
                        partition,
                        reason: format!(
                            "{unfit}; the slot has no room for a and b (CUZK_SYNTHESIS_AB=prover), so it cannot be synthesized with its combinations built"
                        ),
                    }
                    .into());
                }
                Err(unfit) => {
                    eprintln!(
                        "cuzk-synthesis: {}: partition {partition}: {unfit}; synthesized with its combinations built, the recording dropped",
                        circuits.c1().file().display()
                    );
                    recordings.drop_recording(&key);
                }
            }
        }
        let (shape, split) = self.split(
            &Built(c),
            circuits,
            partition,
            layout,
            capacity,
            &mut bufs,
            panicked,
        )??;
        Ok((shape, split, Evaluated::Here(c)))
    }

    /// Synthesizes the partition by `make` on its runs of challenges where `layout` splits
    /// it, else in one piece, and says how: a split the circuit or the threads refuse goes
    /// in one piece instead (a circuit that is not blocks is remembered as such). A run's
    /// synthesis panicking ends it with an error, the message kept in `panicked`.
    #[allow(clippy::too_many_arguments)]
    fn split<Tree: 'static + MerkleTreeTrait, M: Make>(
        &self,
        make: &M,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        layout: Result<BlockLayout, String>,
        capacity: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
        panicked: &OnceLock<String>,
    ) -> Result<Result<(CircuitShape, Split), M::Error>, ThreadedError> {
        let why_not = match layout {
            Ok(layout) => {
                let runs = layout
                    .runs(self.threads)
                    .into_iter()
                    .map(|run| {
                        let circuit = circuits.challenge_run(partition, run.clone())?;
                        Ok((run, Caught { circuit, panicked }))
                    })
                    .collect::<Result<Vec<_>, SynthesisError>>()?;
                let n = runs.len();
                match make.blocks(runs, &layout, capacity, bufs) {
                    Ok(done) => return Ok(done.map(|shape| (shape, Split::Threads(n)))),
                    Err(BlocksError::Witness(e)) => return Err(e.into()),
                    // This partition only: the next may get its threads.
                    Err(BlocksError::NoThread(why)) => why,
                    // Marked for good by `settle` if the partition then proves well in
                    // one piece (a malformed C1 is not blocks either).
                    Err(BlocksError::NotBlocks(why)) => {
                        let key = Self::key(circuits, partition);
                        self.not_blocks.lock().expect("marks lock").insert(key);
                        why
                    }
                }
            }
            Err(why) => why,
        };
        let whole = circuits.partition(partition)?.circuit;
        let done = make.whole(whole, capacity, bufs.reborrow());
        Ok(done.map(|shape| (shape, Split::OnePiece(why_not))))
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
}

/// How a partition's a, b and c are made: by building and evaluating its combinations, or
/// from a recorded R1CS. `blocks` returns a split the circuit or threads refuse as the
/// outer error, with `bufs` unwritten.
trait Make {
    type Error;
    fn blocks<C: Circuit<Fr> + Send>(
        &self,
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
        capacity: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
    ) -> Result<Result<CircuitShape, Self::Error>, BlocksError>;
    fn whole<C: Circuit<Fr>>(
        &self,
        circuit: C,
        capacity: &CircuitShape,
        bufs: WitnessBuffers<'_>,
    ) -> Result<CircuitShape, Self::Error>;
}

/// The combinations built and evaluated by the circuit's own synthesis.
struct Built(CValues);

impl Make for Built {
    type Error = WitnessError;
    fn blocks<C: Circuit<Fr> + Send>(
        &self,
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
        capacity: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
    ) -> Result<Result<CircuitShape, WitnessError>, BlocksError> {
        match synthesize_blocks_into(runs, layout, capacity, bufs, self.0) {
            Ok(shape) => Ok(Ok(shape)),
            Err(BlocksError::Witness(e)) => Ok(Err(e)),
            Err(refused) => Err(refused),
        }
    }
    fn whole<C: Circuit<Fr>>(
        &self,
        circuit: C,
        capacity: &CircuitShape,
        bufs: WitnessBuffers<'_>,
    ) -> Result<CircuitShape, WitnessError> {
        synthesize_into(circuit, capacity, bufs, self.0)
    }
}

/// The assignment by the circuit, a, b, c (or only what `Evaluated` says) from a recorded
/// R1CS.
struct FromR1cs<'r>(&'r R1cs, Evaluated);

impl Make for FromR1cs<'_> {
    type Error = R1csError;
    fn blocks<C: Circuit<Fr> + Send>(
        &self,
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
        capacity: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
    ) -> Result<Result<CircuitShape, R1csError>, BlocksError> {
        self.0
            .synthesize_blocks_into(runs, layout, capacity, bufs, self.1)
    }
    fn whole<C: Circuit<Fr>>(
        &self,
        circuit: C,
        capacity: &CircuitShape,
        bufs: WitnessBuffers<'_>,
    ) -> Result<CircuitShape, R1csError> {
        self.0.synthesize_into(circuit, capacity, bufs, self.1)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cuzk_c1::{C1Input, GivenIds};
    use cuzk_kernels::witness::{first_difference, OwnedWitness, Recorded, Which};

    use super::*;
    use crate::{with_porep_circuits, CircuitsVisitor};

    /// A recording that does not fit its partitions (one coefficient of B changed): the
    /// partition is synthesized with its combinations built instead, writes what one-piece
    /// synthesis writes, and the recording is dropped; the next partition records again.
    #[test]
    fn a_recording_that_does_not_hold_falls_back_and_is_dropped() {
        struct Tampered;
        impl CircuitsVisitor for Tampered {
            type Output = ();
            fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
                let synthesis = ThreadedSynthesis::with(2, Combinations::Recorded);
                let layout = synthesis.layout(&circuits, 0).unwrap().unwrap();
                let first = circuits.challenge_run(0, 0..1).unwrap();
                let mut m = Recorded::record(first, Which::ALL).unwrap();
                m.b.coeffs[0] += Fr::from(1u64);
                let key = ThreadedSynthesis::key(&circuits, 0);
                let recordings = synthesis.recordings.as_ref().unwrap();
                recordings.put(key.clone(), R1cs::blocks(m, layout).unwrap());

                let shape = CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap();
                let mut one = OwnedWitness::new(shape);
                let whole = circuits.partition(0).unwrap().circuit;
                synthesize_into(whole, &shape, one.buffers(), CValues::Written).unwrap();
                let mut w = OwnedWitness::new(shape);
                let (_, how) = synthesis
                    .synthesize(&circuits, 0, &shape, w.buffers(), CValues::Written)
                    .unwrap();
                assert_eq!(how, Split::Threads(2));
                assert_eq!(first_difference(&one.buffers(), &w.buffers()), None);
                assert!(!recordings.holds(&key), "the recording was kept");
                synthesis
                    .synthesize(&circuits, 0, &shape, w.buffers(), CValues::Written)
                    .unwrap();
                assert!(recordings.holds(&key), "not recorded again");
                assert_eq!(first_difference(&one.buffers(), &w.buffers()), None);
            }
        }
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/porep-2KiB-a.c1.json");
        let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
        with_porep_circuits(&c1, Tampered).unwrap();
    }
}
