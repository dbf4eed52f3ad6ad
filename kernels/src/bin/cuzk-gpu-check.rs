//! Device check and benchmark of the CUDA kernels against the CPU reference.
//!
//! `cuzk-gpu-check correctness`: every kernel on fresh random inputs (seeded from the clock,
//! printed) against the CPU: field and curve layers, NTT 2^10..2^27 (against the CPU up to
//! 2^22, round trips above), H = (A·B − C)/Z, MSMs 2^10..2^MAX with edge cases, a whole
//! partition through `GpuProver::prove`.
//! `cuzk-gpu-check scale`: a synthetic SRS of real 32 GiB sizes made on the GPU, NTT and MSM
//! timings 2^20..2^27, and a 32 GiB-shaped partition through `prove`, timed by step.
//! `cuzk-gpu-check msm-g2`: the B_G2 MSM (`GpuG2Msm`) against the CPU: Fp2 and G2 layers,
//! dense MSMs 2^10..2^MAX, every window width, a plan with edge cases, then the 32 GiB
//! B_G2 shape (~3.3 M full-width terms + ~14.9 M ones over ~33 M bases) timed against the
//! CPU path on `CUZK_G2_CPU_THREADS` (default 6, as host-prep runs it) threads.
//! Results: a table on stdout (last) and in `$OUT/<mode>.txt` when OUT is set.

use std::fmt::Write as _;
use std::time::Instant;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::cuda::msm;
use cuzk_kernels::cuda::synthetic::{self, ScalarMix, SyntheticPartition};
use cuzk_kernels::cuda::{BaseSet, GpuError, GpuG2Msm, GpuProver};
use cuzk_kernels::groth16::quotient_in_place;
use cuzk_kernels::msm::scalars::{self, Limbs};
use cuzk_kernels::msm::PlanRef;
use cuzk_kernels::ntt::{self, Domain};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

struct Report {
    rows: Vec<String>,
    failures: usize,
}

impl Report {
    fn row(&mut self, what: &str, ok: Option<bool>, gpu_ms: f64, cpu_ms: f64, note: &str) {
        let status = match ok {
            Some(true) => "ok",
            Some(false) => {
                self.failures += 1;
                "FAIL"
            }
            None => "-",
        };
        let cpu = if cpu_ms > 0.0 {
            format!("{cpu_ms:10.2}")
        } else {
            format!("{:>10}", "-")
        };
        let line = format!("{what:<44} {status:>5} {gpu_ms:10.2} {cpu} {note}");
        println!("{line}");
        self.rows.push(line);
    }
}

fn rand_fr(rng: &mut ChaCha8Rng) -> Fr {
    Fr::random(&mut *rng)
}

fn rand_frs(n: usize, seed: u64) -> Vec<Fr> {
    let mut v = vec![Fr::ZERO; n];
    v.par_chunks_mut(1 << 14).enumerate().for_each(|(i, ch)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 32));
        for x in ch {
            *x = rand_fr(&mut rng);
        }
    });
    v
}

