//! A process's recorded R1CS, one per proof type and challenges a partition: recorded at
//! its first partition, then every partition of that type computes only its assignment
//! and takes a, b, c from the matrices (`cuzk_kernels::witness::r1cs`).
//!
//! Recording walks the circuit's prefix and first challenge once, building their linear
//! combinations (the whole circuit where it is not a prefix and blocks), and holds their
//! A, B and C in memory: 12 bytes an entry, ~5.6 entries a row.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cuzk_kernels::witness::{BlockLayout, R1cs, Recorded, Which};
use filecoin_proofs::MerkleTreeTrait;

use crate::{PorepCircuits, SynthesisError};

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
        // the same matrices beside it.
        let mut known = self.known.lock().expect("recordings lock");
        if let Some(r1cs) = known.get(key) {
            return Ok(r1cs.clone());
        }
        let started = Instant::now();
        let why_not = |why: String| SynthesisError::Circuit {
            file: circuits.c1().file().to_path_buf(),
            partition,
            reason: format!("recording the R1CS: {why}"),
        };
        let r1cs = match layout {
            // The prefix and block 0: every block's rows are block 0's, moved.
            Some(layout) => {
                let first = circuits.challenge_run(partition, 0..1)?;
                let m = Recorded::record(first, Which::ALL).map_err(|e| why_not(e.to_string()))?;
                R1cs::blocks(m, *layout).map_err(|e| why_not(e.to_string()))?
            }
            None => R1cs::whole(
                Recorded::record(circuits.blank_circuit(), Which::ALL)
                    .map_err(|e| why_not(e.to_string()))?,
            ),
        };
        let r1cs = Arc::new(r1cs);
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
        self.known.lock().expect("recordings lock").remove(key);
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
