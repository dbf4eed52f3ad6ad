//! A, B and C of a circuit's R1CS as sparse matrices, recorded from a synthesis that reads
//! only the circuit's structure (a blank circuit will do).
//!
//! Why: every partition of a proof type has the same A, B and C; only z = (1, inputs…,
//! aux…) changes. Recorded once, they give a·b = c's sides as A·z, B·z and C·z
//! ([`super::r1cs`]), so synthesis need not build ~10^8 linear combinations a partition,
//! and C alone is what a prover with C folded into L folds ([`super::c_matrix`]).

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;
use ff::Field;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Marks an input in `Entry::var` (aux variables are numbered from 0 without it).
pub const INPUT: u32 = 1 << 31;

/// One nonzero M_jk: row j, variable k (aux k, or input k | INPUT), coefficient by index
/// into `R1csMatrix::coeffs` (a circuit holds few distinct coefficients: 1, −1, powers of
/// two, a hash's round constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub row: u32,
    pub var: u32,
    pub coeff: u32,
}

/// One of a circuit's A, B or C, in row order, for the constraints the circuit enforces
/// (bellperson's `input · 0 = 0` rows after them are not recorded: their A is the input,
/// their B and C empty).
#[derive(Clone, Debug, Default)]
pub struct R1csMatrix {
    pub rows: usize,
    pub num_inputs: usize,
    pub num_aux: usize,
    pub coeffs: Vec<Fr>,
    pub entries: Vec<Entry>,
}

/// Which of A, B and C a recording keeps (the others get their counts and no entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Which {
    pub a: bool,
    pub b: bool,
    pub c: bool,
}

impl Which {
    /// C alone: what the fold into L needs.
    pub const C: Which = Which {
        a: false,
        b: false,
        c: true,
    };
    /// The whole R1CS: what synthesis from recorded matrices needs.
    pub const ALL: Which = Which {
        a: true,
        b: true,
        c: true,
    };
}

/// A circuit's A, B and C as one recording kept them.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    pub a: R1csMatrix,
    pub b: R1csMatrix,
    pub c: R1csMatrix,
}

impl Recorded {
    /// Records `circuit`'s matrices named by `which` (its values are not computed: a blank
    /// circuit will do), numbering variables as bellperson does: input 0 is ONE, allocated
    /// before the circuit runs.
    pub fn record<C: Circuit<Fr>>(circuit: C, which: Which) -> Result<Recorded, SynthesisError> {
        let mut cs = Recorder {
            which,
            m: Recorded::default(),
            coeff_index: Default::default(),
        };
        for m in cs.m.all_mut() {
            m.num_inputs = 1;
        }
        circuit.synthesize(&mut cs)?;
        Ok(cs.m)
    }

    pub(super) fn all(&self) -> [&R1csMatrix; 3] {
        [&self.a, &self.b, &self.c]
    }

    pub(super) fn all_mut(&mut self) -> [&mut R1csMatrix; 3] {
        [&mut self.a, &mut self.b, &mut self.c]
    }

    /// Bytes the three matrices hold (their entries and coefficients).
    pub fn bytes(&self) -> usize {
        self.all()
            .iter()
            .map(|m| {
                m.entries.len() * std::mem::size_of::<Entry>()
                    + m.coeffs.len() * std::mem::size_of::<Fr>()
            })
            .sum()
    }
}

impl R1csMatrix {
    /// C of `circuit` alone ([`Recorded::record`] with [`Which::C`]).
    pub fn record_c<C: Circuit<Fr>>(circuit: C) -> Result<R1csMatrix, SynthesisError> {
        Ok(Recorded::record(circuit, Which::C)?.c)
    }

    /// M·z for the assignment (inputs with ONE first, aux), one value a recorded row;
    /// rows in parallel, a chunk at a time.
    pub fn apply(&self, inputs: &[Fr], aux: &[Fr]) -> Vec<Fr> {
        const ROWS: usize = 1 << 14;
        let mut out = vec![Fr::ZERO; self.rows];
        out.par_chunks_mut(ROWS).enumerate().for_each(|(i, chunk)| {
            self.rows_of(i * ROWS, chunk.len(), |j, var, k| {
                chunk[j] += value(inputs, aux, var) * self.coeffs[k]
            })
        });
        out
    }

    /// Calls `term(row − first, var, coeff index)` for every entry of rows first..first + n
    /// (the entries are in row order: a chunk's are found by binary search).
    #[inline]
    fn rows_of(&self, first: usize, n: usize, mut term: impl FnMut(usize, u32, usize)) {
        let from = self.entries.partition_point(|e| (e.row as usize) < first);
        let to = self
            .entries
            .partition_point(|e| (e.row as usize) < first + n);
        for e in &self.entries[from..to] {
            term(e.row as usize - first, e.var, e.coeff as usize);
        }
    }
}

/// Variable `var` of an entry (input k | INPUT, or aux k) in the assignment.
#[inline]
pub(super) fn value(inputs: &[Fr], aux: &[Fr], var: u32) -> Fr {
    if var & INPUT != 0 {
        inputs[(var & !INPUT) as usize]
    } else {
        aux[var as usize]
    }
}

/// The recording constraint system behind [`Recorded::record`].
struct Recorder {
    which: Which,
    m: Recorded,
    /// Each matrix's coefficients by their Montgomery limbs (no conversion, a fast hash:
    /// every entry of the circuit is looked up).
    coeff_index: [FxHashMap<[u64; 4], u32>; 3],
}

impl ConstraintSystem<Fr> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.m.a.num_aux;
        for m in self.m.all_mut() {
            m.num_aux += 1;
        }
        Ok(Variable::new_unchecked(Index::Aux(i)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.m.a.num_inputs;
        for m in self.m.all_mut() {
            m.num_inputs += 1;
        }
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
        let row = self.m.a.rows as u32;
        // A closure not kept is dropped unrun: building its combination is its cost.
        let lcs = [
            self.which.a.then(|| a(LinearCombination::zero())),
            self.which.b.then(|| b(LinearCombination::zero())),
            self.which.c.then(|| c(LinearCombination::zero())),
        ];
        for ((m, index), lc) in self
            .m
            .all_mut()
            .into_iter()
            .zip(self.coeff_index.iter_mut())
            .zip(lcs)
        {
            m.rows += 1;
            let Some(lc) = lc else { continue };
            let terms = lc
                .iter_inputs()
                .map(|(&k, v)| (k as u32 | INPUT, *v))
                .chain(lc.iter_aux().map(|(&k, v)| (k as u32, *v)));
            for (var, v) in terms {
                // bellperson's provers skip a zero coefficient (no term, no density bit).
                if !v.is_zero_vartime() {
                    let coeffs = &mut m.coeffs;
                    let limbs = blst::blst_fr::from(v).l;
                    let coeff = *index.entry(limbs).or_insert_with(|| {
                        coeffs.push(v);
                        (coeffs.len() - 1) as u32
                    });
                    m.entries.push(Entry { row, var, coeff });
                }
            }
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