fn rand_scalars(n: usize, seed: u64) -> Vec<Limbs> {
    rand_frs(n, seed)
        .par_iter()
        .map(scalars::to_limbs)
        .collect()
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The Fr whose canonical limbs are `l` (l < r).
fn fr_of_limbs(l: &Limbs) -> Fr {
    let mut r = <Fr as ff::PrimeField>::Repr::default();
    for (i, x) in l.iter().enumerate() {
        r.as_mut()[8 * i..8 * i + 8].copy_from_slice(&x.to_le_bytes());
    }
    <Fr as ff::PrimeField>::from_repr_vartime(r).unwrap()
}

fn correctness(seed: u64, max_msm_log: u32, rep: &mut Report) -> Result<(), GpuError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Bases: synthetic on the device, copied back for the CPU references.
    let n_bases = 1usize << max_msm_log;
    let t = Instant::now();
    let (mut gen, _) = GpuProver::new_synthetic(0, 20, 1 << 16, [n_bases, 0, 0, 0], seed)?;
    let mut bases = gen.download_bases(BaseSet::H, n_bases)?;
    drop(gen);
    let t_bases = ms(t.elapsed());
    // Edge cases in the L vector: infinity, a repeated point, a negated one.
    let mut lb = bases[..1 << 16].to_vec();
    lb[5] = G1Affine::identity();
    lb[7] = lb[3];
    lb[9] = -lb[3];
    let max_log = 22u32.max(max_msm_log);
    let mut gpu = GpuProver::new(
        0,
        max_log,
        n_bases.max(1 << 16),
        &bases,
        &lb,
        &bases[..1 << 16],
        &bases[..1 << 12],
    )?;
    println!("device: {}", gpu.describe());
    rep.row(
        "synthetic bases + upload",
        None,
        t_bases,
        0.0,
        &format!("2^{max_msm_log} points"),
    );

    // Layer checks.
    {
        let n = 1 << 14;
        let fa = rand_frs(n, seed ^ 11);
        let fb = rand_frs(n, seed ^ 12);
        let mut pa: Vec<Fp> = (0..n).map(|_| Fp::random(&mut rng)).collect();
        let mut pb: Vec<Fp> = (0..n).map(|_| Fp::random(&mut rng)).collect();
        // Squares (a quarter of the pairs: fp_sqr is fp_mul(a, a)) and the edges 0, 1, −1.
        for i in (0..n).step_by(4) {
            pb[i] = pa[i];
        }
        for (i, v) in [Fp::ZERO, Fp::ONE, -Fp::ONE].into_iter().enumerate() {
            pa[4 * i] = v;
            pb[4 * i] = v;
        }
        let m = 1024;
        let mut ga: Vec<G1Affine> = bases[..m].to_vec();
        let mut gb: Vec<G1Affine> = bases[m..2 * m].to_vec();
        ga[0] = G1Affine::identity(); // inf + q
        gb[1] = G1Affine::identity(); // p + inf
        gb[2] = ga[2]; // p + p (doubling in madd)
        gb[3] = -ga[3]; // p − p = inf
        ga[4] = G1Affine::identity();
        gb[4] = G1Affine::identity();
        let (fr, fp, g) = gpu.layer_check((&fa, &fb), (&pa, &pb), (&ga, &gb))?;
        let fr_ok = fr
            .iter()
            .zip(fa.iter().zip(&fb))
            .all(|(r, (a, b))| *r == *a * b);
        let fp_ok = fp
            .iter()
            .zip(pa.iter().zip(&pb))
            .all(|(r, (a, b))| *r == *a * b);
        let g_ok = (0..m).all(|i| {
            let s = G1Projective::from(ga[i]) + gb[i];
            g[2 * i] == s && g[2 * i + 1] == s.double() + gb[i]
        });
        rep.row("Fr mul 2^14 random", Some(fr_ok), 0.0, 0.0, "");
        rep.row(
            "Fp mul 2^14 random (1/4 squares; 0, 1, -1)",
            Some(fp_ok),
            0.0,
            0.0,
            "",
        );
        rep.row(
            "G1 xyzz add/dbl 1024 (+inf, p+p, p-p)",
            Some(g_ok),
            0.0,
            0.0,
            "",
        );
    }

    // NTT against the CPU.
    for log in (10..=22).step_by(2).chain([21]) {
        let n = 1usize << log;
        let x = rand_frs(n, seed ^ (100 + log as u64));
        let d = Domain::new(log);
        let mut g = x.clone();
        let tg = gpu.ntt(&mut g, false)?;
        let mut c = x.clone();
        let t = Instant::now();
        ntt::ntt(&mut c, &d);
        let tc = ms(t.elapsed());
        rep.row(
            &format!("NTT 2^{log} forward vs CPU"),
            Some(g == c),
            ms(tg),
            tc,
            "",
        );
        let mut gi = x.clone();
        gpu.ntt(&mut gi, true)?;
        let mut ci = x.clone();
        ntt::intt(&mut ci, &d);
        rep.row(
            &format!("NTT 2^{log} inverse vs CPU"),
            Some(gi == ci),
            0.0,
            0.0,
            "",
        );
    }

    // H = (A·B − C)/Z against the CPU.
    for log in [12u32, 16, 20] {
        let n = 1usize << log;
        let (a, b, c) = (
            rand_frs(n, seed ^ 201),
            rand_frs(n, seed ^ 202),
            rand_frs(n, seed ^ 203),
        );
        let (h, tg) = gpu.quotient(&a, &b, &c)?;
        let (mut ca, mut cb, mut cc) = (a.clone(), b.clone(), c.clone());
        let t = Instant::now();
        quotient_in_place(&mut ca, &mut cb, &mut cc, &Domain::new(log));
        let tc = ms(t.elapsed());
        let want: Vec<Limbs> = ca.iter().map(scalars::to_limbs).collect();
        rep.row(
            &format!("quotient H 2^{log} vs CPU"),
            Some(h == want),
            ms(tg),
            tc,
            "7 NTTs",
        );
    }

    // Dense MSMs, full-width random scalars, against the CPU.
    let mut log = 10;
    while log <= max_msm_log {
        let n = 1usize << log;
        let s = rand_scalars(n, seed ^ (300 + log as u64));
        let (g, tg) = gpu.msm_dense(BaseSet::H, &s)?;
        let terms: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i]).collect();
        let t = Instant::now();
        let c = PlanRef {
            ones: &[],
            terms: &terms,
        }
        .execute(&bases[..n], &s);
        let tc = ms(t.elapsed());
        rep.row(
            &format!("MSM 2^{log} dense random vs CPU"),
            Some(g == c),
            ms(tg),
            tc,
            "",
        );
        log += 2;
    }

    // Every window width on one size (the size-based choice uses only some of them).
    {
        let n = 1usize << 18.min(max_msm_log);
        let sc = rand_scalars(n, seed ^ 350);
        let terms: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i]).collect();
        let want = PlanRef {
            ones: &[],
            terms: &terms,
        }
        .execute(&bases[..n], &sc);
        let mut bad = Vec::new();
        for c in 4..=msm::MAX_C {
            msm::force_window_width(c);
            let (g, _) = gpu.msm_dense(BaseSet::H, &sc)?;
            if g != want {
                bad.push(c);
            }
        }
        msm::force_window_width(0);
        let what = format!(
            "MSM 2^{} every width c=4..{} vs CPU",
            n.trailing_zeros(),
            msm::MAX_C
        );
        rep.row(
            &what,
            Some(bad.is_empty()),
            0.0,
            0.0,
            &format!("failing c: {bad:?}"),
        );
    }

    // Plan MSM with edge cases: scalars 0, 1, 2, r − 1 and random; repeated, negated and
    // infinity bases; batch-added ones.
    {
        let n = 1usize << 16;
        let mut s = rand_scalars(n, seed ^ 400);
        let rm1 = scalars::max_scalar();
        for (i, x) in s.iter_mut().enumerate() {
            match i % 7 {
                0 => *x = [0; 4],
                1 => *x = [1, 0, 0, 0],
                2 => *x = rm1,
                3 => *x = [2, 0, 0, 0],
                _ => {}
            }
        }
        let mut terms: Vec<[u32; 2]> = Vec::new();
        let mut ones: Vec<u32> = Vec::new();
        for b in 0..n as u32 {
            let si = (rng.next_u32() as usize) % n;
            if s[si] == [1, 0, 0, 0] && b % 2 == 0 {
                ones.push(b);
            } else {
                terms.push([b, si as u32]);
            }
        }
        // The same base under many scalars, and bases 3, 7 (= 3), 9 (= −3), 5 (infinity).
        for k in 0..64u32 {
            terms.push([3, (k * 977) % n as u32]);
        }
        terms.truncate(n - ones.len());
        terms.extend([[7, 2], [9, 2], [5, 10], [3, 3]]);
        ones.extend([5, 7, 9]);
        let total = terms.len() + ones.len();
        let cut = total - n.min(total);
        terms.drain(..cut);
        let plan = PlanRef {
            ones: &ones,
            terms: &terms,
        };
        let (g, tg) = gpu.msm(BaseSet::L, plan, &s)?;
        // Reference term by term with blst (independent of our CPU Pippenger).
        let fr_of = |l: &Limbs| {
            let mut r = <Fr as ff::PrimeField>::Repr::default();
            for (i, x) in l.iter().enumerate() {
                r.as_mut()[8 * i..8 * i + 8].copy_from_slice(&x.to_le_bytes());
            }
            <Fr as ff::PrimeField>::from_repr_vartime(r).unwrap()
        };
        let c = terms
            .par_iter()
            .map(|&[b, si]| G1Projective::from(lb[b as usize]) * fr_of(&s[si as usize]))
            .chain(ones.par_iter().map(|&b| G1Projective::from(lb[b as usize])))
            .reduce(G1Projective::identity, |a, b| a + b);
        rep.row(
            "MSM plan 2^16 edge cases vs blst",
            Some(g == c),
            0.0,
            0.0,
            "",
        );
        let c2 = plan.execute(&lb, &s);
        rep.row(
            "MSM plan 2^16 edge cases vs CPU",
            Some(g == c2),
            ms(tg),
            0.0,
            "0,1,2,r-1, inf/rep/neg bases",
        );
        // All-zero and all-ones scalars.
        let zeros = vec![[0u64; 4]; 4096];
        let (g, _) = gpu.msm_dense(BaseSet::H, &zeros)?;
        rep.row(
            "MSM 4096 zero scalars = infinity",
            Some(g == G1Projective::identity()),
            0.0,
            0.0,
            "",
        );
        let onesv = vec![[1u64, 0, 0, 0]; 4096];
        let (g, _) = gpu.msm_dense(BaseSet::H, &onesv)?;
        let c = bases[..4096]
            .iter()
            .fold(G1Projective::identity(), |a, b| a + b);
        rep.row("MSM 4096 unit scalars = sum", Some(g == c), 0.0, 0.0, "");
        let rm = vec![rm1; 4096];
        let (g, _) = gpu.msm_dense(BaseSet::H, &rm)?;
        rep.row("MSM 4096 scalars r-1 = -sum", Some(g == -c), 0.0, 0.0, "");
    }
    bases.truncate(1 << 17);
    drop(gpu);

    // A whole partition through prove() against the CPU path.
    for log in [14u32, 17] {
        let n = 1usize << log;
        let part = SyntheticPartition::new(
            log,
            12,
            n - 40,
            (0.997, 0.254),
            ScalarMix::default(),
            seed ^ 500 ^ log as u64,
        );
        let [ch, cl, ca, cb] = part.base_counts;
        let mut p = GpuProver::new(
            0,
            log,
            part.scalars.len(),
            &bases[..ch],
            &bases[1..cl + 1],
            &bases[2..ca + 2],
            &bases[3..cb + 3],
        )?;
        let (r, t) = p.prove(&part.as_gpu())?;
        let tc = Instant::now();
        let (mut a, mut b, mut c) = (part.a.clone(), part.b.clone(), part.c.clone());
        quotient_in_place(&mut a, &mut b, &mut c, &Domain::new(log));
        let h: Vec<Limbs> = a[..n - 1].iter().map(scalars::to_limbs).collect();
        let hd: Vec<[u32; 2]> = (0..(n - 1) as u32).map(|i| [i, i]).collect();
        let want_h = PlanRef {
            ones: &[],
            terms: &hd,
        }
        .execute(&bases[..ch], &h);
        let want_l = part.l.execute(&bases[1..cl + 1], &part.scalars);
        let want_a = part.a_plan.execute(&bases[2..ca + 2], &part.scalars);
        let want_b = part.b_plan.execute(&bases[3..cb + 3], &part.scalars);
        let tcpu = ms(tc.elapsed());
        let ok = r.h == want_h && r.l == want_l && r.a == want_a && r.b_g1 == want_b;
        let detail = format!(
            "h {} l {} a {} b {}",
            r.h == want_h,
            r.l == want_l,
            r.a == want_a,
            r.b_g1 == want_b
        );
        rep.row(
            &format!("prove() partition 2^{log} vs CPU"),
            Some(ok),
            ms(t.total),
            tcpu,
            &detail,
        );
    }
    Ok(())
}

