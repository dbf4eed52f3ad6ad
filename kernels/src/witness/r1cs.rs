//! Synthesis from a recorded R1CS: the circuit computes only its assignment (its
//! `enforce` closures are dropped unrun), and a = A·z, b = B·z, c = C·z come from A, B and
//! C recorded once per proof type ([`super::matrix`]), rows in parallel.
//!
//! Why: building the linear combinations and evaluating them is ~45 % of a PoRep
//! partition's synthesis (8 MiB, one thread: 1.61 s with them, 0.88 s without), the same
//! work every partition of a proof type repeats; and the evaluation is spread over every
//! core, where the assignment splits only by challenge (two a partition at 2 KiB and
//! 8 MiB).
//!
//! A circuit of a prefix and blocks of one shape (`blocks`: a PoRep partition, a block a
//! challenge) is recorded as its prefix and one block, and block k's rows are block 0's
//! with its variables moved by k blocks: an 18th of the matrices at 32 GiB, recorded in
//! about an 18th of the time.
//!
//! Every row's a·b = c is checked as it is made: a witness that does not satisfy the
//! recorded system (a recording that does not fit the circuit, or values that do not
//! satisfy it) is refused with the row, and the caller decides (`ThreadedSynthesis`
//! synthesizes that partition with its combinations built).

use std::ops::Range;

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use ff::Field;
use rayon::prelude::*;

use super::blocks::{synthesize_blocks_with, BlockLayout, BlocksError, Counts};
use super::matrix::{value, Recorded, INPUT};
use super::writer::{add_term, coeff_kind, prepare, set_bit, synthesize_with, Coeff, Lcs};
use super::{CValues, CircuitShape, WitnessBuffers, WitnessError};

/// What a synthesis from a recorded R1CS makes besides the assignment and the densities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluated {
    /// a, b and (with [`CValues::Written`]) c, every recorded row checked.
    Here(CValues),
    /// Nothing more: a prover holding the same recording makes a and b from the assignment
    /// and checks every row there (`cuda::Evals::FromR1cs`), so the host spends no core on
    /// them and writes no bytes of them.
    ByProver,
}

impl From<CValues> for Evaluated {
    fn from(c: CValues) -> Self {
        Evaluated::Here(c)
    }
}

