//! The device's own code, run on the CPU: field.cuh, bls12_381.cuh, shoup.cuh, fp2.cuh,
//! ec.cuh and msm.cu are plain C++ apart from their CUDA qualifiers and a few intrinsics, so with those
//! defined for the host (a grid is a loop over blocks and threads, `atomicAdd` a plain add)
//! a host C++ compiler builds them as they are (`cuda_on_host/prelude.h` before them, the driver
//! `cuda_on_host/driver.cpp` after). The driver runs, and the results are
//! compared with blstrs:
//!
//! - the field products: fp_mul, fp_sqr, fr_mul, fr_mul2, the squaring over Fr, the
//!   unreduced difference (fr_sub_lazy) as the products' second operand, and the product by
//!   a precomputed twiddle (fr_mul_tw, shoup.cuh);
//! - what the G2 layer tests run: fp2_mul, fp2_sqr, the test_g2_add sequence, the signed
//!   madd chain of msm_accumulate, xyzz_mul_small of the bucket reduction;
//! - the MSM kernels one after the other as `msm::enqueue_msm` / `enqueue_batch_add` launch
//!   them (digits, scatter, accumulate, fixup, bucket reduction; batch addition), for G2 and
//!   G1 (both G1 builds: the split accumulator's, the default, and the called madd's), with
//!   small windows and chunks so buckets are cut across chunks; the scan and the final sums
//!   (kernels that synchronize a block) are done by the driver.
//!
//! This checks the CUDA source text without a GPU; it does not check what NVRTC/ptxas make
//! of it, nor the host launch code (the device check `cuzk-gpu-check msm-g2` does). Needs a
//! C++ compiler (`$CXX`, else `c++`); without one the test fails.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::cuda::layout::{bytes_of, fr_raw, Xyzz, Xyzz2};
use cuzk_kernels::cuda::msm::{combine_windows, Windows};
use cuzk_kernels::cuda::source::SOURCES;
use cuzk_kernels::cuda::synthetic::random_g2_bases;
use cuzk_kernels::msm::scalars::{self, max_scalar, to_limbs, Limbs};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// CUDA qualifiers and intrinsics the sources use, for a host compiler. One thread at a
/// time: `__syncthreads` cannot be honoured, so kernels that need it are not run.
const PRELUDE: &str = include_str!("cuda_on_host/prelude.h");

/// Reads (u32 op, u32 n, data) records from stdin, writes results to stdout, in the
/// device's byte layout (x86 and the GPU are both little-endian).
const DRIVER: &str = include_str!("cuda_on_host/driver.cpp");

