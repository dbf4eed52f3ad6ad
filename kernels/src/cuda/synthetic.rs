//! Synthetic scale inputs (speed only; proofs from them are not expected to verify):
//! a 32 GiB-shaped partition made on the host, and an SRS of real sizes made on the GPU.

use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::device::{args, DevBuf};
use super::layout::{fr_from_raw, AFFINE_BYTES, G2_AFFINE_BYTES};
use super::prover::GpuProver;
use super::GpuError;
use crate::msm::scalars::Limbs;
use crate::msm::{MsmPlan, Query};
use crate::synthetic::Drawn;
pub use crate::synthetic::ScalarMix;

/// The 32 GiB PoRep partition's shape (FIELD-NOTES.md).
pub const PORE_32G_LOG2: u32 = 27;
pub const PORE_32G_INPUTS: usize = 328;
pub const PORE_32G_AUX: usize = 130_169_893;
/// Aux density in A and B (99.7 %, 25.4 %).
pub const PORE_32G_A_DENSITY: f64 = 0.997;
pub const PORE_32G_B_DENSITY: f64 = 0.254;

/// A partition with everything `GpuPartition` borrows.
pub struct SyntheticPartition {
    pub domain_log2: u32,
    pub a: Vec<Fr>,
    pub b: Vec<Fr>,
    pub c: Vec<Fr>,
    pub scalars: Vec<Limbs>,
    pub l: MsmPlan,
    pub a_plan: MsmPlan,
    pub b_plan: MsmPlan,
    /// Bases each vector needs: h, l, a, b_g1.
    pub base_counts: [usize; 4],
}

const CHUNK: usize = 1 << 16;

fn random_fr(rng: &mut ChaCha8Rng) -> Fr {
    // Any value below r is a valid Montgomery representation; clearing the top two bits
    // keeps it below r.
    let mut l = [0u64; 4];
    for x in &mut l {
        *x = rng.next_u64();
    }
    l[3] &= u64::MAX >> 2;
    fr_from_raw(l)
}

fn fill_fr(v: &mut [Fr], seed: u64) {
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, ch)| {
        let mut rng =
            ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for x in ch {
            *x = random_fr(&mut rng);
        }
    });
}

/// C's values on the domain as a real PoRep witness has them (`cuzk bench witness` on the
/// 8 MiB fixture's partition: 78.9 % zero, 12.2 % two, 3.0 % one, 3.0 % minus one, 2.9 %
/// other values, none repeated more than 60 times; 2 KiB alike): what decides the sums over
/// LD' in Lagrange form (the transforms of the coefficient form do not see the values).
fn fill_c(v: &mut [Fr], seed: u64) {
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, ch)| {
        let mut rng =
            ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for x in ch {
            let u = rng.next_u32() as f64 / u32::MAX as f64;
            *x = match u {
                u if u < 0.789 => Fr::ZERO,
                u if u < 0.911 => Fr::from(2u64),
                u if u < 0.941 => Fr::ONE,
                u if u < 0.971 => -Fr::ONE,
                _ => random_fr(&mut rng),
            };
        }
    });
}

fn bitmap(len: usize, density: f64, seed: u64) -> Vec<u64> {
    let words = len.div_ceil(64);
    let cut = (density * u32::MAX as f64) as u32;
    let mut v = vec![0u64; words];
    v.par_chunks_mut(1024).enumerate().for_each(|(i, ch)| {
        let mut rng =
            ChaCha8Rng::seed_from_u64(seed ^ (i as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
        for (wi, w) in ch.iter_mut().enumerate() {
            for bit in 0..64 {
                let idx = (i * 1024 + wi) * 64 + bit;
                if idx < len && (rng.next_u32() < cut) {
                    *w |= 1 << bit;
                }
            }
        }
    });
    v
}

/// Canonical scalars 0 / 1 / random full width (below 2^254 < r) in the proportions of
/// `mix`: `in_b(j)` says whether scalar j belongs to a B variable. Reproducible from `seed`.
fn fill_mixed_scalars(
    scalars: &mut [Limbs],
    mix: ScalarMix,
    in_b: impl Fn(usize) -> bool + Sync,
    seed: u64,
) {
    let drawer = mix.drawer();
    scalars
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, ch)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (i as u64) << 20);
            for (j, s) in ch.iter_mut().enumerate() {
                let u = rng.next_u32();
                *s = match drawer.draw(in_b(i * CHUNK + j), u) {
                    Drawn::Zero => [0; 4],
                    Drawn::One => [1, 0, 0, 0],
                    Drawn::Full => {
                        let mut l = [0u64; 4];
                        for x in &mut l {
                            *x = rng.next_u64();
                        }
                        l[3] &= u64::MAX >> 2;
                        l
                    }
                };
            }
        });
}

