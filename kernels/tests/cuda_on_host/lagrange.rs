//! H in Lagrange form built for the host (cuda_on_host.rs): the transform that makes LC and
//! LD' (ec_dft.cu) against the CPU reference `groth16::lagrange::lagrange_bases`, the
//! per-partition kernels (h_lagrange.cu): c's kinds and the coset scalars, and C folded into
//! L (c_fold.cu) against `groth16::folded::fold_c_into_l`.

use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use cuzk_kernels::cuda::layout::{bytes_of, fp_raw, fr_raw};
use cuzk_kernels::cuda::{fold_chunks, glv_beta, glv_split, CHUNK_COST};
use cuzk_kernels::groth16::folded::fold_c_into_l;
use cuzk_kernels::groth16::lagrange::lagrange_bases;
use cuzk_kernels::msm::scalars::{to_limbs, Limbs};
use cuzk_kernels::ntt::{coset_generator, powers, Roots};
use cuzk_kernels::witness::matrix::{Entry, R1csMatrix, INPUT};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{build, record, run};

/// The affine points the driver wrote (blst's layout).
fn affine_at(out: &[u8], n: usize) -> Vec<G1Affine> {
    assert_eq!(out.len(), n * 96);
    let mut v = vec![G1Affine::identity(); n];
    // SAFETY: G1Affine is blst's repr(C) affine point (96 bytes of u64 limbs, any bit
    // pattern a value) and `out` holds exactly n of them.
    unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), v.as_mut_ptr() as *mut u8, out.len()) };
    v
}

/// LC and LD' through the device's transform (scale, DIF levels, affine in natural order)
/// equal the CPU reference's at 2^1..2^8, with a base at infinity and a repeated one. From
/// 2^6 on, the levels with 32 blocks or more run a warp a twiddle (ec_dft_level).
#[test]
fn lagrange_bases_built_for_the_host_match_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x1a9);
    for log_n in 1u32..=8 {
        let n = 1usize << log_n;
        let mut h: Vec<G1Affine> = (0..n - 1)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        if n > 4 {
            h[2] = G1Affine::identity();
            h[3] = h[1];
        }
        let roots = Roots::new(log_n);
        let g_inv = coset_generator().invert().unwrap();
        let z_inv = roots.z_on_coset().invert().unwrap();
        let tw: Vec<Limbs> = powers(roots.omega_inv, n / 2)
            .iter()
            .map(|w| glv_split(&to_limbs(w)))
            .collect();
        let mut bases = h.clone();
        bases.push(G1Affine::identity());
        let (want_lc, want_ld) = lagrange_bases(&h, log_n);
        for (c, step, want) in [
            (roots.n_inv, g_inv, &want_lc),
            (roots.n_inv * z_inv, Fr::ONE, &want_ld),
        ] {
            let s: Vec<Limbs> = powers(step, n)
                .iter()
                .map(|p| glv_split(&to_limbs(&(c * p))))
                .collect();
            let mut input = record(20, n);
            input.extend(bytes_of(&[fp_raw(&glv_beta())]));
            input.extend(bytes_of(&bases));
            input.extend(bytes_of(&s));
            input.extend(bytes_of(&tw));
            let got = affine_at(&run(&exe, dir.path(), &input), n);
            assert_eq!(&got, want, "2^{log_n}");
        }
    }
}