fn scale(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let t = Instant::now();
    let part = SyntheticPartition::new(
        synthetic::PORE_32G_LOG2,
        synthetic::PORE_32G_INPUTS,
        synthetic::PORE_32G_AUX,
        (synthetic::PORE_32G_A_DENSITY, synthetic::PORE_32G_B_DENSITY),
        ScalarMix::default(),
        seed,
    );
    let t_part = ms(t.elapsed());
    let counts = part.base_counts;
    let (mut gpu, t_srs) =
        GpuProver::new_synthetic(0, 27, part.scalars.len().max(1 << 27), counts, seed)?;
    println!("device: {}", gpu.describe());
    rep.row(
        "synthetic 32GiB partition (host)",
        None,
        0.0,
        t_part,
        &format!(
            "terms L {} A {} B {}, ones L {} A {} B {}",
            part.l.terms.len(),
            part.a_plan.terms.len(),
            part.b_plan.terms.len(),
            part.l.ones.len(),
            part.a_plan.ones.len(),
            part.b_plan.ones.len()
        ),
    );
    rep.row(
        "synthetic SRS on GPU (h,l,a,b_g1)",
        None,
        ms(t_srs),
        0.0,
        &format!("{counts:?}"),
    );
    // Page-lock what prove() uploads, as the gpu stage does with the slot arena.
    let t = Instant::now();
    let mut pinned = 0usize;
    {
        let mut reg = |ptr: *const u8, len: usize| {
            // SAFETY: the buffers belong to `part`, which outlives `gpu` (dropped first at
            // the end of this function) and is never reallocated.
            match unsafe { gpu.register_host(ptr as *mut u8, len) } {
                Ok(()) => pinned += len,
                Err(e) => println!("register_host: {e}"),
            }
        };
        for v in [&part.a, &part.b, &part.c] {
            reg(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..]));
        }
        reg(
            part.scalars.as_ptr() as *const u8,
            std::mem::size_of_val(&part.scalars[..]),
        );
        for p in [&part.l, &part.a_plan, &part.b_plan] {
            reg(
                p.terms.as_ptr() as *const u8,
                std::mem::size_of_val(&p.terms[..]),
            );
            reg(
                p.ones.as_ptr() as *const u8,
                std::mem::size_of_val(&p.ones[..]),
            );
        }
    }
    let gib = pinned as f64 / (1u64 << 30) as f64;
    rep.row(
        "register_host (page-lock partition)",
        None,
        0.0,
        ms(t.elapsed()),
        &format!("{gib:.1} GiB"),
    );
    // Spot-check synthetic points are on the curve.
    let pts = gpu.download_bases(BaseSet::BG1, 1024)?;
    let on = pts
        .iter()
        .all(|p| bool::from(p.is_on_curve()) && !bool::from(p.is_identity()));
    rep.row("synthetic points on curve (1024)", Some(on), 0.0, 0.0, "");

    for log in [20u32, 22, 24, 26, 27] {
        let n = 1usize << log;
        let x = rand_frs(n, seed ^ log as u64);
        let mut g = x.clone();
        let mut best = f64::MAX;
        for _ in 0..3 {
            g.copy_from_slice(&x);
            best = best.min(ms(gpu.ntt(&mut g, false)?));
        }
        gpu.ntt(&mut g, true)?;
        rep.row(
            &format!("NTT 2^{log} fwd (best of 3) + round trip"),
            Some(g == x),
            best,
            0.0,
            "",
        );
    }
    let s = rand_scalars(1 << 27, seed ^ 77);
    for log in [20u32, 22, 24, 26, 27] {
        let n = (1usize << log).min(counts[0]); // 2^27 − 1 at the top: the H vector's size
        let mut best = f64::MAX;
        for _ in 0..2 {
            best = best.min(ms(gpu.msm_dense(BaseSet::H, &s[..n])?.1));
        }
        rep.row(
            &format!("MSM 2^{log} dense full-width (best of 2)"),
            None,
            best,
            0.0,
            "",
        );
    }
    if std::env::var_os("CUZK_MSM_PROFILE").is_some() {
        let t = ms(gpu.msm_dense(BaseSet::H, &s[..1 << 26])?.1);
        msm::take_profile();
        gpu.msm_dense(BaseSet::H, &s[..1 << 26])?;
        let p = msm::take_profile();
        let note: Vec<String> = msm::PHASES
            .iter()
            .zip(p)
            .map(|(n, t)| format!("{n} {:.1}", t * 1e3))
            .collect();
        rep.row(
            "MSM 2^26 (phases synced, ms)",
            None,
            t,
            0.0,
            &note.join(" "),
        );
    }
    drop(s);
    for run in 0..2 {
        let (_, t) = gpu.prove(&part.as_gpu())?;
        rep.row(
            &format!("32GiB partition prove() run {run}"),
            None,
            ms(t.total),
            0.0,
            &format!(
                "upload {:.0} ntt {:.0} H {:.0} L {:.0} A {:.0} B {:.0} finish {:.0}",
                ms(t.upload),
                ms(t.ntt),
                ms(t.msm_h),
                ms(t.msm_l),
                ms(t.msm_a),
                ms(t.msm_b_g1),
                ms(t.finish)
            ),
        );
    }
    Ok(())
}

