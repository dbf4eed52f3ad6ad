//! The constraint system that writes a witness into caller buffers.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;
use ff::Field;

use super::{CircuitShape, WitnessBuffers};

#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("circuit has more {what} than the buffers hold ({capacity}); the shape given does not match the circuit")]
    ShapeExceeded { what: &'static str, capacity: usize },
    #[error("circuit produced {got} {what}, the shape says {expected}")]
    ShapeMismatch {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("buffer `{buffer}` holds {len} elements, the shape needs {needed}")]
    BufferTooSmall {
        buffer: &'static str,
        len: usize,
        needed: usize,
    },
}

/// Synthesizes `circuit` into `bufs` exactly as bellperson's prover does: input 0 is ONE,
/// then the circuit, then one constraint `input_i * 0 = 0` per input. `capacity` bounds
/// every count (buffers hold at least its domain, inputs and aux); the circuit's actual
/// shape is returned, and is what the prover takes. Buffers need not be zeroed: every
/// element the prover reads is written here.
/// With [`CValues::LeftOut`], C's linear combinations are neither built nor evaluated and
/// `bufs.c` is not written (it keeps what the caller left there), ~17 % less synthesis on
/// the 8 MiB PoRep circuit: for a prover that never reads c (H in Lagrange form with C
/// folded into L, `groth16::folded`).
pub fn synthesize_into<C: Circuit<Fr>>(
    circuit: C,
    capacity: &CircuitShape,
    bufs: WitnessBuffers<'_>,
    c: CValues,
) -> Result<CircuitShape, WitnessError> {
    synthesize_with(circuit, capacity, bufs, Lcs::of(c))
}

/// [`synthesize_into`] building and evaluating the combinations `lcs` names; with
/// [`Lcs::None`] only the assignment (inputs, aux) is written (`r1cs` makes the rest).
pub(super) fn synthesize_with<C: Circuit<Fr>>(
    circuit: C,
    capacity: &CircuitShape,
    bufs: WitnessBuffers<'_>,
    lcs: Lcs,
) -> Result<CircuitShape, WitnessError> {
    let mut cs = WitnessWriter::with_lcs(capacity, bufs, lcs)?;
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.num_inputs {
        cs.enforce(
            || "input",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    cs.finish()
}

/// Whether synthesis writes C's values (`c = C·z`): every prover but the one with C folded
/// into L reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CValues {
    Written,
    LeftOut,
}

/// Which linear combinations a writer builds and evaluates: all three, A and B
/// ([`CValues::LeftOut`]), or none (the assignment alone, for `r1cs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lcs {
    All,
    WithoutC,
    None,
}

impl Lcs {
    pub(super) fn of(c: CValues) -> Lcs {
        match c {
            CValues::Written => Lcs::All,
            CValues::LeftOut => Lcs::WithoutC,
        }
    }
}

/// A `ConstraintSystem` over caller-owned buffers, bounded by a capacity shape. Build it with [`WitnessWriter::new`],
/// or use [`synthesize_into`], which also adds bellperson's input constraints.
pub struct WitnessWriter<'a> {
    bufs: WitnessBuffers<'a>,
    shape: CircuitShape,
    num_constraints: usize,
    num_inputs: usize,
    num_aux: usize,
    /// The first overflow seen; enforce() cannot return errors, so it is reported by finish().
    overflow: Option<WitnessError>,
    /// Which combinations are built and evaluated.
    lcs: Lcs,
}

impl<'a> WitnessWriter<'a> {
    pub fn new(
        shape: &CircuitShape,
        bufs: WitnessBuffers<'a>,
        c: CValues,
    ) -> Result<Self, WitnessError> {
        Self::with_lcs(shape, bufs, Lcs::of(c))
    }

    fn with_lcs(
        shape: &CircuitShape,
        mut bufs: WitnessBuffers<'a>,
        lcs: Lcs,
    ) -> Result<Self, WitnessError> {
        prepare(shape, &mut bufs, lcs)?;
        Ok(WitnessWriter {
            bufs,
            shape: *shape,
            num_constraints: 0,
            num_inputs: 0,
            num_aux: 0,
            overflow: None,
            lcs,
        })
    }

    /// Reports an overflow, zero-pads a, b, c up to the circuit's domain and returns the
    /// circuit's actual shape.
    pub fn finish(self) -> Result<CircuitShape, WitnessError> {
        if let Some(e) = self.overflow {
            return Err(e);
        }
        let actual = CircuitShape {
            num_constraints: self.num_constraints,
            num_inputs: self.num_inputs,
            num_aux: self.num_aux,
        };
        let written = match self.lcs {
            Lcs::All => [Some(self.bufs.a), Some(self.bufs.b), Some(self.bufs.c)],
            Lcs::WithoutC => [Some(self.bufs.a), Some(self.bufs.b), None],
            Lcs::None => [None, None, None],
        };
        for v in written.into_iter().flatten() {
            v[actual.num_constraints..actual.domain_size()].fill(Fr::ZERO);
        }
        Ok(actual)
    }