impl SyntheticPartition {
    /// A partition of 2^log_n constraints, `inputs` + `aux` variables, aux densities in A and
    /// B, scalar mix as given; a, b random, c with a real witness's mix of values (not a
    /// satisfied circuit: speed only).
    pub fn new(
        log_n: u32,
        inputs: usize,
        aux: usize,
        dens: (f64, f64),
        mix: ScalarMix,
        seed: u64,
    ) -> Self {
        let n = 1usize << log_n;
        let mut a = vec![Fr::ZERO; n];
        let mut b = vec![Fr::ZERO; n];
        let mut c = vec![Fr::ZERO; n];
        fill_fr(&mut a, seed ^ 1);
        fill_fr(&mut b, seed ^ 2);
        fill_c(&mut c, seed ^ 3);
        let a_aux = bitmap(aux, dens.0, seed ^ 4);
        let b_aux = bitmap(aux, dens.1, seed ^ 5);
        let b_in = bitmap(inputs, 1.0, seed ^ 6);
        // Every input is in B; aux j by its B bit.
        let in_b = |j: usize| j < inputs || crate::witness::density_bit(&b_aux, j - inputs);
        let mut scalars = vec![[0u64; 4]; inputs + aux];
        fill_mixed_scalars(&mut scalars, mix, in_b, seed ^ 0xabcd);
        scalars[0] = [1, 0, 0, 0]; // input 0 is ONE
        let (z_in, z_aux) = scalars.split_at(inputs);
        let dense = |s, start, base| Query {
            scalars: s,
            scalar_start: start,
            base_start: base,
            density: None,
        };
        let l = MsmPlan::build(&[dense(z_aux, inputs, 0)]);
        let a_plan = MsmPlan::build(&[
            dense(z_in, 0, 0),
            Query {
                scalars: z_aux,
                scalar_start: inputs,
                base_start: inputs,
                density: Some(&a_aux),
            },
        ]);
        let b_count_in = crate::witness::density_count(&b_in, inputs);
        let b_plan = MsmPlan::build(&[
            Query {
                scalars: z_in,
                scalar_start: 0,
                base_start: 0,
                density: Some(&b_in),
            },
            Query {
                scalars: z_aux,
                scalar_start: inputs,
                base_start: b_count_in,
                density: Some(&b_aux),
            },
        ]);
        let a_count = inputs + crate::witness::density_count(&a_aux, aux);
        let b_count = b_count_in + crate::witness::density_count(&b_aux, aux);
        SyntheticPartition {
            domain_log2: log_n,
            a,
            b,
            c,
            scalars,
            l,
            a_plan,
            b_plan,
            base_counts: [n - 1, aux, a_count, b_count],
        }
    }

    /// The partition for `GpuProver::prove`; `b_g2`: B_G2 computed too.
    pub fn as_gpu(&self, b_g2: bool) -> super::GpuPartition<'_> {
        super::GpuPartition {
            domain_log2: self.domain_log2,
            evals: super::Evals::Given {
                a: &self.a,
                b: &self.b,
            },
            c: Some(&self.c),
            scalars: &self.scalars,
            l: self.l.as_ref(),
            a_plan: self.a_plan.as_ref(),
            b_plan: self.b_plan.as_ref(),
            b_g2,
            bases: None,
        }
    }
}

