//! Number-theoretic transforms over Fr (BLS12-381 scalar field), our own radix-2.

mod domain;
mod radix2;
pub mod shoup;

pub use domain::{coset_generator, powers, Domain, Roots};
pub use radix2::{bit_reverse, bit_reverse_permute, dif, dit, scale_by_powers_bitrev};

use blstrs::Scalar as Fr;
use rayon::prelude::*;

/// Evaluations at ω^i (natural order) from coefficients (natural order).
pub fn ntt(data: &mut [Fr], domain: &Domain) {
    assert_eq!(data.len(), domain.n);
    dif(data, &domain.twiddles);
    bit_reverse_permute(data);
}

/// Coefficients (natural order) from evaluations at ω^i (natural order).
pub fn intt(data: &mut [Fr], domain: &Domain) {
    assert_eq!(data.len(), domain.n);
    dif(data, &domain.twiddles_inv);
    bit_reverse_permute(data);
    let n_inv = domain.n_inv;
    data.par_iter_mut().for_each(|v| *v *= n_inv);
}

/// Coefficients (natural) → evaluations on the coset g·H (natural), g = `coset_generator()`.
pub fn coset_ntt(data: &mut [Fr], domain: &Domain) {
    assert_eq!(data.len(), domain.n);
    let g = coset_generator();
    data.par_iter_mut()
        .zip(powers(g, domain.n).par_iter())
        .for_each(|(v, p)| *v *= p);
    ntt(data, domain);
}