/// The sources the driver uses, in the order NVRTC sees them (ntt.cu, srs.cu, selftest.cu
/// are not needed).
const LAYERS: [&str; 6] = [
    "field.cuh",
    "bls12_381.cuh",
    "shoup.cuh",
    "fp2.cuh",
    "ec.cuh",
    "msm.cu",
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

fn xyzz2_at(b: &[u8]) -> G2Projective {
    let mut x = Xyzz2::default();
    for (i, c) in x.0.iter_mut().flatten().flatten().enumerate() {
        *c = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
    }
    x.to_projective()
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

/// fp_mul (Karatsuba + SOS) and fp_sqr, fr_mul (CIOS), the Karatsuba product and the generic
/// squaring over Fr, against blstrs: random elements and Montgomery limbs at the edges (both
/// fields): 0, 1, p − k (the most carries through the square's off-diagonal chains), all-ones
/// limbs below p, powers of two.
#[test]
fn field_products_built_for_the_host_match_blstrs() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x7371);
    let mut fa: Vec<Fp> = (0..3000).map(|_| Fp::random(&mut rng)).collect();
    let fb: Vec<Fp> = (0..3000).map(|_| Fp::random(&mut rng)).collect();
    let mut edge = vec![
        Fp::ZERO,
        Fp::ONE,
        -Fp::ONE,
        Fp::from_raw_unchecked([1, 0, 0, 0, 0, 0]),
        Fp::from_raw_unchecked([
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            0x1a01_11ea_397f_e699,
        ]),
        Fp::from_raw_unchecked([u64::MAX; 6].map(|x| x >> 4)),
    ];
    for k in 1..40u64 {
        edge.push(-Fp::from_raw_unchecked([k, 0, 0, 0, 0, 0]));
    }
    for b in 0..381 {
        let mut l = [0u64; 6];
        l[b / 64] = 1 << (b % 64);
        edge.push(Fp::from_raw_unchecked(l));
    }
    fa[..edge.len()].copy_from_slice(&edge);
    let mut input = record(7, fa.len());
    for (a, b) in fa.iter().zip(&fb) {
        input.extend(bytes_of(&[*a, *b]));
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), fa.len() * 192);
    let (mut borrowed, mut kept) = (0, 0);
    for (i, (a, b)) in fa.iter().zip(&fb).enumerate() {
        let at = |k: usize| &out[192 * i + 48 * k..192 * i + 48 * (k + 1)];
        assert_eq!(at(0), bytes_of(&[*a * b]), "fp_mul, pair {i}");
        assert_eq!(at(1), bytes_of(&[a.square()]), "fp_sqr, {i}");
        assert_eq!(
            at(2),
            bytes_of(&[*a * b - a.square()]),
            "a·b − a², pair {i}"
        );
        assert_eq!(
            at(3),
            bytes_of(&[a.square() - *a * b]),
            "a² − a·b, pair {i}"
        );
        // Which of the two double-width differences borrowed: a·b < a² as integers of the
        // Montgomery limbs, i.e. b < a (a ≠ 0); both orders reach fe_sub_wide's p·R
        // correction.
        let (aa, bb) = ([*a], [*b]);
        let (la, lb) = (bytes_of(&aa), bytes_of(&bb));
        if bool::from(!a.is_zero()) && lb.iter().rev().lt(la.iter().rev()) {
            borrowed += 1;
        } else {
            kept += 1;
        }
    }
    assert!(borrowed > 1000 && kept > 1000, "{borrowed} / {kept}");

    let mut ra: Vec<Fr> = (0..3000).map(|_| Fr::random(&mut rng)).collect();
    let mut rb: Vec<Fr> = (0..3000).map(|_| Fr::random(&mut rng)).collect();
    // Edges as for Fp: 0, 1, r − k, Montgomery limbs all ones below r and at 2^{252} − 1,
    // every power of two below r (the Karatsuba half sums carry out for the large ones).
    let mut edge = vec![
        Fr::ZERO,
        Fr::ONE,
        fr_mont([u64::MAX, u64::MAX, u64::MAX, 0x73ed_a753_299d_7d47]),
        fr_mont([u64::MAX; 4].map(|x| x >> 4)),
        fr_mont([u64::MAX, u64::MAX, 0, 0x73ed_a753_299d_7d47]),
        fr_mont([0, 0, u64::MAX, 0x73ed_a753_299d_7d47]),
    ];
    for k in 1..40u64 {
        edge.push(-Fr::from(k));
    }
    for b in 0..255 {
        let mut l = [0u64; 4];
        l[b / 64] = 1 << (b % 64);
        edge.push(fr_mont(l));
    }
    ra[..edge.len()].copy_from_slice(&edge);
    // b takes the edges too, so both operands' half sums carry (c_a·c_b·X² term).
    rb[..edge.len()].copy_from_slice(&edge);
    rb[..edge.len()].reverse();
    // fr_mul's rows add m·r_0 and m·r_1 instead of multiplying, with a case for m = 0 (the
    // row's low limb e_0 already zero), which random operands reach once in 2^32 rows: pairs
    // made to reach it in every pattern of the 8 rows (m = 0 after m ≠ 0 rows and before).
    let crafted: Vec<(Fr, Fr)> = (0..256u32)
        .map(|rows| zero_m_rows_pair(rows as u8, &mut rng))
        .collect();
    let tail = ra.len() - crafted.len();
    for (i, (a, b)) in crafted.iter().enumerate() {
        ra[tail + i] = *a;
        rb[tail + i] = *b;
    }
    // The unreduced difference's ends: a = b (d = r exactly), and the largest and smallest
    // Montgomery limbs against each other (d = 2r − 1 and d = 1 for a = r − 1 and 0 as limbs).
    // r − 1 as limbs (max_scalar) are the largest Montgomery limbs of an element.
    let top = fr_mont(max_scalar());
    let r = scalars::add(&max_scalar(), &[1, 0, 0, 0]);
    let ends = [
        (top, Fr::ZERO),
        (Fr::ZERO, top),
        (top, top),
        (Fr::ONE, Fr::ONE),
    ];
    let at = edge.len();
    for (i, (a, b)) in ends.iter().enumerate() {
        ra[at + i] = *a;
        rb[at + i] = *b;
    }
    // Equal pairs (d = r) from random elements too.
    let equal = at + ends.len()..at + 40;
    rb[equal.clone()].copy_from_slice(&ra[equal]);
    let mut input = record(8, ra.len());
    for (a, b) in ra.iter().zip(&rb) {
        input.extend(bytes_of(&[*a, *b]));
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), ra.len() * 288);
    let mut wrapped = 0;
    for (i, (a, b)) in ra.iter().zip(&rb).enumerate() {
        let o = &out[288 * i..288 * (i + 1)];
        assert_eq!(&o[..32], bytes_of(&[*a * b]), "fr_mul, pair {i}");
        assert_eq!(
            &o[32..64],
            bytes_of(&[*a * b]),
            "Karatsuba product over Fr, pair {i}"
        );
        assert_eq!(&o[64..96], bytes_of(&[a.square()]), "fr square, {i}");
        assert_eq!(
            &o[96..128],
            bytes_of(&[*a * b]),
            "fr_mul2's first, pair {i}"
        );
        assert_eq!(
            &o[128..160],
            bytes_of(&[a.square() * b]),
            "fr_mul2's second, pair {i}"
        );
        // d = a − b + r on the Montgomery limbs: (a − b)'s limbs plus r where a's limbs are
        // at least b's (the subtraction did not wrap), else (a − b)'s limbs as they are.
        let (la, lb) = (fr_raw(a), fr_raw(b));
        let no_wrap = la.iter().rev().ge(lb.iter().rev());
        let mut d = fr_raw(&(*a - b));
        if no_wrap {
            d = scalars::add(&d, &r);
        } else {
            wrapped += 1;
        }
        assert_eq!(&o[160..192], bytes_of(&d), "fr_sub_lazy, pair {i}");
        let (ab, ba) = (*a - b, *b - a);
        assert_eq!(
            &o[192..224],
            bytes_of(&[*b * ab]),
            "b·(a − b + r), pair {i}"
        );
        assert_eq!(
            &o[224..256],
            bytes_of(&[*a * ab]),
            "fr_mul2 lazy first, pair {i}"
        );
        assert_eq!(
            &o[256..288],
            bytes_of(&[*b * ba]),
            "fr_mul2 lazy second, pair {i}"
        );
    }
    assert!(wrapped > 1000 && ra.len() - wrapped > 1000, "{wrapped}");
}

