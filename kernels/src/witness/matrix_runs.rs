//! Matrices recorded a run of blocks per thread: the circuit's prefix and blocks of one
//! shape (`witness::blocks`), each thread recording its sub-circuit's matrices and moving
//! their rows and variables past the prefix by `run.start` blocks, where the whole circuit
//! puts them.
//!
//! Why: a gpu process folding C into L records C at its start (54 s for a 32 GiB partition
//! on one core of the 2-core machine), a synthesis process A, B and C at its first
//! partition of a proof type; the 18 challenges of a 32 GiB partition record side by side.

use std::collections::HashMap;
use std::ops::Range;

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use ff::PrimeField;

use super::blocks::{BlockLayout, BlocksError, RUN_STACK};
use super::matrix::{Entry, R1csMatrix, Recorded, Which, INPUT};

impl R1csMatrix {
    /// C alone by runs ([`Recorded::record_runs`] with [`Which::C`]).
    pub fn record_c_runs<C: Circuit<Fr> + Send>(
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
    ) -> Result<R1csMatrix, BlocksError> {
        Ok(Recorded::record_runs(runs, layout, Which::C)?.c)
    }
}

impl Recorded {
    /// Records the matrices `which` names of the whole circuit from its sub-circuits, one
    /// thread each: `runs` pairs each run of `layout.runs(threads)` with the sub-circuit of
    /// the prefix and those blocks. Equal to [`Recorded::record`] of the whole circuit (the
    /// same entries in the same order; coefficient indices in order of first appearance,
    /// as there).
    pub fn record_runs<C: Circuit<Fr> + Send>(
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
        which: Which,
    ) -> Result<Recorded, BlocksError> {
        let covered: usize = runs.iter().map(|(r, _)| r.len()).sum();
        if runs.is_empty()
            || runs[0].0.start != 0
            || covered != layout.blocks
            || runs.windows(2).any(|w| w[0].0.end != w[1].0.start)
        {
            return Err(BlocksError::NotBlocks(
                "runs do not cover the blocks in order".into(),
            ));
        }
        let recorded: Vec<(Range<usize>, Result<Recorded, BlocksError>)> =
            std::thread::scope(|s| {
                let handles: Vec<_> = runs
                    .into_iter()
                    .map(|(run, circuit)| {
                        // As for synthesis (`blocks`): a main thread's stack; a thread that
                        // does not start refuses the split (NoThread).
                        let h = std::thread::Builder::new()
                            .name(format!("recording {run:?}"))
                            .stack_size(RUN_STACK)
                            .spawn_scoped(s, move || Recorded::record(circuit, which))
                            .map_err(|e| BlocksError::NoThread(e.to_string()));
                        (run, h)
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|(run, h)| {
                        let m = h.and_then(|h| {
                            let m = h.join().expect("a recording thread panicked");
                            m.map_err(|e| BlocksError::Witness(e.into()))
                        });
                        (run, m)
                    })
                    .collect()
            });
        let (p, b) = (layout.prefix, layout.block);
        let mut whole = Recorded::default();
        let mut index: [HashMap<[u8; 32], u32>; 3] = Default::default();
        for m in whole.all_mut() {
            m.rows = p.constraints + layout.blocks * b.constraints;
            m.num_inputs = p.inputs + layout.blocks * b.inputs;
            m.num_aux = p.aux + layout.blocks * b.aux;
        }
        for (run, recorded) in recorded {
            let recorded = recorded?;
            let parts = whole.all_mut().into_iter().zip(recorded.all());
            for ((whole, m), index) in parts.zip(&mut index) {
                append_run(whole, m, &run, layout, index)?;
            }
        }
        Ok(whole)
    }
}

/// Appends run `run`'s recording `m` of one matrix to `whole`, its rows and variables past
/// the prefix moved by `run.start` blocks and its coefficients renumbered into `whole`'s.
fn append_run(
    whole: &mut R1csMatrix,
    m: &R1csMatrix,
    run: &Range<usize>,
    layout: &BlockLayout,
    index: &mut HashMap<[u8; 32], u32>,
) -> Result<(), BlocksError> {
    let (p, b) = (layout.prefix, layout.block);
    let k = run.len();
    let want = (
        p.constraints + k * b.constraints,
        p.inputs + k * b.inputs,
        p.aux + k * b.aux,
    );
    if (m.rows, m.num_inputs, m.num_aux) != want {
        return Err(BlocksError::NotBlocks(format!(
            "blocks {run:?} recorded {} rows, {} inputs, {} aux; the layout says {want:?}",
            m.rows, m.num_inputs, m.num_aux
        )));
    }
    let coeff: Vec<u32> = m
        .coeffs
        .iter()
        .map(|c| {
            let next = index.len() as u32;
            *index.entry(c.to_repr()).or_insert_with(|| {
                whole.coeffs.push(*c);
                next
            })
        })
        .collect();
    let moved = |i: u32, prefix: usize, by: usize| {
        if (i as usize) < prefix {
            i
        } else {
            i + (run.start * by) as u32
        }
    };
    // Only the first run keeps the prefix's rows; every run's blocks move.
    let keep_prefix = run.start == 0;
    whole.entries.extend(
        m.entries
            .iter()
            .filter(|e| keep_prefix || e.row as usize >= p.constraints)
            .map(|e| Entry {
                row: moved(e.row, p.constraints, b.constraints),
                var: if e.var & INPUT != 0 {
                    moved(e.var & !INPUT, p.inputs, b.inputs) | INPUT
                } else {
                    moved(e.var, p.aux, b.aux)
                },
                coeff: coeff[e.coeff as usize],
            }),
    );
    Ok(())
}
