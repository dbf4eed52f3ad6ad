//! MSMs against Σ k_i·P_i computed point by point.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::msm::{self, scalars, AffinePoint, MsmPlan, Query, WindowPlan};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn naive<A: AffinePoint>(bases: &[A], ks: &[Fr]) -> A::Projective
where
    A::Projective: std::ops::Mul<Fr, Output = A::Projective>,
{
    bases
        .iter()
        .zip(ks)
        .fold(A::Projective::identity(), |acc, (p, k)| {
            acc + p.to_curve() * *k
        })
}

fn random_g1(n: usize, rng: &mut ChaCha8Rng) -> Vec<G1Affine> {
    // Distinct multiples of one random point: cheap to make, and all different.
    let p = G1Projective::random(&mut *rng);
    let mut out = vec![G1Affine::identity(); n];
    let proj: Vec<G1Projective> = (0..n).map(|i| p * Fr::from(i as u64 + 1)).collect();
    G1Projective::batch_normalize(&proj, &mut out);
    out
}

/// Scalars mixing the cases the split treats apart: 0, 1, small, r − 1, random.
fn mixed_scalars(n: usize, rng: &mut ChaCha8Rng) -> Vec<Fr> {
    (0..n)
        .map(|i| match i % 7 {
            0 => Fr::ZERO,
            1 => Fr::ONE,
            2 => Fr::from(rng.gen_range(2..1000u64)),
            3 => -Fr::ONE,
            _ => Fr::random(&mut *rng),
        })
        .collect()
}

fn dense_terms(n: usize) -> Vec<msm::Term> {
    (0..n as u32).map(|i| [i, i]).collect()
}

#[test]
fn pippenger_matches_naive_for_every_window_size() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let bases = random_g1(3000, &mut rng);
    let ks = mixed_scalars(bases.len(), &mut rng);
    let limbs = scalars::to_limbs_vec(&ks);
    let expect = naive(&bases, &ks);
    for c in [2, 3, 5, 8, 11, 12, 13, 16] {
        let got = msm::msm_with(
            &bases,
            &limbs,
            &dense_terms(bases.len()),
            &WindowPlan::new(c),
        );
        assert_eq!(got.to_affine(), expect.to_affine(), "c = {c}");
    }
}

#[test]
fn pippenger_small_sizes() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for n in [0, 1, 2, 3, 17, 64, 200] {
        let bases = random_g1(n, &mut rng);
        let ks = mixed_scalars(n, &mut rng);
        let got = msm::msm(&bases, &scalars::to_limbs_vec(&ks), &dense_terms(n));
        assert_eq!(got, naive(&bases, &ks), "n = {n}");
    }
}

#[test]
fn repeated_and_opposite_points_in_one_bucket() {
    // The same base many times with the same digits forces doublings inside a batch, and
    // k and −k on one base forces P + (−P) in a bucket.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let p = random_g1(1, &mut rng)[0];
    let k = Fr::random(&mut rng);
    let bases = vec![p; 4000];
    let ks: Vec<Fr> = (0..4000).map(|i| if i % 3 == 0 { -k } else { k }).collect();
    let limbs = scalars::to_limbs_vec(&ks);
    for c in [11, 14] {
        let got = msm::msm_with(&bases, &limbs, &dense_terms(4000), &WindowPlan::new(c));
        assert_eq!(got, naive(&bases, &ks), "c = {c}");
    }
}

#[test]
fn batch_sum_matches_naive() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let bases = random_g1(20000, &mut rng);
    // Every index twice, so pairs of equal points meet in the tree.
    let idx: Vec<u32> = (0..20000u32).chain(0..20000u32).collect();
    let expect = bases
        .iter()
        .fold(G1Projective::identity(), |a, p| a + p)
        .double();
    assert_eq!(msm::sum_indexed(&bases, &idx), expect);
    assert_eq!(
        msm::sum_indexed::<G1Affine>(&bases, &[]),
        G1Projective::identity()
    );
}

#[test]
fn plan_with_density_pairs_bases_with_set_bits() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 70_000; // more than one classification chunk
    let ks = mixed_scalars(n, &mut rng);
    let density: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.gen()).collect();
    let used: Vec<usize> = (0..n)
        .filter(|&i| (density[i / 64] >> (i % 64)) & 1 == 1)
        .collect();
    let bases = random_g1(5 + used.len(), &mut rng);
    let limbs = scalars::to_limbs_vec(&ks);
    // Five leading bases belong to another run (as inputs precede aux in the SRS).
    let plan = MsmPlan::build(&[Query {
        scalars: &limbs,
        scalar_start: 0,
        base_start: 5,
        density: Some(&density),
    }]);
    assert_eq!(plan.ones.len() + plan.terms.len() + plan.zeros, used.len());
    let expect = used
        .iter()
        .enumerate()
        .fold(G1Projective::identity(), |a, (j, &i)| {
            a + bases[5 + j] * ks[i]
        });
    assert_eq!(plan.execute(&bases, &limbs), expect);
}

#[test]
fn g2_msm_and_batch_sum() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let p = G2Projective::random(&mut rng);
    let proj: Vec<G2Projective> = (0..2500).map(|i| p * Fr::from(i as u64 + 3)).collect();
    let mut bases = vec![G2Affine::identity(); proj.len()];
    G2Projective::batch_normalize(&proj, &mut bases);
    let ks = mixed_scalars(bases.len(), &mut rng);
    let limbs = scalars::to_limbs_vec(&ks);
    let plan = MsmPlan::build(&[Query {
        scalars: &limbs,
        scalar_start: 0,
        base_start: 0,
        density: None,
    }]);
    assert_eq!(plan.execute(&bases, &limbs), naive(&bases, &ks));
    let got = msm::msm_with(
        &bases,
        &limbs,
        &dense_terms(bases.len()),
        &WindowPlan::new(12),
    );
    assert_eq!(got, naive(&bases, &ks));
}
