//! The field products built for the host (cuda_on_host.rs): fp_mul, fp_sqr and
//! fp_mul_sub_mul over Fp, fr_mul, fr_mul2, the Karatsuba product and the squaring over Fr,
//! the unreduced difference as a product's operand, and the Shoup twiddle products, against
//! blstrs.

use blstrs::{Fp, Scalar as Fr};
use cuzk_kernels::cuda::layout::{bytes_of, fr_raw};
use cuzk_kernels::msm::scalars::{self, max_scalar};
use ff::Field;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{build, record, run};

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
