//! Circuits for checking the prover against bellperson: booleans, full-width scalars,
//! public inputs, and a chain of SHA-256 compressions.
#![allow(dead_code)]

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::num::AllocatedNum;
use bellperson::gadgets::sha256::sha256;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;

/// Bits (each enforced boolean) and their weighted sum: a witness of mostly 0 and 1.
#[derive(Clone)]
pub struct Booleans {
    pub bits: Vec<bool>,
}

impl Circuit<Fr> for Booleans {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut sum = bellperson::LinearCombination::zero();
        let mut value = Fr::ZERO;
        let mut coeff = Fr::ONE;
        for (i, b) in self.bits.iter().enumerate() {
            let bit = AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(*b))?;
            sum = sum + (coeff, bit.get_variable());
            if *b {
                value += coeff;
            }
            coeff = coeff.double();
            if i % 200 == 199 {
                coeff = Fr::ONE;
            }
        }
        let total = AllocatedNum::alloc(cs.namespace(|| "total"), || Ok(value))?;
        cs.enforce(
            || "sum",
            |lc| lc + &sum,
            |lc| lc + CS::one(),
            |lc| lc + total.get_variable(),
        );
        Ok(())
    }
}

/// y_0 = x, y_{i+1} = y_i² + y_i·k_i: full-width values everywhere; the last y and the
/// k_i are public inputs when `public` is set.
#[derive(Clone)]
pub struct PowerChain {
    pub x: Fr,
    pub ks: Vec<Fr>,
    pub public: bool,
    /// Breaks the witness (for the "wrong witness fails" check).
    pub corrupt: bool,
}

impl PowerChain {
    pub fn public_inputs(&self) -> Vec<Fr> {
        if !self.public {
            return vec![];
        }
        let mut y = self.x;
        for k in &self.ks {
            y = y.square() + y * k;
        }
        let mut v = self.ks.clone();
        v.push(y);
        v
    }
}

impl Circuit<Fr> for PowerChain {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        // Values are tracked here, not read back from the variables: parameter generation
        // runs the circuit without evaluating assignments.
        let mut yv = self.x;
        let mut y = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(self.x))?;
        for (i, k) in self.ks.iter().enumerate() {
            let k_var = if self.public {
                AllocatedNum::alloc_input(cs.namespace(|| format!("k {i}")), || Ok(*k))?
            } else {
                AllocatedNum::alloc(cs.namespace(|| format!("k {i}")), || Ok(*k))?
            };
            let mut next = yv.square() + yv * k;
            if self.corrupt && i == self.ks.len() / 2 {
                next += Fr::ONE;
            }
            let out = AllocatedNum::alloc(cs.namespace(|| format!("y {i}")), || Ok(next))?;
            // (y + k)·y = out
            cs.enforce(
                || format!("step {i}"),
                |lc| lc + y.get_variable() + k_var.get_variable(),
                |lc| lc + y.get_variable(),
                |lc| lc + out.get_variable(),
            );
            y = out;
            yv = next;
        }
        if self.public {
            let out = AllocatedNum::alloc_input(cs.namespace(|| "out"), || Ok(yv))?;
            cs.enforce(
                || "out",
                |lc| lc + y.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc + out.get_variable(),
            );
        }
        Ok(())
    }
}

/// `rounds` chained SHA-256 hashes of a 256-bit value (one compression each, about 27k
/// constraints): the bellpepper gadget, a real-world mix of booleans and sums.
#[derive(Clone)]
pub struct ShaChain {
    pub preimage: [u8; 32],
    pub rounds: usize,
}

impl Circuit<Fr> for ShaChain {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut bits: Vec<Boolean> = (0..256)
            .map(|i| {
                let bit = (self.preimage[i / 8] >> (7 - i % 8)) & 1 == 1;
                AllocatedBit::alloc(cs.namespace(|| format!("pre {i}")), Some(bit))
                    .map(Boolean::from)
            })
            .collect::<Result<_, _>>()?;
        for r in 0..self.rounds {
            bits = sha256(cs.namespace(|| format!("round {r}")), &bits)?;
        }
        Ok(())
    }
}
