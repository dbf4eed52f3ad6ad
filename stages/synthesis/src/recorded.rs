//! A process's recorded R1CS, one per proof type and challenges a partition: recorded at
//! its first partition, then every partition of that type computes only its assignment
//! and takes a, b, c from the matrices (`cuzk_kernels::witness::r1cs`).
//!
//! Recording walks the circuit's prefix and first challenge once, building their linear
//! combinations (the whole circuit where it is not a prefix and blocks), and holds their
//! A, B and C in memory: 12 bytes an entry, ~5.6 entries a row.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use cuzk_c1::C1Input;
use cuzk_kernels::witness::{BlockLayout, CValues, Evaluated, R1cs, Recorded, Which};
use filecoin_proofs::MerkleTreeTrait;

use crate::panics::caught;
use crate::{with_porep_circuits, CircuitsVisitor, PorepCircuits, SynthesisError};

/// A recording's key: the proof type and the challenges a partition.
pub(crate) type Key = (String, usize);

/// Whether partitions are synthesized from a recorded R1CS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combinations {
    /// Recorded once per proof type, then a, b, c from the matrices (the default).
    Recorded,
    /// Built and evaluated by every partition's synthesis (no matrices held).
    Built,
}

impl Combinations {
    /// From `CUZK_SYNTHESIS_R1CS` (`recorded`, the default, or `built`).
    pub fn from_env() -> Result<Combinations, String> {
        match std::env::var("CUZK_SYNTHESIS_R1CS").as_deref() {
            Err(_) | Ok("") | Ok("recorded") => Ok(Combinations::Recorded),
            Ok("built") => Ok(Combinations::Built),
            Ok(other) => Err(format!(
                "CUZK_SYNTHESIS_R1CS={other}: expected `recorded` or `built`"
            )),
        }
    }
}

/// Who makes a slot's a and b, from `CUZK_SYNTHESIS_AB`: `prover` (the default: synthesis
/// writes the assignment only; the prover makes a and b from it and the same recording,
/// checking every row there: `Evaluated::ByProver`) or `synthesis` (written into the slot,
/// every row checked here). The prover's way takes about a fifth of synthesis's CPU time
/// off and halves a slot, for ~26 ms of GPU time a 32 GiB partition: a real 8 MiB prover
/// on 16 cores, synthesis-bound, ran 1.19x the proofs a minute (docs/perf.md "Who makes a
/// and b"). A partition synthesized with its combinations built (no recording, or one
/// that did not fit) has them written either way; c is always left to the prover (c = a∘b).
///
/// The prover makes a and b from a recording, so with `CUZK_SYNTHESIS_R1CS=built` (none
/// held) the default is `synthesis`, and `prover` asked for beside it is an error naming
/// both: every partition would reach a slot without room for its a and b.
pub fn slot_evals_from_env() -> Result<Evaluated, String> {
    slot_evals(
        std::env::var("CUZK_SYNTHESIS_AB").ok().as_deref(),
        Combinations::from_env()?,
    )
}

fn slot_evals(ab: Option<&str>, combinations: Combinations) -> Result<Evaluated, String> {
    let built = combinations == Combinations::Built;
    match ab {
        None | Some("") if built => Ok(Evaluated::Here(CValues::LeftOut)),
        None | Some("") => Ok(Evaluated::ByProver),
        Some("prover") if built => Err(
            "CUZK_SYNTHESIS_AB=prover needs the recorded R1CS, which CUZK_SYNTHESIS_R1CS=built turns off: unset one of them".to_string(),
        ),
        Some("prover") => Ok(Evaluated::ByProver),
        Some("synthesis") => Ok(Evaluated::Here(CValues::LeftOut)),
        Some(other) => Err(format!(
            "CUZK_SYNTHESIS_AB={other}: expected `synthesis` or `prover`"
        )),
    }
}

/// Partition `partition`'s R1CS: its prefix and first block where `layout` says the
/// circuit is blocks (every block's rows are block 0's, moved), else the blank circuit whole.
fn record<Tree: 'static + MerkleTreeTrait>(
    circuits: &PorepCircuits<'_, Tree>,
    partition: usize,
    layout: Option<&BlockLayout>,
) -> Result<R1cs, SynthesisError> {
    let why_not = |why: String| SynthesisError::Circuit {
        file: circuits.c1().file().to_path_buf(),
        partition,
        reason: format!("recording the R1CS: {why}"),
    };
    Ok(match layout {
        Some(layout) => {
            let first = circuits.challenge_run(partition, 0..1)?;
            let m = Recorded::record(first, Which::ALL).map_err(|e| why_not(e.to_string()))?;
            R1cs::blocks(m, *layout).map_err(|e| why_not(e.to_string()))?
        }
        None => R1cs::whole(
            Recorded::record(circuits.blank_circuit(), Which::ALL)
                .map_err(|e| why_not(e.to_string()))?,
        ),
    })
}

