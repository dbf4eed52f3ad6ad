//! A recorded R1CS in the form the device evaluates a = A·z and b = B·z from
//! (kernels/cuda/r1cs.cu), and that evaluation on the CPU limb for limb: the reference the
//! device is checked against at sizes where synthesis cannot run (a domain-sized layout of
//! a small recording's blocks, random z).
//!
//! Why on the device: synthesis from a recorded R1CS spends ~1/5 of a partition's CPU time
//! on a, b and their check (docs/kernels.md), and a and b are half of a slot's bytes; the
//! prover already uploads z (the scalars of its MSMs), from which they follow.
//!
//! The device reads z canonical (the MSMs' form) and writes a, b in Montgomery form (as
//! synthesis writes them): with mont(x, y) = x·y·R⁻¹ mod r, a coefficient c is kept as
//! c·R² mod r, so mont(c·R², z) = c·z·R; ±1 terms are summed canonical and joined by one
//! mont(Σ, R² mod r) = Σ·R.

use std::sync::OnceLock;

use blstrs::Scalar as Fr;
use ff::Field;

use super::blocks::BlockLayout;
use super::matrix::INPUT;
use super::r1cs::R1cs;
use super::writer::Coeff;
use crate::msm::scalars::{to_limbs, Limbs};

/// One recorded matrix as the device evaluates it (r1cs.cu `R1csMat`).
pub struct DeviceMatrix {
    /// Recorded row j's entries: `start[j]..start[j + 1]`.
    pub start: Vec<u32>,
    /// Each entry's (variable, coefficient index), in row order.
    pub ent: Vec<[u32; 2]>,
    /// Each coefficient c as the limbs of c·R² mod r (see the module's note).
    pub coeff: Vec<Limbs>,
    /// Each coefficient's kind: [`KIND_ONE`], [`KIND_MINUS_ONE`] (added, not multiplied)
    /// or [`KIND_OTHER`].
    pub kind: Vec<u32>,
}

/// Rows with more entries than this in any of A, B, C are made a warp a row (r1cs.cu
/// R1CS_LONG): a warp waits for its longest row, and a few rows are ~1000 entries long.
pub const LONG: usize = 8;

pub const KIND_ONE: u32 = 0;
pub const KIND_MINUS_ONE: u32 = 1;
pub const KIND_OTHER: u32 = 2;

/// A recorded R1CS as the device evaluates it, with C for the a·b = c check.
pub struct DeviceForm {
    /// A, B, C.
    pub m: [DeviceMatrix; 3],
    /// The whole circuit's layout. `blocks` may be changed to evaluate more blocks of the
    /// same shape (a domain-sized timing from a small recording).
    pub layout: BlockLayout,
    /// R² mod r: mont(x, R²) = x·R, a canonical value into Montgomery form.
    pub r2: Limbs,
    /// The recorded rows with more than [`LONG`] entries in any matrix, in order: the
    /// prefix's first (`long_in_prefix` of them), then the block's.
    pub long: Vec<u32>,
    pub long_in_prefix: usize,
}

impl R1cs {
    /// This recording as kernels/cuda/r1cs.cu reads it.
    pub fn device_form(&self) -> DeviceForm {
        let r = r_mod();
        let m = [0, 1, 2].map(|which| {
            let m = self.m.all()[which];
            DeviceMatrix {
                start: self.starts[which].clone(),
                ent: m.entries.iter().map(|e| [e.var, e.coeff]).collect(),
                // c·R² mod r: the canonical limbs of the value c·R·R.
                coeff: m.coeffs.iter().map(|c| to_limbs(&(*c * r * r))).collect(),
                kind: self.kinds[which]
                    .iter()
                    .map(|k| match k {
                        Coeff::One => KIND_ONE,
                        Coeff::MinusOne => KIND_MINUS_ONE,
                        Coeff::Zero | Coeff::Other => KIND_OTHER,
                    })
                    .collect(),
            }
        });
        let recorded = m[0].start.len() - 1;
        let long: Vec<u32> = (0..recorded)
            .filter(|&j| {
                m.iter()
                    .any(|m| (m.start[j + 1] - m.start[j]) as usize > LONG)
            })
            .map(|j| j as u32)
            .collect();
        let long_in_prefix =
            long.partition_point(|&j| (j as usize) < self.layout.prefix.constraints);
        DeviceForm {
            m,
            layout: self.layout,
            r2: to_limbs(&(r * r)),
            long,
            long_in_prefix,
        }
    }
}

