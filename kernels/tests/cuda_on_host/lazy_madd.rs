//! The lazily reduced Fp of the bucket accumulation's madd, built for the host
//! (cuda_on_host.rs): the operations alone, then the madd on unreduced accumulators.

use blstrs::{Fp, G1Affine, G1Projective};
use cuzk_kernels::cuda::layout::bytes_of;
use ff::Field;
use group::Group;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{build, record, run, xyzz1_at};

/// The lazily reduced Fp of the split accumulator's madd (bls12_381.cuh `fp_mul_lz`):
/// operands anywhere below 2p, the products, sums and differences below 2p and congruent
/// to blstrs' results, `fp_canon` below p, `fp_is_zero_lz` true for 0 and p. Then the
/// madd itself (`xyzz_madd_sh`) on accumulators handed in unreduced (a coordinate plus p),
/// including the same point (doubling) and its negation (infinity), where the difference P
/// can come out as p rather than 0: the sum must equal blstrs' and leave reduced below p.
/// Fails with `fp_is_zero_lz` testing 0 alone, without the reduction in `xyzz_sh_get`, and
/// with `fp_sub_lz_4p` adding p instead of 2p.
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
        (BigUint::from(0u32), &p * 2u32 - 1u32),
        (&p * 2u32 - 1u32, BigUint::from(0u32)),
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
    const REC: usize = 9 * 48 + 4;
    assert_eq!(out.len(), pairs.len() * REC);
    for (i, (a, b)) in pairs.iter().enumerate() {
        let rec = &out[i * REC..(i + 1) * REC];
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
        // Q − X3 as a − b + 2p: below 4p, and the Y3 product taking it below 2p.
        assert!(got(7) < &p * 4u32, "fp_sub_lz_4p not below 4p (pair {i})");
        assert_eq!(fp_of(&got(7)), fa - fb, "fp_sub_lz_4p (pair {i})");
        assert!(
            got(8) < &p * 2u32,
            "a·(a − b + 2p) − b² not below 2p (pair {i})"
        );
        assert_eq!(
            fp_of(&got(8)),
            fa * (fa - fb) - fb.square(),
            "a·(a − b + 2p) − b² (pair {i})"
        );
        let zero = u32::from_le_bytes(rec[9 * 48..REC].try_into().unwrap()) != 0;
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
        assert_eq!(xyzz1_at(rec), *want, "madd, case {i} (base {base:?})");
        same_x += (i % 3 != 0) as usize;
    }
    assert!(same_x >= 400);
}