    fn note_overflow(&mut self, what: &'static str, capacity: usize) {
        if self.overflow.is_none() {
            self.overflow = Some(WitnessError::ShapeExceeded { what, capacity });
        }
    }
}

/// Checks that every buffer holds what a circuit of `shape` needs (a, b and c only where
/// `lcs` writes them: the assignment alone needs none, so a slot without room for a and b
/// takes it) and clears the density bitmaps (their bits are set as variables are seen).
pub(super) fn prepare(
    shape: &CircuitShape,
    bufs: &mut WitnessBuffers<'_>,
    lcs: Lcs,
) -> Result<(), WitnessError> {
    let domain = shape.domain_size();
    let check = |buffer, len: usize, needed| {
        if len < needed {
            Err(WitnessError::BufferTooSmall {
                buffer,
                len,
                needed,
            })
        } else {
            Ok(())
        }
    };
    if lcs != Lcs::None {
        check("a", bufs.a.len(), domain)?;
        check("b", bufs.b.len(), domain)?;
    }
    if lcs == Lcs::All {
        check("c", bufs.c.len(), domain)?;
    }
    check("inputs", bufs.inputs.len(), shape.num_inputs)?;
    check("aux", bufs.aux.len(), shape.num_aux)?;
    let aux_words = CircuitShape::bitmap_words(shape.num_aux);
    check("a_aux_density", bufs.a_aux_density.len(), aux_words)?;
    check("b_aux_density", bufs.b_aux_density.len(), aux_words)?;
    check(
        "b_input_density",
        bufs.b_input_density.len(),
        CircuitShape::bitmap_words(shape.num_inputs),
    )?;
    bufs.a_aux_density[..aux_words].fill(0);
    bufs.b_aux_density[..aux_words].fill(0);
    bufs.b_input_density.fill(0);
    Ok(())
}

#[inline]
pub(super) fn set_bit(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

/// Where a linear combination's values come from: the value of input / aux variable `i`
/// and the bit it sets in a density bitmap (its index in the whole circuit).
pub(super) trait Assignment {
    fn input(&self, i: usize) -> (Fr, usize);
    fn aux(&self, i: usize) -> (Fr, usize);
}

/// The whole assignment in two slices, indexed as the circuit allocated it.
struct Slices<'s> {
    inputs: &'s [Fr],
    aux: &'s [Fr],
}

impl Assignment for Slices<'_> {
    #[inline]
    fn input(&self, i: usize) -> (Fr, usize) {
        (self.inputs[i], i)
    }
    #[inline]
    fn aux(&self, i: usize) -> (Fr, usize) {
        (self.aux[i], i)
    }
}

/// What a coefficient costs: nothing (0), an addition (1), a subtraction (−1) or a
/// multiplication. Read from its Montgomery limbs, without the constant-time comparisons
/// `==` makes (coefficients are the circuit's, public): −1 alone is ~30 % of C's entries.
#[derive(Clone, Copy)]
pub(super) enum Coeff {
    Zero,
    One,
    MinusOne,
    Other,
}

#[inline]
pub(super) fn coeff_kind(coeff: &Fr) -> Coeff {
    let limbs = blst::blst_fr::from(*coeff).l;
    if limbs == [0; 4] {
        Coeff::Zero
    } else if limbs == ONE_MONT {
        Coeff::One
    } else if limbs == MINUS_ONE_MONT {
        Coeff::MinusOne
    } else {
        Coeff::Other
    }
}

/// 1 and −1 in Montgomery form (R mod r and r − R), little-endian limbs; checked against
/// blstrs in the tests below.
const ONE_MONT: [u64; 4] = [
    0x0000_0001_ffff_fffe,
    0x5884_b7fa_0003_4802,
    0x998c_4fef_ecbc_4ff5,
    0x1824_b159_acc5_056f,
];
const MINUS_ONE_MONT: [u64; 4] = [
    0xffff_fffd_0000_0003,
    0xfb38_ec08_fffb_13fc,
    0x99ad_8818_1ce5_880f,
    0x5bc8_f5f9_7cd8_77d8,
];