/// R mod r = 2^256 mod r as a field value.
fn r_mod() -> Fr {
    Fr::from(2u64).pow_vartime([256])
}

impl DeviceForm {
    /// The whole circuit's recorded rows (bellperson's input rows not among them).
    pub fn rows(&self) -> usize {
        let s = self.layout.shape();
        s.num_constraints - s.num_inputs
    }

    /// Inputs (ONE included) and aux variables of the whole circuit: z's length is their sum.
    pub fn vars(&self) -> (usize, usize) {
        let s = self.layout.shape();
        (s.num_inputs, s.num_aux)
    }

    /// Row g's values of A·z, B·z and C·z as the device computes them (Montgomery products
    /// over limbs, emulated), read back as the Fr whose Montgomery limbs they are; g past
    /// the recorded rows gives bellperson's input rows (a = the input, b = c = 0) and then
    /// zeros. `z`: canonical, inputs then aux.
    pub fn row(&self, g: usize, z: &[Limbs]) -> [Fr; 3] {
        let rows = self.rows();
        let (n_in, _) = self.vars();
        if g >= rows {
            let a = if g < rows + n_in {
                from_mont_limbs(mont(&z[g - rows], &self.r2))
            } else {
                Fr::ZERO
            };
            return [a, Fr::ZERO, Fr::ZERO];
        }
        let (row, k) = self.layout.recorded_row(g);
        self.m.each_ref().map(|m| {
            let (mut acc_c, mut acc_m) = (Fr::ZERO, Fr::ZERO);
            let mut any_c = false;
            for e in &m.ent[m.start[row] as usize..m.start[row + 1] as usize] {
                // z holds the inputs, then the aux variables.
                let var = self.layout.moved(e[0], k);
                let idx = if var & INPUT != 0 {
                    (var & !INPUT) as usize
                } else {
                    n_in + var as usize
                };
                let zv = from_limbs(&z[idx]);
                match m.kind[e[1] as usize] {
                    KIND_ONE => (acc_c, any_c) = (acc_c + zv, true),
                    KIND_MINUS_ONE => (acc_c, any_c) = (acc_c - zv, true),
                    _ => acc_m += from_limbs(&mont(&m.coeff[e[1] as usize], &z[idx])),
                }
            }
            if any_c {
                acc_m += from_limbs(&mont(&to_limbs(&acc_c), &self.r2));
            }
            from_mont_limbs(to_limbs(&acc_m))
        })
    }
}

/// The field value of canonical limbs.
fn from_limbs(l: &Limbs) -> Fr {
    Option::from(Fr::from_u64s_le(l)).expect("canonical limbs below r")
}

/// The Montgomery product of two canonical-limb values: x·y·R⁻¹ mod r, canonical limbs.
fn mont(x: &Limbs, y: &Limbs) -> Limbs {
    static R_INV: OnceLock<Fr> = OnceLock::new();
    let r_inv = R_INV.get_or_init(|| r_mod().invert().expect("R is invertible mod r"));
    to_limbs(&(from_limbs(x) * from_limbs(y) * r_inv))
}

/// The Fr whose Montgomery limbs are `l` (what the device's output bytes are to the host).
fn from_mont_limbs(l: Limbs) -> Fr {
    Fr::from(blst::blst_fr { l })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::PrimeField;

    /// The limb conventions: mont(x, R²) is x in Montgomery form, and a coefficient kept as
    /// c·R² times a canonical z is c·z in Montgomery form.
    #[test]
    fn montgomery_conventions_hold() {
        let r = r_mod();
        let r2 = to_limbs(&(r * r));
        for v in [1u64, 2, 0xdead_beef, u64::MAX] {
            let x = Fr::from(v) * Fr::from(0x1234_5678_9abc_u64).pow_vartime([5]);
            assert_eq!(from_mont_limbs(mont(&to_limbs(&x), &r2)), x);
            let c = -Fr::from(v);
            let z = Fr::from(v + 7).square();
            let c2 = to_limbs(&(c * r * r));
            assert_eq!(from_mont_limbs(mont(&c2, &to_limbs(&z))), c * z);
        }
        // blst's Montgomery limbs of 1 are R mod r.
        assert_eq!(blst::blst_fr::from(Fr::ONE).l, to_limbs(&r));
        assert_eq!(Fr::from_repr(Fr::ONE.to_repr()).unwrap(), Fr::ONE);
    }
}