/// fr_mul_tw and fr_mul_tw2 (shoup.cuh: the NTT's in-block twiddle products) against blstrs: x·w mod r
/// for x anywhere below 2^256 (the butterflies' unreduced differences lie below 2r) and
/// twiddles from ntt::shoup. Among them x·w mod r = k for k < 64 (x = k·w^{-1}, plus r and
/// 2r), where x·w/r lies just above an integer and the quotient from the high half comes
/// out one short of it.
#[test]
fn shoup_twiddle_products_built_for_the_host_match_blstrs() {
    use cuzk_kernels::ntt::shoup;
    use ff::PrimeField;
    use num_bigint::BigUint;
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x5400);
    let r: BigUint = BigUint::from_bytes_le((-Fr::ONE).to_repr().as_ref()) + 1u32;
    let top: BigUint = (BigUint::from(1u32) << 256u32) - 1u32;
    let big = |w: &Fr| BigUint::from_bytes_le(w.to_repr().as_ref());
    let w512 = cuzk_kernels::ntt::Roots::new(9).omega;
    let mut ws = vec![
        Fr::ZERO,
        Fr::ONE,
        -Fr::ONE,
        w512,
        w512.pow_vartime([255u64]),
    ];
    ws.extend((0..200).map(|_| Fr::random(&mut rng)));
    let mut cases: Vec<(BigUint, Fr)> = Vec::new();
    for w in &ws {
        let mut xs = vec![
            BigUint::from(0u32),
            BigUint::from(1u32),
            &r - 1u32,
            r.clone(),
            &r * 2u32 - 1u32,
            top.clone(),
        ];
        for _ in 0..20 {
            let mut b = [0u8; 32];
            rng.fill_bytes(&mut b);
            let x = BigUint::from_bytes_le(&b);
            xs.push(&x % (&r * 2u32));
            xs.push(x);
        }
        if let Some(inv) = Option::<Fr>::from(w.invert()) {
            for k in 0..64u64 {
                let x = big(&(inv * Fr::from(k)));
                xs.extend([&x + &r, &x + &r * 2u32]);
                xs.push(x);
            }
        }
        cases.extend(xs.into_iter().filter(|x| x <= &top).map(|x| (x, *w)));
    }
    let mut input = record(17, cases.len());
    for (x, w) in &cases {
        let mut limbs = x.to_u32_digits();
        limbs.resize(8, 0);
        input.extend(limbs.iter().flat_map(|l| l.to_le_bytes()));
        input.extend(shoup::twiddle(w).iter().flat_map(|l| l.to_le_bytes()));
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), cases.len() * 96);
    let want = |(x, w): &(BigUint, Fr)| (x % &r) * big(w) % &r;
    for (i, case) in cases.iter().enumerate() {
        let got = |k: usize| BigUint::from_bytes_le(&out[96 * i + 32 * k..96 * i + 32 * (k + 1)]);
        let (x, w) = case;
        assert_eq!(
            got(0),
            want(case),
            "fr_mul_tw: x = {x:#x}, w = {w:?} (case {i})"
        );
        assert_eq!(got(1), want(case), "fr_mul_tw2's first (case {i})");
        let before = &cases[i.saturating_sub(1)];
        assert_eq!(got(2), want(before), "fr_mul_tw2's second (case {i})");
    }
}

