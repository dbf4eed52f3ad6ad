//! cuzk-host-prep: prep_msm and the B_G2 MSM of one partition, in place in its slot.
//!
//! prep_msm sorts every scalar of the L, A and B MSMs into 0 (skipped), 1 (batch
//! addition: a plain sum of bases) or other (the Pippenger tail), paired with its base,
//! and writes the three plans into the slot's prep regions for the GPU stage, each term
//! copied once from where the scan put it. The scalars are already canonical (synthesis
//! converts them out of Montgomery form as it seals the slot, so a host-prep process
//! killed half way leaves its input intact for the redo).
//! ΣB in G2 runs here on the CPU, beside the GPU's G1 work, when the job says so
//! (`JobSpec::b_g2`; by default only without GPUs: a GPU holding the B_G2 bases does it in
//! a fraction of the time):
//!   B_G2 = Σ_{j in B} z_j·[v_j(τ)]₂

use std::time::{Duration, Instant};

use anyhow::Result;
use blstrs::G2Projective;
use cuzk_kernels::groth16::steps::{b_g2_msm, check_params, PlanPieces};
use cuzk_kernels::msm::scalars::Limbs;
use cuzk_kernels::srs::SrsView;
use cuzk_shm_layout::{PrepHeader, Region, SlotClaim};
use cuzk_stage_common::slot_view::{cast, densities, meta, read_plan, write_b_g2, write_plan};
use group::Group;

/// What prep found and how long each part took.
#[derive(Debug, Clone, Copy)]
pub struct PrepReport {
    pub l: PrepHeader,
    pub a: PrepHeader,
    pub b: PrepHeader,
    pub plan: Duration,
    /// None when this stage did not compute it (the gpu stage does, or a synthetic job
    /// leaves it out).
    pub b_g2: Option<Duration>,
}

/// prep_msm for the partition in `claim`, against its proving key `srs`, and B_G2 when
/// `compute_b_g2`; otherwise B_G2 is left as the identity (the gpu stage overwrites it, or
/// a synthetic job leaves it out). `pieces` are the scan's buffers, kept by the caller
/// from one partition to the next (~0.6 GB at 32 GiB, reused rather than allocated and
/// faulted in again).
pub fn prep_slot(
    claim: &mut SlotClaim<'_>,
    srs: &SrsView<'_>,
    compute_b_g2: bool,
    pieces: &mut PlanPieces,
) -> Result<PrepReport> {
    let shape = meta(claim);
    check_params(srs, &shape, densities(claim))?;
    let n = shape.num_inputs + shape.num_aux;
    let started = Instant::now();
    let [z, da, dbi, dba, pl, pa, pb, results] = claim.regions_mut([
        Region::Assignment,
        Region::DensityAAux,
        Region::DensityBInput,
        Region::DensityBAux,
        Region::PrepL,
        Region::PrepA,
        Region::PrepB,
        Region::MsmResults,
    ]);
    let z = &cast::<Limbs>(z)[..n];
    let d = cuzk_kernels::groth16::steps::Densities {
        a_aux: cast(da),
        b_input: cast(dbi),
        b_aux: cast(dba),
    };
    // The scan's pieces go straight into the prep regions: one copy of each term.
    pieces.scan(z, shape.num_inputs, d);
    let [l, a, b] = pieces.each();
    let (l, a, b) = (write_plan(pl, &l), write_plan(pa, &a), write_plan(pb, &b));
    let plan = started.elapsed();
    let started = Instant::now();
    let b_g2 = if compute_b_g2 {
        write_b_g2(results, &b_g2_msm(srs, z, read_plan(pb).0));
        Some(started.elapsed())
    } else {
        write_b_g2(results, &G2Projective::identity());
        None
    };
    Ok(PrepReport {
        l,
        a,
        b,
        plan,
        b_g2,
    })
}