/// Table sizes: point j = A[j mod 2^14] + B[j >> 14], j < 2^29.
const A_BITS: u32 = 14;
const B_BITS: u32 = 15;

/// Random multiples of the generator, affine.
fn random_points(count: usize, seed: u64) -> Vec<G1Affine> {
    let proj: Vec<G1Projective> = (0..count)
        .into_par_iter()
        .map(|i| {
            let mut rng =
                ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            G1Projective::generator() * Fr::random(&mut rng)
        })
        .collect();
    let mut aff = vec![G1Affine::identity(); count];
    G1Projective::batch_normalize(&proj, &mut aff);
    aff
}

impl GpuProver {
    /// A prover whose four base vectors (sizes `counts`: h, l, a, b_g1) are made on the
    /// device as sums of two random multiples of the generator (valid, distinct points):
    /// the real sizes without a parameter file. With `b_g2`, it holds B_G2 bases too
    /// (counts[3] of them): 2^16 distinct points made on the host, repeated. Returns the
    /// prover and the generation time.
    pub fn new_synthetic(
        ordinal: usize,
        max_log: u32,
        max_scalars: usize,
        counts: [usize; 4],
        b_g2: bool,
        seed: u64,
    ) -> Result<(Self, Duration), GpuError> {
        use super::error::Step;
        let total: usize = counts.iter().sum();
        if total > 1 << (A_BITS + B_BITS) {
            return Err(GpuError::TooLarge(format!("{total} synthetic points")));
        }
        let g2_count = if b_g2 { counts[3] } else { 0 };
        let folded_c = super::lagrange::folded_c();
        let mut p = Self::allocate(
            ordinal,
            max_log,
            max_scalars,
            counts,
            g2_count,
            // In Lagrange form LC and LD' (or L') are made below like the other vectors
            // (random points: speed only), not from H.
            super::prover::Planning::Fit {
                limit: None,
                lagrange: super::lagrange::wanted(
                    counts[0],
                    counts[1],
                    max_log,
                    folded_c.as_deref(),
                ),
                r1cs_bytes: 0,
            },
            &mut |_, _| Ok(()),
        )?;
        // C folded into L: the inputs' Q left at O (random L' is as fast as a folded one).
        if let Some(c) = &folded_c {
            p.set_synthetic_q_inputs(c.num_inputs);
        }
        if p.streams_bases() {
            return Err(GpuError::OutOfMemory(format!(
                "synthetic bases are made on the device and must stay there: {counts:?} do not fit"
            )));
        }
        let start = Instant::now();
        let ta = random_points(1 << A_BITS, seed);
        let tb = random_points(1 << B_BITS, seed ^ 0x5555);
        let d = p.device();
        d.ctx.bind_to_thread().step("bind context")?;
        let scratch = p.scratch();
        let tb_at = scratch.at((1 << A_BITS) * AFFINE_BYTES);
        d.upload(scratch.ptr, scratch.bytes, &ta, d.compute)?;
        d.upload(
            tb_at,
            scratch.bytes - (1 << A_BITS) * AFFINE_BYTES,
            &tb,
            d.compute,
        )?;
        let mut first = 0u32;
        // Every G1 vector as carved (in Lagrange form LC, one point more than H, and LD').
        let vectors: Vec<DevBuf> = (0..4)
            .map(|i| p.base_buf(super::BaseSet::from_index(i)))
            .chain(p.lagrange_ld_buf())
            .collect();
        for buf in vectors {
            let (out, n) = (buf.ptr, buf.bytes / AFFINE_BYTES);
            // LD' at 32 GiB takes the points past 2^(A_BITS + B_BITS): it starts over
            // (repeats LC's points; the sums' speed does not see which points they are).
            if first as usize + n > 1 << (A_BITS + B_BITS) {
                first = 0;
            }
            let per = 64u32;
            let threads = n.div_ceil(per as usize);
            let (n32, a_bits) = (n as u32, A_BITS);
            // SAFETY: arguments match srs.cu's srs_synthetic; `out` holds n points; the
            // tables hold 2^A_BITS and 2^B_BITS points and first + n ≤ 2^(A_BITS + B_BITS).
            unsafe {
                d.launch(
                    "synthetic srs",
                    d.k.srs_synthetic,
                    threads.div_ceil(128) as u32,
                    128,
                    0,
                    d.compute,
                    &mut args![scratch.ptr, a_bits, tb_at, out, n32, per, first],
                )?;
            }
            first += n as u32;
        }
        if let Some(g2) = p.g2_base_buf() {
            // 2^16 distinct points, then the filled prefix copied after itself until full.
            let seed_points = random_g2_bases(g2_count.min(G2_DISTINCT), seed);
            d.upload(g2.ptr, g2.bytes, &seed_points, d.compute)?;
            let mut filled = seed_points.len() * G2_AFFINE_BYTES;
            while filled < g2.bytes {
                let n = filled.min(g2.bytes - filled);
                d.copy_within(g2.at(filled), g2.ptr, n, d.compute)?;
                filled += n;
            }
        }
        p.make_pair_sums()?;
        d.sync(d.compute)?;
        Ok((p, start.elapsed()))
    }
}