/// The lazily reduced Fp of the split accumulator's madd (bls12_381.cuh `fp_mul_lz`):
/// operands anywhere below 2p, the products, sums and differences below 2p and congruent
/// to blstrs' results, `fp_canon` below p, `fp_is_zero_lz` true for 0 and p. Then the
/// madd itself (`xyzz_madd_sh`) on accumulators handed in unreduced (a coordinate plus p),
/// including the same point (doubling) and its negation (infinity), where the difference P
/// can come out as p rather than 0: the sum must equal blstrs' and leave reduced below p.
/// Fails with `fp_is_zero_lz` testing 0 alone, and without the reduction in `xyzz_sh_get`.
#[test]
fn lazy_fp_and_the_split_madd_built_for_the_host_match_blstrs() {
    use num_bigint::BigUint;
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x1a2b);
    let big = |f: &Fp| BigUint::from_bytes_le(bytes_of(&[*f]));
    // p: the Montgomery forms of 1 and −1 are R mod p and p − (R mod p).
    let p = big(&-Fp::ONE) + big(&Fp::ONE);
    let limbs_of = |x: &BigUint| {
        let mut l = x.to_u32_digits();
        l.resize(12, 0);
        l.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()
    };
    // A lazily reduced form of f: its limbs, plus p half of the time.
    let lazy = |f: &Fp, rng: &mut ChaCha8Rng| {
        let x = big(f);
        if rng.next_u32() & 1 == 1 {
            x + &p
        } else {
            x
        }
    };
    let fp_of = |x: &BigUint| {
        let r = x % &p;
        let mut l = [0u64; 6];
        for (i, d) in r.to_u64_digits().iter().enumerate() {
            l[i] = *d;
        }
        Fp::from_raw_unchecked(l)
    };

    // Field operations.
    let mut pairs: Vec<(BigUint, BigUint)> = vec![
        (BigUint::from(0u32), BigUint::from(0u32)),
        (p.clone(), BigUint::from(1u32)),
        (&p * 2u32 - 1u32, &p * 2u32 - 1u32),
        (&p - 1u32, &p + 1u32),
        (p.clone(), p.clone()),
    ];
    for _ in 0..3000 {
        let (a, b) = (Fp::random(&mut rng), Fp::random(&mut rng));
        pairs.push((lazy(&a, &mut rng), lazy(&b, &mut rng)));
    }
    let mut input = record(18, pairs.len());
    for (a, b) in &pairs {
        input.extend(limbs_of(a));
        input.extend(limbs_of(b));
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), pairs.len() * (7 * 48 + 4));
    for (i, (a, b)) in pairs.iter().enumerate() {
        let rec = &out[i * 340..(i + 1) * 340];
        let got = |k: usize| BigUint::from_bytes_le(&rec[48 * k..48 * (k + 1)]);
        let (fa, fb) = (fp_of(a), fp_of(b));
        let want = [
            fa * fb,
            fa.square(),
            fa * fb - fa.square(),
            fa.square() - fa * fb,
            fa + fb,
            fa - fb,
        ];
        let names = ["mul", "sqr", "a·b − a²", "a² − a·b", "add", "sub"];
        for (k, w) in want.iter().enumerate() {
            let g = got(k);
            assert!(
                g < &p * 2u32,
                "{}: {g:#x} not below 2p (pair {i})",
                names[k]
            );
            assert_eq!(fp_of(&g), *w, "{} (pair {i}: {a:#x}, {b:#x})", names[k]);
        }
        assert!(got(6) < p, "fp_canon not below p (pair {i})");
        assert_eq!(fp_of(&got(6)), fa, "fp_canon (pair {i})");
        let zero = u32::from_le_bytes(rec[336..340].try_into().unwrap()) != 0;
        assert_eq!(zero, bool::from(fa.is_zero()), "fp_is_zero_lz({a:#x})");
    }

    // The madd on unreduced accumulators.
    let mut cases: Vec<(bool, G1Affine, [BigUint; 4], G1Projective)> = Vec::new();
    for i in 0..600 {
        let base = G1Affine::from(G1Projective::random(&mut rng));
        let neg = rng.next_u32() & 1 == 1;
        let signed = if neg { -base } else { base };
        // The accumulator: another point, the base itself (doubling when added, infinity
        // when subtracted) or its negation.
        let q = match i % 3 {
            0 => G1Affine::from(G1Projective::random(&mut rng)),
            1 => base,
            _ => -base,
        };
        let z = Fp::random(&mut rng);
        let (zz, zzz) = (z.square(), z.square() * z);
        let coords = [q.x() * zz, q.y() * zzz, zz, zzz].map(|c| lazy(&c, &mut rng));
        cases.push((
            neg,
            base,
            coords,
            G1Projective::from(q) + G1Projective::from(signed),
        ));
    }
    let mut input = record(19, cases.len());
    for (neg, base, coords, _) in &cases {
        input.extend((*neg as u32).to_le_bytes());
        input.extend(bytes_of(&[*base]));
        for c in coords {
            input.extend(limbs_of(c));
        }
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), cases.len() * 192);
    let mut same_x = 0;
    for (i, (_, base, _, want)) in cases.iter().enumerate() {
        let rec = &out[192 * i..192 * (i + 1)];
        for k in 0..4 {
            let c = BigUint::from_bytes_le(&rec[48 * k..48 * (k + 1)]);
            assert!(c < p, "coordinate {k} of case {i} not reduced: {c:#x}");
        }
        let mut x = Xyzz::default();
        for (j, w) in x.0.iter_mut().flatten().enumerate() {
            *w = u64::from_le_bytes(rec[8 * j..8 * j + 8].try_into().unwrap());
        }
        assert_eq!(x.to_projective(), *want, "madd, case {i} (base {base:?})");
        same_x += (i % 3 != 0) as usize;
    }
    assert!(same_x >= 400);
}

