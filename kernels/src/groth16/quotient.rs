//! H(x) = (A(x)·B(x) − C(x)) / Z(x), Z(x) = x^n − 1, from the evaluations of A, B, C on
//! the domain H = ⟨ω⟩ of size n.
//!
//! A·B − C vanishes on H, so it cannot be divided there; on the coset gH, Z is the non-zero
//! constant g^n − 1. So: interpolate A, B, C (inverse NTT), evaluate them on gH (scale
//! coefficient i by g^i, NTT), combine pointwise and divide by g^n − 1, interpolate back
//! from gH (inverse NTT, scale coefficient i by g^−i).
//!
//! Transforms alternate DIF (natural → bit-reversed) and DIT (bit-reversed → natural) so
//! only the final H needs one bit-reversal pass.

use blstrs::Scalar as Fr;
use ff::Field;
use rayon::prelude::*;

use crate::ntt::{self, coset_generator, Domain};

/// Replaces `a` with the n coefficients of H (natural order; coefficient n − 1 is zero for a
/// satisfied circuit). `b` and `c` are used as scratch.
pub fn quotient_in_place(a: &mut [Fr], b: &mut [Fr], c: &mut [Fr], domain: &Domain) {
    assert!(a.len() == domain.n && b.len() == domain.n && c.len() == domain.n);
    let g = coset_generator();
    let (tw, tw_inv) = domain.twiddles();
    let to_coset = |v: &mut [Fr]| {
        // n·coefficients, bit-reversed.
        ntt::dif(v, tw_inv);
        // coefficient i · n^{-1} · g^i, still bit-reversed.
        ntt::scale_by_powers_bitrev(v, g, domain.n_inv);
        // evaluations at g·ω^j, natural order.
        ntt::dit(v, tw);
    };
    to_coset(a);
    to_coset(b);
    to_coset(c);
    // A·B − C on gH. The division by Z(g·ω^j) = g^n − 1, the same for every j, is linear
    // and waits for the scaling below, which multiplies every element anyway.
    a.par_iter_mut()
        .zip(b.par_iter())
        .zip(c.par_iter())
        .with_min_len(1 << 12)
        .for_each(|((a, b), c)| *a = *a * b - c);
    let z_inv = domain.z_on_coset().invert().unwrap();
    // Back to coefficients: n·(AB − C)_i·g^i bit-reversed, then scale by n^{-1}·Z^{-1}·g^{-i}
    // (giving h_i), then order.
    ntt::dif(a, tw_inv);
    ntt::scale_by_powers_bitrev(a, g.invert().unwrap(), domain.n_inv * z_inv);
    ntt::bit_reverse_permute(a);
}