/// The MSM's accumulation variants side by side on the same inputs: chunking (one full wave
/// against the old 2^17 threads) and register caps, dense 2^26 and 2^27 and a batch
/// addition of 2^26 ones; every result checked equal to the first configuration's (the
/// old one, itself checked against the CPU by `correctness`).
fn msm_variants(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    use msm::{AccumulateBuild as B, Chunking as C};
    let n27 = (1usize << 27) - 1;
    let (mut gpu, _) = GpuProver::new_synthetic(0, 27, 1 << 27, [n27, 1 << 26, 0, 0], seed)?;
    println!("device: {}", gpu.describe());
    let s = rand_scalars(n27, seed ^ 78);
    let ones: Vec<u32> = (0..1u32 << 26).collect();
    let ones_plan = PlanRef {
        ones: &ones,
        terms: &[],
    };
    // This build's multiplications against the CPU first: MSM and NTT 2^20.
    {
        let n = 1usize << 20;
        let bases = gpu.download_bases(BaseSet::H, n)?;
        let (g, _) = gpu.msm_dense(BaseSet::H, &s[..n])?;
        let terms: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i]).collect();
        let c = PlanRef {
            ones: &[],
            terms: &terms,
        }
        .execute(&bases, &s[..n]);
        rep.row("MSM 2^20 dense vs CPU", Some(g == c), 0.0, 0.0, "");
        let x = rand_frs(n, seed ^ 20);
        let mut g = x.clone();
        gpu.ntt(&mut g, false)?;
        let mut c = x;
        ntt::ntt(&mut c, &Domain::new(20));
        rep.row("NTT 2^20 forward vs CPU", Some(g == c), 0.0, 0.0, "");
    }
    {
        let x = rand_frs(1 << 27, seed ^ 27);
        let mut g = x.clone();
        let mut best = f64::MAX;
        for _ in 0..3 {
            g.copy_from_slice(&x);
            best = best.min(ms(gpu.ntt(&mut g, false)?));
        }
        gpu.ntt(&mut g, true)?;
        rep.row(
            "NTT 2^27 fwd (best of 3) + round trip",
            Some(g == x),
            best,
            0.0,
            "",
        );
    }
    // The old configuration first (the ratios' base), the default second.
    let configs = [(C::Fixed, B::R80), (C::Waves, B::Wide), (C::Waves, B::R80)];
    let mut want: Vec<Option<G1Projective>> = vec![None; 3];
    let mut base_ms = [0.0f64; 3];
    for (ci, &(chunking, build)) in configs.iter().enumerate() {
        msm::set_chunking(chunking);
        msm::set_accumulate_build(build);
        let jobs: [(&str, usize); 3] =
            [("MSM 2^26", 1 << 26), ("MSM 2^27-1", n27), ("ones 2^26", 0)];
        for (ji, &(what, n)) in jobs.iter().enumerate() {
            // 2^27 only for the old and the default configuration (device time).
            if n == n27 && ci > 1 {
                continue;
            }
            let mut best = f64::MAX;
            let mut same = true;
            for _ in 0..2 {
                let (g, t) = if n == 0 {
                    gpu.msm(BaseSet::L, ones_plan, &s[..1])?
                } else {
                    gpu.msm_dense(BaseSet::H, &s[..n])?
                };
                best = best.min(ms(t));
                match want[ji] {
                    None => want[ji] = Some(g),
                    Some(w) => same &= w == g,
                }
            }
            if ci == 0 {
                base_ms[ji] = best;
            }
            rep.row(
                &format!("{what} {chunking:?} {build:?}"),
                Some(same),
                best,
                0.0,
                &format!("old/this {:.3}x", base_ms[ji] / best),
            );
        }
    }
    msm::set_chunking(C::Waves);
    msm::set_accumulate_build(B::Wide);
    Ok(())
}

