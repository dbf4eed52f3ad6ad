//! Device check and benchmark of the CUDA kernels against the CPU reference.
//!
//! `cuzk-gpu-check correctness`: every kernel on fresh random inputs (seeded from the clock,
//! printed) against the CPU: field and curve layers, NTT at every size 2^10..2^27 (against
//! the CPU up to 2^22, round trips above), H = (A·B − C)/Z, dense MSMs 2^10..2^MAX (default
//! 24) against blst's Pippenger, MSM plans with edge cases, whole partitions through
//! `GpuProver::prove`.
//! `cuzk-gpu-check scale`: a synthetic SRS of real 32 GiB sizes made on the GPU, NTT and MSM
//! timings 2^20..2^27, and a 32 GiB-shaped partition through `prove`, timed by step.
//! `cuzk-gpu-check ntt`: NTT 2^18..2^27 alone (best of 3) with each radix-2^9 pass kernel,
//! every forward result against the shared-memory kernel's.
//! `cuzk-gpu-check upload`: the resident SRS upload (41 GB of G1 bases), pageable against
//! page-locked staging, each checked by downloading it again.
//! `cuzk-gpu-check host-register`: a read-only file mapping page-locked without and with
//! CU_MEMHOSTREGISTER_READ_ONLY (the gpu stage's SRS when its bases stream).
//! `cuzk-gpu-check msm-g2`: the B_G2 MSM (`GpuG2Msm`) against the CPU: Fp2 and G2 layers,
//! dense MSMs 2^10..2^MAX, every window width, a plan with edge cases, then the 32 GiB
//! B_G2 shape (~3.3 M full-width terms + ~14.9 M ones over ~33 M bases) timed against the
//! CPU path on `CUZK_G2_CPU_THREADS` (default 6, as host-prep runs it) threads.
//! `cuzk-gpu-check ceilings`: the Fr and Fp products and the G1 madd alone, in registers
//! (one full wave each, results checked against the CPU), against the multiply-add rate the
//! floors of docs/perf.md count with.
//! `cuzk-gpu-check lagrange`: H's bases in Lagrange form made on the device against the CPU
//! reference, and the transform timed 2^16..2^22 (`CUZK_H_FORM=lagrange` makes the timing
//! modes' provers take that form, `=folded` the form with C folded into L; `correctness`
//! checks all three).
//! Results: a table on stdout (last) and in `$OUT/<mode>.txt` when OUT is set.

// One file per mode; the imports and helpers below are shared by all of them (each mode
// module takes them with `use super::*`).
mod c_from_ab;
mod ceilings;
mod correctness;
mod folded;
mod g2;
mod host_register;
mod lagrange;
mod scale;
mod start;
mod upload;

use c_from_ab::c_from_ab_check;
use ceilings::ceilings;
use correctness::correctness;
use g2::msm_g2;
use host_register::host_register;
use lagrange::lagrange;
use scale::{accum_variants, msm_once, msm_variants, ntt_best_of_3, ntt_only, scale, sweep};
use start::start;
use upload::upload;

use std::fmt::Write as _;
use std::time::Instant;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::cuda::msm;
use cuzk_kernels::cuda::synthetic::{self, ScalarMix, SyntheticPartition};
use cuzk_kernels::cuda::{
    set_h_form, BaseSet, GpuError, GpuG2Msm, GpuProver, GpuResults, HForm, ResidentBases,
};
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

/// Scalars and plan lists for the edge-case MSM checks over `n` bases: scalars 0, 1, 2,
/// r − 1 and random; ones batch-added; base 3 under many scalars; bases 7, 9 and 5 (which
/// the checks set to P, −P and the identity) in both lists. The same for G1 and G2.
fn edge_case_plan(
    n: usize,
    seed: u64,
    rng: &mut ChaCha8Rng,
) -> (Vec<Limbs>, Vec<u32>, Vec<[u32; 2]>) {
    let mut s = rand_scalars(n, seed);
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
    // Base 3, its copy 7 and its negation 9 with one scalar, many times: every bucket they
    // land in holds many equal and opposite points (a running sum meets its own point and
    // its negation: the doubling and infinity cases of the madd).
    for _ in 0..32 {
        terms.extend([[3, 4], [7, 4], [9, 4]]);
    }
    ones.extend([5, 7, 9]);
    let total = terms.len() + ones.len();
    let cut = total - n.min(total);
    terms.drain(..cut);
    (s, ones, terms)
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A list of numbers in the environment variable `name`, separated by commas or spaces
/// ("14,16,18" or "22 27"); `default` (the same form) when it is unset. Entries that do
/// not parse are skipped.
fn env_list(name: &str, default: &str) -> Vec<u64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|x| x.parse().ok())
        .collect()
}

