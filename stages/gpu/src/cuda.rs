//! The CUDA device: our kernels through `cuzk_kernels::cuda::GpuProver`, which owns every
//! allocation on its device (made once, when the first partition's parameters are known,
//! and kept for every partition proved with the same parameters). The bases stay resident;
//! each partition uploads only a, b, c, the assignment and the plans, by DMA straight from
//! the arena, which is page-locked once.

use std::time::Duration;

use anyhow::{Context, Result};
use blstrs::Scalar as Fr;
use cuzk_kernels::cuda::{GpuError, GpuPartition, GpuProver};
use cuzk_kernels::groth16::steps::G1Sums;
use cuzk_kernels::srs::SrsView;
use cuzk_shm_layout::{Arena, Region, SlotClaim};
use cuzk_stage_common::slot_view::{cast, msm_inputs, MsmInputs};

use crate::PartitionDevice;

pub struct CudaDevice {
    ordinal: usize,
    max_domain_log2: u32,
    max_scalars: usize,
    /// The prover and the SRS it holds (identified by the address of its h points: one
    /// segment mapping per parameter file).
    prover: Option<(usize, GpuProver)>,
    /// The arena's mapping, page-locked on first use.
    arena: (*mut u8, usize),
    /// Set-up done inside the current partition's call (prover planned and the SRS
    /// uploaded; arena page-locked), reported as steps of that partition: it is why a gpu
    /// process's first partition takes tens of seconds at 32 GiB.
    setup: Vec<(&'static str, Duration)>,
}

impl CudaDevice {
    pub fn new(ordinal: usize, arena: &Arena) -> Result<Self> {
        if !cuzk_kernels::cuda::driver_present() {
            anyhow::bail!("device {ordinal}: no CUDA driver on this machine");
        }
        let shape = arena.header().shape;
        Ok(CudaDevice {
            ordinal,
            max_domain_log2: shape.domain_log2,
            max_scalars: (shape.num_inputs + shape.num_aux) as usize,
            prover: None,
            arena: arena.mapping(),
            setup: Vec::new(),
        })
    }

    fn prover_for(&mut self, srs: &SrsView<'_>) -> Result<&mut GpuProver, GpuError> {
        let key = srs.h.as_ptr() as usize;
        if self.prover.as_ref().map(|(k, _)| *k) != Some(key) {
            // New parameters: free the old plan first (one set of buffers at a time).
            self.prover = None;
            let started = std::time::Instant::now();
            let mut p = GpuProver::new(
                self.ordinal,
                self.max_domain_log2,
                self.max_scalars,
                srs.h,
                srs.l,
                srs.a,
                srs.b_g1,
            )?;
            self.setup.push(("setup_srs_upload", started.elapsed()));
            let started = std::time::Instant::now();
            // SAFETY: the arena mapping lives as long as this process's Arena (the whole
            // stage process) and is never unmapped while the prover exists.
            unsafe { p.register_host(self.arena.0, self.arena.1)? };
            self.setup.push(("setup_pin_arena", started.elapsed()));
            self.prover = Some((key, p));
        }
        Ok(&mut self.prover.as_mut().expect("just made").1)
    }
}

impl PartitionDevice for CudaDevice {
    fn describe(&self) -> String {
        match &self.prover {
            Some((_, p)) => format!("cuda:{} {}", self.ordinal, p.describe()),
            None => format!(
                "cuda:{} (buffers planned at the first partition)",
                self.ordinal
            ),
        }
    }

    fn prove(
        &mut self,
        claim: &SlotClaim<'_>,
        srs: &SrsView<'_>,
    ) -> Result<(G1Sums, Vec<(&'static str, Duration)>)> {
        let MsmInputs { shape, z, plans } = msm_inputs(claim, srs)?;
        let [l, a_plan, b_plan] = plans;
        let n = shape.domain_size();
        let partition = GpuPartition {
            domain_log2: shape.domain_log2(),
            a: &cast::<Fr>(claim.region(Region::EvalA))[..n],
            b: &cast::<Fr>(claim.region(Region::EvalB))[..n],
            c: &cast::<Fr>(claim.region(Region::EvalC))[..n],
            scalars: z,
            l,
            a_plan,
            b_plan,
        };
        let ordinal = self.ordinal;
        self.setup.clear();
        let (r, t) = self
            .prover_for(srs)
            .and_then(|p| p.prove(&partition))
            .map_err(DeviceError)
            .with_context(|| format!("cuda:{ordinal}"))?;
        let mut steps = std::mem::take(&mut self.setup);
        steps.extend([
            ("upload", t.upload),
            ("ntt", t.ntt),
            ("msm_h", t.msm_h),
            ("msm_l", t.msm_l),
            ("msm_a", t.msm_a),
            ("msm_b_g1", t.msm_b_g1),
        ]);
        Ok((
            G1Sums {
                h: r.h,
                l: r.l,
                a: r.a,
                b_g1: r.b_g1,
            },
            steps,
        ))
    }
}

/// A GPU error, kept as a type so the stage loop can ask whether the context survived.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DeviceError(pub GpuError);
