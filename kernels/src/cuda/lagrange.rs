//! H's MSM with its bases in Lagrange form (docs/gpu.md "H in Lagrange form"; the algebra
//! and the CPU reference: `groth16::lagrange`):
//!
//!   Σ_{i<n−1} h_i·H_i = Σ_j (A_c·B_c)_j/(g^n − 1)·LC_j − Σ_j c_j·LD'_j
//!
//! Two transforms of A and B to the coset replace the six of the coefficient form, and c's
//! own values (mostly 0, 1 or below 2^32 in a real witness) weigh a second, sparse MSM.
//! LC and LD' are made here once per proving key, on the device, at the prover's start
//! ([`lagrange_bases`], ec_dft.cu); the per-partition kernels are in h_lagrange.cu.
//!
//! Whether a prover takes this form is [`HForm`], set once per process (`set_h_form`; the
//! gpu stage's `CUZK_GPU_H_FORM`): the default is the coefficient form, because making LC
//! and LD' takes minutes at 2^27 (390 s on an H100, docs/perf.md "The Lagrange transform on
//! bases that do not repeat"). With a cache directory (`set_lagrange_cache`) they are made
//! once per H and read at later starts.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blstrs::{G1Affine, Scalar as Fr};
use cudarc::driver::sys::CUdeviceptr;
use ff::Field;
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::device::{self, args, DevBuf, Device};
use super::layout::{AFFINE_BYTES, FR_BYTES, XYZZ_BYTES};
use super::memory_plan::LagrangeBases;
use super::step_log::{StepLog, LOG_EVERY};
use super::GpuError;
use crate::msm::scalars::{to_limbs, Limbs};
use crate::ntt::{coset_generator, powers, Roots};
use crate::witness::matrix::R1csMatrix;

/// How a prover computes Σ h_i·H_i.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HForm {
    /// H's coefficients by six transforms, then a dense MSM over H's bases.
    Coefficients,
    /// H's bases in Lagrange form (LC, LD'), made at start when the domain is H's and the
    /// bases are resident; four transforms, a dense MSM over LC and a sparse one over LD'.
    Lagrange,
    /// Lagrange form with C folded into L (`groth16::folded`): LC in H's place and
    /// L' = L − Cᵀ·LD' in L's, so no sums over c's values and no LD' on the device. Needs
    /// the circuit's C ([`set_folded_c`]); without it the prover takes [`HForm::Lagrange`].
    Folded,
}

static H_FORM: AtomicU8 = AtomicU8::new(0);
static CACHE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Where provers made from now on keep LC and LD' between starts (`lagrange_cache.rs`);
/// None: they make them at every start.
pub fn set_lagrange_cache(dir: Option<PathBuf>) {
    *CACHE.lock().unwrap_or_else(|e| e.into_inner()) = dir;
}

fn cache_dir() -> Option<PathBuf> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// LC and LD' for `h`: from the cache directory when it holds them, else made on `dev`
/// ([`lagrange_bases`]) and stored there. Logs where they came from and what it took.
pub(crate) fn lagrange_bases_cached(
    dev: &mut Device,
    h: &[G1Affine],
) -> Result<(Vec<G1Affine>, Vec<G1Affine>), GpuError> {
    let dir = cache_dir();
    if let Some(dir) = &dir {
        // A file of 2·n points: tens of seconds at 32 GiB (24 GiB), so say so first.
        eprintln!(
            "cuzk-kernels: H's bases in Lagrange form: looking in {} ({:.1} GiB a file at this size)",
            dir.display(),
            (2 * (h.len() + 1) * AFFINE_BYTES) as f64 / (1u64 << 30) as f64
        );
        let started = Instant::now();
        let (hit, why) = super::lagrange_cache::load(dir, h);
        eprintln!(
            "cuzk-kernels: H's bases in Lagrange form: {why} ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        if let Some(v) = hit {
            return Ok(v);
        }
    }
    let (lc, ld, took) = lagrange_bases(dev, h)?;
    eprintln!(
        "cuzk-kernels: H's {} bases put in Lagrange form on the device in {:.1} s",
        h.len(),
        took.as_secs_f64()
    );
    if let Some(dir) = &dir {
        // A cache that cannot be written costs the next start the transform, nothing else.
        match super::lagrange_cache::store(dir, h, &lc, &ld) {
            Ok(path) => eprintln!("cuzk-kernels: kept in {}", path.display()),
            Err(e) => eprintln!("cuzk-kernels: not kept in {}: {e}", dir.display()),
        }
    }
    Ok((lc, ld))
}

