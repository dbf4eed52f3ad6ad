//! A partition's circuit synthesized through our own constraint system straight into
//! caller buffers (heap buffers in one process, a shared-memory slot in the pipeline).

use cuzk_kernels::witness::{
    synthesize_into, synthesize_into_without_c, CircuitShape, WitnessBuffers, WitnessError,
};
use filecoin_proofs::MerkleTreeTrait;

use crate::PartitionCircuit;

/// Synthesizes one partition into `bufs`, bounded by `capacity` (from the proof type's
/// parameters: the domain, the inputs and the aux variables). Returns the actual shape.
pub fn synthesize_partition<Tree: 'static + MerkleTreeTrait>(
    partition: PartitionCircuit<Tree>,
    capacity: &CircuitShape,
    bufs: WitnessBuffers<'_>,
) -> Result<CircuitShape, WitnessError> {
    synthesize_into(partition.circuit, capacity, bufs)
}

/// [`synthesize_partition`] without C's values (`bufs.c` is not written): for a prover with C
/// folded into L, which never reads them (~17 % less synthesis on the 8 MiB circuit).
pub fn synthesize_partition_without_c<Tree: 'static + MerkleTreeTrait>(
    partition: PartitionCircuit<Tree>,
    capacity: &CircuitShape,
    bufs: WitnessBuffers<'_>,
) -> Result<CircuitShape, WitnessError> {
    synthesize_into_without_c(partition.circuit, capacity, bufs)
}