/// r's 32-bit limbs: r − 1 (`max_scalar`) plus one, its low limb being even.
fn fr_limbs() -> [u32; 8] {
    let mut l = [0u32; 8];
    for (i, x) in max_scalar().iter().enumerate() {
        l[2 * i] = *x as u32;
        l[2 * i + 1] = (*x >> 32) as u32;
    }
    assert_eq!(l[0] & 1, 0);
    l[0] += 1;
    l
}

/// Operands (a, b) < r, as Montgomery limbs, whose product's CIOS rows (t += a·b_i;
/// m = −t_0 mod 2^32; t = (t + m·r)/2^32) have m = 0 exactly in the rows whose bit is set
/// in `rows`: a_0 is odd, and b_i = −t_0·a_0^{-1} mod 2^32 where a row is to have t_0 + a_0·b_i
/// ≡ 0. The rows are simulated here on 32-bit limbs to choose b; the kernel's result is still
/// judged by blstrs alone (the simulation's own product is checked against it first).
fn zero_m_rows_pair(rows: u8, rng: &mut ChaCha8Rng) -> (Fr, Fr) {
    let r = fr_limbs();
    let below_r = |l: &[u32; 8]| {
        (0..8)
            .rev()
            .find(|&i| l[i] != r[i])
            .is_some_and(|i| l[i] < r[i])
    };
    loop {
        let mut a = [0u32; 8];
        a.iter_mut().for_each(|x| *x = rng.next_u32());
        a[0] |= 1;
        a[7] %= r[7];
        // a_0^{-1} mod 2^32 by Newton's iteration (each step doubles the correct bits).
        let mut inv = a[0];
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(a[0].wrapping_mul(inv)));
        }
        let mut b = [0u32; 8];
        let mut t = [0u64; 10];
        for (i, bi) in b.iter_mut().enumerate() {
            *bi = if rows >> i & 1 == 1 {
                0u32.wrapping_sub(t[0] as u32).wrapping_mul(inv)
            } else {
                rng.next_u32()
            };
            add_product(&mut t, &a, *bi);
            let m = 0u32.wrapping_sub(t[0] as u32);
            assert_eq!(m == 0, rows >> i & 1 == 1, "crafted row {i}");
            add_product(&mut t, &r, m);
            t.copy_within(1.., 0);
            t[9] = 0;
        }
        if !below_r(&b) {
            continue;
        }
        let (fa, fb) = (mont_of_u32(&a), mont_of_u32(&b));
        // t < 2r: the simulation's product, after one subtraction, is blstrs's.
        let mut prod = [0u32; 8];
        prod.iter_mut().zip(&t).for_each(|(p, &x)| *p = x as u32);
        if !below_r(&prod) {
            let mut borrow = 0i64;
            for (p, &rj) in prod.iter_mut().zip(&r) {
                let d = *p as i64 - rj as i64 - borrow;
                *p = d.rem_euclid(1 << 32) as u32;
                borrow = (d < 0) as i64;
            }
        }
        assert_eq!(
            bytes_of(&[fa * fb]),
            bytes_of(&prod),
            "the rows' simulation"
        );
        return (fa, fb);
    }
}

