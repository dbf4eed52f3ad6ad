//! The B_G2 MSM on the device: B_G2 = Σ_{j ∈ B} z_j·[v_j(τ)]₂, Groth16's one sum over G2.
//!
//! The same kernels as the G1 sums (msm.cu's `_g2` instantiations of one template) and the
//! same launch sequence (`msm::enqueue_msm` for the Pippenger terms, `msm::enqueue_batch_add`
//! for the scalars equal to 1) on a workspace carved for G2 points. It takes the plan the
//! B_G1 sum takes (`PlanRef` from prep_msm): B_G1 and B_G2 have one base per B-variable, in
//! the same order, so the same [base, scalar] terms and ones index both vectors.
//!
//! The prover computes B_G2 itself (`GpuProver::prove` with `GpuPartition::b_g2`, the same
//! kernels and launch sequence in its own allocation); this standalone form is what
//! `cuzk-gpu-check msm-g2` checks against the CPU and times (docs/gpu.md).
//!
//! ```no_run
//! # use cuzk_kernels::cuda::{GpuG2Msm, GpuError};
//! # fn f(b_g2: &[blstrs::G2Affine], plan: cuzk_kernels::msm::PlanRef<'_>,
//! #      scalars: &[cuzk_kernels::msm::scalars::Limbs]) -> Result<(), GpuError> {
//! let mut g2 = GpuG2Msm::new(0, b_g2, scalars.len())?; // bases resident from here on
//! let (sum, timings) = g2.msm(plan, scalars)?;          // blstrs::G2Projective
//! # Ok(()) }
//! ```

use std::time::{Duration, Instant};

use blstrs::{Fp2, G2Affine, G2Projective};
use cudarc::driver::sys::CUdeviceptr;

use super::device::{self, DevBuf, Device, Event};
use super::error::Step;
use super::layout::{Xyzz2, FR_BYTES, G2_AFFINE_BYTES, XYZZ2_BYTES};
use super::msm::{self, Curve, MsmWork, MAX_WINDOWS};
use super::GpuError;
use crate::msm::scalars::Limbs;
use crate::msm::PlanRef;

/// Result slots: the W window sums of the terms, then the ones' sum.
const SLOT: usize = MAX_WINDOWS + 1;
/// Scratch for [`GpuG2Msm::layer_check`] (inputs and outputs of the test kernels).
const TEST_BYTES: usize = 16 << 20;
/// Bytes of one plan entry at most: a [base, scalar] term (8) or a one (4); a base is used
/// once, so `count` entries of 12 bytes hold any plan (as the G1 plan buffers).
const PLAN_ENTRY_BYTES: usize = 12;

/// Device time of one [`GpuG2Msm::msm`] (CUDA events) and its wall time.
#[derive(Clone, Copy, Debug, Default)]
pub struct G2Timings {
    /// Scalars and plan host → device.
    pub upload: Duration,
    /// Pippenger over the terms (digits to window sums).
    pub terms: Duration,
    /// Batch addition of the ones.
    pub ones: Duration,
    /// The whole call: checks, uploads, kernels, read-back and the Horner step on the host.
    pub total: Duration,
}

/// What [`GpuG2Msm::layer_check`] returns: per Fp2 pair (a·b, a²), per G2 pair
/// (p + q, 2(p + q) + q).
pub type G2LayerOutputs = (Vec<(Fp2, Fp2)>, Vec<(G2Projective, G2Projective)>);

/// One device's G2 bases, resident, and everything a G2 MSM over them needs, allocated once.
pub struct GpuG2Msm {
    count: usize,
    max_scalars: usize,
    bases: DevBuf,
    scalars: DevBuf,
    /// Terms then ones of the current plan.
    plan: DevBuf,
    work: MsmWork,
    results: DevBuf,
    test: DevBuf,
    ev: [Event; 4],
    /// Last: dropped after the events (fields drop in declaration order).
    dev: Device,
}

// SAFETY: as for `GpuProver`: the struct owns its CUDA handles and nothing else holds them;
// every entry point binds the context first, and `&mut self` keeps one thread at a time.
unsafe impl Send for GpuG2Msm {}

/// Bytes the device needs for `count` G2 bases and up to `max_scalars` scalars (everything
/// [`GpuG2Msm::new`] allocates). At the 32 GiB shape (33.07 M bases, 130.2 M scalars):
/// about 6.3 GB of bases, 4.2 GB of scalars, 2.5 GB of digits and 3.0 GB of buckets and
/// partials.
pub fn plan_bytes_g2(count: usize, max_scalars: usize) -> usize {
    count * G2_AFFINE_BYTES
        + max_scalars * FR_BYTES
        + count * PLAN_ENTRY_BYTES
        + MsmWork::bytes_for(Curve::G2, count)
        + SLOT * XYZZ2_BYTES
        + TEST_BYTES
        + 8 * 256
}

