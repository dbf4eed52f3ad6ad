//! A circuit of a prefix and blocks of one shape, for the block-wise synthesis and the
//! recorded R1CS tests (`blocks.rs`, `r1cs.rs`).

use std::ops::Range;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use bellperson::gadgets::boolean::AllocatedBit;
use bellperson::gadgets::num::AllocatedNum;
use blstrs::Scalar as Fr;
use ff::Field;

/// A prefix (x, x², both public) then blocks of squarings, bits, products and a number
/// packed from ten bits that read the prefix and their own variables; `skewed` gives
/// block 3 one constraint more.
#[derive(Clone)]
pub struct Chain {
    seed: u64,
    blocks: Range<usize>,
    skewed: bool,
}

impl Circuit<Fr> for Chain {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = AllocatedNum::alloc(cs.namespace(|| "x"), || Ok(Fr::from(self.seed)))?;
        x.inputize(cs.namespace(|| "x in"))?;
        let y = x.square(cs.namespace(|| "x^2"))?;
        y.inputize(cs.namespace(|| "y in"))?;
        for k in self.blocks {
            let cs = &mut cs.namespace(|| format!("block_{k}"));
            let v = Fr::from(self.seed ^ (k as u64 * 0x9e37_79b9));
            let a = AllocatedNum::alloc(cs.namespace(|| "a"), || Ok(v))?;
            let b = a.mul(cs.namespace(|| "a·x"), &x)?;
            let c = b.mul(cs.namespace(|| "·y"), &y)?;
            let bit = AllocatedBit::alloc(cs.namespace(|| "bit"), Some(k % 2 == 1))?;
            // d = c + bit, through one constraint with coefficients other than one.
            let d = AllocatedNum::alloc(cs.namespace(|| "d"), || {
                let one = if k % 2 == 1 { Fr::ONE } else { Fr::ZERO };
                Ok(c.get_value().unwrap() + one)
            })?;
            cs.enforce(
                || "d = c + bit",
                |lc| {
                    lc + c.get_variable() + bit.get_variable() + (Fr::from(3u64), x.get_variable())
                },
                |lc| lc + CS::one(),
                |lc| lc + d.get_variable() + (Fr::from(3u64), x.get_variable()),
            );
            d.inputize(cs.namespace(|| "d in"))?;
            // k's low ten bits packed into a number: a row of ten entries (longer than the
            // device's short rows, r1cs.cu R1CS_LONG), coefficients 2^i.
            let bits = (0..10)
                .map(|i| {
                    AllocatedBit::alloc(
                        cs.namespace(|| format!("k bit {i}")),
                        Some(k >> i & 1 == 1),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let packed =
                AllocatedNum::alloc(cs.namespace(|| "k"), || Ok(Fr::from(k as u64 & 1023)))?;
            cs.enforce(
                || "k packed",
                |lc| {
                    bits.iter().enumerate().fold(lc, |lc, (i, bit)| {
                        lc + (Fr::from(1u64 << i), bit.get_variable())
                    })
                },
                |lc| lc + CS::one(),
                |lc| lc + packed.get_variable(),
            );
            if self.skewed && k == 3 {
                let _ = d.square(cs.namespace(|| "extra"))?;
            }
        }
        Ok(())
    }
}

pub fn chain(seed: u64, blocks: Range<usize>, skewed: bool) -> Chain {
    Chain {
        seed,
        blocks,
        skewed,
    }
}