/// t += x·y on 32-bit limbs held in u64s (t has room for the carries).
fn add_product(t: &mut [u64; 10], x: &[u32; 8], y: u32) {
    let mut c = 0u64;
    for (tj, &xj) in t.iter_mut().zip(x) {
        let s = *tj + xj as u64 * y as u64 + c;
        *tj = s & 0xffff_ffff;
        c = s >> 32;
    }
    for k in t.iter_mut().skip(8) {
        let s = *k + c;
        *k = s & 0xffff_ffff;
        c = s >> 32;
    }
}

/// The Fr of Montgomery limbs l (32-bit, l < r).
fn mont_of_u32(l: &[u32; 8]) -> Fr {
    let mut w = [0u64; 4];
    for (i, x) in w.iter_mut().enumerate() {
        *x = l[2 * i] as u64 | (l[2 * i + 1] as u64) << 32;
    }
    fr_mont(w)
}

/// The Fr whose Montgomery limbs (its bits in memory, what the kernels see) are l (l < r):
/// the value l·R^{-1}, R = 2^256.
fn fr_mont(l: [u64; 4]) -> Fr {
    let r_inv = Fr::from(2u64).pow_vartime([256]).invert().unwrap();
    Fr::from_u64s_le(&l).unwrap() * r_inv
}

