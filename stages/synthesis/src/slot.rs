//! Synthesis into a partition slot: the circuit of one partition written straight into
//! the slot's regions, then sealed (actual shape recorded, assignment made contiguous).

use anyhow::{Context, Result};
use cuzk_c1::C1Input;
use cuzk_kernels::witness::CircuitShape;
use cuzk_shm_layout::SlotClaim;
use cuzk_stage_common::slot_view::{capacity, seal_witness, witness_buffers};
use filecoin_proofs::MerkleTreeTrait;

use crate::{synthesize_partition, with_porep_circuits, CircuitsVisitor, PorepCircuits};

/// Synthesizes partition `partition` of `c1` into the slot `claim` holds.
pub fn synthesize_into_slot(
    c1: &C1Input,
    partition: usize,
    claim: &mut SlotClaim<'_>,
) -> Result<CircuitShape> {
    struct IntoSlot<'s, 'a> {
        partition: usize,
        claim: &'s mut SlotClaim<'a>,
    }
    impl CircuitsVisitor for IntoSlot<'_, '_> {
        type Output = Result<CircuitShape>;
        fn visit<Tree: 'static + MerkleTreeTrait>(
            self,
            circuits: PorepCircuits<'_, Tree>,
        ) -> Self::Output {
            let circuit = circuits.partition(self.partition)?;
            let cap = capacity(self.claim);
            let shape = synthesize_partition(circuit, &cap, witness_buffers(self.claim))
                .with_context(|| {
                    format!(
                        "{}: partition {}: synthesis into a slot sized for {} constraints, {} inputs, {} aux",
                        circuits.c1().file().display(),
                        self.partition,
                        cap.num_constraints,
                        cap.num_inputs,
                        cap.num_aux
                    )
                })?;
            seal_witness(self.claim, &shape);
            Ok(shape)
        }
    }
    with_porep_circuits(c1, IntoSlot { partition, claim })?
}
