//! A partition's synthesis held to the exact shape of its parameter file.
//!
//! The circuit's size follows the C1's own data: upstream builds a Merkle path's gadgets
//! from the path it is given, without checking its length against the tree. A C1 whose
//! path is a level too long or too short therefore synthesizes a circuit of another size,
//! which no Groth16 parameter file proves. Caught here, it fails its job naming the file,
//! before host-prep or the GPU spend time on it, and it never settles as the layout or the
//! recording later jobs of its proof type are synthesized with (`ThreadedSynthesis::settle`).

use std::path::Path;

use cuzk_kernels::srs::Srs;
use cuzk_kernels::witness::{CircuitShape, Evaluated, WitnessBuffers};
use filecoin_proofs::MerkleTreeTrait;

use crate::{PorepCircuits, Split, SynthesisError, ThreadedError, ThreadedSynthesis};

/// What a parameter file proves: circuits of this many inputs (the constant ONE included,
/// one `ic` point each) and aux variables (one `l` point each) over this domain (`h` holds
/// one point fewer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsShape {
    pub num_inputs: usize,
    pub num_aux: usize,
    pub domain_size: usize,
}

impl ParamsShape {
    /// Reads the counts of the `.params` file at `path` (its header and vector lengths).
    pub fn of(path: &Path) -> anyhow::Result<Self> {
        let layout = Srs::layout(path)?;
        let [h, l, ..] = layout.vectors.ok_or_else(|| {
            anyhow::anyhow!("{}: a verifying key, not parameters", path.display())
        })?;
        Ok(ParamsShape {
            num_inputs: layout.ic.count,
            num_aux: l.count,
            domain_size: h.count + 1,
        })
    }

    /// Whether a synthesized circuit of `shape` is one these parameters prove.
    pub fn fits_exactly(&self, shape: &CircuitShape) -> bool {
        shape.num_inputs == self.num_inputs
            && shape.num_aux == self.num_aux
            && shape.domain_size() == self.domain_size
    }
}

impl ThreadedSynthesis {
    /// [`ThreadedSynthesis::synthesize_for`], then the synthesized shape held to `params`:
    /// a partition of another shape is an invalid C1. Either way what the synthesis measured
    /// or recorded for the proof type is settled: kept once a partition proves it, dropped
    /// if its first partitions fail. Without `params` (its file unreadable for a moment)
    /// nothing is held to them, and the partition settles nothing as proved: what it
    /// measured is dropped as a failed one's would be (without failing it).
    pub fn synthesize_exact<Tree: 'static + MerkleTreeTrait>(
        &self,
        circuits: &PorepCircuits<'_, Tree>,
        partition: usize,
        capacity: &CircuitShape,
        bufs: WitnessBuffers<'_>,
        what: Evaluated,
        params: Option<&ParamsShape>,
    ) -> Result<(CircuitShape, Split, Evaluated), ThreadedError> {
        let done = self
            .synthesize_for(circuits, partition, capacity, bufs, what)
            .and_then(|(shape, split, what)| {
                let Some(params) = params.filter(|p| !p.fits_exactly(&shape)) else {
                    return Ok((shape, split, what));
                };
                Err(SynthesisError::InvalidC1 {
                    file: circuits.c1().file().to_path_buf(),
                    reason: format!(
                        "partition {partition}: its circuit has {} inputs, {} aux variables and a domain of {}, where the parameters prove {}, {} and {}: its vanilla proofs are not of {:?}'s shape (a Merkle path of another length?)",
                        shape.num_inputs,
                        shape.num_aux,
                        shape.domain_size(),
                        params.num_inputs,
                        params.num_aux,
                        params.domain_size,
                        circuits.c1().proof_type(),
                    ),
                }
                .into())
            });
        // Unchecked (no parameter shape), a partition proves nothing: what it measured or
        // marked is dropped unless proved before, and taken again from the next one.
        self.settle(circuits, partition, done.is_ok() && params.is_some());
        done
    }
}
