//! a = A·z and b = B·z on the host from the recorded R1CS, for the CPU device when
//! synthesis left them to the prover: the assignment in the slot is canonical limbs (the
//! MSMs' form), so it is put back into field elements first, then evaluated by
//! `R1cs::evaluate_into`, which checks every recorded row's a·b = C·z (c is then taken as
//! a∘b, as every prover does).

use std::sync::Arc;

use anyhow::{Context, Result};
use blstrs::Scalar as Fr;
use cuzk_kernels::msm::scalars::Limbs;
use cuzk_kernels::witness::{CValues, CircuitShape, R1cs, WitnessBuffers};
use ff::Field;
use rayon::prelude::*;

/// The recording and the host buffers its evaluation needs (grown once, reused).
pub struct AbFromR1cs {
    r1cs: Arc<R1cs>,
    z: Vec<Fr>,
    densities: [Vec<u64>; 3],
}

impl AbFromR1cs {
    pub fn new(r1cs: Arc<R1cs>) -> Self {
        AbFromR1cs {
            r1cs,
            z: Vec::new(),
            densities: Default::default(),
        }
    }

    /// a and b (each the domain's length) of the partition of `shape` whose assignment is
    /// `z` (canonical limbs, inputs then aux); an error names the first unsatisfied row.
    pub fn evaluate(
        &mut self,
        shape: &CircuitShape,
        z: &[Limbs],
        a: &mut [Fr],
        b: &mut [Fr],
    ) -> Result<()> {
        let vars = shape.num_inputs + shape.num_aux;
        self.z.resize(vars, Fr::ZERO);
        self.z
            .par_iter_mut()
            .zip(&z[..vars])
            .try_for_each(|(x, l)| {
                *x = Option::from(Fr::from_u64s_le(l))?;
                Some(())
            })
            .context("the slot's assignment holds a value not below r")?;
        let words = [
            CircuitShape::bitmap_words(shape.num_aux),
            CircuitShape::bitmap_words(shape.num_inputs),
            CircuitShape::bitmap_words(shape.num_aux),
        ];
        for (d, w) in self.densities.iter_mut().zip(words) {
            d.resize(w, 0);
        }
        let (inputs, aux) = self.z.split_at_mut(shape.num_inputs);
        let [da, dbi, dba] = &mut self.densities;
        let mut bufs = WitnessBuffers {
            a,
            b,
            c: &mut [],
            inputs,
            aux,
            a_aux_density: da,
            b_input_density: dbi,
            b_aux_density: dba,
        };
        self.r1cs
            .evaluate_into(shape, &mut bufs, CValues::LeftOut)
            .context("a and b from the recorded R1CS")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cuzk_c1::{C1Input, GivenIds};
    use cuzk_kernels::groth16::steps::canonical_assignment;
    use cuzk_kernels::msm::scalars::to_limbs;
    use cuzk_kernels::witness::OwnedWitness;
    use cuzk_synthesis::{
        record_r1cs, with_porep_circuits, CircuitsVisitor, PorepCircuits, ThreadedSynthesis,
    };
    use filecoin_proofs::MerkleTreeTrait;

    use super::*;

    /// On the real 2 KiB C1, every partition: a and b made from the canonical assignment and
    /// the gpu stage's recording equal what synthesis writes; an assignment with one value
    /// changed is refused with the row that fails.
    #[test]
    fn a_and_b_from_the_assignment_equal_synthesis_and_a_changed_value_is_refused() {
        struct Check(Arc<R1cs>);
        impl CircuitsVisitor for Check {
            type Output = ();
            fn visit<Tree: 'static + MerkleTreeTrait>(self, circuits: PorepCircuits<'_, Tree>) {
                let shape = CircuitShape::of(circuits.partition(0).unwrap().circuit).unwrap();
                let synthesis = ThreadedSynthesis::with(2, cuzk_synthesis::Combinations::Built);
                let mut ab = AbFromR1cs::new(self.0);
                let n = shape.domain_size();
                let (mut a, mut b) = (vec![Fr::ONE; n], vec![Fr::ONE; n]);
                for k in 0..circuits.partitions() {
                    let mut w = OwnedWitness::new(shape);
                    synthesis
                        .synthesize(&circuits, k, &shape, w.buffers(), CValues::LeftOut)
                        .unwrap();
                    let bufs = w.buffers();
                    let mut z = canonical_assignment(bufs.inputs, bufs.aux);
                    ab.evaluate(&shape, &z, &mut a, &mut b).unwrap();
                    assert!(a == bufs.a[..n] && b == bufs.b[..n], "partition {k}");

                    let i = shape.num_inputs + shape.num_aux / 2;
                    z[i] = to_limbs(&(bufs.aux[i - shape.num_inputs] + Fr::ONE));
                    let err = ab.evaluate(&shape, &z, &mut a, &mut b).unwrap_err();
                    assert!(
                        format!("{err:#}").contains("does not hold"),
                        "partition {k}: {err:#}"
                    );
                }
            }
        }
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/porep-2KiB-a.c1.json");
        let c1 = C1Input::read(&path, GivenIds::default()).unwrap();
        let r1cs = Arc::new(record_r1cs(&c1).unwrap());
        with_porep_circuits(&c1, Check(r1cs)).unwrap();
    }
}
