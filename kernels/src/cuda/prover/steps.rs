//! Single steps of a `GpuProver`, for the device check and benchmarks: NTTs, the quotient,
//! MSMs over the resident bases, and the field and curve layers on their own.

use std::time::Duration;

use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use cudarc::driver::sys::CUdeviceptr;

use super::super::device;
use super::super::layout::{Xyzz, XYZZ_BYTES};
use super::super::memory_plan::SLOT;
use super::super::msm::{self, Windows, MAX_WINDOWS};
use super::super::ntt;
use super::super::GpuError;
use super::{BaseSet, GpuProver, LayerOutputs};
use crate::msm::scalars::Limbs;
use crate::msm::PlanRef;

impl GpuProver {
    /// Forward (or inverse, with 1/n) NTT of `data` in place on the device; returns the
    /// kernels' device time.
    pub fn ntt(&mut self, data: &mut [Fr], inverse: bool) -> Result<Duration, GpuError> {
        use super::super::error::Step;
        let log_n = data.len().trailing_zeros();
        if !data.len().is_power_of_two() || log_n > self.plan.max_log {
            return Err(GpuError::TooLarge(format!(
                "NTT of {} elements",
                data.len()
            )));
        }
        self.dev.ctx.bind_to_thread().step("bind context")?;
        self.tables.prepare(&self.dev, log_n)?;
        let d = &self.dev;
        d.upload(self.abc[0].ptr, self.abc[0].bytes, data, d.compute)?;
        self.ev[0].record(d.compute)?;
        let r = ntt::ntt(
            d,
            &self.tables,
            log_n,
            self.abc[0].ptr,
            self.abc[3].ptr,
            inverse,
        )?;
        self.ev[1].record(d.compute)?;
        d.download(data, r, d.compute)?;
        d.sync(d.compute)?;
        Ok(Duration::from_secs_f64(
            self.ev[0].ms_to(&self.ev[1])? as f64 / 1e3,
        ))
    }

    /// H's coefficients (canonical limbs, n of them) from a, b, c; and the device time.
    pub fn quotient(
        &mut self,
        a: &[Fr],
        b: &[Fr],
        c: &[Fr],
    ) -> Result<(Vec<Limbs>, Duration), GpuError> {
        use super::super::error::Step;
        let log_n = a.len().trailing_zeros();
        self.dev.ctx.bind_to_thread().step("bind context")?;
        self.tables.prepare(&self.dev, log_n)?;
        let d = &self.dev;
        for (buf, v) in self.abc.iter().zip([a, b, c]) {
            d.upload(buf.ptr, buf.bytes, v, d.compute)?;
        }
        self.ev[0].record(d.compute)?;
        let h = ntt::quotient(d, &self.tables, log_n, self.abc.map(|x| x.ptr))?;
        self.ev[1].record(d.compute)?;
        let mut out = vec![[0u64; 4]; a.len()];
        d.download(&mut out, h, d.compute)?;
        d.sync(d.compute)?;
        Ok((
            out,
            Duration::from_secs_f64(self.ev[0].ms_to(&self.ev[1])? as f64 / 1e3),
        ))
    }

    /// Σ plan over the resident base vector `set`, with `scalars` uploaded; device time.
    pub fn msm(
        &mut self,
        set: BaseSet,
        plan: PlanRef<'_>,
        scalars: &[Limbs],
    ) -> Result<(G1Projective, Duration), GpuError> {
        self.msm_inner(set, Some(plan), scalars)
    }

    /// Σ_i scalars[i]·bases[i] over the resident vector `set` (dense, as the H-MSM; a
    /// prover with H in Lagrange form holds LC in the H set).
    pub fn msm_dense(
        &mut self,
        set: BaseSet,
        scalars: &[Limbs],
    ) -> Result<(G1Projective, Duration), GpuError> {
        self.msm_inner(set, None, scalars)
    }

