//! Scalars in the form the MSM reads: canonical (not Montgomery) little-endian u64 limbs.

use blstrs::Scalar as Fr;
use ff::PrimeField;
use rayon::prelude::*;

/// A canonical scalar, limbs little-endian.
pub type Limbs = [u64; 4];

pub const ZERO: Limbs = [0; 4];
pub const ONE: Limbs = [1, 0, 0, 0];

/// Leaves Montgomery form (one multiplication per scalar).
#[inline]
pub fn to_limbs(s: &Fr) -> Limbs {
    let bytes = s.to_repr();
    let b = bytes.as_ref();
    std::array::from_fn(|i| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()))
}

/// Converts a slice of field elements to canonical limbs, in parallel.
pub fn to_limbs_vec(s: &[Fr]) -> Vec<Limbs> {
    s.par_iter().with_min_len(1 << 12).map(to_limbs).collect()
}

/// r − 1, the largest canonical scalar.
pub fn max_scalar() -> Limbs {
    to_limbs(&-Fr::from(1u64))
}

/// a + b over 4 limbs; the caller guarantees no carry out of the top limb.
#[inline]
pub fn add(a: &Limbs, b: &Limbs) -> Limbs {
    let mut out = [0u64; 4];
    let mut carry = 0u64;
    for i in 0..4 {
        let (s1, c1) = a[i].overflowing_add(b[i]);
        let (s2, c2) = s1.overflowing_add(carry);
        out[i] = s2;
        carry = (c1 | c2) as u64;
    }
    debug_assert_eq!(carry, 0);
    out
}

/// Bits [start, start + len) of `a` (len ≤ 32), zero above bit 255.
#[inline]
pub fn bits(a: &Limbs, start: usize, len: usize) -> u32 {
    let limb = start / 64;
    if limb >= 4 {
        return 0;
    }
    let shift = start % 64;
    let mut v = a[limb] >> shift;
    if shift + len > 64 && limb + 1 < 4 {
        v |= a[limb + 1] << (64 - shift);
    }
    (v & ((1u64 << len) - 1)) as u32
}
