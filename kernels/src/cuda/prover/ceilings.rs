//! Ceilings: the field products and the madd on their own, in registers, one full wave
//! (ceiling.cu), timed and checked against the CPU. They say how much of a step's distance
//! from its floor (docs/perf.md) is the arithmetic itself and how much lies around it.

use std::time::Duration;

use blstrs::{Fp, G1Affine, G1Projective, Scalar as Fr};
use cudarc::driver::sys::CUfunction;
use ff::Field;
use group::Curve;
use rayon::prelude::*;

use super::super::device::{self, Device};
use super::super::layout::{Xyzz, XYZZ_BYTES};
use super::super::GpuError;
use super::GpuProver;

/// 32-bit multiply-adds a second the floors count with: 64 a clock an SM (the FMA-heavy
/// pipe's 16 lanes on each of 4 schedulers), 132 SMs, 1980 MHz. An IMAD.WIDE is two.
pub const FLOOR_RATE: f64 = 64.0 * 132.0 * 1.98e9;

/// One ceiling: a kernel's loop of `units` operations in `time`, every result read back
/// equal to the CPU's (`ok`), and the 32-bit multiply-adds the floors count for one unit.
pub struct Ceiling {
    pub name: &'static str,
    pub units: f64,
    pub time: Duration,
    pub ok: bool,
    pub macs_per_unit: f64,
    /// Threads launched (one full wave of the kernel) and loop iterations each.
    pub threads: usize,
    pub iters: u32,
}

impl Ceiling {
    /// Counted multiply-adds a second over [`FLOOR_RATE`].
    pub fn of_floor_rate(&self) -> f64 {
        self.units * self.macs_per_unit / self.time.as_secs_f64() / FLOOR_RATE
    }
    /// Nanoseconds of the whole GPU a unit.
    pub fn ns_per_unit(&self) -> f64 {
        self.time.as_secs_f64() * 1e9 / self.units
    }
}

/// Loop iterations that take about `secs` at the floor rate for `threads` threads doing
/// `macs` counted multiply-adds an iteration (at least 2).
fn iters_for(secs: f64, threads: usize, macs: f64) -> u32 {
    ((secs * FLOOR_RATE / (threads as f64 * macs)) as u32).max(2)
}

/// The best of two launches of `f` (one full wave of 128-thread blocks), in device time.
///
/// # Safety
/// `args` must be what `f` takes, its buffers large enough for `threads` threads.
unsafe fn best_of_two(
    d: &Device,
    ev: [&super::Event; 2],
    name: &'static str,
    f: CUfunction,
    threads: usize,
    args: &mut [*mut std::ffi::c_void],
) -> Result<Duration, GpuError> {
    let mut best = f32::MAX;
    for _ in 0..2 {
        ev[0].record(d.compute)?;
        // SAFETY: the caller's contract.
        unsafe { d.launch(name, f, (threads / 128) as u32, 128, 0, d.compute, args)? };
        ev[1].record(d.compute)?;
        d.sync(d.compute)?;
        best = best.min(ev[0].ms_to(ev[1])?);
    }
    Ok(Duration::from_secs_f64(best as f64 / 1e3))
}

/// Thread `t` of `ceiling_imad`: 8 chains of acc = lo32(acc)·y + acc (wrapping), xored.
fn imad_thread(t: u64, y: u32, iters: u32) -> u64 {
    let mut acc: [u64; 8] = std::array::from_fn(|k| t * 8 + k as u64 + 1);
    for _ in 0..iters as u64 * 16 {
        for a in &mut acc {
            *a = (*a as u32 as u64).wrapping_mul(y as u64).wrapping_add(*a);
        }
    }
    acc.iter().fold(0, |s, a| s ^ a)
}

/// Threads whose results the CPU recomputes where that is slow: every `step`-th.
fn sample(threads: usize, count: usize) -> Vec<usize> {
    let step = (threads / count).max(1);
    (0..threads).step_by(step).collect()
}

