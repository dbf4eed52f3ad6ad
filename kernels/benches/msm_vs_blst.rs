//! Our MSM and batch addition against blst's (the Pippenger and batch addition blstrs sits
//! on), same bases and scalars, same run:
//!
//!     cargo bench -p cuzk-kernels --bench msm_vs_blst
//!
//! This is the measurement behind choosing our own Pippenger for the CPU path.

use std::time::Instant;

use blst::{blst_p1_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use cuzk_kernels::msm::{self, scalars, Term, WindowPlan};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn as_blst(points: &[G1Affine]) -> &[blst_p1_affine] {
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine (blstrs 0.7.1, pinned).
    unsafe { std::slice::from_raw_parts(points.as_ptr() as *const blst_p1_affine, points.len()) }
}

/// blst's result in the same 48-byte compressed form as ours, to compare them.
fn compressed(p: &blst::blst_p1) -> [u8; 48] {
    let mut out = [0u8; 48];
    // SAFETY: out has the 48 bytes blst_p1_compress writes; p is a valid point.
    unsafe { blst::blst_p1_compress(out.as_mut_ptr(), p) };
    out
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.unwrap())
}

fn main() {
    let max_log = std::env::var("CUZK_BENCH_MSM_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20u32);
    let n_max = 1usize << max_log;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Distinct bases: a random point's multiples, by repeated addition.
    let p = G1Projective::random(&mut rng);
    let mut proj = Vec::with_capacity(n_max);
    let mut acc = p;
    for _ in 0..n_max {
        proj.push(acc);
        acc += p;
    }
    let mut bases = vec![G1Affine::identity(); n_max];
    G1Projective::batch_normalize(&proj, &mut bases);
    drop(proj);
    let ks: Vec<Fr> = (0..n_max).map(|_| Fr::random(&mut rng)).collect();
    let limbs = scalars::to_limbs_vec(&ks);
    let bytes: Vec<u8> = limbs
        .iter()
        .flat_map(|l| l.iter().flat_map(|w| w.to_le_bytes()))
        .collect();

    println!(
        "{:>6} | {:>10} {:>10} {:>7} | {:>12} {:>12} {:>7} | window sweep (ours, ms)",
        "n", "ours msm", "blst msm", "ratio", "ours sum(1s)", "blst sum", "ratio"
    );
    for log in (16..=max_log).step_by(2) {
        let n = 1usize << log;
        let terms: Vec<Term> = (0..n as u32).map(|i| [i, i]).collect();
        let (t_ours, ours) = best_of(2, || msm::msm(&bases[..n], &limbs, &terms));
        let (t_blst, theirs) = best_of(2, || as_blst(&bases[..n]).mult(&bytes[..32 * n], 255));
        assert_eq!(
            ours.to_affine().to_compressed(),
            compressed(&theirs),
            "MSMs differ at n = {n}"
        );
        let idx: Vec<u32> = (0..n as u32).collect();
        let (t_sum, s_ours) = best_of(2, || msm::sum_indexed(&bases[..n], &idx));
        let (t_bsum, s_blst) = best_of(2, || as_blst(&bases[..n]).add());
        assert_eq!(
            s_ours.to_affine().to_compressed(),
            compressed(&s_blst),
            "sums differ at n = {n}"
        );
        let auto = WindowPlan::for_terms(n).c;
        let sweep: Vec<String> = [auto - 2, auto - 1, auto + 1]
            .iter()
            .map(|&c| {
                let (t, v) = best_of(1, || {
                    msm::msm_with(&bases[..n], &limbs, &terms, &WindowPlan::new(c))
                });
                assert_eq!(v, ours);
                format!("c={c}: {:.1}", t * 1e3)
            })
            .collect();
        println!(
            "{:>6} | {:>9.1}ms {:>9.1}ms {:>6.2}x | {:>10.1}ms {:>10.1}ms {:>6.2}x | c={auto} (auto), {}",
            format!("2^{log}"),
            t_ours * 1e3,
            t_blst * 1e3,
            t_blst / t_ours,
            t_sum * 1e3,
            t_bsum * 1e3,
            t_bsum / t_sum,
            sweep.join(", ")
        );
    }
    println!(
        "(ratio > 1: ours faster; {} rayon threads, blst uses its own pool)",
        rayon::current_num_threads()
    );
}