/// The Fr of canonical limbs (l < r).
fn fr_of(l: &Limbs) -> Fr {
    let mut r = <Fr as ff::PrimeField>::Repr::default();
    for (i, x) in l.iter().enumerate() {
        r.as_mut()[8 * i..8 * i + 8].copy_from_slice(&x.to_le_bytes());
    }
    <Fr as ff::PrimeField>::from_repr_vartime(r).unwrap()
}

/// One plan MSM record for the driver (op 5: G2, op 6: G1).
#[allow(clippy::too_many_arguments)]
fn plan_record<T: Copy>(
    op: u32,
    win: &Windows,
    chunk: u32,
    q: u32,
    bases: &[T],
    scalars: &[Limbs],
    terms: &[[u32; 2]],
    ones: &[u32],
) -> Vec<u8> {
    let mut v = record(op, 0);
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
    let mut x = Xyzz::default();
    for (i, c) in x.0.iter_mut().flatten().enumerate() {
        *c = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
    }
    x.to_projective()
}

/// msm.cu's kernels in their launch order, for G2 and G1, against Σ s·P by blst: scalars 0,
/// 1, 2, r − 1 and random; infinity, repeated and negated bases; ones batch-added; windows
/// c = 4, 5, 9, 13 and chunks of 1, 3, 17, 64 entries (buckets cut across chunks, fixup).
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

    let mut g2 = random_g2_bases(nb, 13);
    g2[5] = G2Affine::identity();
    g2[7] = g2[3];
    g2[9] = -g2[3];
    let mut g1: Vec<G1Affine> = vec![G1Affine::identity(); nb];
    let p1: Vec<G1Projective> = (0..nb).map(|_| G1Projective::random(&mut rng)).collect();
    G1Projective::batch_normalize(&p1, &mut g1);
    g1[5] = G1Affine::identity();
    g1[7] = g1[3];
    g1[9] = -g1[3];
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

    for (c, chunk) in [(4u32, 3u32), (5, 1), (9, 17), (13, 64)] {
        let win = Windows::for_width(c);
        let q = (win.buckets() as u32).min(4);
        let w = win.windows as usize;
        let out = run(
            &exe,
            dir.path(),
            &plan_record(5, &win, chunk, q, &g2, &scalars, &terms, &ones),
        );
        assert_eq!(out.len(), (w + 1) * 384);
        let sums: Vec<Xyzz2> = (0..w)
            .map(|i| {
                let mut x = Xyzz2::default();
                for (j, l) in x.0.iter_mut().flatten().flatten().enumerate() {
                    let o = 384 * i + 8 * j;
                    *l = u64::from_le_bytes(out[o..o + 8].try_into().unwrap());
                }
                x
            })
            .collect();
        let got = combine_windows(&win, &sums) + xyzz2_at(&out[384 * w..]);
        assert_eq!(got, want2, "G2, c = {c}, chunks of {chunk}");

        // G1 with the default build (op 6: the split accumulator), then the called madd's
        // (op 16).
        for (op, build) in [(6, "msm_accumulate_split"), (16, "msm_accumulate_wide")] {
            let out = run(
                &exe,
                dir.path(),
                &plan_record(op, &win, chunk, q, &g1, &scalars, &terms, &ones),
            );
            assert_eq!(out.len(), (w + 1) * 192);
            let mut got = xyzz1_at(&out[192 * w..]);
            let mut acc = G1Projective::identity();
            for i in (0..w).rev() {
                for _ in 0..c {
                    acc = acc.double();
                }
                acc += xyzz1_at(&out[192 * i..]);
            }
            got += acc;
            assert_eq!(got, want1, "G1 {build}, c = {c}, chunks of {chunk}");
        }
    }
}