impl GpuProver {
    /// Runs every ceiling kernel for about `secs` each on `fr`/`fp` inputs (one a thread;
    /// at least one full wave of the largest kernel) and `points` (repeated to two a
    /// thread), checking every result (or a sample, where the CPU's share is slow) against
    /// the CPU. `y32` is the multiplier of the IMAD.WIDE chains. `blocks_per_sm` caps each
    /// launch at that many 128-thread blocks an SM (4: the accumulation's occupancy, 16
    /// warps an SM), else each kernel runs as many as fit.
    pub fn ceilings(
        &mut self,
        secs: f64,
        blocks_per_sm: Option<usize>,
        fr: (&[Fr], &[Fr]),
        fp: (&[Fp], &[Fp]),
        points: &[G1Affine],
        y32: u32,
    ) -> Result<Vec<Ceiling>, GpuError> {
        use super::super::error::Step;
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let d = &self.dev;
        let k = &d.k;
        let [x, y, z, _] = self.abc;
        let ev = [&self.ev[0], &self.ev[1]];
        let mut out = Vec::new();
        let cap = blocks_per_sm.map_or(usize::MAX, |b| b * 128 * d.sm_count as usize);
        let wave = |f| d.resident_threads(f, 128).map(|n| n.min(cap));
        let need = |n: usize, what: &str| {
            if n > fr.0.len() || n > fp.0.len() {
                return Err(GpuError::TooLarge(format!(
                    "{what}: a full wave of {n} threads needs that many inputs"
                )));
            }
            Ok(())
        };
        let ok_all = |v: Vec<bool>| v.into_iter().all(|b| b);

        // The multiplier alone.
        let n = wave(k.ceiling_imad)?;
        let iters = iters_for(secs, n, 256.0);
        assert!(n * 8 <= z.bytes);
        // SAFETY: ceiling_imad writes one u64 a thread into z (n · 8 bytes, asserted).
        let t = unsafe {
            best_of_two(
                d,
                ev,
                "ceiling imad",
                k.ceiling_imad,
                n,
                &mut device::args![z.ptr, y32, iters],
            )?
        };
        let mut got = vec![0u64; n];
        d.download(&mut got, z.ptr, d.compute)?;
        d.sync(d.compute)?;
        let ok = sample(n, 64)
            .par_iter()
            .all(|&i| got[i] == imad_thread(i as u64, y32, iters));
        out.push(Ceiling {
            name: "IMAD.WIDE, 8 independent chains",
            units: n as f64 * iters as f64 * 128.0,
            time: t,
            ok,
            macs_per_unit: 2.0,
            threads: n,
            iters,
        });

        // Fr: one chain, then two through fr_mul2. Counted: 112 IMAD.WIDE a product.
        for (name, f, chains) in [
            ("Fr product (fr_mul), one chain", k.ceiling_fr_mul, 1),
            ("Fr products in pairs (fr_mul2)", k.ceiling_fr_mul2, 2),
        ] {
            let n = wave(f)?;
            need(n, name)?;
            let iters = iters_for(secs, n, 224.0 * chains as f64);
            d.upload(x.ptr, x.bytes, &fr.0[..n], d.compute)?;
            d.upload(y.ptr, y.bytes, &fr.1[..n], d.compute)?;
            assert!(2 * n * 32 <= z.bytes);
            // SAFETY: reads n Fr from x and y, writes n (2n for pairs) Fr into z (asserted).
            let t = unsafe {
                best_of_two(
                    d,
                    ev,
                    name,
                    f,
                    n,
                    &mut device::args![x.ptr, y.ptr, z.ptr, iters],
                )?
            };
            let mut got = vec![Fr::ZERO; n * chains];
            d.download(&mut got, z.ptr, d.compute)?;
            d.sync(d.compute)?;
            let e = [iters as u64];
            let ok = ok_all(
                (0..n)
                    .into_par_iter()
                    .map(|i| {
                        let (a, b) = (fr.0[i], fr.1[i]);
                        if chains == 1 {
                            got[i] == a * b.pow_vartime(e)
                        } else {
                            got[2 * i] == a * b.pow_vartime(e)
                                && got[2 * i + 1] == b * a.pow_vartime(e)
                        }
                    })
                    .collect(),
            );
            out.push(Ceiling {
                name,
                units: (n * chains) as f64 * iters as f64,
                time: t,
                ok,
                macs_per_unit: 224.0,
                threads: n,
                iters,
            });
        }

        // Fp: the Karatsuba product (264 multiplies) and the square (234).
        for (name, f, square) in [
            ("Fp product (fp_mul), one chain", k.ceiling_fp_mul, false),
            ("Fp square (fp_sqr), one chain", k.ceiling_fp_sqr, true),
        ] {
            let n = wave(f)?;
            need(n, name)?;
            let macs = if square { 468.0 } else { 528.0 };
            let iters = iters_for(secs, n, macs);
            d.upload(x.ptr, x.bytes, &fp.0[..n], d.compute)?;
            d.upload(y.ptr, y.bytes, &fp.1[..n], d.compute)?;
            assert!(n * 48 <= z.bytes);
            // SAFETY: reads n Fp from x (and y), writes n Fp into z (asserted).
            let t = unsafe {
                if square {
                    best_of_two(d, ev, name, f, n, &mut device::args![x.ptr, z.ptr, iters])?
                } else {
                    best_of_two(
                        d,
                        ev,
                        name,
                        f,
                        n,
                        &mut device::args![x.ptr, y.ptr, z.ptr, iters],
                    )?
                }
            };
            let mut got = vec![Fp::ZERO; n];
            d.download(&mut got, z.ptr, d.compute)?;
            d.sync(d.compute)?;
            let ok = if square {
                sample(n, 256).par_iter().all(|&i| {
                    let mut v = fp.0[i];
                    for _ in 0..iters {
                        v = v.square();
                    }
                    got[i] == v
                })
            } else {
                let e = [iters as u64];
                ok_all(
                    (0..n)
                        .into_par_iter()
                        .map(|i| got[i] == fp.0[i] * fp.1[i].pow_vartime(e))
                        .collect(),
                )
            };
            out.push(Ceiling {
                name,
                units: n as f64 * iters as f64,
                time: t,
                ok,
                macs_per_unit: macs,
                threads: n,
                iters,
            });
        }

        // The madd: 6 products, 2 squares and one fused Y3 (4848 counted multiply-adds); as
        // the accumulation calls it (accumulator in local memory), then with the accumulator
        // split between registers and shared memory (xyzz_madd_sh).
        for (name, f) in [
            ("G1 madd (xyzz_add_affine), two points", k.ceiling_g1_madd),
            (
                "G1 madd, ZZ/ZZZ in shared (xyzz_madd_sh)",
                k.ceiling_g1_madd_sh,
            ),
        ] {
            let n = wave(f)?;
            need(n, name)?;
            let iters = iters_for(secs, n, 4848.0);
            let points: Vec<G1Affine> = points.iter().copied().cycle().take(2 * n).collect();
            d.upload(x.ptr, x.bytes, &points, d.compute)?;
            assert!(n * XYZZ_BYTES <= z.bytes);
            // SAFETY: reads 2n affine points from x, writes n XYZZ points into z (asserted).
            let t =
                unsafe { best_of_two(d, ev, name, f, n, &mut device::args![x.ptr, z.ptr, iters])? };
            let mut got = vec![Xyzz::default(); n];
            d.download(&mut got, z.ptr, d.compute)?;
            d.sync(d.compute)?;
            let (kp, kq) = (
                Fr::from(iters.div_ceil(2) as u64),
                Fr::from((iters / 2) as u64),
            );
            let ok = sample(n, 512).par_iter().all(|&i| {
                let want = G1Projective::from(points[2 * i]) * kp
                    + G1Projective::from(points[2 * i + 1]) * kq;
                got[i].to_projective().to_affine() == want.to_affine()
            });
            out.push(Ceiling {
                name,
                units: n as f64 * iters as f64,
                time: t,
                ok,
                macs_per_unit: 4848.0,
                threads: n,
                iters,
            });
        }
        Ok(out)
    }
}