/// MSM time by window width at several sizes (dense, full-width scalars), each result
/// checked equal to the size-chosen width's.
fn sweep(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let max = 22u32;
    let (mut gpu, _) = GpuProver::new_synthetic(0, max, 1 << max, [1 << max, 0, 0, 0], seed)?;
    let s = rand_scalars(1 << max, seed ^ 9);
    for log in [14u32, 16, 18, 20, 22] {
        let n = 1usize << log;
        msm::force_window_width(0);
        let (want, t_auto) = gpu.msm_dense(BaseSet::H, &s[..n])?;
        let mut ok = true;
        let mut cells = Vec::new();
        let mut best = (f64::MAX, 0);
        for c in 8..=msm::MAX_C {
            msm::force_window_width(c);
            let mut t = f64::MAX;
            for _ in 0..2 {
                let (g, d) = gpu.msm_dense(BaseSet::H, &s[..n])?;
                ok &= g == want;
                t = t.min(ms(d));
            }
            if t < best.0 {
                best = (t, c);
            }
            cells.push(format!("{c}:{t:.1}"));
        }
        msm::force_window_width(0);
        let auto = msm::Windows::for_terms(n).c;
        let what = format!("MSM 2^{log} by width (auto c={auto}, best c={})", best.1);
        rep.row(&what, Some(ok), ms(t_auto), 0.0, &cells.join(" "));
    }
    Ok(())
}

