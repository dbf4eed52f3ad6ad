//! H in Lagrange form with C folded into L: the CPU reference of a prover that needs
//! neither C's values nor LD' for a partition.
//!
//! `lagrange` gives Σ_{i<n−1} h_i·H_i = Σ_j y_j·LC_j − Σ_j c_j·LD'_j with
//! y_j = A(gω^j)·B(gω^j)/(g^n − 1). C's values are c = C·z for the assignment
//! z = (1, inputs…, aux…), so Σ_j c_j·LD'_j = Σ_k z_k·Q_k with Q = Cᵀ·LD'
//! (`R1csMatrix::fold`), and the proof's H and L terms together are
//!
//!   ΣH + ΣL = Σ_j y_j·LC_j + Σ_{aux k} z_k·(L_k − Q_k) − Σ_{inputs k} z_k·Q_k
//!
//! L' = L − Q_aux has L's length and takes L's scalars (the aux assignment, mostly 0 and
//! 1), so C's part costs nothing a partition; the inputs' part is a few hundred terms.
//! LC, L' and Q_inputs are made once per parameter file and circuit; C is the circuit's
//! structure (a blank circuit records it), the same for every partition of a sector size.

use blstrs::{G1Affine, G1Projective, Scalar as Fr};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Curve;
use rayon::prelude::*;

use super::lagrange::{lagrange_bases, plain_sum, to_affine};
use crate::msm::scalars::Limbs;
use crate::msm::{msm, Term};
use crate::ntt::{coset_ntt, intt, Domain};
use crate::witness::matrix::R1csMatrix;

/// The bases of the folded form: LC (n of them), L' = L − Q_aux (one an aux variable) and
/// Q_inputs (one an input, ONE included).
pub struct FoldedBases {
    pub log_n: u32,
    pub lc: Vec<G1Affine>,
    pub l: Vec<G1Affine>,
    pub q_inputs: Vec<G1Affine>,
}

impl FoldedBases {
    /// From the proving key's H (n − 1 points) and L, and the circuit's C.
    pub fn new(h: &[G1Affine], l: &[G1Affine], c: &R1csMatrix, log_n: u32) -> FoldedBases {
        assert_eq!(
            l.len(),
            c.num_aux,
            "L has one point an aux variable of C's circuit"
        );
        let (lc, ld) = lagrange_bases(h, log_n);
        let (q_in, q_aux) = c.fold(&ld);
        let l_folded: Vec<G1Projective> = l
            .iter()
            .zip(&q_aux)
            .map(|(l, q)| G1Projective::from(l) - q)
            .collect();
        FoldedBases {
            log_n,
            lc,
            l: to_affine(&l_folded),
            q_inputs: to_affine(&q_in),
        }
    }

    /// ΣH + ΣL of one partition from A's and B's values on the domain (n each) and the
    /// assignment (inputs with ONE first, aux).
    pub fn h_plus_l(&self, a: &[Fr], b: &[Fr], inputs: &[Fr], aux: &[Fr]) -> G1Projective {
        let domain = Domain::new(self.log_n);
        let on_coset = |v: &[Fr]| {
            let mut v = v.to_vec();
            intt(&mut v, &domain);
            coset_ntt(&mut v, &domain);
            v
        };
        let z_inv = domain.z_on_coset().invert().unwrap();
        // y_j = A(gω^j)·B(gω^j)/(g^n − 1)
        let y: Vec<Fr> = on_coset(a)
            .iter()
            .zip(on_coset(b))
            .map(|(a, b)| *a * b * z_inv)
            .collect();
        plain_sum(&y, &self.lc) + plain_sum(aux, &self.l) - plain_sum(inputs, &self.q_inputs)
    }
}

/// (L', Q_inputs): L'_k = L_k − Q_k over the aux variables and Q over the inputs, with
/// Q = Cᵀ·LD'. L' is made a chunk at a time (at 32 GiB L and LD' are 12 GiB each on the
/// host; the projective Q of every variable at once would be 18 GiB more).
pub fn fold_c_into_l(
    l: &[G1Affine],
    c: &R1csMatrix,
    ld: &[G1Affine],
) -> (Vec<G1Affine>, Vec<G1Affine>) {
    assert_eq!(
        l.len(),
        c.num_aux,
        "L has one point an aux variable of C's circuit"
    );
    const CHUNK: usize = 1 << 16;
    let by_var = c.by_var();
    let q_in: Vec<G1Projective> = (0..c.num_inputs)
        .into_par_iter()
        .map(|k| by_var.q(k, ld))
        .collect();
    let mut l_folded = vec![G1Affine::identity(); l.len()];
    l_folded
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(i, out)| {
            let first = i * CHUNK;
            let v: Vec<G1Projective> = (first..first + out.len())
                .map(|k| G1Projective::from(l[k]) - by_var.q(c.num_inputs + k, ld))
                .collect();
            G1Projective::batch_normalize(&v, out);
        });
    (l_folded, to_affine(&q_in))
}

/// Σ_in z_k·Q_k: the inputs' part of C folded into L, from the canonical scalars (inputs
/// first, ONE included, then aux). Errs when there are fewer scalars than inputs.
pub fn inputs_q_sum(q_inputs: &[G1Affine], scalars: &[Limbs]) -> Result<G1Projective, String> {
    if scalars.len() < q_inputs.len() {
        return Err(format!(
            "{} scalars for the {} inputs C was folded with",
            scalars.len(),
            q_inputs.len()
        ));
    }
    // Pippenger skips no base: leave out the inputs whose Q is O (not in C).
    let terms: Vec<Term> = (0..q_inputs.len() as u32)
        .filter(|&k| !bool::from(q_inputs[k as usize].is_identity()))
        .map(|k| [k, k])
        .collect();
    Ok(msm(q_inputs, scalars, &terms))
}