/// xyzz_mul_glv and xyzz_mul_glv_jsf equal k·P for scalars whose GLV halves are small (a
/// few low bits, which a windowed product must not read past), sit across a limb edge, are
/// zero, are all ones, and for random ones; and keep infinity.
#[test]
fn glv_products_built_for_the_host_match_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x91f);
    let lambda = Fr::from_u128(0xac45_a401_0001_a402_0000_0000_ffff_ffff);
    let two = Fr::from(2u64);
    let pow2 = |e: u32| (0..e).fold(Fr::ONE, |a, _| a * two);
    let mut ks: Vec<Fr> = [0u64, 1, 2, 3, 5, 8, 15, 16, 17, 31, 0x1_0000_0001, u64::MAX]
        .iter()
        .map(|&k| Fr::from(k))
        .collect();
    ks.extend([
        pow2(31),
        pow2(32) + Fr::ONE,
        pow2(127),
        pow2(128) - Fr::ONE,
        lambda - Fr::ONE,
        lambda,
        lambda + Fr::ONE,
        lambda * Fr::from(9u64) + Fr::from(7u64),
        -Fr::ONE,
        -two,
    ]);
    ks.extend((0..40).map(|_| Fr::random(&mut rng)));
    let mut points: Vec<G1Affine> = ks
        .iter()
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    points[3] = G1Affine::identity();
    let split: Vec<Limbs> = ks.iter().map(|k| glv_split(&to_limbs(k))).collect();
    let mut input = record(24, ks.len());
    input.extend(bytes_of(&[fp_raw(&glv_beta())]));
    input.extend(bytes_of(&points));
    input.extend(bytes_of(&split));
    let out = run(&exe, dir.path(), &input);
    let (binary, jsf) = out.split_at(ks.len() * 96);
    let (binary, jsf) = (affine_at(binary, ks.len()), affine_at(jsf, ks.len()));
    for (i, (p, k)) in points.iter().zip(&ks).enumerate() {
        let want = (G1Projective::from(p) * k).to_affine();
        assert_eq!(binary[i], want, "xyzz_mul_glv, scalar {i}: {k:?}");
        assert_eq!(jsf[i], want, "xyzz_mul_glv_jsf, scalar {i}: {k:?}");
    }
}

/// jsf_of (xyzz_mul_glv's digits), for edge and random GLV halves: the digits recompose
/// k1 and k2; of any three consecutive columns one is zero (the joint sparse form's
/// property that bounds its weight); and on random halves about half the columns are
/// nonzero, the additions xyzz_mul_glv makes (the binary pair has three quarters).
#[test]
fn joint_sparse_forms_built_for_the_host_recompose_and_are_sparse() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0x15f);
    let mut halves: Vec<(u128, u128)> = vec![
        (0, 0),
        (1, 0),
        (0, 1),
        (3, 5),
        (7, 7),
        (u128::MAX, 0),
        (u128::MAX, u128::MAX),
        (1 << 127, (1 << 127) - 1),
        (0x5555_5555_5555_5555_5555_5555_5555_5555, u128::MAX / 3 * 2),
    ];
    halves.extend((0..400).map(|_| {
        let r = |rng: &mut ChaCha8Rng| (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
        (r(&mut rng), r(&mut rng))
    }));
    let split: Vec<Limbs> = halves
        .iter()
        .map(|&(k1, k2)| [k1 as u64, (k1 >> 64) as u64, k2 as u64, (k2 >> 64) as u64])
        .collect();
    let mut input = record(26, split.len());
    input.extend(bytes_of(&split));
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), halves.len() * 80);
    let (mut nonzero, mut random_columns) = (0usize, 0usize);
    for (i, (&(k1, k2), j)) in halves.iter().zip(out.chunks(80)).enumerate() {
        // Digit l of a mask is its bit l + 31 (five little-endian words).
        let digit = |m: usize, l: usize| {
            let b = l + 31;
            let w = u32::from_le_bytes(j[m * 20 + b / 32 * 4..][..4].try_into().unwrap());
            (w >> (b % 32)) & 1 == 1
        };
        let u = |half: usize, l: usize| -> i32 {
            let (pos, neg) = (digit(2 * half, l), digit(2 * half + 1, l));
            assert!(!(pos && neg), "scalar {i}: column {l} both signs");
            pos as i32 - neg as i32
        };
        for (half, k) in [(0, k1), (1, k2)] {
            // Σ u_l·2^l over 129 digits, in i128 pieces: the positive and negative parts.
            let (mut pos, mut neg) = (0u128, 0u128);
            let mut top = 0i32;
            for l in 0..129 {
                match (u(half, l), l) {
                    (1, 128) => top += 1,
                    (-1, 128) => top -= 1,
                    (1, _) => pos |= 1 << l,
                    (-1, _) => neg |= 1 << l,
                    _ => {}
                }
            }
            // k = pos − neg + top·2^128, with k < 2^128.
            let (low, borrow) = pos.overflowing_sub(neg);
            assert_eq!(low, k, "scalar {i}, half {half}: digits do not recompose");
            assert_eq!(
                top - borrow as i32,
                0,
                "scalar {i}, half {half}: above 2^128"
            );
        }
        // Of any three consecutive columns one is zero (Solinas), which bounds the weight.
        let col = |l: usize| u(0, l) != 0 || u(1, l) != 0;
        for l in 0..127 {
            assert!(
                !(col(l) && col(l + 1) && col(l + 2)),
                "scalar {i}: columns {l}..{} all nonzero",
                l + 2
            );
        }
        if i >= 9 {
            nonzero += (0..129).filter(|&l| col(l)).count();
            random_columns += 129;
        }
    }
    let density = nonzero as f64 / random_columns as f64;
    assert!(
        (0.45..0.55).contains(&density),
        "nonzero columns {density:.3} of the random halves' joint sparse forms"
    );
}

