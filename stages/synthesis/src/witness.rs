//! A partition's circuit synthesized through our own constraint system straight into
//! caller buffers (heap buffers in one process, a shared-memory slot in the pipeline).

use cuzk_kernels::witness::{synthesize_into, CValues, CircuitShape, WitnessBuffers, WitnessError};
use filecoin_proofs::MerkleTreeTrait;

use crate::PartitionCircuit;

/// Synthesizes one partition into `bufs`, bounded by `capacity` (from the proof type's
/// parameters: the domain, the inputs and the aux variables), with or without C's values
/// (`c`). Returns the actual shape.
pub fn synthesize_partition<Tree: 'static + MerkleTreeTrait>(
    partition: PartitionCircuit<Tree>,
    capacity: &CircuitShape,
    bufs: WitnessBuffers<'_>,
    c: CValues,
) -> Result<CircuitShape, WitnessError> {
    synthesize_into(partition.circuit, capacity, bufs, c)
}
