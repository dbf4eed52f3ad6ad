//! H(x) = (A(x)·B(x) − C(x)) / Z(x), Z(x) = x^n − 1, from the evaluations of A, B, C on
//! the domain H = ⟨ω⟩ of size n.
//!
//! A·B − C vanishes on H, so it cannot be divided there; on the coset gH, Z is the non-zero
//! constant g^n − 1. The textbook way interpolates A, B, C, evaluates all three on gH,
//! combines pointwise, divides by g^n − 1 and interpolates back from gH: seven transforms.
//! Six do, because C enters linearly:
//!
//!   P = the polynomial of degree < n with P(g·ω^j) = A(g·ω^j)·B(g·ω^j) for every j
//!     = A·B mod (x^n − g^n)
//!     = (H·(x^n − 1) + C) mod (x^n − g^n)      (A·B − C = H·Z)
//!     = H·(g^n − 1) + C                         (x^n ≡ g^n; deg H, deg C < n)
//!   so  h_i = (p_i − c_i) / (g^n − 1).
//!
//! C is needed only as coefficients (one inverse transform, no coset evaluation). The same
//! identity holds for any a, b, c, divisible or not: both ways compute
//! ((A·B − C) mod (x^n − g^n)) / (g^n − 1), so the result equals the seven-transform one
//! (bellperson's) for every input, a satisfied circuit or not.
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
    // n·c_i, bit-reversed: C's coefficients, in the order P's come out below.
    ntt::dif(c, tw_inv);
    // A·B on gH.
    a.par_iter_mut()
        .zip(b.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(a, b)| *a *= b);
    // k = n^{-1}·(g^n − 1)^{-1}: n·p_i·g^i bit-reversed, scaled by k·g^{-i} → p_i/(g^n − 1);
    // minus k·(n·c_i) = c_i/(g^n − 1) at the same position → h_i; then order.
    let k = domain.n_inv * domain.z_on_coset().invert().unwrap();
    ntt::dif(a, tw_inv);
    ntt::scale_by_powers_bitrev(a, g.invert().unwrap(), k);
    a.par_iter_mut()
        .zip(c.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(a, c)| *a -= *c * k);
    ntt::bit_reverse_permute(a);
}
