//! cuzk-gpu: the quotient H and the four G1 MSMs (H, L, A, B_G1) of one partition, on one
//! device, reading the slot in place and writing the four sums into its results region.
//!
//!   H  = Σ_i h_i·[τ^i·Z(τ)/δ]₁,  h = coefficients of (A·B − C)/Z (seven NTTs)
//!   L  = Σ_{aux j} z_j·[(β·u_j + α·v_j + w_j)(τ)/δ]₁
//!   ΣA = Σ_{j in A} z_j·[u_j(τ)]₁,   ΣB_G1 = Σ_{j in B} z_j·[v_j(τ)]₁
//!
//! Without a GPU the same stage runs the CPU kernels (`CpuDevice`), the embedded default.

mod cpu;
mod cuda;

pub use cpu::CpuDevice;
pub use cuda::{CudaDevice, DeviceError};

use std::time::Duration;

use anyhow::Result;
use cuzk_kernels::groth16::steps::G1Sums;
use cuzk_kernels::srs::SrsView;
use cuzk_shm_layout::SlotClaim;

/// One device's worth of G1 work for a partition.
pub trait PartitionDevice {
    /// What the device is, for logs ("cpu", "cuda:0 NVIDIA H200").
    fn describe(&self) -> String;
    /// Computes the four sums for the partition in `claim` without changing its inputs (a
    /// redo after a crash reads the same bytes), with each step's time.
    fn prove(
        &mut self,
        claim: &SlotClaim<'_>,
        srs: &SrsView<'_>,
    ) -> Result<(G1Sums, Vec<(&'static str, Duration)>)>;
}

/// Computes the sums and stores them in the slot's results region.
pub fn prove_slot(
    device: &mut dyn PartitionDevice,
    claim: &mut SlotClaim<'_>,
    srs: &SrsView<'_>,
) -> Result<Vec<(&'static str, Duration)>> {
    use cuzk_stage_common::slot_view::{write_g1, MsmResult};
    let (sums, steps) = device.prove(claim, srs)?;
    let results = claim.region_mut(cuzk_shm_layout::Region::MsmResults);
    write_g1(results, MsmResult::H, &sums.h);
    write_g1(results, MsmResult::L, &sums.l);
    write_g1(results, MsmResult::A, &sums.a);
    write_g1(results, MsmResult::BG1, &sums.b_g1);
    Ok(steps)
}