/// The B_G2 MSM on the device (`GpuG2Msm`) against the CPU: the Fp2 and G2 layers, dense
/// MSMs 2^10..2^max_log with full-width random scalars, every window width, a plan with edge
/// cases (scalars 0, 1, 2, r − 1; infinity, repeated and negated bases) against blst term by
/// term and the CPU plan path, then the 32 GiB B_G2 shape timed against the CPU.
fn msm_g2(seed: u64, max_log: u32, rep: &mut Report) -> Result<(), GpuError> {
    let max_log = max_log.clamp(16, 24);
    let n_max = 1usize << max_log;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x62);
    let t = Instant::now();
    let bases = synthetic::random_g2_bases(n_max, seed);
    rep.row(
        "G2 random bases (host)",
        None,
        0.0,
        ms(t.elapsed()),
        &format!("2^{max_log} points"),
    );
    let t = Instant::now();
    let mut gpu = GpuG2Msm::new(0, &bases, n_max)?;
    println!("device: {}", gpu.describe());
    rep.row("G2 bases upload + plan", None, ms(t.elapsed()), 0.0, "");

    // Layers: Fp2 products and squares, G2 additions.
    {
        let n = 1 << 14;
        let mut fa: Vec<Fp2> = (0..n).map(|_| Fp2::random(&mut rng)).collect();
        let mut fb: Vec<Fp2> = (0..n).map(|_| Fp2::random(&mut rng)).collect();
        for i in (0..n).step_by(4) {
            fb[i] = fa[i];
        }
        let u = Fp2::new(Fp::ZERO, Fp::ONE);
        for (i, v) in [Fp2::ZERO, Fp2::ONE, -Fp2::ONE, u, -u]
            .into_iter()
            .enumerate()
        {
            fa[4 * i + 1] = v;
            fb[4 * i + 1] = v;
            fa[4 * i + 2] = v;
        }
        let m = 1024;
        let mut ga: Vec<G2Affine> = bases[..m].to_vec();
        let mut gb: Vec<G2Affine> = bases[m..2 * m].to_vec();
        ga[0] = G2Affine::identity(); // inf + q
        gb[1] = G2Affine::identity(); // p + inf
        gb[2] = ga[2]; // p + p (doubling in madd)
        gb[3] = -ga[3]; // p − p = inf
        ga[4] = G2Affine::identity();
        gb[4] = G2Affine::identity();
        let (f, g) = gpu.layer_check((&fa, &fb), (&ga, &gb))?;
        let f_ok = f
            .iter()
            .zip(fa.iter().zip(&fb))
            .all(|(&(p, s), (a, b))| p == *a * b && s == a.square());
        let g_ok = g.iter().enumerate().all(|(i, &(s1, s2))| {
            let s = G2Projective::from(ga[i]) + gb[i];
            s1 == s && s2 == s.double() + gb[i]
        });
        rep.row(
            "Fp2 mul + sqr 2^14 random (0, 1, -1, ±u)",
            Some(f_ok),
            0.0,
            0.0,
            "",
        );
        rep.row(
            "G2 xyzz add/dbl 1024 (+inf, p+p, p-p)",
            Some(g_ok),
            0.0,
            0.0,
            "",
        );
    }

    // Dense MSMs, full-width random scalars, against the CPU (cuzk_kernels::msm over G2).
    let s_all = rand_scalars(n_max, seed ^ 0x6300);
    let cpu_dense = |n: usize, s: &[Limbs]| {
        let terms: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i]).collect();
        let t = Instant::now();
        let c = PlanRef {
            ones: &[],
            terms: &terms,
        }
        .execute(&bases[..n], s);
        (c, ms(t.elapsed()))
    };
    let mut log = 10;
    while log <= max_log {
        let n = 1usize << log;
        let (g, tg) = gpu.msm_dense(&s_all[..n])?;
        let (c, tc) = cpu_dense(n, &s_all[..n]);
        rep.row(
            &format!("G2 MSM 2^{log} dense random vs CPU"),
            Some(g == c),
            ms(tg.terms),
            tc,
            &format!("c={}", msm::Windows::for_terms(n).c),
        );
        log += 2;
    }

    // Every window width on one size.
    {
        let n = 1usize << 14;
        let (want, _) = cpu_dense(n, &s_all[..n]);
        let mut bad = Vec::new();
        for c in 4..=msm::MAX_C {
            msm::force_window_width(c);
            let (g, _) = gpu.msm_dense(&s_all[..n])?;
            if g != want {
                bad.push(c);
            }
        }
        msm::force_window_width(0);
        rep.row(
            &format!("G2 MSM 2^14 every width c=4..{} vs CPU", msm::MAX_C),
            Some(bad.is_empty()),
            0.0,
            0.0,
            &format!("failing c: {bad:?}"),
        );
    }

    // All-zero, all-one and all-(r − 1) scalars.
    {
        let n = 4096;
        let sum = bases[..n]
            .iter()
            .fold(G2Projective::identity(), |a, b| a + b);
        let (g, _) = gpu.msm_dense(&vec![[0u64; 4]; n])?;
        rep.row(
            "G2 MSM 4096 zero scalars = infinity",
            Some(g == G2Projective::identity()),
            0.0,
            0.0,
            "",
        );
        let (g, _) = gpu.msm_dense(&vec![[1u64, 0, 0, 0]; n])?;
        rep.row(
            "G2 MSM 4096 unit scalars = sum",
            Some(g == sum),
            0.0,
            0.0,
            "",
        );
        let (g, _) = gpu.msm_dense(&vec![scalars::max_scalar(); n])?;
        rep.row(
            "G2 MSM 4096 scalars r-1 = -sum",
            Some(g == -sum),
            0.0,
            0.0,
            "",
        );
    }
    drop(gpu);

    // A plan with edge cases over its own base vector: scalars 0, 1, 2, r − 1 and random;
    // infinity, repeated and negated bases; ones batch-added.
    {
        let n = 1usize << 16;
        let mut eb = bases[..n].to_vec();
        eb[5] = G2Affine::identity();
        eb[7] = eb[3];
        eb[9] = -eb[3];
        let mut s = rand_scalars(n, seed ^ 0x6400);
        let rm1 = scalars::max_scalar();
        for (i, x) in s.iter_mut().enumerate() {
            match i % 7 {
                0 => *x = [0; 4],
                1 => *x = [1, 0, 0, 0],
                2 => *x = rm1,
                3 => *x = [2, 0, 0, 0],
                _ => {}
            }
        }
        let mut terms: Vec<[u32; 2]> = Vec::new();
        let mut ones: Vec<u32> = Vec::new();
        for b in 0..n as u32 {
            let si = (rng.next_u32() as usize) % n;
            if s[si] == [1, 0, 0, 0] && b % 2 == 0 {
                ones.push(b);
            } else {
                terms.push([b, si as u32]);
            }
        }
        for k in 0..64u32 {
            terms.push([3, (k * 977) % n as u32]);
        }
        terms.truncate(n - ones.len());
        terms.extend([[7, 2], [9, 2], [5, 10], [3, 3]]);
        ones.extend([5, 7, 9]);
        let total = terms.len() + ones.len();
        let cut = total - n.min(total);
        terms.drain(..cut);
        let plan = PlanRef {
            ones: &ones,
            terms: &terms,
        };
        let mut gpu = GpuG2Msm::new(0, &eb, n)?;
        let (g, tg) = gpu.msm(plan, &s)?;
        let c = terms
            .par_iter()
            .map(|&[b, si]| G2Projective::from(eb[b as usize]) * fr_of_limbs(&s[si as usize]))
            .chain(ones.par_iter().map(|&b| G2Projective::from(eb[b as usize])))
            .reduce(G2Projective::identity, |a, b| a + b);
        rep.row(
            "G2 MSM plan 2^16 edge cases vs blst",
            Some(g == c),
            0.0,
            0.0,
            "",
        );
        let c2 = plan.execute(&eb, &s);
        rep.row(
            "G2 MSM plan 2^16 edge cases vs CPU",
            Some(g == c2),
            ms(tg.terms + tg.ones),
            0.0,
            "0,1,2,r-1, inf/rep/neg bases",
        );
    }
    drop(bases);
    drop(s_all);
    b_g2_scale(seed, rep)
}

