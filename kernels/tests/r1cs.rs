//! Synthesis from a recorded R1CS against synthesis that builds its combinations: the same
//! buffers (a, b, c over the whole domain, inputs, aux, the three density bitmaps), from a
//! whole recording and from a prefix-and-one-block recording, in one piece and a run of
//! blocks per thread, with and without C; and a recording that does not fit the circuit
//! refused with the reason.

mod chain_circuit;

use blstrs::Scalar as Fr;
use chain_circuit::chain;
use cuzk_kernels::msm::scalars::to_limbs_vec;
use cuzk_kernels::witness::{
    first_difference, synthesize_into, BlockLayout, CValues, CircuitShape, OwnedWitness, R1cs,
    R1csError, Recorded, Which,
};

/// Buffers of `shape` filled with garbage, as a reused slot's are: nothing may depend on
/// zeros.
fn garbage(shape: CircuitShape) -> OwnedWitness {
    let mut w = OwnedWitness::new(shape);
    let b = w.buffers();
    for v in [b.a, b.b, b.c, b.aux, b.inputs] {
        v.fill(Fr::from(0xdead_beef_u64));
    }
    for v in [b.a_aux_density, b.b_aux_density, b.b_input_density] {
        v.fill(u64::MAX);
    }
    w
}

fn built(seed: u64, blocks: usize, c: CValues) -> (OwnedWitness, CircuitShape) {
    let shape = CircuitShape::of(chain(seed, 0..blocks, false)).unwrap();
    let mut w = garbage(shape);
    let got = synthesize_into(chain(seed, 0..blocks, false), &shape, w.buffers(), c).unwrap();
    (w, got)
}

fn layout(seed: u64, blocks: usize) -> BlockLayout {
    BlockLayout::measure(chain(seed, 0..0, false), chain(seed, 0..1, false), blocks).unwrap()
}

/// The prefix and block 0 recorded, for the whole circuit of `blocks` blocks.
fn by_block(seed: u64, blocks: usize) -> R1cs {
    let m = Recorded::record(chain(seed, 0..1, false), Which::ALL).unwrap();
    R1cs::blocks(m, layout(seed, blocks)).unwrap()
}

#[test]
fn recorded_r1cs_writes_what_built_combinations_write() {
    for c in [CValues::Written, CValues::LeftOut] {
        for (blocks, threads) in [(7, 3), (18, 4), (2, 2), (5, 1)] {
            let seed = 77 + blocks as u64;
            let (mut want, want_shape) = built(seed, blocks, c);
            let whole =
                R1cs::whole(Recorded::record(chain(seed, 0..blocks, false), Which::ALL).unwrap());
            let pattern = by_block(seed, blocks);
            assert_eq!(whole.shape(), want_shape);
            assert_eq!(pattern.shape(), want_shape);
            let one_block: usize = pattern.entries().iter().sum();
            let all: usize = whole.entries().iter().sum();
            assert!(
                one_block < all || blocks == 1,
                "{one_block} of {all} entries kept"
            );
            for (name, r1cs) in [("whole", &whole), ("prefix and one block", &pattern)] {
                // In one piece.
                let mut w = garbage(want_shape);
                let circuit = chain(seed, 0..blocks, false);
                let got = r1cs
                    .synthesize_into(circuit, &want_shape, w.buffers(), c)
                    .unwrap();
                assert_eq!(got, want_shape);
                if c == CValues::LeftOut {
                    // Neither way writes c: equal garbage.
                    assert!(w
                        .buffers()
                        .c
                        .iter()
                        .all(|v| *v == Fr::from(0xdead_beef_u64)));
                }
                let differs = first_difference(&want.buffers(), &w.buffers());
                assert_eq!(differs, None, "{name}, one piece, {blocks} blocks, {c:?}");
                // A run of blocks per thread.
                let layout = layout(seed, blocks);
                if blocks < 2 {
                    continue;
                }
                let runs = layout
                    .runs(threads)
                    .into_iter()
                    .map(|r| (r.clone(), chain(seed, r, false)))
                    .collect();
                let mut w = garbage(want_shape);
                let got = r1cs
                    .synthesize_blocks_into(runs, &layout, &want_shape, &mut w.buffers(), c)
                    .expect("the split is not refused")
                    .unwrap();
                assert_eq!(got, want_shape);
                let differs = first_difference(&want.buffers(), &w.buffers());
                assert_eq!(
                    differs, None,
                    "{name}, {threads} threads, {blocks} blocks, {c:?}"
                );
            }
        }
    }
}