/// acc + coeff·x, as cheaply as the coefficient allows.
#[inline]
pub(super) fn add_term(acc: &mut Fr, coeff: &Fr, kind: Coeff, x: Fr) {
    match kind {
        Coeff::Zero => {}
        Coeff::One => *acc += x,
        Coeff::MinusOne => *acc -= x,
        // Mostly a bit times a power of two (a word packed from its bits): the bit's own
        // 0 or 1 spares the product.
        Coeff::Other => match coeff_kind(&x) {
            Coeff::Zero => {}
            Coeff::One => *acc += coeff,
            _ => *acc += x * coeff,
        },
    }
}

/// Σ coeff·value over a linear combination, recording which variables occur with a
/// non-zero coefficient. The same sums as bellperson's `eval_with_trackers` (which skips
/// the multiplication for a coefficient of one; here also for −1).
#[inline]
pub(super) fn eval<V: Assignment>(
    lc: &LinearCombination<Fr>,
    values: &V,
    mut input_density: Option<&mut [u64]>,
    mut aux_density: Option<&mut [u64]>,
) -> Fr {
    let mut acc = Fr::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        let kind = coeff_kind(coeff);
        if let Coeff::Zero = kind {
            continue;
        }
        let (x, bit) = values.input(i);
        add_term(&mut acc, coeff, kind, x);
        if let Some(d) = input_density.as_deref_mut() {
            set_bit(d, bit);
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        let kind = coeff_kind(coeff);
        if let Coeff::Zero = kind {
            continue;
        }
        let (x, bit) = values.aux(i);
        add_term(&mut acc, coeff, kind, x);
        if let Some(d) = aux_density.as_deref_mut() {
            set_bit(d, bit);
        }
    }
    acc
}

impl ConstraintSystem<Fr> for WitnessWriter<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        let i = self.num_aux;
        match self.bufs.aux.get_mut(i).filter(|_| i < self.shape.num_aux) {
            Some(slot) => *slot = value,
            None => self.note_overflow("aux variables", self.shape.num_aux),
        }
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(i)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        let i = self.num_inputs;
        match self
            .bufs
            .inputs
            .get_mut(i)
            .filter(|_| i < self.shape.num_inputs)
        {
            Some(slot) => *slot = value,
            None => self.note_overflow("inputs", self.shape.num_inputs),
        }
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(i)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let j = self.num_constraints;
        self.num_constraints += 1;
        if self.overflow.is_some() {
            return;
        }
        if j >= self.shape.num_constraints {
            self.note_overflow("constraints", self.shape.num_constraints);
            return;
        }
        if self.lcs == Lcs::None {
            return;
        }
        let (a, b) = (a(LinearCombination::zero()), b(LinearCombination::zero()));
        // Without C its closure is dropped unrun: building the combination is half its cost.
        let c = (self.lcs == Lcs::All).then(|| c(LinearCombination::zero()));
        let n_in = self.num_inputs.min(self.shape.num_inputs);
        let n_aux = self.num_aux.min(self.shape.num_aux);
        let bufs = &mut self.bufs;
        let values = Slices {
            inputs: &bufs.inputs[..n_in],
            aux: &bufs.aux[..n_aux],
        };
        // Inputs get full density in A (every input has its `input * 0 = 0` constraint),
        // so A tracks aux only; C has no query of its own and tracks nothing.
        bufs.a[j] = eval(&a, &values, None, Some(bufs.a_aux_density));
        bufs.b[j] = eval(
            &b,
            &values,
            Some(bufs.b_input_density),
            Some(bufs.b_aux_density),
        );
        if let Some(c) = c {
            bufs.c[j] = eval(&c, &values, None, None);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficient_kinds_match_blstrs() {
        assert_eq!(blst::blst_fr::from(Fr::ONE).l, ONE_MONT);
        assert_eq!(blst::blst_fr::from(-Fr::ONE).l, MINUS_ONE_MONT);
        assert!(matches!(coeff_kind(&Fr::ZERO), Coeff::Zero));
        assert!(matches!(coeff_kind(&Fr::ONE), Coeff::One));
        assert!(matches!(coeff_kind(&-Fr::ONE), Coeff::MinusOne));
        assert!(matches!(coeff_kind(&Fr::from(2u64)), Coeff::Other));
        assert!(matches!(coeff_kind(&-Fr::from(2u64)), Coeff::Other));
        let x = Fr::from(0x1234_5678u64);
        for (c, want) in [
            (Fr::ZERO, Fr::from(7u64)),
            (Fr::ONE, Fr::from(7u64) + x),
            (-Fr::ONE, Fr::from(7u64) - x),
            (Fr::from(5u64), Fr::from(7u64) + x * Fr::from(5u64)),
        ] {
            let mut acc = Fr::from(7u64);
            add_term(&mut acc, &c, coeff_kind(&c), x);
            assert_eq!(acc, want);
        }
    }
}