impl GpuG2Msm {
    /// Opens device `ordinal` (kernels compiled or loaded as for `GpuProver`), allocates
    /// for `bases.len()` bases and `max_scalars` scalars, and uploads the bases (resident).
    pub fn new(ordinal: usize, bases: &[G2Affine], max_scalars: usize) -> Result<Self, GpuError> {
        let count = bases.len();
        if count >= 1 << 31 || max_scalars >= 1 << 32 {
            return Err(GpuError::TooLarge(
                "base indices are 31-bit, scalar indices 32-bit".into(),
            ));
        }
        let mut dev = device::open(ordinal)?;
        let need = plan_bytes_g2(count, max_scalars);
        let (free, total) = dev.mem_info()?;
        // Keep 512 MiB for the driver and module, as GpuProver does.
        if need + (512 << 20) > free {
            return Err(GpuError::OutOfMemory(format!(
                "G2 MSM needs {:.1} GiB for {count} bases and {max_scalars} scalars; {:.1} GiB free of {:.1}",
                gib(need),
                gib(free),
                gib(total)
            )));
        }
        dev.allocate(need)?;
        let bases_buf = dev.carve(count * G2_AFFINE_BYTES);
        let scalars = dev.carve(max_scalars * FR_BYTES);
        let plan = dev.carve(count * PLAN_ENTRY_BYTES);
        let work = MsmWork::carve_for(&mut dev, Curve::G2, count);
        let results = dev.carve(SLOT * XYZZ2_BYTES);
        let test = dev.carve(TEST_BYTES);
        let ev = [dev.event()?, dev.event()?, dev.event()?, dev.event()?];
        dev.upload(bases_buf.ptr, bases_buf.bytes, bases, dev.copy)?;
        dev.sync(dev.copy)?;
        Ok(GpuG2Msm {
            count,
            max_scalars,
            bases: bases_buf,
            scalars,
            plan,
            work,
            results,
            test,
            ev,
            dev,
        })
    }

    /// Device name, multiprocessors and the bytes planned.
    pub fn describe(&self) -> String {
        let name = self.dev.ctx.name().unwrap_or_else(|_| "?".into());
        format!(
            "{name}, {} SMs, {} G2 bases, {} scalars, {:.1} GiB allocated",
            self.dev.sm_count,
            self.count,
            self.max_scalars,
            gib(plan_bytes_g2(self.count, self.max_scalars))
        )
    }

    /// Σ_{i ∈ ones} bases[i] + Σ_{(b, s) ∈ terms} scalars[s]·bases[b] (`PlanRef::execute`
    /// over G2, on the device).
    pub fn msm(
        &mut self,
        plan: PlanRef<'_>,
        scalars: &[Limbs],
    ) -> Result<(G2Projective, G2Timings), GpuError> {
        check_plan(plan, self.count, scalars.len(), self.max_scalars)?;
        self.run(Some(plan), scalars)
    }

    /// Σ_i scalars[i]·bases[i] over the first `scalars.len()` bases (no plan; for checks).
    pub fn msm_dense(&mut self, scalars: &[Limbs]) -> Result<(G2Projective, G2Timings), GpuError> {
        if scalars.len() > self.count || scalars.len() > self.max_scalars {
            return Err(GpuError::TooLarge(format!(
                "{} dense scalars for {} bases, {} planned",
                scalars.len(),
                self.count,
                self.max_scalars
            )));
        }
        self.run(None, scalars)
    }

    fn run(
        &mut self,
        plan: Option<PlanRef<'_>>,
        scalars: &[Limbs],
    ) -> Result<(G2Projective, G2Timings), GpuError> {
        let wall = Instant::now();
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let d = &self.dev;
        let ks = d.compute;
        let [e0, e1, e2, e3] = &self.ev;
        e0.record(ks)?;
        d.upload(self.scalars.ptr, self.scalars.bytes, scalars, ks)?;
        let (terms, nt, ones, no): (CUdeviceptr, usize, CUdeviceptr, usize) = match plan {
            Some(p) => {
                // Terms first, ones right after them (as GpuProver lays out its plans).
                let at = p.terms.len() * 8;
                d.upload(self.plan.ptr, self.plan.bytes, p.terms, ks)?;
                d.upload(self.plan.at(at), self.plan.bytes - at, p.ones, ks)?;
                (self.plan.ptr, p.terms.len(), self.plan.at(at), p.ones.len())
            }
            None => (0, scalars.len(), 0, 0),
        };
        e1.record(ks)?;
        let out = self.results.ptr;
        let ones_out = self.results.at(MAX_WINDOWS * XYZZ2_BYTES);
        let win = msm::enqueue_msm(
            d,
            &self.work,
            self.bases.ptr,
            terms,
            nt,
            self.scalars.ptr,
            out,
            msm::MsmHooks::default(),
        )?;
        e2.record(ks)?;
        let none = msm::PairSums::default();
        msm::enqueue_batch_add(d, &self.work, self.bases.ptr, none, ones, no, ones_out)?;
        e3.record(ks)?;
        let mut sums = vec![Xyzz2::default(); SLOT];
        d.download(&mut sums, out, ks)?;
        d.sync(ks)?;
        let sum = msm::combine_windows(&win, &sums) + sums[MAX_WINDOWS].to_projective();
        let ms = |a: &Event, b: &Event| a.ms_to(b).map(|v| Duration::from_secs_f64(v as f64 / 1e3));
        let t = G2Timings {
            upload: ms(e0, e1)?,
            terms: ms(e1, e2)?,
            ones: ms(e2, e3)?,
            total: wall.elapsed(),
        };
        Ok((sum, t))
    }

