//! The shape of a circuit: how many constraints, inputs and aux variables it has.
//!
//! Every buffer a partition needs is sized from this, up front, so synthesis never
//! grows a vector on the hot path and shared-memory slots can be laid out before
//! any witness exists.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;

/// Counts of a circuit as the Groth16 prover sees it.
///
/// `num_inputs` includes the constant ONE input, and `num_constraints` includes the
/// one "input constraint" (`input_i * 0 = 0`) per input that bellperson appends so the
/// A-query of every input is linearly independent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CircuitShape {
    pub num_constraints: usize,
    pub num_inputs: usize,
    pub num_aux: usize,
}

impl CircuitShape {
    /// Runs the circuit through a counting constraint system. Witness closures are never
    /// called, so this works on blank circuits (no assignment) too.
    pub fn of<C: Circuit<Fr>>(circuit: C) -> Result<Self, SynthesisError> {
        let mut counter = ShapeCounter::default();
        // The constant ONE is input 0, allocated before the circuit runs.
        counter.alloc_input(|| "one", || Ok(Fr::from(1u64)))?;
        circuit.synthesize(&mut counter)?;
        Ok(CircuitShape {
            num_constraints: counter.constraints + counter.inputs,
            num_inputs: counter.inputs,
            num_aux: counter.aux,
        })
    }

    /// log2 of the evaluation domain: the smallest power of two holding every constraint.
    pub fn domain_log2(&self) -> u32 {
        self.num_constraints
            .max(1)
            .next_power_of_two()
            .trailing_zeros()
    }

    /// Size of the evaluation domain (a, b, c buffers are this long).
    pub fn domain_size(&self) -> usize {
        1usize << self.domain_log2()
    }

    /// Number of u64 words of a density bitmap over `n` variables.
    pub fn bitmap_words(n: usize) -> usize {
        n.div_ceil(64)
    }
}

#[derive(Default)]
struct ShapeCounter {
    constraints: usize,
    inputs: usize,
    aux: usize,
}

impl ConstraintSystem<Fr> for ShapeCounter {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.constraints += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