/// h_c_kinds: every value canonical in place, and each non-zero one in its kind's list
/// (1, −1, 2, the rest as [j, j] terms), zeros in none; over several grid-stride rounds.
/// h_coset_scalars: a·b/(g^n − 1) canonical, written over a.
#[test]
fn c_kinds_and_coset_scalars_built_for_the_host_match_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0xc41d);
    let n = 1000usize;
    let two = Fr::from(2u64);
    let c: Vec<Fr> = (0..n)
        .map(|j| match j % 9 {
            0..=2 => Fr::ZERO,
            3 => Fr::ONE,
            4 => -Fr::ONE,
            5 => two,
            6 => Fr::from(j as u64 + 3),
            7 => -two,
            _ => Fr::random(&mut rng),
        })
        .collect();
    let raw: Vec<[u64; 4]> = c.iter().map(fr_raw).collect();
    let mut input = record(21, n);
    input.extend(bytes_of(&raw));
    let out = run(&exe, dir.path(), &input);
    let canon: Vec<Limbs> = out[..n * 32]
        .chunks(32)
        .map(|b| {
            std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
        })
        .collect();
    let want: Vec<Limbs> = c.iter().map(to_limbs).collect();
    assert_eq!(canon, want, "c canonical in place");
    let word = |at: usize| u32::from_le_bytes(out[at..at + 4].try_into().unwrap()) as usize;
    let counts: Vec<usize> = (0..4).map(|k| word(n * 32 + 4 * k)).collect();
    let mut at = n * 32 + 16;
    let mut list = |len: usize, step: usize| {
        let mut v: Vec<usize> = (0..len).map(|i| word(at + step * i)).collect();
        if step == 8 {
            // A term is [j, j]: base and scalar the same index.
            assert!((0..len).all(|i| word(at + 8 * i + 4) == v[i]));
        }
        at += step * len;
        v.sort_unstable();
        v
    };
    let of = |f: &dyn Fn(&Fr) -> bool| -> Vec<usize> { (0..n).filter(|&j| f(&c[j])).collect() };
    let special = |x: &Fr| *x == Fr::ONE || *x == -Fr::ONE || *x == two;
    assert_eq!(list(counts[0], 4), of(&|x| *x == Fr::ONE), "ones");
    assert_eq!(list(counts[1], 4), of(&|x| *x == -Fr::ONE), "minus ones");
    assert_eq!(list(counts[2], 4), of(&|x| *x == two), "twos");
    assert_eq!(
        list(counts[3], 8),
        of(&|x| !bool::from(x.is_zero()) && !special(x)),
        "other"
    );
    assert_eq!(at, out.len());

    // The coset scalars, k = (g^n − 1)^{-1} for a 2^20 domain as plain limbs.
    let k = Roots::new(20).z_on_coset().invert().unwrap();
    let a: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let b: Vec<Fr> = (0..n).map(|_| Fr::random(&mut rng)).collect();
    let mut input = record(22, n);
    input.extend(bytes_of(&[to_limbs(&k)]));
    input.extend(bytes_of(&a.iter().map(fr_raw).collect::<Vec<_>>()));
    input.extend(bytes_of(&b.iter().map(fr_raw).collect::<Vec<_>>()));
    let out = run(&exe, dir.path(), &input);
    let got: Vec<Limbs> = out
        .chunks(32)
        .map(|b| {
            std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
        })
        .collect();
    let want: Vec<Limbs> = a
        .iter()
        .zip(&b)
        .map(|(a, b)| to_limbs(&(*a * b * k)))
        .collect();
    assert_eq!(got, want, "a·b/(g^n − 1) canonical");
}

