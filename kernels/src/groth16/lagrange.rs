//! H's bases in coset- and domain-Lagrange form: the CPU reference of the GPU prover's H in
//! Lagrange form (`cuda::lagrange`), which its device check compares with.
//!
//! The H term of a proof is Σ_{i<n−1} h_i·H_i with H_i = [τ^i·Z(τ)/δ]_1 and h the
//! coefficients of ((A·B − C) mod (x^n − g^n))/(g^n − 1) (`quotient`). With
//!
//!   P   = A·B mod (x^n − g^n), known by its values y_j = A(gω^j)·B(gω^j) on the coset:
//!         p_i = (1/n)·g^{−i}·Σ_j y_j·ω^{−ij}
//!   C   known by its values c_j on the domain: c_i = (1/n)·Σ_j c_j·ω^{−ij}
//!
//! the sum regroups by j:
//!
//!   Σ_{i<n−1} h_i·H_i = Σ_j y_j/(g^n − 1)·LC_j − Σ_j c_j·LD'_j
//!   LC_j  = (1/n)·Σ_{i<n−1} ω^{−ij}·g^{−i}·H_i
//!   LD'_j = (1/(n·(g^n − 1)))·Σ_{i<n−1} ω^{−ij}·H_i
//!
//! for any a, b, c (satisfied or not), the same group element as the coefficient form,
//! so the proof is the same bit for bit. It needs two transforms of A and B (to the coset)
//! instead of six, and an MSM over c's values, which real witnesses make sparse. LC and LD'
//! are two inverse transforms over G1, once per parameter file.

use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

use crate::ntt::{bit_reverse, coset_generator, powers, Roots};

/// (LC, LD') of `h` (n − 1 bases, n = 2^log_n; the missing H_{n−1} is taken as O: its
/// coefficient in the sum is h_{n−1}, which the coefficient form leaves out too).
pub fn lagrange_bases(h: &[G1Affine], log_n: u32) -> (Vec<G1Affine>, Vec<G1Affine>) {
    let roots = Roots::new(log_n);
    let n = roots.n;
    assert_eq!(h.len(), n - 1, "H has n − 1 bases");
    let g_inv = coset_generator().invert().unwrap();
    let z_inv = roots.z_on_coset().invert().unwrap();
    // v_i = (1/n)·g^{−i}·H_i, then LC = DFT_{ω^{−1}}(v); likewise LD' with 1/(n·Z_c).
    let scaled = |c: Fr, step: Fr| -> Vec<G1Projective> {
        let mut v: Vec<G1Projective> = powers(step, n)
            .par_iter()
            .zip(h.par_iter().chain(rayon::iter::once(&G1Affine::identity())))
            .map(|(p, b)| G1Projective::from(b) * (c * p))
            .collect();
        v[n - 1] = G1Projective::identity();
        v
    };
    let mut lc = scaled(roots.n_inv, g_inv);
    let mut ld = scaled(roots.n_inv * z_inv, Fr::ONE);
    dft_g1(&mut lc, roots.omega_inv);
    dft_g1(&mut ld, roots.omega_inv);
    (to_affine(&lc), to_affine(&ld))
}

/// X_k = Σ_j x_j·w^{jk} over G1 (natural order in and out): radix-2 decimation in
/// frequency, then the bit-reversal permutation.
pub fn dft_g1(x: &mut [G1Projective], w: Fr) {
    let n = x.len();
    assert!(n.is_power_of_two());
    let mut half = n / 2;
    let mut root = w;
    while half >= 1 {
        // Blocks of 2·half: (u, v) → (u + v, (u − v)·root^i).
        let tw = powers(root, half);
        x.par_chunks_mut(2 * half).for_each(|blk| {
            let (lo, hi) = blk.split_at_mut(half);
            for (i, (u, v)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let (a, b) = (*u, *v);
                *u = a + b;
                *v = if i == 0 { a - b } else { (a - b) * tw[i] };
            }
        });
        root = root.square();
        half /= 2;
    }
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = bit_reverse(i, bits);
        if i < j {
            x.swap(i, j);
        }
    }
}