    /// Layer checks on the device: Fp2 products and squares of the pairs `fp2`, and the G2
    /// additions of the pairs `g2` through the XYZZ formulas (mixed add, full add of a point
    /// to itself, mixed add after it), each against blstrs by the caller.
    pub fn layer_check(
        &mut self,
        fp2: (&[Fp2], &[Fp2]),
        g2: (&[G2Affine], &[G2Affine]),
    ) -> Result<G2LayerOutputs, GpuError> {
        let (nf, ng) = (fp2.0.len(), g2.0.len());
        // Inputs a, b then 2n outputs.
        if fp2.1.len() != nf || g2.1.len() != ng || 4 * nf * 96 > TEST_BYTES {
            return Err(GpuError::Input(
                "Fp2 pairs: equal lengths, at most 2^15".into(),
            ));
        }
        if 2 * ng * G2_AFFINE_BYTES + 2 * ng * XYZZ2_BYTES > TEST_BYTES {
            return Err(GpuError::Input(
                "G2 pairs: equal lengths, at most 2^13".into(),
            ));
        }
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let d = &self.dev;
        let ks = d.compute;
        let t = self.test;
        let grid = |n: usize| n.div_ceil(128) as u32;
        let mut f_out = vec![Fp2::from(0u64); 2 * nf];
        let mut g_out = vec![Xyzz2::default(); 2 * ng];
        let (fa, fb, fo) = (t.ptr, t.at(nf * 96), t.at(2 * nf * 96));
        let (ga, gb, go) = (
            t.ptr,
            t.at(ng * G2_AFFINE_BYTES),
            t.at(2 * ng * G2_AFFINE_BYTES),
        );
        // SAFETY: test_fp2_mul reads n Fp2 from a and b and writes 2n to out; test_g2_add
        // reads n G2 affine points from p and q and writes 2n XYZZ to out; the regions lie in
        // `test` (sizes checked above) and do not overlap.
        unsafe {
            d.upload(fa, t.bytes, fp2.0, ks)?;
            d.upload(fb, t.bytes - nf * 96, fp2.1, ks)?;
            let n = nf as u32;
            d.launch(
                "test fp2",
                d.k.test_fp2_mul,
                grid(nf),
                128,
                0,
                ks,
                &mut device::args![fa, fb, fo, n],
            )?;
            d.download(&mut f_out, fo, ks)?;
            d.sync(ks)?;
            d.upload(ga, t.bytes, g2.0, ks)?;
            d.upload(gb, t.bytes - ng * G2_AFFINE_BYTES, g2.1, ks)?;
            let n = ng as u32;
            d.launch(
                "test g2",
                d.k.test_g2_add,
                grid(ng),
                128,
                0,
                ks,
                &mut device::args![ga, gb, go, n],
            )?;
            d.download(&mut g_out, go, ks)?;
            d.sync(ks)?;
        }
        Ok((
            f_out.chunks(2).map(|c| (c[0], c[1])).collect(),
            g_out
                .chunks(2)
                .map(|c| (c[0].to_projective(), c[1].to_projective()))
                .collect(),
        ))
    }
}

/// Refuses, before anything is enqueued, a plan that does not fit the buffers or indexes
/// past the bases or scalars (the kernels do not check indices).
pub fn check_plan(
    plan: PlanRef<'_>,
    bases: usize,
    scalars: usize,
    max_scalars: usize,
) -> Result<(), GpuError> {
    if scalars > max_scalars {
        return Err(GpuError::TooLarge(format!(
            "{scalars} scalars, planned for {max_scalars}"
        )));
    }
    if plan.terms.len() + plan.ones.len() > bases {
        return Err(GpuError::TooLarge(format!(
            "B_G2 plan has {} entries for {bases} bases",
            plan.terms.len() + plan.ones.len()
        )));
    }
    let (nb, ns) = (bases as u64, scalars as u64);
    if plan.ones.iter().any(|&b| b as u64 >= nb)
        || plan
            .terms
            .iter()
            .any(|&[b, s]| b as u64 >= nb || s as u64 >= ns)
    {
        return Err(GpuError::Input(
            "B_G2 plan indexes past its bases or scalars".into(),
        ));
    }
    Ok(())
}

fn gib(b: usize) -> f64 {
    b as f64 / (1u64 << 30) as f64
}