/// One coefficient changed, so that the first row using it does not hold through each way
/// the check compares: A's 3 → 4 (every block's `d = c + bit` row, whose b is 1), B's
/// 1 → 2 (first in `x · 1 = x`, the input: a product of two values other than 0 and 1),
/// B's 1 → 0 (the same row with b = 0 and c ≠ 0). Synthesis says which row.
#[test]
fn a_recording_with_a_changed_coefficient_is_refused_at_its_first_row() {
    let seed = 5;
    let blocks = 6;
    let (_, shape) = built(seed, blocks, CValues::Written);
    for (matrix, from, to) in [("A", 3u64, 4u64), ("B", 1, 2), ("B", 1, 0)] {
        let mut m = Recorded::record(chain(seed, 0..1, false), Which::ALL).unwrap();
        let tampered = if matrix == "A" { &mut m.a } else { &mut m.b };
        let i = tampered
            .coeffs
            .iter()
            .position(|c| *c == Fr::from(from))
            .unwrap();
        tampered.coeffs[i] = Fr::from(to);
        let first_row = tampered
            .entries
            .iter()
            .find(|e| e.coeff as usize == i)
            .unwrap()
            .row;
        let r1cs = R1cs::blocks(m, layout(seed, blocks)).unwrap();
        let mut w = garbage(shape);
        let circuit = chain(seed, 0..blocks, false);
        match r1cs.synthesize_into(circuit, &shape, w.buffers(), CValues::LeftOut) {
            Err(R1csError::Unsatisfied { row, rows }) => {
                let want = (first_row as usize, shape.num_constraints);
                assert_eq!((row, rows), want, "{matrix} {from} → {to}");
            }
            other => panic!("{matrix} {from} → {to} was not refused: {other:?}"),
        }
    }
}

/// A recording of another circuit (more blocks than this one has) is refused by its shape,
/// and a recording that is not a prefix and one block of the layout by its counts.
#[test]
fn a_recording_of_another_circuit_is_refused() {
    let seed = 9;
    let (_, shape) = built(seed, 4, CValues::Written);
    let other = by_block(seed, 5);
    let mut w = garbage(shape);
    let got = other.synthesize_into(
        chain(seed, 0..4, false),
        &shape,
        w.buffers(),
        CValues::Written,
    );
    assert!(matches!(got, Err(R1csError::Shape { .. })), "{got:?}");

    let two_blocks = Recorded::record(chain(seed, 0..2, false), Which::ALL).unwrap();
    let got = R1cs::blocks(two_blocks, layout(seed, 4));
    assert!(
        matches!(got, Err(R1csError::Layout { .. })),
        "{:?}",
        got.err()
    );
}

/// The prefix and one block, each block moved into place, give the whole circuit's A, B
/// and C entry for entry; a changed coefficient, or a circuit whose blocks differ, is found.
#[test]
fn the_prefix_and_one_block_moved_are_the_whole_circuits_matrices() {
    for blocks in [2, 7, 18] {
        let whole = Recorded::record(chain(3, 0..blocks, false), Which::ALL).unwrap();
        assert_eq!(
            by_block(3, blocks).differs_from(&whole),
            None,
            "{blocks} blocks"
        );
    }
    let whole = Recorded::record(chain(3, 0..7, false), Which::ALL).unwrap();
    let mut m = Recorded::record(chain(3, 0..1, false), Which::ALL).unwrap();
    let last = m.c.coeffs.len() - 1;
    m.c.coeffs[last] += Fr::from(1u64);
    let tampered = R1cs::blocks(m, layout(3, 7)).unwrap();
    let found = tampered
        .differs_from(&whole)
        .expect("a changed coefficient is found");
    assert!(found.starts_with("C: row"), "{found}");
    // Block 3 of the skewed circuit has one constraint more: its rows no longer line up.
    let skewed = Recorded::record(chain(3, 0..7, true), Which::ALL).unwrap();
    assert!(by_block(3, 7).differs_from(&skewed).is_some());
}

/// The device's form of a recording evaluated limb for limb as kernels/cuda/r1cs.cu does
/// (`DeviceForm::row`: Montgomery products over canonical z, coefficients kept as c·R²)
/// gives synthesis's a, b and c = C·z on every row of the domain, bellperson's input rows
/// and the zeros after them included: from a whole recording, from the prefix and one
/// block, and from a two-block layout stretched to more blocks (what the device's
/// domain-sized timing does with a small recording).
#[test]
fn the_device_form_gives_synthesis_a_b_and_c() {
    for blocks in [2, 4, 9] {
        let seed = 31 + blocks as u64;
        let (mut want, shape) = built(seed, blocks, CValues::Written);
        let w = want.buffers();
        let mut z = to_limbs_vec(&w.inputs[..shape.num_inputs]);
        z.extend(to_limbs_vec(&w.aux[..shape.num_aux]));
        let whole =
            R1cs::whole(Recorded::record(chain(seed, 0..blocks, false), Which::ALL).unwrap());
        let mut stretched = by_block(seed, 2).device_form();
        stretched.layout.blocks = blocks;
        for (name, form) in [
            ("whole", whole.device_form()),
            ("prefix and one block", by_block(seed, blocks).device_form()),
            ("stretched", stretched),
        ] {
            assert_eq!(form.layout.shape(), shape, "{name}");
            assert_eq!(form.rows(), shape.num_constraints - shape.num_inputs);
            for g in 0..shape.domain_size() {
                let got = form.row(g, &z);
                assert_eq!(
                    got,
                    [w.a[g], w.b[g], w.c[g]],
                    "{name}, {blocks} blocks, row {g}"
                );
            }
        }
    }
}