/// A circuit's A, B and C, as its prefix and one block or whole, with what every
/// synthesis would derive from them alone: each coefficient's kind, where each recorded
/// row's entries start, and the density bitmaps (which variables occur in A and B).
pub struct R1cs {
    /// The prefix and block 0 (or the whole circuit, with no blocks), in its own numbering.
    pub(super) m: Recorded,
    pub(super) layout: BlockLayout,
    pub(super) kinds: [Vec<Coeff>; 3],
    /// Row j's entries of each matrix: `starts[j]..starts[j + 1]`.
    pub(super) starts: [Vec<u32>; 3],
    a_aux_density: Vec<u64>,
    b_aux_density: Vec<u64>,
    b_input_density: Vec<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum R1csError {
    #[error("the circuit synthesized {got:?}, its recorded R1CS has {recorded:?}: recorded from another circuit")]
    Shape {
        got: CircuitShape,
        recorded: CircuitShape,
    },
    #[error("constraint {row} of {rows} does not hold for this witness (a·b ≠ c): the circuit's values do not satisfy its recorded R1CS")]
    Unsatisfied { row: usize, rows: usize },
    #[error("the recording has {got:?}, a prefix and one block of this layout {want:?}")]
    Layout { got: Counts, want: Counts },
    #[error(transparent)]
    Witness(#[from] WitnessError),
}

impl R1cs {
    /// From the recording of a whole circuit.
    pub fn whole(m: Recorded) -> R1cs {
        let prefix = Counts {
            constraints: m.a.rows,
            inputs: m.a.num_inputs,
            aux: m.a.num_aux,
        };
        let layout = BlockLayout {
            prefix,
            block: Counts::default(),
            blocks: 0,
        };
        R1cs::new(m, layout)
    }

    /// From the recording of a circuit's prefix and its block 0 (the sub-circuit of run
    /// 0..1), for the whole circuit of `layout`.
    pub fn blocks(m: Recorded, layout: BlockLayout) -> Result<R1cs, R1csError> {
        let want = layout.prefix.plus(1, layout.block);
        let got = Counts {
            constraints: m.a.rows,
            inputs: m.a.num_inputs,
            aux: m.a.num_aux,
        };
        if got != want {
            return Err(R1csError::Layout { got, want });
        }
        Ok(R1cs::new(m, layout))
    }

    fn new(m: Recorded, layout: BlockLayout) -> R1cs {
        let kinds = m.all().map(|m| m.coeffs.iter().map(coeff_kind).collect());
        let starts = m.all().map(|m| {
            let mut starts = vec![0u32; m.rows + 1];
            for e in &m.entries {
                starts[e.row as usize + 1] += 1;
            }
            for j in 0..m.rows {
                starts[j + 1] += starts[j];
            }
            starts
        });
        let mut r1cs = R1cs {
            m,
            layout,
            kinds,
            starts,
            a_aux_density: Vec::new(),
            b_aux_density: Vec::new(),
            b_input_density: Vec::new(),
        };
        let shape = r1cs.shape();
        let aux_words = CircuitShape::bitmap_words(shape.num_aux);
        let mut a_aux = vec![0; aux_words];
        let mut b_aux = vec![0; aux_words];
        let mut b_input = vec![0; CircuitShape::bitmap_words(shape.num_inputs)];
        // As synthesis's writer tracks them: A its aux variables only (every input has
        // its `input · 0 = 0` row), B both, C nothing. Entries hold no zero coefficient.
        r1cs.each_entry(0, |var| {
            if var & INPUT == 0 {
                set_bit(&mut a_aux, var as usize);
            }
        });
        r1cs.each_entry(1, |var| {
            if var & INPUT == 0 {
                set_bit(&mut b_aux, var as usize);
            } else {
                set_bit(&mut b_input, (var & !INPUT) as usize);
            }
        });
        r1cs.a_aux_density = a_aux;
        r1cs.b_aux_density = b_aux;
        r1cs.b_input_density = b_input;
        r1cs
    }

    /// Calls `f(var)` for every entry of matrix `which` (0, 1, 2: A, B, C) of the whole
    /// circuit, its variable in the whole circuit's numbering.
    fn each_entry(&self, which: usize, mut f: impl FnMut(u32)) {
        let m = self.m.all()[which];
        let p = self.layout.prefix.constraints;
        for e in &m.entries {
            if (e.row as usize) < p {
                f(e.var);
            } else {
                for k in 0..self.layout.blocks {
                    f(self.layout.moved(e.var, k));
                }
            }
        }
    }

    /// The circuit's shape as the prover sees it (bellperson's input rows included).
    pub fn shape(&self) -> CircuitShape {
        self.layout.shape()
    }

    /// Bytes held: the recorded matrices, their row starts and the density bitmaps.
    pub fn bytes(&self) -> usize {
        let words = self.a_aux_density.len() * 2 + self.b_input_density.len();
        let starts: usize = self.starts.iter().map(|s| s.len() * 4).sum();
        self.m.bytes() + starts + words * 8
    }

    /// Entries recorded of A, B and C (the prefix and one block, or the whole circuit).
    pub fn entries(&self) -> [usize; 3] {
        self.m.all().map(|m| m.entries.len())
    }

    /// Where this R1CS, every block moved into place, differs from `whole` (a recording
    /// of the whole circuit): the matrix, row and what differs; `None` where A, B and C
    /// are equal entry for entry (variables, and coefficients by value). How the blocks'
    /// premise (block k is block 0 moved) is checked on a circuit's structure alone.
    pub fn differs_from(&self, whole: &Recorded) -> Option<String> {
        let rows = self.shape().num_constraints - self.shape().num_inputs;
        for (which, (m, wm)) in self.m.all().into_iter().zip(whole.all()).enumerate() {
            let name = ["A", "B", "C"][which];
            if wm.rows != rows {
                return Some(format!(
                    "{name}: {} rows recorded whole, {rows} here",
                    wm.rows
                ));
            }
            let starts = &self.starts[which];
            let mut at = 0;
            for g in 0..rows {
                let (row, k) = self.layout.recorded_row(g);
                let mine = &m.entries[starts[row] as usize..starts[row + 1] as usize];
                let end = at + wm.entries[at..].partition_point(|e| e.row as usize == g);
                let theirs = &wm.entries[at..end];
                at = end;
                let same = mine.len() == theirs.len()
                    && mine.iter().zip(theirs).all(|(e, w)| {
                        self.layout.moved(e.var, k) == w.var
                            && m.coeffs[e.coeff as usize] == wm.coeffs[w.coeff as usize]
                    });
                if !same {
                    return Some(format!(
                        "{name}: row {g} (block {k}'s row {row}): {} entries here, {} whole, or their variables or coefficients differ",
                        mine.len(),
                        theirs.len()
                    ));
                }
            }
        }
        None
    }

    /// Synthesizes `circuit` (the circuit this R1CS was recorded from, with its values)
    /// into `bufs`: its assignment by the circuit, a, b, c and the densities from the
    /// matrices. Writes exactly what [`super::synthesize_into`] writes with the same `c`
    /// (with [`Evaluated::ByProver`], the assignment and the densities only).
    pub fn synthesize_into<C: Circuit<Fr>>(
        &self,
        circuit: C,
        capacity: &CircuitShape,
        mut bufs: WitnessBuffers<'_>,
        what: impl Into<Evaluated>,
    ) -> Result<CircuitShape, R1csError> {
        let shape = synthesize_with(circuit, capacity, bufs.reborrow(), Lcs::None)?;
        self.finish_into(&shape, &mut bufs, what.into())?;
        Ok(shape)
    }

    /// As [`R1cs::synthesize_into`], the assignment a run of blocks per thread
    /// ([`super::synthesize_blocks_into`]). A split the circuit or the threads refuse is
    /// the outer error (`NotBlocks`, `NoThread`), `bufs` then unwritten for a one-piece
    /// synthesis; the synthesis's own outcome is the inner result.
    pub fn synthesize_blocks_into<C: Circuit<Fr> + Send>(
        &self,
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
        capacity: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
        what: impl Into<Evaluated>,
    ) -> Result<Result<CircuitShape, R1csError>, BlocksError> {
        let shape = match synthesize_blocks_with(runs, layout, capacity, bufs, Lcs::None) {
            Ok(shape) => shape,
            Err(BlocksError::Witness(e)) => return Ok(Err(e.into())),
            Err(refused) => return Err(refused),
        };
        Ok(self.finish_into(&shape, bufs, what.into()).map(|()| shape))
    }

    /// After the assignment: a, b (and c) with the densities, or the densities alone.
    fn finish_into(
        &self,
        shape: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
        what: Evaluated,
    ) -> Result<(), R1csError> {
        match what {
            Evaluated::Here(c) => self.evaluate_into(shape, bufs, c),
            Evaluated::ByProver => {
                self.same_shape(shape)?;
                self.densities_into(bufs);
                Ok(())
            }
        }
    }

    /// Refuses a synthesized shape other than the recorded one.
    fn same_shape(&self, shape: &CircuitShape) -> Result<(), R1csError> {
        let recorded = self.shape();
        if *shape != recorded {
            return Err(R1csError::Shape {
                got: *shape,
                recorded,
            });
        }
        Ok(())
    }

    /// The density bitmaps: which variables occur in A and B (the same for every witness).
    fn densities_into(&self, bufs: &mut WitnessBuffers<'_>) {
        bufs.a_aux_density[..self.a_aux_density.len()].copy_from_slice(&self.a_aux_density);
        bufs.b_aux_density[..self.b_aux_density.len()].copy_from_slice(&self.b_aux_density);
        bufs.b_input_density[..self.b_input_density.len()].copy_from_slice(&self.b_input_density);
    }

    /// a = A·z, b = B·z and (with [`CValues::Written`]) c = C·z for the assignment in
    /// `bufs`, every recorded row checked (a·b = c); bellperson's input rows (a = the
    /// input, b = c = 0), zeros to the domain's end, the density bitmaps. The second half
    /// of [`R1cs::synthesize_into`], public to be timed on its own (`cuzk bench
    /// r1cs-device`: the host's side of a and b made on the device).
    pub fn evaluate_into(
        &self,
        shape: &CircuitShape,
        bufs: &mut WitnessBuffers<'_>,
        c: CValues,
    ) -> Result<(), R1csError> {
        self.same_shape(shape)?;
        prepare(shape, bufs, Lcs::of(c))?;
        let rows = shape.num_constraints - shape.num_inputs;
        let (inputs, aux) = (&bufs.inputs[..shape.num_inputs], &bufs.aux[..shape.num_aux]);
        // One chunk of rows: its a, b and c from the three matrices, then a·b = c.
        let fill = |first: usize, a: &mut [Fr], b: &mut [Fr], c: &mut [Fr]| {
            let ms = self.m.all();
            for j in 0..a.len() {
                let (row, k) = self.layout.recorded_row(first + j);
                for (which, out) in [&mut a[j], &mut b[j], &mut c[j]].into_iter().enumerate() {
                    let (m, kinds, starts) = (ms[which], &self.kinds[which], &self.starts[which]);
                    let mut acc = Fr::ZERO;
                    for e in &m.entries[starts[row] as usize..starts[row + 1] as usize] {
                        let z = value(inputs, aux, self.layout.moved(e.var, k));
                        let i = e.coeff as usize;
                        add_term(&mut acc, &m.coeffs[i], kinds[i], z);
                    }
                    *out = acc;
                }
            }
            match (0..a.len()).find(|&j| !holds(&a[j], &b[j], &c[j])) {
                Some(j) => Err(first + j),
                None => Ok(()),
            }
        };
        const ROWS: usize = 1 << 14;
        let (a, b) = (&mut bufs.a[..rows], &mut bufs.b[..rows]);
        let checked = match c {
            CValues::Written => a
                .par_chunks_mut(ROWS)
                .zip(b.par_chunks_mut(ROWS))
                .zip(bufs.c[..rows].par_chunks_mut(ROWS))
                .enumerate()
                .try_for_each(|(i, ((a, b), c))| fill(i * ROWS, a, b, c)),
            // c is not written, but made a chunk at a time for the check.
            CValues::LeftOut => a
                .par_chunks_mut(ROWS)
                .zip(b.par_chunks_mut(ROWS))
                .enumerate()
                .try_for_each_init(Vec::new, |c, (i, (a, b))| {
                    c.resize(a.len(), Fr::ZERO);
                    fill(i * ROWS, a, b, &mut c[..a.len()])
                }),
        };
        checked.map_err(|row| R1csError::Unsatisfied {
            row,
            rows: shape.num_constraints,
        })?;
        // bellperson's `input_i · 0 = 0` rows, then zeros to the domain's end.
        for i in 0..shape.num_inputs {
            bufs.a[rows + i] = bufs.inputs[i];
        }
        let domain = shape.domain_size();
        bufs.a[shape.num_constraints..domain].fill(Fr::ZERO);
        bufs.b[rows..domain].fill(Fr::ZERO);
        if c == CValues::Written {
            bufs.c[rows..domain].fill(Fr::ZERO);
        }
        self.densities_into(bufs);
        Ok(())
    }
}

/// a·b = c, without the product where a or b is 0 or b is 1 (most rows: a bit's
/// booleanity, a word packed from its bits times ONE).
#[inline]
fn holds(a: &Fr, b: &Fr, c: &Fr) -> bool {
    match (coeff_kind(a), coeff_kind(b)) {
        (Coeff::Zero, _) | (_, Coeff::Zero) => bool::from(c.is_zero()),
        (_, Coeff::One) => a == c,
        _ => a * b == *c,
    }
}
