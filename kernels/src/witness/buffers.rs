//! Where a partition's witness lives: slices owned by the caller.
//!
//! In one process they come from [`OwnedWitness`]; in the multi-process pipeline they
//! are regions of a shared-memory slot. The constraint system and the prover only ever
//! see these slices.

use blstrs::Scalar as Fr;
use ff::Field;

use super::CircuitShape;

/// Mutable views of every buffer a partition's witness fills.
pub struct WitnessBuffers<'a> {
    /// Evaluations of the A, B and C linear combinations, one per constraint, zero-padded
    /// to the domain size. The prover turns `a` into the coefficients of H in place.
    pub a: &'a mut [Fr],
    pub b: &'a mut [Fr],
    pub c: &'a mut [Fr],
    /// Input assignment; index 0 is the constant ONE.
    pub inputs: &'a mut [Fr],
    pub aux: &'a mut [Fr],
    /// Bit i set: aux variable i occurs (with a non-zero coefficient) in some A combination.
    pub a_aux_density: &'a mut [u64],
    /// Bit i set: input i occurs in some B combination.
    pub b_input_density: &'a mut [u64],
    /// Bit i set: aux variable i occurs in some B combination.
    pub b_aux_density: &'a mut [u64],
}

impl WitnessBuffers<'_> {
    /// The same buffers borrowed again, for a writer that takes them by value.
    pub fn reborrow(&mut self) -> WitnessBuffers<'_> {
        WitnessBuffers {
            a: self.a,
            b: self.b,
            c: self.c,
            inputs: self.inputs,
            aux: self.aux,
            a_aux_density: self.a_aux_density,
            b_input_density: self.b_input_density,
            b_aux_density: self.b_aux_density,
        }
    }
}

/// The name of the first buffer in which two witnesses differ (a, b, c, inputs, aux, then
/// the density bitmaps), or `None` where every element is equal: how a witness written
/// another way is checked against one-piece synthesis.
pub fn first_difference(x: &WitnessBuffers<'_>, y: &WitnessBuffers<'_>) -> Option<&'static str> {
    let frs: [(&str, &[Fr], &[Fr]); 5] = [
        ("a", x.a, y.a),
        ("b", x.b, y.b),
        ("c", x.c, y.c),
        ("inputs", x.inputs, y.inputs),
        ("aux", x.aux, y.aux),
    ];
    let bits: [(&str, &[u64], &[u64]); 3] = [
        ("A density", x.a_aux_density, y.a_aux_density),
        ("B input density", x.b_input_density, y.b_input_density),
        ("B aux density", x.b_aux_density, y.b_aux_density),
    ];
    frs.into_iter()
        .find(|(_, p, q)| p != q)
        .map(|(n, _, _)| n)
        .or_else(|| bits.into_iter().find(|(_, p, q)| p != q).map(|(n, _, _)| n))
}

/// Reads bit `i` of a density bitmap.
#[inline]
pub fn density_bit(bits: &[u64], i: usize) -> bool {
    (bits[i / 64] >> (i % 64)) & 1 == 1
}

/// Number of set bits among the first `n` bits of a bitmap.
pub fn density_count(bits: &[u64], n: usize) -> usize {
    let full = n / 64;
    let mut count: usize = bits[..full].iter().map(|w| w.count_ones() as usize).sum();
    if !n.is_multiple_of(64) {
        count += (bits[full] & ((1u64 << (n % 64)) - 1)).count_ones() as usize;
    }
    count
}

/// Heap-backed witness buffers for proving in one process.
pub struct OwnedWitness {
    pub shape: CircuitShape,
    a: Vec<Fr>,
    b: Vec<Fr>,
    c: Vec<Fr>,
    inputs: Vec<Fr>,
    aux: Vec<Fr>,
    a_aux_density: Vec<u64>,
    b_input_density: Vec<u64>,
    b_aux_density: Vec<u64>,
}

impl OwnedWitness {
    /// Allocates (zeroed) buffers for a circuit of this shape.
    pub fn new(shape: CircuitShape) -> Self {
        let d = shape.domain_size();
        OwnedWitness {
            shape,
            a: vec![Fr::ZERO; d],
            b: vec![Fr::ZERO; d],
            c: vec![Fr::ZERO; d],
            inputs: vec![Fr::ZERO; shape.num_inputs],
            aux: vec![Fr::ZERO; shape.num_aux],
            a_aux_density: vec![0; CircuitShape::bitmap_words(shape.num_aux)],
            b_input_density: vec![0; CircuitShape::bitmap_words(shape.num_inputs)],
            b_aux_density: vec![0; CircuitShape::bitmap_words(shape.num_aux)],
        }
    }

    pub fn buffers(&mut self) -> WitnessBuffers<'_> {
        WitnessBuffers {
            a: &mut self.a,
            b: &mut self.b,
            c: &mut self.c,
            inputs: &mut self.inputs,
            aux: &mut self.aux,
            a_aux_density: &mut self.a_aux_density,
            b_input_density: &mut self.b_input_density,
            b_aux_density: &mut self.b_aux_density,
        }
    }
}