/// Distinct B_G2 points of a synthetic prover (generating 33 M on the host takes ~20 s).
const G2_DISTINCT: usize = 1 << 16;

/// Points per chunk of [`random_g2_bases`]: one scalar multiplication and one batch
/// normalization (one inversion) each.
const G2_CHUNK: usize = 1 << 12;

/// `n` valid G2 points (in the prime-order subgroup) for checks and speed runs, made on the
/// host: chunk c holds R_c + k·Q for k = 0, 1, …, with R_c and Q random multiples of the
/// generator, so each point costs one mixed addition and its share of one inversion.
/// Distinct with overwhelming probability (a repeat needs R_c − R_c' ∈ {small multiples of Q}).
pub fn random_g2_bases(n: usize, seed: u64) -> Vec<blstrs::G2Affine> {
    use blstrs::{G2Affine, G2Projective};
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6232);
    let q = (G2Projective::generator() * Fr::random(&mut rng)).to_affine();
    let mut out = vec![G2Affine::identity(); n];
    out.par_chunks_mut(G2_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut rng = ChaCha8Rng::seed_from_u64(
                seed ^ (c as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            );
            let mut acc = G2Projective::generator() * Fr::random(&mut rng);
            let proj: Vec<G2Projective> = (0..chunk.len())
                .map(|_| {
                    let p = acc;
                    acc += q;
                    p
                })
                .collect();
            G2Projective::batch_normalize(&proj, chunk);
        });
    out
}

/// B_G2 bases of a 32 GiB-shaped partition times `scale`: all inputs and the B-dense aux.
pub fn b_g2_count(scale: f64) -> usize {
    ((PORE_32G_INPUTS as f64 + PORE_32G_AUX as f64 * PORE_32G_B_DENSITY) * scale).round() as usize
}

/// The B_G2 MSM of a 32 GiB-shaped partition: one base per B-variable (all 328 inputs and
/// 25.4 % of the aux), scalars drawn with the mix of B's variables (ScalarMix::PORE_32GIB:
/// ~33.06 M bases, ~15.9 M ones, ~1.2 M terms), the scalars indexed by base (a dense
/// query: term (b, s) has s = b). Returns (base count, scalars, plan).
pub fn b_g2_shape(scale: f64, mix: ScalarMix, seed: u64) -> (usize, Vec<Limbs>, MsmPlan) {
    let count = b_g2_count(scale);
    let mut scalars = vec![[0u64; 4]; count];
    fill_mixed_scalars(&mut scalars, mix, |_| true, seed ^ 0x62_6732);
    let plan = MsmPlan::build(&[Query {
        scalars: &scalars,
        scalar_start: 0,
        base_start: 0,
        density: None,
    }]);
    (count, scalars, plan)
}
