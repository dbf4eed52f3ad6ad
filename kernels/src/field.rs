//! Field addition and subtraction inlined in Rust, on blstrs' own representation.
//!
//! blstrs adds and subtracts through FFI calls into constant-time C (about 17 ns each on our
//! machines, nearly half a multiplication). An NTT butterfly does an addition, a
//! subtraction and one multiplication, and a batch-affine point addition six subtractions
//! beside its six multiplications, so those calls were a large share of both. Addition is
//! the same on Montgomery limbs as on plain ones, so these work on the stored limbs
//! directly. They are variable time: the values are the witness's, which the prover holds
//! anyway, and no other party observes this machine's timing.

use blstrs::{Fp, Fp2, Scalar as Fr};

/// r (the order of Fr), little-endian limbs.
const FR_MODULUS: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

/// p (the order of Fp), little-endian limbs.
const FP_MODULUS: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];

#[inline(always)]
fn sub_limbs<const N: usize>(a: [u64; N], b: [u64; N]) -> ([u64; N], bool) {
    let mut out = [0u64; N];
    let mut borrow = false;
    for i in 0..N {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        out[i] = d2;
        borrow = b1 | b2;
    }
    (out, borrow)
}

#[inline(always)]
fn add_limbs<const N: usize>(a: [u64; N], b: [u64; N]) -> [u64; N] {
    let mut out = [0u64; N];
    let mut carry = false;
    for i in 0..N {
        let (s1, c1) = a[i].overflowing_add(b[i]);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        out[i] = s2;
        carry = c1 | c2;
    }
    // Both moduli are below 2^(64N − 1), so a sum of reduced values never carries out.
    debug_assert!(!carry);
    out
}

/// a + b mod m for a, b < m.
#[inline(always)]
fn add_mod<const N: usize>(a: [u64; N], b: [u64; N], m: [u64; N]) -> [u64; N] {
    let s = add_limbs(a, b);
    let (t, borrow) = sub_limbs(s, m);
    if borrow {
        s
    } else {
        t
    }
}

/// a − b mod m for a, b < m.
#[inline(always)]
fn sub_mod<const N: usize>(a: [u64; N], b: [u64; N], m: [u64; N]) -> [u64; N] {
    let (d, borrow) = sub_limbs(a, b);
    if borrow {
        add_limbs(d, m)
    } else {
        d
    }
}

/// Reinterprets a blstrs field element as its limbs, or limbs as the element.
///
/// Safety contract (every caller below meets it): blstrs' Scalar, Fp and Fp2 are
/// #[repr(transparent)] over blst_fr ([u64; 4]), blst_fp ([u64; 6]) and blst_fp2
/// ([blst_fp; 2]), all #[repr(C)] (blstrs is pinned at =0.7.1); every bit pattern is a valid
/// array of u64, and the values written back are reduced, as blstrs requires.
#[inline(always)]
unsafe fn cast<A, B>(a: &A) -> B {
    const { assert!(std::mem::size_of::<A>() == std::mem::size_of::<B>()) };
    // SAFETY: sizes are equal (checked at compile time) and the layouts are as above.
    unsafe { std::mem::transmute_copy(a) }
}

/// a + b in Fr.
#[inline(always)]
pub fn fr_add(a: Fr, b: Fr) -> Fr {
    // SAFETY: Fr and [u64; 4] share a layout (see `cast`); the sum is reduced.
    unsafe { cast(&add_mod::<4>(cast(&a), cast(&b), FR_MODULUS)) }
}

/// a − b in Fr.
#[inline(always)]
pub fn fr_sub(a: Fr, b: Fr) -> Fr {
    // SAFETY: Fr and [u64; 4] share a layout (see `cast`); the difference is reduced.
    unsafe { cast(&sub_mod::<4>(cast(&a), cast(&b), FR_MODULUS)) }
}

/// a − b in Fp.
#[inline(always)]
pub fn fp_sub(a: Fp, b: Fp) -> Fp {
    // SAFETY: Fp and [u64; 6] share a layout (see `cast`); the difference is reduced.
    unsafe { cast(&sub_mod::<6>(cast(&a), cast(&b), FP_MODULUS)) }
}

/// a − b in Fp2 = Fp[u]/(u² + 1): component-wise.
#[inline(always)]
pub fn fp2_sub(a: Fp2, b: Fp2) -> Fp2 {
    // SAFETY: Fp2 and [[u64; 6]; 2] share a layout (see `cast`); both components reduced.
    unsafe {
        let (a, b): ([[u64; 6]; 2], [[u64; 6]; 2]) = (cast(&a), cast(&b));
        cast(&[
            sub_mod::<6>(a[0], b[0], FP_MODULUS),
            sub_mod::<6>(a[1], b[1], FP_MODULUS),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::{Field, PrimeField};
    use rand::SeedableRng;

    #[test]
    fn moduli_are_frs_and_fps() {
        // −1 in canonical form is r − 1 (resp. p − 1).
        let mut r_minus_1 = FR_MODULUS;
        r_minus_1[0] -= 1;
        let bytes: Vec<u8> = r_minus_1.iter().flat_map(|l| l.to_le_bytes()).collect();
        assert_eq!((-Fr::ONE).to_repr().as_ref(), &bytes[..]);
        let mut p_minus_1 = FP_MODULUS;
        p_minus_1[0] -= 1;
        let be: Vec<u8> = p_minus_1
            .iter()
            .rev()
            .flat_map(|l| l.to_be_bytes())
            .collect();
        assert_eq!(&(-Fp::ONE).to_bytes_be()[..], &be[..]);
    }

    #[test]
    fn fr_agrees_with_blstrs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut vals: Vec<Fr> = (0..2000).map(|_| Fr::random(&mut rng)).collect();
        vals.extend([Fr::ZERO, Fr::ONE, -Fr::ONE, -Fr::from(2u64), Fr::from(2u64)]);
        for a in &vals {
            for b in vals.iter().step_by(97).chain(vals[vals.len() - 5..].iter()) {
                assert_eq!(fr_add(*a, *b), *a + b);
                assert_eq!(fr_sub(*a, *b), *a - b);
            }
        }
    }

    #[test]
    fn fp_and_fp2_agree_with_blstrs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let mut vals: Vec<Fp> = (0..500).map(|_| Fp::random(&mut rng)).collect();
        vals.extend([Fp::ZERO, Fp::ONE, -Fp::ONE]);
        for a in &vals {
            for b in vals.iter().step_by(31).chain(vals[vals.len() - 3..].iter()) {
                assert_eq!(fp_sub(*a, *b), *a - b);
            }
        }
        for _ in 0..500 {
            let (a, b) = (Fp2::random(&mut rng), Fp2::random(&mut rng));
            assert_eq!(fp2_sub(a, b), a - b);
            assert_eq!(fp2_sub(a, a), Fp2::ZERO);
        }
    }
}