/// The 32 GiB B_G2 shape (`synthetic::b_g2_shape`; `CUZK_G2_SCALE` shrinks it) on the device
/// against the CPU path on `CUZK_G2_CPU_THREADS` threads (default 6, host-prep's count in
/// the measured pipeline), results compared.
fn b_g2_scale(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let scale: f64 = env_or("CUZK_G2_SCALE", 1.0);
    let threads: usize = env_or("CUZK_G2_CPU_THREADS", 6);
    let t = Instant::now();
    let (count, s, plan) = synthetic::b_g2_shape(scale, ScalarMix::default(), seed ^ 0x6500);
    let bases = synthetic::random_g2_bases(count, seed ^ 0x6501);
    rep.row(
        "B_G2 shape: bases + scalars (host)",
        None,
        0.0,
        ms(t.elapsed()),
        &format!(
            "{count} bases, ones {}, terms {}, zeros {}",
            plan.ones.len(),
            plan.terms.len(),
            plan.zeros
        ),
    );
    let t = Instant::now();
    let mut gpu = GpuG2Msm::new(0, &bases, count)?;
    println!("device: {}", gpu.describe());
    rep.row(
        "B_G2 bases upload (resident) + plan",
        None,
        ms(t.elapsed()),
        0.0,
        &format!("{:.2} GB", (count * 192) as f64 / 1e9),
    );
    let mut runs = Vec::new();
    for _ in 0..3 {
        runs.push(gpu.msm(plan.as_ref(), &s)?);
    }
    drop(gpu);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("CPU thread pool");
    let t = Instant::now();
    let want = pool.install(|| plan.execute(&bases, &s));
    let t_cpu = ms(t.elapsed());
    let same = runs.iter().all(|(g, _)| *g == want);
    let best = runs
        .iter()
        .map(|(_, t)| *t)
        .min_by(|a, b| (a.terms + a.ones).cmp(&(b.terms + b.ones)))
        .unwrap();
    let dev = ms(best.terms + best.ones);
    rep.row(
        &format!("B_G2 32GiB shape x{scale} vs CPU ({threads} thr)"),
        Some(same),
        dev,
        t_cpu,
        &format!(
            "best of 3: terms {:.1} ones {:.1} upload {:.1} call {:.1} ms; cpu/gpu {:.1}x",
            ms(best.terms),
            ms(best.ones),
            ms(best.upload),
            ms(best.total),
            t_cpu / dev
        ),
    );
    Ok(())
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Time from nothing to a ready `GpuProver` (context, kernels compiled and loaded, a small
/// plan allocated): what a gpu stage process pays at start. Run it with
/// `CUZK_KERNELS_LOAD=ptx CUDA_CACHE_DISABLE=1` for the old path (PTX JIT-compiled by the
/// driver, no driver cache) and without them for the CUBIN.
fn start(rep: &mut Report) -> Result<(), GpuError> {
    let t = Instant::now();
    // NVRTC (once per process; the prover below reuses it when the device is sm_90).
    cuzk_kernels::cuda::source::compiled(cuzk_kernels::cuda::source::ARCH)?;
    let t_nvrtc = ms(t.elapsed());
    let g = G1Affine::generator();
    let bases = vec![g; 1 << 10];
    let gpu = GpuProver::new(0, 10, 1 << 10, &bases, &bases, &bases, &bases)?;
    let total = ms(t.elapsed());
    let how = match std::env::var("CUZK_KERNELS_LOAD").as_deref() {
        Ok("ptx") => "NVRTC PTX, driver JIT",
        _ => "NVRTC CUBIN",
    };
    let cache = if std::env::var_os("CUDA_CACHE_DISABLE").is_some() {
        ", driver cache off"
    } else {
        ""
    };
    rep.row(
        &format!("start: GpuProver::new ({how}{cache})"),
        None,
        total,
        0.0,
        &format!(
            "NVRTC {t_nvrtc:.0} ms, then context + module load + plan {:.0} ms",
            total - t_nvrtc
        ),
    );
    println!("device: {}", gpu.describe());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("correctness");
    let max_msm_log: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(22);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("cuzk-gpu-check {mode} seed {seed}");
    let mut rep = Report {
        rows: Vec::new(),
        failures: 0,
    };
    let t = Instant::now();
    let res = match mode {
        "correctness" => correctness(seed, max_msm_log, &mut rep),
        "scale" => scale(seed, &mut rep),
        "sweep" => sweep(seed, &mut rep),
        "msm" => msm_variants(seed, &mut rep),
        "msm-g2" => msm_g2(seed, max_msm_log, &mut rep),
        "compile" => cuzk_kernels::cuda::source::compile().map(|c| {
            println!("PTX {} bytes, CUBIN {} bytes", c.ptx.len(), c.cubin.len());
            if let Some(stem) = args.get(2) {
                std::fs::write(format!("{stem}.ptx"), &c.ptx).expect("write PTX");
                std::fs::write(format!("{stem}.cubin"), &c.cubin).expect("write CUBIN");
            }
        }),
        "start" => start(&mut rep),
        _ => Err(GpuError::Input(format!("unknown mode {mode}"))),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== cuzk-gpu-check {mode} (seed {seed}, {:.1} s)",
        t.elapsed().as_secs_f64()
    );
    let _ = writeln!(
        out,
        "{:<44} {:>5} {:>10} {:>10} note",
        "check", "ok", "gpu ms", "cpu ms"
    );
    for r in &rep.rows {
        let _ = writeln!(out, "{r}");
    }
    if let Err(e) = &res {
        let _ = writeln!(out, "ERROR: {e} (context usable: {})", e.context_usable());
    }
    let _ = writeln!(out, "failures: {}", rep.failures);
    println!("{out}");
    if let Some(dir) = std::env::var_os("OUT") {
        let _ = std::fs::write(std::path::Path::new(&dir).join(format!("{mode}.txt")), &out);
    }
    let _ = G1Projective::identity().to_affine();
    std::process::exit(if res.is_err() || rep.failures > 0 {
        1
    } else {
        0
    });
}