/// The circuit's C for [`HForm::Folded`] (one circuit a process: the gpu stage proves
/// partitions of one proof type).
static FOLDED_C: Mutex<Option<Arc<R1csMatrix>>> = Mutex::new(None);

/// The form provers made from now on take (where they can: resident bases, H's domain).
pub fn set_h_form(f: HForm) {
    H_FORM.store(f as u8, Ordering::Relaxed);
}

pub fn h_form() -> HForm {
    match H_FORM.load(Ordering::Relaxed) {
        0 => HForm::Coefficients,
        1 => HForm::Lagrange,
        _ => HForm::Folded,
    }
}

/// The circuit whose C provers made from now on fold into L in [`HForm::Folded`] (its aux
/// count must be L's, its rows at most H's domain).
pub fn set_folded_c(c: Option<Arc<R1csMatrix>>) {
    *FOLDED_C.lock().unwrap_or_else(|e| e.into_inner()) = c;
}

pub(crate) fn folded_c() -> Option<Arc<R1csMatrix>> {
    FOLDED_C.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether a prover of 2^max_log with `h_count` H bases and `l_count` L bases takes the
/// Lagrange form, and which: asked for, and H is exactly a domain's n − 1 bases (LC's
/// transform is over that domain); folded when asked for and `c` (read once by the caller
/// with [`folded_c`], the C it then folds) fits L and the domain.
pub(crate) fn wanted(
    h_count: usize,
    l_count: usize,
    max_log: u32,
    c: Option<&R1csMatrix>,
) -> Option<LagrangeBases> {
    if h_form() == HForm::Coefficients || h_count + 1 != 1usize << max_log {
        return None;
    }
    let fits = |c: &R1csMatrix| c.num_aux == l_count && c.rows <= h_count + 1;
    match (h_form(), c) {
        (HForm::Folded, Some(c)) if fits(c) => Some(LagrangeBases::Folded),
        _ => Some(LagrangeBases::WithLd),
    }
}

/// λ = z² − 1 (z the BLS12-381 parameter): λ² + λ + 1 ≡ 0 mod r, and λ·(x, y) = (β·x, y)
/// on G1 with [`glv_beta`].
const GLV_LAMBDA: u128 = 0xac45_a401_0001_a402_0000_0000_ffff_ffff;

/// The cube root of unity β in Fp with λ·(x, y) = (β·x, y) (of the two, the one that
/// matches λ; the test below checks it on points).
pub fn glv_beta() -> blstrs::Fp {
    const BETA: &str = "1a0111ea397fe699ec02408663d4de85aa0d857d89759ad4897d29650fb85f9b409427eb4f49fffd8bfd00000000aaac";
    let mut be = [0u8; 48];
    for (i, b) in be.iter_mut().enumerate() {
        *b = u8::from_str_radix(&BETA[2 * i..2 * i + 2], 16).expect("hex");
    }
    blstrs::Fp::from_bytes_be(&be).expect("β < p")
}

/// k (canonical, < r) as k1 + k2·λ with k1 = k mod λ, k2 = ⌊k/λ⌋, both below 2^128 (λ >
/// 2^127 and r < λ² + λ + 1 ≤ 2^256): k1 in the low 128 bits of the result, k2 in the high,
/// as `xyzz_mul_glv` reads them. Binary long division, 256 steps.
pub fn glv_split(k: &Limbs) -> Limbs {
    let (mut q, mut rem) = (0u128, 0u128);
    for bit in (0..256).rev() {
        let b = (k[bit / 64] >> (bit % 64)) & 1;
        let carry = rem >> 127;
        rem = (rem << 1) | b as u128;
        q <<= 1;
        // The remainder before the shift was below λ < 2^128, so after it below 2λ: one
        // subtraction (wrapping when the shifted-out bit stood for 2^128) brings it under λ.
        if carry == 1 || rem >= GLV_LAMBDA {
            rem = rem.wrapping_sub(GLV_LAMBDA);
            q |= 1;
        }
    }
    [rem as u64, (rem >> 64) as u64, q as u64, (q >> 64) as u64]
}

/// Device bytes [`lagrange_bases`] needs for n points: the bases in, the XYZZ points the
/// levels run on, the scalars, the twiddles, the affine result.
pub(crate) fn transform_bytes(n: usize) -> usize {
    n * (2 * AFFINE_BYTES + XYZZ_BYTES + FR_BYTES) + n / 2 * FR_BYTES + 8 * 256
}

/// (LC, LD') of `h` (n − 1 bases, n = 2^log_n a power of two; H_{n−1} taken as O, as
/// `groth16::lagrange` does) on `dev`, in an allocation of its own that is released before
/// returning (so call it before the plan's one allocation), and the device time.
pub(crate) fn lagrange_bases(
    dev: &mut Device,
    h: &[G1Affine],
) -> Result<(Vec<G1Affine>, Vec<G1Affine>, Duration), GpuError> {
    use super::error::Step;
    let n = h.len() + 1;
    if !n.is_power_of_two() || n < 2 {
        return Err(GpuError::Input(format!(
            "{} H bases: Lagrange form needs 2^k − 1",
            h.len()
        )));
    }
    let log_n = n.trailing_zeros();
    let roots = Roots::new(log_n);
    dev.ctx.bind_to_thread().step("bind context")?;
    dev.allocate(transform_bytes(n))?;
    let bases = dev.carve(n * AFFINE_BYTES);
    let x = dev.carve(n * XYZZ_BYTES);
    let scalars = dev.carve(n * FR_BYTES);
    let tw = dev.carve(n / 2 * FR_BYTES);
    let out = dev.carve(n * AFFINE_BYTES);
    let ks = dev.compute;
    let started = Instant::now();
    dev.upload(bases.ptr, bases.bytes, h, ks)?;
    // H_{n−1} = O (all zeros), the point the sums never weigh (groth16::lagrange).
    dev.memset(bases.at(h.len() * AFFINE_BYTES), AFFINE_BYTES, ks)?;
    let twiddles: Vec<Limbs> = powers(roots.omega_inv, n / 2)
        .par_iter()
        .map(|w| glv_split(&to_limbs(w)))
        .collect();
    dev.upload(tw.ptr, tw.bytes, &twiddles, ks)?;
    let g_inv = coset_generator().invert().unwrap();
    let z_inv = roots.z_on_coset().invert().unwrap();
    // LC: s_i = g^{−i}/n; LD': s_i = 1/(n·(g^n − 1)).
    let mut results = Vec::with_capacity(2);
    // A line every half minute: at 2^27 the two transforms take minutes.
    let steps = log_n as usize + 1;
    let mut weights = transform_weights(log_n, false);
    weights.extend(transform_weights(log_n, true));
    let mut log = StepLog::new(
        format!("H's {} bases into Lagrange form (LC, then LD')", h.len()),
        weights,
        LOG_EVERY,
    );
    // s_i = c·step^i; no step: the one constant of LD', split once (a split is ~0.7 µs, 2^27 of
    // them ~6 s of the host's threads while the device waits).
    for (t, (c, step)) in [(roots.n_inv, Some(g_inv)), (roots.n_inv * z_inv, None)]
        .into_iter()
        .enumerate()
    {
        let s: Vec<Limbs> = match step {
            Some(step) => powers(step, n)
                .par_iter()
                .map(|p| glv_split(&to_limbs(&(c * p))))
                .collect(),
            None => vec![glv_split(&to_limbs(&c)); n],
        };
        dev.upload(scalars.ptr, scalars.bytes, &s, ks)?;
        if t == 0 {
            // LC's scalars made and uploaded (~8 s at 2^27 on 16 host threads, inferred from
            // the 2^27 run's first lines): the steps' clock starts here, so that time does
            // not stand for a step's share of what is left.
            log.start_clock();
        }
        let bufs = [bases.ptr, x.ptr, scalars.ptr, tw.ptr, out.ptr];
        run_transform(dev, log_n, bufs, &mut |u| log.done(t * steps + u))?;
        let mut v = vec![G1Affine::identity(); n];
        dev.download(&mut v, out.ptr, ks)?;
        dev.sync(ks)?;
        results.push(v);
    }
    let took = started.elapsed();
    dev.release()?;
    let ld = results.pop().expect("two transforms");
    let lc = results.pop().expect("two transforms");
    Ok((lc, ld, took))
}

/// ec_dft_level's first level whose twiddles are warp-uniform: level k has 2^k blocks, and
/// from 32 blocks on a warp's lanes share one twiddle (and its product walks the JSF). The
/// kernel's `log_blocks >= 5` is the same threshold (ec_dft.cu says so beside it).
const WARP_UNIFORM_LEVEL: usize = 5;

/// A level's products by a scalar a lane (the binary GLV method: 128 doublings, and a warp
/// adds at nearly every one of the 128 columns) against a uniform level's over the JSF
/// (128 doublings, ~77 additions). Counted, with a doubling ~0.6 of an addition:
/// (0.6·128 + 128)/(0.6·128 + 77) ≈ 1.33; measured from the progress lines of LC and LD' at
/// 2^27 on an H100 (2026-12-06, docs/perf.md): ~8.4 s a divergent level against 5.9-6.5 s
/// a uniform one, ~1.4.
const DIVERGENT_LEVEL_COST: f64 = 1.4;

/// The binary method on one scalar for all (LD''s scale): the warp adds only at the
/// scalar's nonzero columns, ~96 of 128, against the JSF's ~77: (0.6·128 + 96)/(0.6·128 +
/// 77) ≈ 1.1 (counted).
const UNIFORM_BINARY_PRODUCT_COST: f64 = 1.1;

/// A transform's steps as run_transform reports them (the scale, then the log n DIF
/// levels), each by its cost in uniform levels (n/2 products over the JSF): the scale makes
/// n products (two levels' worth), by a scalar a lane for LC, by one scalar for LD'
/// (`one_scalar`); the first WARP_UNIFORM_LEVEL levels take a scalar a lane. The affine
/// step (an inversion a point, a fraction of a level) is not a step of its own: its time
/// falls on the step after it.
fn transform_weights(log_n: u32, one_scalar: bool) -> Vec<f64> {
    let scale = 2.0
        * if one_scalar {
            UNIFORM_BINARY_PRODUCT_COST
        } else {
            DIVERGENT_LEVEL_COST
        };
    let levels = (0..log_n as usize).map(|k| {
        if k < WARP_UNIFORM_LEVEL {
            DIVERGENT_LEVEL_COST
        } else {
            1.0
        }
    });
    std::iter::once(scale).chain(levels).collect()
}

/// out_j = Σ_i w^{ij}·(s_i·P_i) for w = ω^{−1}: scale, log n DIF levels, affine in natural
/// order (ec_dft.cu); scalars and twiddles split by [`glv_split`]. `bufs`: bases, x (n
/// XYZZ points), scalars, twiddles, out. Waits for each step and tells `done` how many of
/// the steps of [`transform_weights`] are finished, so a long transform can be logged as it
/// goes.
fn run_transform(
    dev: &Device,
    log_n: u32,
    bufs: [CUdeviceptr; 5],
    done: &mut dyn FnMut(usize),
) -> Result<(), GpuError> {
    let [bases, x, scalars, tw, out] = bufs;
    let n = 1u32 << log_n;
    let ks = dev.compute;
    let beta = super::layout::fp_raw(&glv_beta());
    // SAFETY: ec_dft_scale(x, bases, scalars, n, beta), ec_dft_level(x, tw, log_n, log_h,
    // beta) over n/2 butterflies, ec_dft_affine(out, x, log_n): x holds n XYZZ points,
    // bases, scalars and out n elements each, tw n/2 twiddles (carved by the caller); beta
    // is 48 bytes as the kernels' fp_t.
    unsafe {
        dev.launch(
            "lagrange scale",
            dev.k.ec_dft_scale,
            n.div_ceil(128),
            128,
            0,
            ks,
            &mut args![x, bases, scalars, n, beta],
        )?;
    }
    dev.sync(ks)?;
    done(1);
    for (k, log_h) in (0..log_n).rev().enumerate() {
        // SAFETY: as above.
        unsafe {
            dev.launch(
                "lagrange level",
                dev.k.ec_dft_level,
                (n / 2).div_ceil(128),
                128,
                0,
                ks,
                &mut args![x, tw, log_n, log_h, beta],
            )?;
        }
        dev.sync(ks)?;
        done(2 + k);
    }
    // SAFETY: as above.
    unsafe {
        dev.launch(
            "lagrange affine",
            dev.k.ec_dft_affine,
            n.div_ceil(128),
            128,
            0,
            ks,
            &mut args![out, x, log_n],
        )?;
    }
    Ok(())
}

/// [`lagrange_bases`] on device `ordinal` alone (for the device check and its timing).
pub fn lagrange_bases_on(
    ordinal: usize,
    h: &[G1Affine],
) -> Result<(Vec<G1Affine>, Vec<G1Affine>, Duration), GpuError> {
    let mut dev = device::open(ordinal)?;
    lagrange_bases(&mut dev, h)
}

/// What `enqueue_ab` multiplies a_j·b_j by (h_coset_scalars computes (a_j·b_j/R)·k/R for
/// k given as raw limbs).
#[derive(Clone, Copy)]
pub(crate) enum AbTimes {
    /// k = (g^n − 1)^{-1} plain: canonical out, H's MSM scalars from A and B on the coset.
    CosetScalars,
    /// k = R mod r: (aR·bR)/R·R/R = abR, Montgomery like a and b: C's values on the domain
    /// when C·z is left to the prover (`GpuPartition::c` None; every row of a satisfied R1CS
    /// has a·b = c, ntt.rs `product_coefficients`).
    CValues,
}

/// out_j = a_j·b_j·(what `times` says) by h_coset_scalars; `out` may be `a`.
pub(crate) fn enqueue_ab(
    dev: &Device,
    log_n: u32,
    ab: [CUdeviceptr; 2],
    out: CUdeviceptr,
    times: AbTimes,
) -> Result<(), GpuError> {
    let [a, b] = ab;
    let (k, step) = match times {
        AbTimes::CosetScalars => (
            to_limbs(&Roots::new(log_n).z_on_coset().invert().unwrap()),
            "coset scalars",
        ),
        AbTimes::CValues => (super::layout::fr_raw(&Fr::ONE), "c from a·b"),
    };
    let n = 1u32 << log_n;
    // SAFETY: h_coset_scalars(out, a, b, k, n): a, b and out hold n elements; k is 32 bytes
    // as the kernel's fr_t.
    unsafe {
        dev.launch(
            step,
            dev.k.h_coset_scalars,
            dev.sm_count * 8,
            256,
            0,
            dev.compute,
            &mut args![out, a, b, k, n],
        )
    }
}

/// Where h_c_kinds lists c's non-zero values in a region of at least [`kinds_bytes`]: the
/// indices of the ones, minus ones and twos, then the other values' Pippenger terms (each
/// list room for n).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CKinds {
    pub ones: CUdeviceptr,
    pub neg_ones: CUdeviceptr,
    pub twos: CUdeviceptr,
    pub other: CUdeviceptr,
}