/// c_fold_chunks and c_fold_sum: L' = L − Cᵀ·LD' and the inputs' Q equal the CPU fold's,
/// over a random C with every kind of coefficient (1, −1, powers of two, small of either
/// sign, wide), inputs and aux, a variable without entries, an LD' point at infinity and
/// the ONE variable in 60 rows with wide coefficients (as the PoRep circuit's round
/// constants), its entries cut into one chunk each, a few a chunk, and the prover's chunks.
#[test]
fn c_fold_built_for_the_host_matches_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());
    let mut rng = ChaCha8Rng::seed_from_u64(0xf01d);
    let (rows, n_in, n_aux) = (300usize, 6usize, 200usize);
    let mut coeffs = vec![Fr::ONE, -Fr::ONE, Fr::from(2u64), Fr::from(1u64 << 40)];
    coeffs.extend([-Fr::from(12345u64), Fr::from(u64::MAX), -Fr::from(3u64)]);
    coeffs.extend((0..4).map(|_| Fr::random(&mut rng)));
    let mut entries = Vec::new();
    for row in 0..rows as u32 {
        for _ in 0..(row % 4) {
            let r = rng.next_u64();
            // Aux variable 7 never appears: its L' is L.
            let var = if r % 9 == 0 {
                ((r >> 8) % n_in as u64) as u32 | INPUT
            } else {
                (((r >> 8) % (n_aux as u64 - 1)) as u32 + 8) % n_aux as u32
            };
            let coeff = ((r >> 40) % coeffs.len() as u64) as u32;
            entries.push(Entry { row, var, coeff });
        }
        if row % 5 == 0 {
            let coeff = 7 + (rng.next_u64() % 4) as u32;
            entries.push(Entry {
                row,
                var: INPUT,
                coeff,
            });
        }
    }
    let c = R1csMatrix {
        rows,
        num_inputs: n_in,
        num_aux: n_aux,
        coeffs,
        entries,
    };
    let point = |rng: &mut ChaCha8Rng| G1Projective::random(rng).to_affine();
    let l: Vec<G1Affine> = (0..n_aux).map(|_| point(&mut rng)).collect();
    let mut ld: Vec<G1Affine> = (0..rows).map(|_| point(&mut rng)).collect();
    ld[5] = G1Affine::identity();
    let (want_l, want_q) = fold_c_into_l(&l, &c, &ld);

    let (start, rows_of, coeff_of) = c.by_var().columns();
    let (mags, negs) = c.signed_magnitudes();
    let vars = n_in + n_aux;
    for budget in [1, 1000, CHUNK_COST] {
        let (vstart, cstart) = fold_chunks(&start, &coeff_of, &mags, budget);
        let chunks = cstart.len() - 1;
        let mut input = record(23, vars);
        let hdr = [
            n_in as u32,
            rows as u32,
            rows_of.len() as u32,
            mags.len() as u32,
            chunks as u32,
        ];
        input.extend(bytes_of(&hdr));
        input.extend(bytes_of(&vstart));
        input.extend(bytes_of(&cstart));
        input.extend(bytes_of(&rows_of));
        input.extend(bytes_of(&coeff_of));
        input.extend(bytes_of(&mags));
        input.extend(bytes_of(&negs));
        input.extend(bytes_of(&l));
        input.extend(bytes_of(&ld));
        let got = affine_at(&run(&exe, dir.path(), &input), vars);
        assert_eq!(&got[..n_in], &want_q[..], "inputs' Q, budget {budget}");
        assert_eq!(&got[n_in..], &want_l[..], "L', budget {budget}");
        assert_eq!(
            got[n_in + 7],
            l[7],
            "a variable without entries keeps its L"
        );
        let one_chunks = vstart[1] - vstart[0];
        assert!(
            one_chunks > 1 || budget == CHUNK_COST,
            "ONE in {one_chunks} chunks"
        );
    }
}