pub(crate) fn to_affine(v: &[G1Projective]) -> Vec<G1Affine> {
    let mut out = vec![G1Affine::identity(); v.len()];
    G1Projective::batch_normalize(v, &mut out);
    out
}

/// Σ_j y_j·LC_j − Σ_j c_j·LD'_j with y_j = A(gω^j)·B(gω^j)/(g^n − 1) (a_coset, b_coset: A
/// and B on the coset) and c_j C's values on the domain: H's term of the proof.
pub fn h_sum(
    a_coset: &[Fr],
    b_coset: &[Fr],
    c: &[Fr],
    lc: &[G1Affine],
    ld: &[G1Affine],
) -> G1Projective {
    let n = a_coset.len();
    let z_inv = Roots::new(n.trailing_zeros())
        .z_on_coset()
        .invert()
        .unwrap();
    let y: Vec<Fr> = a_coset
        .iter()
        .zip(b_coset)
        .map(|(a, b)| *a * b * z_inv)
        .collect();
    plain_sum(&y, lc) - plain_sum(c, ld)
}

/// Σ s_i·b_i term by term (the references' sums: short, and plainly right).
pub(crate) fn plain_sum(s: &[Fr], b: &[G1Affine]) -> G1Projective {
    s.par_iter()
        .zip(b.par_iter())
        .map(|(s, p)| G1Projective::from(p) * s)
        .reduce(G1Projective::identity, |x, y| x + y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::quotient_in_place;
    use crate::ntt::{coset_ntt, intt, Domain};
    use group::Group;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The Lagrange-form sum equals Σ_{i<n−1} h_i·H_i with h from `quotient_in_place`, on
    /// random (unsatisfied) a, b, c and random bases, at several sizes.
    #[test]
    fn lagrange_sum_equals_the_coefficient_sum() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for log_n in [1u32, 2, 3, 5, 6] {
            let n = 1usize << log_n;
            let h_bases: Vec<G1Affine> = (0..n - 1)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let rand = |rng: &mut ChaCha8Rng| (0..n).map(|_| Fr::random(&mut *rng)).collect();
            let (a, b, c): (Vec<Fr>, Vec<Fr>, Vec<Fr>) =
                (rand(&mut rng), rand(&mut rng), rand(&mut rng));
            let domain = Domain::new(log_n);
            let (mut h, mut b2, mut c2) = (a.clone(), b.clone(), c.clone());
            quotient_in_place(&mut h, &mut b2, &mut c2, &domain);
            let want: G1Projective = h[..n - 1]
                .iter()
                .zip(&h_bases)
                .map(|(s, p)| G1Projective::from(p) * s)
                .sum();
            let on_coset = |v: &[Fr]| {
                let mut v = v.to_vec();
                intt(&mut v, &domain);
                coset_ntt(&mut v, &domain);
                v
            };
            let (lc, ld) = lagrange_bases(&h_bases, log_n);
            let got = h_sum(&on_coset(&a), &on_coset(&b), &c, &lc, &ld);
            assert_eq!(got.to_affine(), want.to_affine(), "n = {n}");
        }
    }

    /// dft_g1 against the definition on a small vector.
    #[test]
    fn g1_dft_matches_the_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 8;
        let x: Vec<G1Projective> = (0..n).map(|_| G1Projective::random(&mut rng)).collect();
        let w = Roots::new(3).omega;
        let mut got = x.clone();
        dft_g1(&mut got, w);
        for (k, g) in got.iter().enumerate() {
            let want: G1Projective = x
                .iter()
                .enumerate()
                .map(|(j, p)| p * w.pow_vartime([(j * k) as u64]))
                .sum();
            assert_eq!(g.to_affine(), want.to_affine(), "k = {k}");
        }
    }
}
