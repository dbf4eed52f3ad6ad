//! The randomized combination of the MSM results into (A, B, C).

use blstrs::{G1Projective, G2Projective, Scalar as Fr};
use group::Curve;

use super::Proof;
use crate::srs::VerifyingKey;

/// The MSM results of one partition.
#[derive(Clone, Copy, Debug)]
pub struct MsmResults {
    /// Σ h_i·H_i
    pub h: G1Projective,
    /// Σ aux_j·L_j
    pub l: G1Projective,
    /// Σ z_j·A_j over inputs and A-dense aux (z the full assignment)
    pub a: G1Projective,
    /// Σ z_j·B_j in G1 over B-dense inputs and aux
    pub b_g1: G1Projective,
    /// Σ z_j·B_j in G2
    pub b_g2: G2Projective,
}

/// Combines the MSM results with the blinding factors r, s exactly as bellperson does:
///
///   A = α + ΣA + r·δ                                    (G1)
///   B = β + ΣB + s·δ                                    (G2)
///   C = s·ΣA + r·ΣB_G1 + r·s·δ + s·α + r·β + ΣH + ΣL      (G1)
///
/// C expands to s·A + r·B_G1 − r·s·δ + ΣH + ΣL with A and B_G1 the final A and B in G1,
/// the form in the Groth16 paper.
pub fn combine(vk: &VerifyingKey, m: &MsmResults, r: Fr, s: Fr) -> Proof {
    let a = vk.alpha_g1 + m.a + vk.delta_g1 * r;
    let b = vk.beta_g2 + m.b_g2 + vk.delta_g2 * s;
    let c =
        m.a * s + m.b_g1 * r + vk.delta_g1 * (r * s) + vk.alpha_g1 * s + vk.beta_g1 * r + m.h + m.l;
    Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    }
}
