//! The device's own code, run on the CPU: field.cuh, bls12_381.cuh, shoup.cuh, fp2.cuh,
//! ec.cuh and msm.cu are plain C++ apart from their CUDA qualifiers and a few intrinsics, so with those
//! defined for the host (a grid is a loop over blocks and threads, `atomicAdd` a plain add)
//! a host C++ compiler builds them as they are (`cuda_on_host/prelude.h` before them, the driver
//! `cuda_on_host/driver.cpp` after). The driver runs, and the results are
//! compared with blstrs:
//!
//! - the field products (cuda_on_host/fields.rs): fp_mul, fp_sqr, fr_mul, fr_mul2, the
//!   squaring over Fr, the unreduced difference (fr_sub_lazy) as the products' second
//!   operand, and the product by a precomputed twiddle (fr_mul_tw, shoup.cuh);
//! - the lazily reduced Fp of the accumulation's madd and the madd on unreduced
//!   accumulators (cuda_on_host/lazy_madd.rs);
//! - what the G2 layer tests run: fp2_mul, fp2_sqr, the test_g2_add sequence, the signed
//!   madd chain of msm_accumulate, xyzz_mul_small of the bucket reduction;
//! - the MSM kernels one after the other as `msm::enqueue_msm` / `enqueue_batch_add` launch
//!   them (digits, scatter, accumulate, fixup, bucket reduction; batch addition), for G2 and
//!   G1 (both G1 builds: the split accumulator's, the default, and the called madd's), with
//!   small windows and chunks so buckets are cut across chunks; the scan and the final sums
//!   (kernels that synchronize a block) are done by the driver;
//! - H in Lagrange form (cuda_on_host/lagrange.rs): LC and LD' through ec_dft.cu's kernels
//!   against `groth16::lagrange`, their GLV products alone on edge and random scalars, c's
//!   kinds (h_c_kinds) and the coset scalars;
//! - a and b from a recorded R1CS (cuda_on_host/r1cs.rs): r1cs_eval against synthesis's a,
//!   b and its CPU reference `DeviceForm::row`, with the a·b = c check finding a tampered
//!   coefficient's row.
//!
//! This checks the CUDA source text without a GPU; it does not check what NVRTC/ptxas make
//! of it, nor the host launch code (the device check `cuzk-gpu-check msm-g2` does). Needs a
//! C++ compiler (`$CXX`, else `c++`); without one the test fails.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::cuda::layout::{bytes_of, DeviceXyzz, Xyzz, Xyzz2};
use cuzk_kernels::cuda::msm::{combine_windows, Windows};
use cuzk_kernels::cuda::source::SOURCES;
use cuzk_kernels::cuda::synthetic::random_g2_bases;
use cuzk_kernels::msm::scalars::{max_scalar, to_limbs, Limbs};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

// The field products (fields.rs) and the madd's lazily reduced Fp (lazy_madd.rs), in
// files of their own beside this harness.
mod chain_circuit;
#[path = "cuda_on_host/fields.rs"]
mod fields;
#[path = "cuda_on_host/lagrange.rs"]
mod lagrange;
#[path = "cuda_on_host/lazy_madd.rs"]
mod lazy_madd;
#[path = "cuda_on_host/r1cs.rs"]
mod r1cs;

/// CUDA qualifiers and intrinsics the sources use, for a host compiler. One thread at a
/// time: `__syncthreads` cannot be honoured, so kernels that need it are not run.
const PRELUDE: &str = include_str!("cuda_on_host/prelude.h");

/// Reads (u32 op, u32 n, data) records from stdin, writes results to stdout, in the
/// device's byte layout (x86 and the GPU are both little-endian).
const DRIVER: &str = include_str!("cuda_on_host/driver.cpp");

/// The sources the driver uses, in the order NVRTC sees them (ntt.cu, srs.cu, selftest.cu
/// are not needed).
const LAYERS: [&str; 11] = [
    "field.cuh",
    "bls12_381.cuh",
    "shoup.cuh",
    "fp2.cuh",
    "ec.cuh",
    "msm.cu",
    "pairs.cu",
    "ec_dft.cu",
    "h_lagrange.cu",
    "c_fold.cu",
    "r1cs.cu",
];

