//! C recorded a run of blocks per thread: the circuit's prefix and blocks of one shape
//! (`witness::blocks`), each thread recording its sub-circuit's C and moving its rows and
//! variables past the prefix by `run.start` blocks, where the whole circuit puts them.
//!
//! Why: a gpu process folding C into L records C at its start (54 s for a 32 GiB partition
//! on one core of the 2-core machine); its 18 challenges record side by side.

use std::collections::HashMap;
use std::ops::Range;

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use ff::PrimeField;

use super::blocks::{BlockLayout, BlocksError, RUN_STACK};
use super::c_matrix::{CMatrix, Entry, INPUT};

impl CMatrix {
    /// Records C of the whole circuit from its sub-circuits, one thread each: `runs` pairs
    /// each run of `layout.runs(threads)` with the sub-circuit of the prefix and those
    /// blocks. Equal to [`CMatrix::record`] of the whole circuit (the same entries in the
    /// same order; coefficient indices in order of first appearance, as there).
    pub fn record_runs<C: Circuit<Fr> + Send>(
        runs: Vec<(Range<usize>, C)>,
        layout: &BlockLayout,
    ) -> Result<CMatrix, BlocksError> {
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
        let recorded: Vec<(Range<usize>, Result<CMatrix, BlocksError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = runs
                .into_iter()
                .map(|(run, circuit)| {
                    // As for synthesis (`blocks`): a main thread's stack; a thread that
                    // does not start refuses the split (NoThread).
                    let h = std::thread::Builder::new()
                        .name(format!("recording C {run:?}"))
                        .stack_size(RUN_STACK)
                        .spawn_scoped(s, move || CMatrix::record(circuit))
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
        let mut whole = CMatrix {
            rows: p.constraints + layout.blocks * b.constraints,
            num_inputs: p.inputs + layout.blocks * b.inputs,
            num_aux: p.aux + layout.blocks * b.aux,
            ..CMatrix::default()
        };
        let mut index: HashMap<[u8; 32], u32> = HashMap::new();
        for (run, m) in recorded {
            let m = m?;
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
        }
        Ok(whole)
    }
}
