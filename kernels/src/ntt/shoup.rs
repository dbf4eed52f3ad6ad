//! Twiddles for Shoup's product by a constant (`kernels/cuda/shoup.cuh`): each w beside
//! w' = floor(w·2^288/r), so the device finds q ≈ x·w/r from the high half of x·w' and
//! x·w mod r as x·w − q·r, cheaper than a Montgomery product (the formulas and bounds are
//! in shoup.cuh).

use blstrs::Scalar as Fr;

use crate::msm::scalars::{self, max_scalar, to_limbs};

/// One table entry as the device reads it (`struct fr_tw_t`): w's canonical limbs, then w',
/// then padding to 80 bytes (five 16-byte loads).
pub type ShoupTwiddle = [u32; 20];

/// Bits the quotient is scaled by: 2^288, nine limbs.
const SHIFT: usize = 288;

/// floor(w·2^288/r) for w < r, by binary long division: the remainder stays below r, so it
/// fits four limbs before each doubling and five after.
pub fn quotient(w: &Fr) -> [u32; 9] {
    let r = scalars::add(&max_scalar(), &scalars::ONE);
    let w = to_limbs(w);
    let mut rem = [0u64; 5];
    let mut q = [0u32; 9];
    for bit in (0..256 + SHIFT).rev() {
        let next = if bit >= SHIFT {
            let b = bit - SHIFT;
            (w[b / 64] >> (b % 64)) & 1
        } else {
            0
        };
        // rem = 2·rem + next bit
        for i in (1..5).rev() {
            rem[i] = (rem[i] << 1) | (rem[i - 1] >> 63);
        }
        rem[0] = (rem[0] << 1) | next;
        if at_least(&rem, &r) {
            let mut borrow = 0u64;
            for i in 0..5 {
                let ri = if i < 4 { r[i] } else { 0 };
                let (d1, b1) = rem[i].overflowing_sub(ri);
                let (d2, b2) = d1.overflowing_sub(borrow);
                rem[i] = d2;
                borrow = (b1 | b2) as u64;
            }
            // Above 2^288 the numerator is w < r: no quotient bit can be set there.
            debug_assert!(bit < SHIFT);
            q[bit / 32] |= 1 << (bit % 32);
        }
    }
    q
}

fn at_least(a: &[u64; 5], r: &[u64; 4]) -> bool {
    if a[4] != 0 {
        return true;
    }
    for i in (0..4).rev() {
        if a[i] != r[i] {
            return a[i] > r[i];
        }
    }
    true
}

/// The device's table entry for twiddle w.
pub fn twiddle(w: &Fr) -> ShoupTwiddle {
    let mut t = [0u32; 20];
    for (i, l) in to_limbs(w).iter().enumerate() {
        t[2 * i] = *l as u32;
        t[2 * i + 1] = (*l >> 32) as u32;
    }
    t[8..17].copy_from_slice(&quotient(w));
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::{Field, PrimeField};
    use num_bigint::BigUint;
    use rand_chacha::rand_core::SeedableRng;

    fn big(w: &Fr) -> BigUint {
        BigUint::from_bytes_le(w.to_repr().as_ref())
    }

    fn big_limbs(l: &[u32]) -> BigUint {
        BigUint::from_slice(l)
    }

    #[test]
    fn quotients_match_big_integer_division() {
        let r = big(&-Fr::ONE) + 1u32;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(288);
        let mut ws = vec![Fr::ZERO, Fr::ONE, -Fr::ONE, Fr::from(2u64), -Fr::from(2u64)];
        ws.extend((0..500).map(|_| Fr::random(&mut rng)));
        for w in ws {
            let t = twiddle(&w);
            assert_eq!(big_limbs(&t[..8]), big(&w), "w's limbs");
            let want = (big(&w) << SHIFT) / &r;
            assert_eq!(big_limbs(&t[8..17]), want, "floor(w·2^288/r) for {w:?}");
            assert_eq!(&t[17..], &[0, 0, 0]);
        }
    }
}