/// The scalar mix of the synthetic 32 GiB partition and B_G2 shape: `CUZK_SCALE_MIX` =
/// `32gib` (default: the mix predicted for a real 32 GiB witness) or `assumed` (45 % zeros,
/// 45 % ones, 10 % full width: what the runs before 2026-12-02 17:00 UTC used).
fn scale_mix() -> ScalarMix {
    let name = std::env::var("CUZK_SCALE_MIX").unwrap_or_else(|_| "32gib".into());
    ScalarMix::by_name(&name).unwrap_or_else(|| {
        eprintln!("CUZK_SCALE_MIX={name}: use 32gib or assumed");
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("correctness");
    let max_msm_log: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(24);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("cuzk-gpu-check {mode} seed {seed}");
    let mut rep = Report {
        rows: Vec::new(),
        failures: 0,
    };
    // `CUZK_ACCUM_BUILD` (a G1 accumulation kernel's name, `AccumulateBuild::kernel_name`)
    // picks that build for every mode, so `correctness` checks it as `scale` times it.
    if let Ok(name) = std::env::var("CUZK_ACCUM_BUILD") {
        match msm::AccumulateBuild::ALL
            .into_iter()
            .find(|b| b.kernel_name() == name)
        {
            Some(b) => msm::set_accumulate_build(b),
            None => {
                eprintln!("CUZK_ACCUM_BUILD={name}: no such accumulation build");
                std::process::exit(2)
            }
        }
        println!("accumulation build: {name}");
    }
    // `CUZK_H_FORM=lagrange`: provers made by the timing modes hold H's bases in Lagrange
    // form (`correctness` checks both forms whatever this says).
    match std::env::var("CUZK_H_FORM").as_deref() {
        Ok("lagrange") => {
            set_h_form(HForm::Lagrange);
            println!("H in Lagrange form");
        }
        // C folded into L: the synthetic provers' L' is random like L (scale sets a C
        // without entries of the partition's shape: speed only).
        Ok("folded") => {
            set_h_form(HForm::Folded);
            println!("H in Lagrange form, C folded into L");
        }
        _ => {}
    }
    let t = Instant::now();
    let res = match mode {
        "correctness" => correctness(seed, max_msm_log, &mut rep),
        "scale" => scale(seed, &mut rep),
        "sweep" => sweep(seed, &mut rep),
        "msm" => msm_variants(seed, &mut rep),
        "accum" => accum_variants(seed, &mut rep),
        "msm-once" => msm_once(seed, max_msm_log, &mut rep),
        "ntt" => ntt_only(seed, &mut rep),
        "ceilings" => ceilings(seed, &mut rep),
        "upload" => upload(seed, &mut rep),
        "host-register" => host_register(&mut rep),
        "msm-g2" => msm_g2(seed, max_msm_log, &mut rep),
        "compile" => cuzk_kernels::cuda::source::compile().map(|c| {
            println!("PTX {} bytes, CUBIN {} bytes", c.ptx.len(), c.cubin.len());
            if let Some(stem) = args.get(2) {
                std::fs::write(format!("{stem}.ptx"), &c.ptx).expect("write PTX");
                std::fs::write(format!("{stem}.cubin"), &c.cubin).expect("write CUBIN");
            }
        }),
        "start" => start(&mut rep),
        "lagrange" => lagrange(seed, &mut rep),
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
    let stopped = if res.is_err() {
        " (stopped by the error above)"
    } else {
        ""
    };
    let _ = writeln!(out, "failures: {}{stopped}", rep.failures);
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