/// Bytes of the lists for n values: 3n indices and n terms of 8 bytes.
pub(crate) fn kinds_bytes(n: usize) -> usize {
    3 * n * 4 + n * 8
}

impl CKinds {
    /// The lists for n values in `region` (the prover's scratch buffer: 32n bytes).
    pub(crate) fn at(region: DevBuf, n: usize) -> Self {
        assert!(
            region.bytes >= kinds_bytes(n),
            "c's lists need 20 bytes a value"
        );
        let at = |k: usize| region.ptr + (k * n * 4) as u64;
        CKinds {
            ones: at(0),
            neg_ones: at(1),
            twos: at(2),
            other: at(3),
        }
    }
}

/// h_c_kinds: c (Montgomery) → canonical in place, its non-zero values listed by kind into
/// `lists`, how many of each (one, minus one, two, other) into `counts` (4 u32, zeroed
/// here).
pub(crate) fn enqueue_c_kinds(
    dev: &Device,
    log_n: u32,
    c: CUdeviceptr,
    lists: CKinds,
    counts: CUdeviceptr,
) -> Result<(), GpuError> {
    let n = 1u32 << log_n;
    dev.memset(counts, 16, dev.compute)?;
    // SAFETY: h_c_kinds(c, n, ones, neg_ones, twos, other, counts): c holds n values, each
    // list room for n entries (CKinds::at over kinds_bytes(n)), counts 4 u32.
    unsafe {
        dev.launch(
            "c kinds",
            dev.k.h_c_kinds,
            dev.sm_count * 8,
            256,
            0,
            dev.compute,
            &mut args![
                c,
                n,
                lists.ones,
                lists.neg_ones,
                lists.twos,
                lists.other,
                counts
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Projective, Scalar as Fr};
    use ff::PrimeField;
    use group::{Curve, Group};
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// λ·P = (β·x, y) on random points, and λ² + λ + 1 ≡ 0 mod r.
    #[test]
    fn beta_is_the_endomorphism_of_lambda() {
        let lambda = Fr::from_u128(GLV_LAMBDA);
        assert_eq!(lambda.square() + lambda + Fr::ONE, Fr::ZERO);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..4 {
            let p = G1Projective::random(&mut rng).to_affine();
            let want = (G1Projective::from(p) * lambda).to_affine();
            let phi = G1Affine::from_raw_unchecked(p.x() * glv_beta(), p.y(), false);
            assert_eq!(phi, want);
        }
    }

    /// A step a kernel run_transform reports (the scale, then log n levels), the first five
    /// levels and LC's scale at the divergent cost, the warp-uniform levels at 1; a domain
    /// of fewer than 32 blocks' levels has only divergent ones.
    #[test]
    fn transform_steps_are_weighed_by_their_products() {
        let lc = transform_weights(27, false);
        assert_eq!(lc.len(), 28);
        assert_eq!(lc[0], 2.0 * DIVERGENT_LEVEL_COST);
        assert!(lc[1..6].iter().all(|&w| w == DIVERGENT_LEVEL_COST));
        assert!(lc[6..].iter().all(|&w| w == 1.0));
        let ld = transform_weights(27, true);
        assert_eq!(ld[0], 2.0 * UNIFORM_BINARY_PRODUCT_COST);
        assert_eq!(ld[1..], lc[1..]);
        let small = transform_weights(3, false);
        assert_eq!(
            small,
            vec![
                2.0 * DIVERGENT_LEVEL_COST,
                DIVERGENT_LEVEL_COST,
                DIVERGENT_LEVEL_COST,
                DIVERGENT_LEVEL_COST
            ]
        );
    }

    /// k = k1 + k2·λ with k1 < λ, k2 < 2^128, on 0, 1, λ − 1, λ, r − 1 and random scalars.
    #[test]
    fn glv_split_recomposes_every_scalar() {
        let lambda = Fr::from_u128(GLV_LAMBDA);
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut cases = vec![Fr::ZERO, Fr::ONE, lambda - Fr::ONE, lambda, -Fr::ONE];
        cases.extend((0..1000).map(|_| Fr::random(&mut rng)));
        for k in cases {
            let s = glv_split(&to_limbs(&k));
            let k1 = s[0] as u128 | (s[1] as u128) << 64;
            let k2 = s[2] as u128 | (s[3] as u128) << 64;
            assert!(k1 < GLV_LAMBDA);
            assert_eq!(Fr::from_u128(k1) + Fr::from_u128(k2) * lambda, k);
        }
    }
}
