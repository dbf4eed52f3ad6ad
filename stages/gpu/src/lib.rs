//! cuzk-gpu: the quotient H and the four G1 MSMs (H, L, A, B_G1) of one partition, on one
//! device, and the G2 MSM B_G2 when the job puts it here (`JobSpec::b_g2`), reading the
//! slot in place and writing the sums into its results region.
//!
//!   H  = Σ_i h_i·[τ^i·Z(τ)/δ]₁,  h = coefficients of (A·B − C)/Z (six NTTs)
//!   L  = Σ_{aux j} z_j·[(β·u_j + α·v_j + w_j)(τ)/δ]₁
//!   ΣA = Σ_{j in A} z_j·[u_j(τ)]₁,   ΣB_G1 = Σ_{j in B} z_j·[v_j(τ)]₁
//!   ΣB_G2 = Σ_{j in B} z_j·[v_j(τ)]₂  (B's plan, over the G2 bases)
//!
//! Without a GPU the same stage runs the CPU kernels (`CpuDevice`), the embedded default.

mod ab_from_r1cs;
mod cpu;
mod cuda;
pub mod device_error;
mod folded_c;
mod held_prover;
mod held_r1cs;
mod ready_ahead;
pub mod wrong_sum;

pub use cpu::CpuDevice;
pub use cuda::{CudaDevice, DeviceError};
pub use folded_c::FoldedC;
pub use held_r1cs::HeldR1cs;
pub use ready_ahead::ReadyAhead;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use blstrs::G2Projective;
use cuzk_kernels::groth16::steps::G1Sums;
use cuzk_kernels::srs::SrsView;
use cuzk_kernels::witness::R1cs;
use cuzk_shm_layout::SlotClaim;
use cuzk_stage_common::runtime::Lookahead;

/// What a device computes for a partition: the four G1 sums, and B_G2 when asked.
pub struct PartitionSums {
    pub g1: G1Sums,
    pub b_g2: Option<G2Projective>,
}

/// Each step's name and time, for the timeline.
pub type Steps = Vec<(&'static str, Duration)>;

/// One device's worth of work for a partition.
pub trait PartitionDevice {
    /// What the device is, for logs ("cpu", "cuda:0 NVIDIA H200").
    fn describe(&self) -> String;
    /// The recorded R1CS of the jobs to come: partitions whose slot leaves a and b to the
    /// prover (`slot_view::evals_by_prover`) get them made from it and their assignment.
    fn hold_r1cs(&mut self, r1cs: Arc<R1cs>);
    /// Readies the device for partitions of `srs` (with B_G2 when `b_g2`) before the first
    /// one comes, with each step's time: the CUDA device plans its buffers and uploads the
    /// bases; the CPU device has nothing to ready.
    fn prepare(&mut self, _srs: &SrsView<'_>, _b_g2: bool) -> Result<Steps> {
        Ok(Steps::new())
    }
    /// Computes the four G1 sums (and B_G2 when `b_g2`) for the partition in `claim`
    /// without changing its inputs (a redo after a crash reads the same bytes), with each
    /// step's time. A device that can start on the next partition early asks `ahead` for
    /// it (the CUDA device uploads its `a` under this partition's compute).
    fn prove(
        &mut self,
        claim: &SlotClaim<'_>,
        srs: &SrsView<'_>,
        b_g2: bool,
        ahead: &mut Lookahead<'_, '_>,
    ) -> Result<(PartitionSums, Steps)>;
}

/// Computes the sums (B_G2 too when `b_g2`) and stores them in the slot's results region.
pub fn prove_slot(
    device: &mut dyn PartitionDevice,
    claim: &mut SlotClaim<'_>,
    srs: &SrsView<'_>,
    b_g2: bool,
    ahead: &mut Lookahead<'_, '_>,
) -> Result<Steps> {
    use cuzk_stage_common::slot_view::{write_b_g2, write_g1, MsmResult};
    let (sums, steps) = device.prove(claim, srs, b_g2, ahead)?;
    if b_g2 && sums.b_g2.is_none() {
        anyhow::bail!("{}: B_G2 asked for and not computed", device.describe());
    }
    let results = claim.region_mut(cuzk_shm_layout::Region::MsmResults);
    let g = &sums.g1;
    write_g1(results, MsmResult::H, &g.h);
    write_g1(results, MsmResult::L, &g.l);
    write_g1(results, MsmResult::A, &g.a);
    write_g1(results, MsmResult::BG1, &g.b_g1);
    if let Some(b_g2) = &sums.b_g2 {
        write_b_g2(results, b_g2);
    }
    Ok(steps)
}