/// Builds the driver in `dir`. A missing C++ compiler fails the test: the check must run
/// (every machine the project builds on has one).
fn build(dir: &Path) -> std::path::PathBuf {
    let mut src = String::from(PRELUDE);
    for name in LAYERS {
        let (_, text) = SOURCES
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} not among the kernel sources"));
        src.push_str(&format!("// ---- {name}\n{text}\n"));
    }
    src.push_str(DRIVER);
    let cpp = dir.join("layers.cpp");
    std::fs::write(&cpp, src).unwrap();
    let exe = dir.join("layers");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = Command::new(&cxx)
        .args(["-O1", "-std=c++17", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output();
    match out {
        Err(e) => panic!("no C++ compiler to build the device layers for the host ({cxx}: {e}); install g++ or set CXX"),
        Ok(o) if !o.status.success() => panic!(
            "the device layers do not build on the host:\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => exe,
    }
}

fn run(exe: &Path, dir: &Path, input: &[u8]) -> Vec<u8> {
    let path = dir.join("input.bin");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(input)
        .unwrap();
    let out = Command::new(exe)
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn record(op: u32, n: usize) -> Vec<u8> {
    let mut v = op.to_le_bytes().to_vec();
    v.extend((n as u32).to_le_bytes());
    v
}

fn fp2_at(b: &[u8]) -> Fp2 {
    let limbs = |o: usize| {
        let mut l = [0u64; 6];
        for (i, x) in l.iter_mut().enumerate() {
            *x = u64::from_le_bytes(b[o + 8 * i..o + 8 * i + 8].try_into().unwrap());
        }
        Fp::from_raw_unchecked(l)
    };
    Fp2::new(limbs(0), limbs(48))
}

/// The device's XYZZ point at the start of `b` (its bytes as the kernels wrote them).
fn xyzz_raw<P: DeviceXyzz>(b: &[u8]) -> P {
    let n = std::mem::size_of::<P>();
    let mut x = P::default();
    // SAFETY: P is Xyzz or Xyzz2, repr(C) arrays of u64 limbs: any n bytes are a value of it,
    // and b holds at least n (the slice index checks).
    unsafe { std::ptr::copy_nonoverlapping(b[..n].as_ptr(), &mut x as *mut P as *mut u8, n) };
    x
}

fn xyzz2_at(b: &[u8]) -> G2Projective {
    xyzz_raw::<Xyzz2>(b).to_projective()
}

/// Checks a plan MSM's driver output: the W window sums, then the ones' batch sum, combined
/// as the host does (`combine_windows`, then the batch sum added) against `want`; and the
/// ones' sums the driver made again over the bases' aligned pair sums, then over the aligned
/// and odd ones (`batch_add_pairs*`), against `ones`.
fn check_plan<P: DeviceXyzz>(
    out: &[u8],
    win: &Windows,
    want: P::Projective,
    ones: P::Projective,
    what: &str,
) where
    P::Projective: std::fmt::Debug,
{
    let (n, w) = (std::mem::size_of::<P>(), win.windows as usize);
    assert_eq!(out.len(), (w + 3) * n, "{what}");
    let sums: Vec<P> = (0..w).map(|i| xyzz_raw(&out[n * i..])).collect();
    let at = |i: usize| xyzz_raw::<P>(&out[n * i..]).to_projective();
    assert_eq!(combine_windows(win, &sums) + at(w), want, "{what}");
    assert_eq!(at(w + 1), ones, "{what}: the ones over aligned pair sums");
    assert_eq!(
        at(w + 2),
        ones,
        "{what}: the ones over aligned and odd sums"
    );
}

#[test]
fn g2_layers_built_for_the_host_match_blstrs() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x6232);
    let pts = random_g2_bases(600, 12);
    let inf = G2Affine::identity();

    // Fp2 products and squares: random, squares of themselves, 0, 1, −1, ±u.
    let u = Fp2::new(Fp::ZERO, Fp::ONE);
    let mut fa: Vec<Fp2> = (0..2000).map(|_| Fp2::random(&mut rng)).collect();
    let mut fb: Vec<Fp2> = (0..2000).map(|_| Fp2::random(&mut rng)).collect();
    for i in (0..2000).step_by(5) {
        fb[i] = fa[i];
    }
    for (i, v) in [Fp2::ZERO, Fp2::ONE, -Fp2::ONE, u, -u]
        .into_iter()
        .enumerate()
    {
        fa[5 * i + 1] = v;
        fb[5 * i + 2] = v;
        fa[5 * i + 3] = v;
        fb[5 * i + 3] = v;
    }
    let mut input = record(1, fa.len());
    for (a, b) in fa.iter().zip(&fb) {
        input.extend(bytes_of(&[*a, *b]));
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), fa.len() * 192);
    for (i, (a, b)) in fa.iter().zip(&fb).enumerate() {
        assert_eq!(fp2_at(&out[192 * i..]), *a * b, "fp2_mul, pair {i}");
        assert_eq!(
            fp2_at(&out[192 * i + 96..]),
            a.square(),
            "fp2_sqr, pair {i}"
        );
    }

    // test_g2_add's sequence: random pairs and inf + q, p + inf, p + p, p − p, inf + inf.
    let mut ga: Vec<G2Affine> = pts[..256].to_vec();
    let mut gb: Vec<G2Affine> = pts[256..512].to_vec();
    ga[0] = inf;
    gb[1] = inf;
    gb[2] = ga[2];
    gb[3] = -ga[3];
    ga[4] = inf;
    gb[4] = inf;
    let mut input = record(2, ga.len());
    for (p, q) in ga.iter().zip(&gb) {
        input.extend(bytes_of(&[*p, *q]));
    }
    let out = run(&exe, dir.path(), &input);
    for (i, (p, q)) in ga.iter().zip(&gb).enumerate() {
        let s = G2Projective::from(*p) + q;
        assert_eq!(xyzz2_at(&out[768 * i..]), s, "p + q, pair {i}");
        assert_eq!(
            xyzz2_at(&out[768 * i + 384..]),
            s.double() + q,
            "2(p + q) + q, pair {i}"
        );
    }

    // msm_accumulate's loop: a signed chain with a repeated point (doubling inside madd),
    // a point and its negation (infinity midway), and identities.
    let mut chain: Vec<(bool, G2Affine)> = pts[..300]
        .iter()
        .map(|p| (rng.next_u32() & 1 == 1, *p))
        .collect();
    chain.insert(10, chain[9]);
    chain.insert(20, (!chain[19].0, chain[19].1));
    chain.insert(30, (false, inf));
    // From infinity: p, then −p, then p twice.
    chain.splice(
        0..0,
        [
            (false, pts[7]),
            (true, pts[7]),
            (false, pts[7]),
            (false, pts[7]),
        ],
    );
    let mut input = record(3, chain.len());
    let mut want = G2Projective::identity();
    for &(neg, p) in &chain {
        input.extend((neg as u32).to_le_bytes());
        input.extend(bytes_of(&[p]));
        want += if neg { -p } else { p };
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(xyzz2_at(&out), want, "signed madd chain");

    // xyzz_mul_small, as the bucket reduction uses it (k up to 2^19).
    let ks = [0u32, 1, 2, 3, 5, 64, 1000, 65_535, 1 << 19];
    let mut input = record(4, ks.len());
    for (i, &k) in ks.iter().enumerate() {
        input.extend(k.to_le_bytes());
        input.extend(bytes_of(&[pts[i]]));
    }
    let out = run(&exe, dir.path(), &input);
    for (i, &k) in ks.iter().enumerate() {
        assert_eq!(
            xyzz2_at(&out[384 * i..]),
            G2Projective::from(pts[i]) * Fr::from(k as u64),
            "{k}·p"
        );
    }
}

/// The Fr of canonical limbs (l < r).
fn fr_of(l: &Limbs) -> Fr {
    let mut r = <Fr as ff::PrimeField>::Repr::default();
    for (i, x) in l.iter().enumerate() {
        r.as_mut()[8 * i..8 * i + 8].copy_from_slice(&x.to_le_bytes());
    }
    <Fr as ff::PrimeField>::from_repr_vartime(r).unwrap()
}

/// How the driver sorts a plan MSM's entries (driver.cpp `plan_msm`'s mode).
#[derive(Clone, Copy, Debug)]
enum Sort {
    /// A window at a time, by its histogram.
    Window = 0,
    /// Every window in one sorted array, as `msm::enqueue_msm` sorts small MSMs.
    AllWindows = 1,
    /// A window at a time, into capped slots a bucket (`msm::capped`), many buckets
    /// overflowing (3 or 40 slots each, a quarter of the buckets given none).
    Capped = 2,
}

/// One plan MSM record for the driver (op 5: G2, op 6: G1).
#[allow(clippy::too_many_arguments)]
fn plan_record<T: Copy>(
    op: u32,
    sort: Sort,
    win: &Windows,
    chunk: u32,
    q: u32,
    bases: &[T],
    scalars: &[Limbs],
    terms: &[[u32; 2]],
    ones: &[u32],
) -> Vec<u8> {
    let mut v = record(op, sort as usize);
    let head = [win.c, win.windows];
    v.extend(bytes_of(&head));
    v.extend(bytes_of(&win.k));
    let sizes = [
        chunk,
        q,
        bases.len() as u32,
        scalars.len() as u32,
        terms.len() as u32,
        ones.len() as u32,
    ];
    v.extend(bytes_of(&sizes));
    v.extend(bytes_of(bases));
    v.extend(bytes_of(scalars));
    v.extend(bytes_of(terms));
    v.extend(bytes_of(ones));
    v
}

fn xyzz1_at(b: &[u8]) -> G1Projective {
    xyzz_raw::<Xyzz>(b).to_projective()
}

/// msm.cu's kernels in their launch order, for G2 and G1, against Σ s·P by blst: scalars 0,
/// 1, 2, r − 1 and random; infinity, repeated and negated bases; ones batch-added; windows
/// c = 4, 5, 9, 13 and chunks of 1, 3, 17, 64 entries (buckets cut across chunks, fixup),
/// each sorted a window at a time (by histogram, and into capped slots that overflow) and
/// with all windows in one array; bucket-reduction
/// chunks of 3 or 4 buckets (3 leaves a short last chunk) and padded chunk results.
#[test]
fn msm_kernels_built_for_the_host_match_blstrs() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d736d);
    let (nb, ns, m, no) = (500usize, 400usize, 900usize, 150usize);
    let mut scalars: Vec<Limbs> = (0..ns).map(|_| to_limbs(&Fr::random(&mut rng))).collect();
    scalars[0] = [0; 4];
    scalars[1] = [1, 0, 0, 0];
    scalars[2] = [2, 0, 0, 0];
    scalars[3] = max_scalar();
    let mut terms: Vec<[u32; 2]> = (0..m - 6)
        .map(|_| {
            let r = rng.next_u64();
            [(r % nb as u64) as u32, ((r >> 32) % ns as u64) as u32]
        })
        .collect();
    // Same scalar, so the same bucket in every window: 7 and 9 are opposite points
    // (g1[9] = −g1[7]), 3 and 7 equal ones (g1[7] = g1[3]); 5 is infinity.
    terms.extend([[7, 2], [9, 2], [5, 3], [3, 3], [7, 3], [3, 0]]);
    let mut ones: Vec<u32> = (0..no - 3)
        .map(|_| (rng.next_u32() as usize % nb) as u32)
        .collect();
    ones.extend([5, 7, 9]);
    ones.extend(100..160);
    // Ascending, as the plans list them, so neighbours follow each other (the pair sums'
    // batch addition takes them as one); then pairs whose sum is P + ∞ (4, 5; odd: 5, 6), a
    // doubling (10, 11; odd: 15, 16), infinity (12, 13; odd: 17, 18), a pair twice, and
    // entries out of order that must not pair (21, 20; 9 then 8).
    ones.sort_unstable();
    ones.extend([4, 5, 10, 11, 12, 13, 30, 31, 30, 31, 21, 20, 9, 8]);
    ones.extend([5, 6, 15, 16, 17, 18, 41, 42, 499]);

    let mut g2 = random_g2_bases(nb, 13);
    g2[5] = G2Affine::identity();
    g2[7] = g2[3];
    g2[9] = -g2[3];
    g2[11] = g2[10];
    g2[13] = -g2[12];
    g2[16] = g2[15];
    g2[18] = -g2[17];
    let mut g1: Vec<G1Affine> = vec![G1Affine::identity(); nb];
    let p1: Vec<G1Projective> = (0..nb).map(|_| G1Projective::random(&mut rng)).collect();
    G1Projective::batch_normalize(&p1, &mut g1);
    g1[5] = G1Affine::identity();
    g1[7] = g1[3];
    g1[9] = -g1[3];
    g1[11] = g1[10];
    g1[13] = -g1[12];
    g1[16] = g1[15];
    g1[18] = -g1[17];
    let (ones2, ones1) = (
        ones.iter()
            .map(|&b| G2Projective::from(g2[b as usize]))
            .sum::<G2Projective>(),
        ones.iter()
            .map(|&b| G1Projective::from(g1[b as usize]))
            .sum::<G1Projective>(),
    );
    let paired = ones
        .windows(2)
        .filter(|w| w[0] % 2 == 0 && w[1] == w[0] + 1)
        .count();
    assert!(
        paired >= 40,
        "the list has aligned pairs to take ({paired})"
    );
    let want2 = terms
        .iter()
        .map(|&[b, s]| G2Projective::from(g2[b as usize]) * fr_of(&scalars[s as usize]))
        .chain(ones.iter().map(|&b| G2Projective::from(g2[b as usize])))
        .fold(G2Projective::identity(), |a, b| a + b);
    let want1 = terms
        .iter()
        .map(|&[b, s]| G1Projective::from(g1[b as usize]) * fr_of(&scalars[s as usize]))
        .chain(ones.iter().map(|&b| G1Projective::from(g1[b as usize])))
        .fold(G1Projective::identity(), |a, b| a + b);

    // Each width a window at a time (two ways) and with all windows in one sorted array.
    let cases = [(4u32, 3u32), (5, 1), (9, 17), (13, 64)]
        .into_iter()
        .flat_map(|(c, chunk)| {
            [Sort::Window, Sort::AllWindows, Sort::Capped].map(|s| (c, chunk, s))
        });
    for (c, chunk, sort) in cases {
        let win = Windows::for_width(c);
        // Bucket-reduction chunks of 3 buckets (c = 4, 13: not dividing the window's
        // buckets, a short last chunk) or 4.
        let q = (win.buckets() as u32).min(if c % 3 == 1 { 3 } else { 4 });
        // G2 with the default build (op 5: the split accumulator), then the called madd's
        // (op 15).
        for (op, build) in [(5, "msm_accumulate_split_g2"), (15, "msm_accumulate_g2")] {
            let out = run(
                &exe,
                dir.path(),
                &plan_record(op, sort, &win, chunk, q, &g2, &scalars, &terms, &ones),
            );
            let what = format!("G2 {build}, c = {c}, chunks of {chunk}, {sort:?}");
            check_plan::<Xyzz2>(&out, &win, want2, ones2, &what);
        }

        // G1 with the default build (op 6: the split accumulator), then the called madd's
        // (op 16).
        for (op, build) in [(6, "msm_accumulate_split"), (16, "msm_accumulate_wide")] {
            let out = run(
                &exe,
                dir.path(),
                &plan_record(op, sort, &win, chunk, q, &g1, &scalars, &terms, &ones),
            );
            let what = format!("G1 {build}, c = {c}, chunks of {chunk}, {sort:?}");
            check_plan::<Xyzz>(&out, &win, want1, ones1, &what);
        }
    }
}
