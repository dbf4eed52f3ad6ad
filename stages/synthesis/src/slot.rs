//! Synthesis into a partition slot: the circuit of one partition written straight into
//! the slot's regions, then sealed (actual shape recorded, assignment made contiguous);
//! or, for a synthetic job, a generated partition of its shape.

use anyhow::{Context, Result};
use cuzk_c1::C1Input;
use cuzk_kernels::witness::{CValues, CircuitShape, Evaluated};
use cuzk_shm_layout::SlotClaim;
use cuzk_stage_common::slot_view::{capacity, seal_witness, witness_buffers};
use cuzk_stage_common::SyntheticJob;
use filecoin_proofs::MerkleTreeTrait;

use crate::{
    with_porep_circuits, CircuitsVisitor, ParamsShape, PorepCircuits, Split, ThreadedSynthesis,
};

/// Synthesizes partition `partition` of `c1` into the slot `claim` holds, a run of its
/// challenges per thread of `synthesis`; says how it was split. C's values are left out
/// (`CValues::LeftOut`): a slot has no c region, its prover makes c = a∘b. With `evals`
/// [`Evaluated::ByProver`] a and b are left to the prover too where the partition comes
/// from a recorded R1CS; the slot's meta says which (`slot_view::evals_by_prover`). A
/// partition not of `params`' exact shape fails (`crate::exact`; `None`: not checked).
pub fn synthesize_into_slot(
    c1: &C1Input,
    partition: usize,
    claim: &mut SlotClaim<'_>,
    synthesis: &ThreadedSynthesis,
    evals: Evaluated,
    params: Option<&ParamsShape>,
) -> Result<(CircuitShape, Split)> {
    struct IntoSlot<'s, 'a> {
        partition: usize,
        claim: &'s mut SlotClaim<'a>,
        synthesis: &'s ThreadedSynthesis,
        evals: Evaluated,
        params: Option<&'s ParamsShape>,
    }
    impl CircuitsVisitor for IntoSlot<'_, '_> {
        type Output = Result<(CircuitShape, Split)>;
        fn visit<Tree: 'static + MerkleTreeTrait>(
            self,
            circuits: PorepCircuits<'_, Tree>,
        ) -> Self::Output {
            let cap = capacity(self.claim);
            // A slot sized without a and b (the arena's shape says so) leaves them to the
            // prover whatever this process was told.
            let evals = match self.evals {
                _ if self.claim.arena_shape().leaves_evals_to_prover() => Evaluated::ByProver,
                Evaluated::Here(_) => Evaluated::Here(CValues::LeftOut),
                Evaluated::ByProver => Evaluated::ByProver,
            };
            let bufs = witness_buffers(self.claim);
            let synthesized = self.synthesis.synthesize_exact(
                &circuits,
                self.partition,
                &cap,
                bufs,
                evals,
                self.params,
            );
            let (shape, split, written) = synthesized.with_context(|| {
                    format!(
                        "{}: partition {}: synthesis into a slot sized for {} constraints, {} inputs, {} aux",
                        circuits.c1().file().display(),
                        self.partition,
                        cap.num_constraints,
                        cap.num_inputs,
                        cap.num_aux
                    )
                })?;
            seal_witness(self.claim, &shape, written);
            Ok((shape, split))
        }
    }
    with_porep_circuits(
        c1,
        IntoSlot {
            partition,
            claim,
            synthesis,
            evals,
            params,
        },
    )?
}

/// A synthetic partition (speed measurement only) into the slot `claim` holds: generated
/// from the job's seed and the partition number, then sealed exactly like a synthesized one.
pub fn synthetic_into_slot(
    job: &SyntheticJob,
    partition: u32,
    claim: &mut SlotClaim<'_>,
) -> Result<CircuitShape> {
    let shape = job.shape()?;
    if claim.arena_shape().leaves_evals_to_prover() {
        anyhow::bail!(
            "synthetic {} partition: the slots have no room for a and b (sized for CUZK_SYNTHESIS_AB=prover), and a synthetic partition's a and b have no R1CS to be made from",
            shape.name
        );
    }
    let cap = capacity(claim);
    let need = shape.circuit();
    if need.num_constraints > cap.num_constraints
        || need.num_inputs > cap.num_inputs
        || need.num_aux > cap.num_aux
    {
        anyhow::bail!(
            "synthetic {} partition ({} constraints, {} inputs, {} aux) does not fit a slot sized for {} constraints, {} inputs, {} aux",
            shape.name, need.num_constraints, need.num_inputs, need.num_aux,
            cap.num_constraints, cap.num_inputs, cap.num_aux
        );
    }
    let seed = job
        .seed
        .wrapping_mul(1 << 20)
        .wrapping_add(partition as u64);
    let written = shape.fill_witness(seed, witness_buffers(claim));
    // Generated a and b: no R1CS to make them from.
    seal_witness(claim, &written, Evaluated::Here(CValues::LeftOut));
    Ok(written)
}