    fn msm_inner(
        &mut self,
        set: BaseSet,
        plan: Option<PlanRef<'_>>,
        scalars: &[Limbs],
    ) -> Result<(G1Projective, Duration), GpuError> {
        use super::super::error::Step;
        let cap = self.plan.counts[set as usize];
        if scalars.len() > self.plan.max_scalars {
            return Err(GpuError::TooLarge(format!("{} scalars", scalars.len())));
        }
        match plan {
            Some(p) if p.terms.len() + p.ones.len() > cap || set == BaseSet::H => {
                return Err(GpuError::TooLarge(
                    "plan larger than its bases (or on H)".into(),
                ))
            }
            None if scalars.len() > cap => {
                return Err(GpuError::TooLarge("more scalars than bases".into()))
            }
            _ => {}
        }
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let d = &self.dev;
        let ks = d.compute;
        d.upload(self.scalars.ptr, self.scalars.bytes, scalars, ks)?;
        let bases = self.bases[set as usize].ptr;
        let out = self.results.ptr;
        let ones_out = self.results.at(MAX_WINDOWS * XYZZ_BYTES);
        let (terms, nt, ones, no): (CUdeviceptr, usize, CUdeviceptr, usize) = match plan {
            Some(p) => {
                let buf = self.plans[set as usize - 1];
                let at = p.terms.len() * 8;
                d.upload(buf.ptr, buf.bytes, p.terms, ks)?;
                d.upload(buf.at(at), buf.bytes - at, p.ones, ks)?;
                (buf.ptr, p.terms.len(), buf.at(at), p.ones.len())
            }
            None => (0, scalars.len(), 0, 0),
        };
        self.ev[0].record(ks)?;
        let win: Windows = msm::enqueue_msm(
            d,
            &self.work,
            bases,
            terms,
            nt,
            self.scalars.ptr,
            out,
            msm::MsmHooks::default(),
        )?;
        let pairs = self.pairs[set as usize].sums();
        msm::enqueue_batch_add(d, &self.work, bases, pairs, ones, no, ones_out)?;
        self.ev[1].record(ks)?;
        let mut sums = vec![Xyzz::default(); SLOT];
        d.download(&mut sums, out, ks)?;
        d.sync(ks)?;
        let t = Duration::from_secs_f64(self.ev[0].ms_to(&self.ev[1])? as f64 / 1e3);
        Ok((
            msm::combine_windows(&win, &sums) + sums[MAX_WINDOWS].to_projective(),
            t,
        ))
    }

    /// Layer checks: Fr and Fp multiplication and G1 additions on the device for the given
    /// inputs; returns (fr products, fp products, [p + q, 2(p + q) + q] per pair).
    pub fn layer_check(
        &mut self,
        fr: (&[Fr], &[Fr]),
        fp: (&[blstrs::Fp], &[blstrs::Fp]),
        g1: (&[G1Affine], &[G1Affine]),
    ) -> Result<LayerOutputs, GpuError> {
        use super::super::error::Step;
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let d = &self.dev;
        let ks = d.compute;
        let [x, y, z, _] = self.abc;
        let grid = |n: usize| n.div_ceil(128) as u32;
        let mut fr_out = vec![Fr::from(0u64); fr.0.len()];
        let mut fp_out = vec![blstrs::Fp::from(0u64); fp.0.len()];
        let mut g_out = vec![Xyzz::default(); 2 * g1.0.len()];
        // SAFETY: each test kernel reads n elements of two inputs and writes n (2n for G1)
        // outputs; the three regions hold 2^max_log Fr each (checked by the asserts in upload).
        unsafe {
            d.upload(x.ptr, x.bytes, fr.0, ks)?;
            d.upload(y.ptr, y.bytes, fr.1, ks)?;
            let n = fr.0.len() as u32;
            d.launch(
                "test fr",
                d.k.test_fr_mul,
                grid(fr.0.len()),
                128,
                0,
                ks,
                &mut device::args![x.ptr, y.ptr, z.ptr, n],
            )?;
            d.download(&mut fr_out, z.ptr, ks)?;
            d.sync(ks)?;
            d.upload(x.ptr, x.bytes, fp.0, ks)?;
            d.upload(y.ptr, y.bytes, fp.1, ks)?;
            let n = fp.0.len() as u32;
            d.launch(
                "test fp",
                d.k.test_fp_mul,
                grid(fp.0.len()),
                128,
                0,
                ks,
                &mut device::args![x.ptr, y.ptr, z.ptr, n],
            )?;
            d.download(&mut fp_out, z.ptr, ks)?;
            d.sync(ks)?;
            d.upload(x.ptr, x.bytes, g1.0, ks)?;
            d.upload(y.ptr, y.bytes, g1.1, ks)?;
            let n = g1.0.len() as u32;
            assert!(2 * g1.0.len() * XYZZ_BYTES <= z.bytes);
            d.launch(
                "test g1",
                d.k.test_g1_add,
                grid(g1.0.len()),
                128,
                0,
                ks,
                &mut device::args![x.ptr, y.ptr, z.ptr, n],
            )?;
            d.download(&mut g_out, z.ptr, ks)?;
            d.sync(ks)?;
        }
        Ok((
            fr_out,
            fp_out,
            g_out.iter().map(Xyzz::to_projective).collect(),
        ))
    }
}
