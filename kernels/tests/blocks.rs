//! Synthesis a run of blocks per thread against one-piece synthesis, on a circuit of a
//! prefix and many blocks (more than the PoRep fixtures' two challenges), and the refusal
//! of a circuit whose blocks differ in shape.

mod chain_circuit;

use chain_circuit::chain;
use cuzk_kernels::witness::{
    first_difference, synthesize_blocks_into, synthesize_into, BlockLayout, BlocksError, CValues,
    CircuitShape, OwnedWitness,
};

fn threaded(
    seed: u64,
    blocks: usize,
    threads: usize,
    skewed: bool,
) -> (OwnedWitness, Result<CircuitShape, BlocksError>) {
    let layout =
        BlockLayout::measure(chain(seed, 0..0, skewed), chain(seed, 0..1, skewed), blocks).unwrap();
    let shape = CircuitShape::of(chain(seed, 0..blocks, skewed)).unwrap();
    let mut w = OwnedWitness::new(shape);
    let runs = layout
        .runs(threads)
        .into_iter()
        .map(|r| (r.clone(), chain(seed, r, skewed)))
        .collect();
    let got = synthesize_blocks_into(runs, &layout, &shape, &mut w.buffers(), CValues::Written);
    (w, got)
}

#[test]
fn runs_of_blocks_equal_one_piece() {
    for (blocks, threads) in [(7, 3), (18, 4), (5, 5), (2, 8)] {
        let seed = 1234 + blocks as u64;
        let shape = CircuitShape::of(chain(seed, 0..blocks, false)).unwrap();
        let mut one = OwnedWitness::new(shape);
        let one_shape = synthesize_into(
            chain(seed, 0..blocks, false),
            &shape,
            one.buffers(),
            CValues::Written,
        )
        .unwrap();
        let (mut w, got) = threaded(seed, blocks, threads, false);
        assert_eq!(
            got.unwrap(),
            one_shape,
            "{blocks} blocks, {threads} threads"
        );
        let differs = first_difference(&one.buffers(), &w.buffers());
        assert_eq!(differs, None, "{blocks} blocks, {threads} threads");
    }
}

#[test]
fn blocks_of_different_shapes_are_refused() {
    let (_, got) = threaded(99, 7, 3, true);
    match got {
        Err(BlocksError::NotBlocks(why)) => println!("refused: {why}"),
        other => panic!("a skewed circuit was not refused: {other:?}"),
    }
}

#[test]
fn runs_are_as_many_as_the_longest_needs() {
    let layout = BlockLayout::measure(chain(5, 0..0, false), chain(5, 0..1, false), 18).unwrap();
    let lens = |t: usize| layout.runs(t).iter().map(|r| r.len()).collect::<Vec<_>>();
    assert_eq!(lens(16), vec![2; 9]);
    assert_eq!(lens(18), vec![1; 18]);
    assert_eq!(lens(32), vec![1; 18]);
    assert_eq!(lens(4), vec![4, 5, 4, 5]);
    assert_eq!(lens(1), vec![18]);
    assert_eq!(lens(7), vec![3; 6]);
}

#[test]
fn runs_must_cover_the_blocks_in_order() {
    let layout = BlockLayout::measure(chain(5, 0..0, false), chain(5, 0..1, false), 4).unwrap();
    let shape = layout.shape();
    let mut w = OwnedWitness::new(shape);
    let runs = vec![(0..2, chain(5, 0..2, false)), (3..4, chain(5, 3..4, false))];
    let got = synthesize_blocks_into(runs, &layout, &shape, &mut w.buffers(), CValues::Written);
    assert!(matches!(got, Err(BlocksError::NotBlocks(_))), "{got:?}");
}

/// C recorded a run of blocks per thread equals C recorded from the whole circuit: the same
/// entries in the same order, the same coefficient table.
#[test]
fn c_recorded_by_runs_equals_the_whole_circuits() {
    use cuzk_kernels::witness::matrix::R1csMatrix;
    for (blocks, threads) in [(7, 3), (18, 4), (2, 2)] {
        let layout =
            BlockLayout::measure(chain(3, 0..0, false), chain(3, 0..1, false), blocks).unwrap();
        let whole = R1csMatrix::record_c(chain(3, 0..blocks, false)).unwrap();
        let runs = layout
            .runs(threads)
            .into_iter()
            .map(|r| (r.clone(), chain(3, r, false)))
            .collect();
        let by_runs = R1csMatrix::record_c_runs(runs, &layout).unwrap();
        assert_eq!(
            (by_runs.rows, by_runs.num_inputs, by_runs.num_aux),
            (whole.rows, whole.num_inputs, whole.num_aux)
        );
        assert_eq!(by_runs.coeffs, whole.coeffs, "{blocks} blocks");
        assert_eq!(by_runs.entries, whole.entries, "{blocks} blocks");
    }
    let layout = BlockLayout::measure(chain(3, 0..0, true), chain(3, 0..1, true), 7).unwrap();
    let runs = layout
        .runs(3)
        .into_iter()
        .map(|r| (r.clone(), chain(3, r, true)))
        .collect();
    assert!(matches!(
        R1csMatrix::record_c_runs(runs, &layout),
        Err(BlocksError::NotBlocks(_))
    ));
}