/// The R1CS of `c1`'s proof type, as synthesis records it (from partition 0: the prefix and
/// one challenge where its circuit is blocks, else whole): what a prover makes a and b from
/// when synthesis leaves them to it (`Evaluated::ByProver`). Every partition of the proof
/// type has these rows (a layout measured on partition 0 holds for all: synthesis checks
/// each partition's shape against it).
pub fn record_r1cs(c1: &C1Input) -> Result<R1cs, SynthesisError> {
    struct Record;
    impl CircuitsVisitor for Record {
        type Output = Result<R1cs, SynthesisError>;
        fn visit<Tree: 'static + MerkleTreeTrait>(
            self,
            circuits: PorepCircuits<'_, Tree>,
        ) -> Self::Output {
            let challenges = circuits.challenges(0);
            let layout = if challenges >= 2 {
                BlockLayout::measure(
                    circuits.prefix_circuit(),
                    circuits.challenge_run(0, 0..1)?,
                    challenges,
                )
                .ok()
            } else {
                None
            };
            record(&circuits, 0, layout.as_ref())
        }
    }
    // The gpu process records from whatever job comes first, while it holds no slot: a
    // panic there (a C1 whose vanilla proofs upstream asserts on) would kill it, uncounted,
    // at every restart until synthesis failed the job.
    caught(|| with_porep_circuits(c1, Record))
        .map_err(|message| recording_panicked(c1, message))??
}

/// A panic while recording `c1`'s circuit, as its error.
pub(crate) fn recording_panicked(c1: &C1Input, message: String) -> SynthesisError {
    SynthesisError::Panicked {
        file: c1.file().to_path_buf(),
        partition: 0,
        during: "recording the circuit",
        message,
    }
}

/// The recordings made so far, by key.
#[derive(Default)]
pub(crate) struct Recordings {
    known: Mutex<HashMap<Key, Arc<R1cs>>>,
}

impl Recordings {
    /// The R1CS of `key`'s circuits, recorded now if it is not yet: the prefix and first
    /// block of partition `partition` where `layout` says the circuit is blocks, else the
    /// blank circuit whole.
    pub(crate) fn get_or_record<Tree: 'static + MerkleTreeTrait>(
        &self,
        key: &Key,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        layout: Option<&BlockLayout>,
    ) -> Result<Arc<R1cs>, SynthesisError> {
        // Held while recording: a second thread of this process waits rather than records
        // the same matrices beside it. Recording synthesizes the partition's first challenge,
        // which panics on a malformed C1 (`crate::panics`), poisoning the lock: the map is
        // written only once a recording is whole, so it is still good.
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(r1cs) = known.get(key) {
            return Ok(r1cs.clone());
        }
        let started = Instant::now();
        let r1cs = Arc::new(record(circuits, partition, layout)?);
        let [a, b, c] = r1cs.entries();
        eprintln!(
            "cuzk-synthesis: R1CS of {} ({} challenges a partition) recorded in {:.2} s: {} constraints, entries A {a}, B {b}, C {c}, {:.2} GiB held",
            key.0,
            key.1,
            started.elapsed().as_secs_f64(),
            r1cs.shape().num_constraints,
            r1cs.bytes() as f64 / (1u64 << 30) as f64,
        );
        known.insert(key.clone(), r1cs.clone());
        Ok(r1cs)
    }

    /// Forgets `key`'s recording (a partition it did not fit): the next records again.
    pub(crate) fn drop_recording(&self, key: &Key) {
        self.known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    #[cfg(test)]
    pub(crate) fn put(&self, key: Key, r1cs: R1cs) {
        self.known.lock().unwrap().insert(key, Arc::new(r1cs));
    }

    #[cfg(test)]
    pub(crate) fn holds(&self, key: &Key) -> bool {
        self.known.lock().unwrap().contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Who makes a and b, from the two variables: the prover by default, synthesis when
    /// asked or when no R1CS is recorded (the prover has nothing to make them from), and
    /// the prover asked for without a recording is refused naming both variables.
    #[test]
    fn a_and_b_go_to_the_prover_only_with_a_recording() {
        use Combinations::{Built, Recorded};
        let here = Ok(Evaluated::Here(CValues::LeftOut));
        assert_eq!(slot_evals(None, Recorded), Ok(Evaluated::ByProver));
        assert_eq!(
            slot_evals(Some("prover"), Recorded),
            Ok(Evaluated::ByProver)
        );
        assert_eq!(slot_evals(Some("synthesis"), Recorded), here);
        assert_eq!(slot_evals(None, Built), here);
        assert_eq!(slot_evals(Some(""), Built), here);
        assert_eq!(slot_evals(Some("synthesis"), Built), here);
        let both = slot_evals(Some("prover"), Built).unwrap_err();
        assert!(
            both.contains("CUZK_SYNTHESIS_AB=prover") && both.contains("CUZK_SYNTHESIS_R1CS=built"),
            "{both}"
        );
        assert!(slot_evals(Some("gpu"), Recorded).is_err());
    }
}
