//! One circuit synthesized by several threads at once, a run of its blocks each.
//!
//! Why: synthesis is the largest CPU cost of a proof (a 32 GiB PoRep partition takes ~25 s
//! on one core), and a partition's witness fills a slot of ~16 GiB, so how many partitions
//! a host synthesizes at once is bounded by memory, not by cores. Threads inside one
//! partition turn idle cores into a shorter synthesis of the partitions that fit.
//!
//! Which circuits: a *prefix* (the constant ONE, public inputs, shared gadgets) followed by
//! `blocks` blocks of identical shape that each reference only the prefix and themselves,
//! and nothing after the last block. A PoRep partition is one: the prefix allocates
//! replica_id, comm_d, comm_r, comm_r_last, comm_c and checks comm_r = H(comm_c ‖
//! comm_r_last); then one block per challenge. The caller builds the sub-circuit of each
//! run of blocks lo..hi (the prefix and those blocks only); a thread synthesizes its
//! sub-circuit and moves every index past the prefix by `lo` blocks, which is where the
//! whole circuit puts it ([`BlockLayout`]). The prefix is synthesized by every thread (its
//! values are needed by every block) and written by the first.
//!
//! A thread writes only inside its own ranges of a, b, c, inputs and aux; a circuit that
//! leaves them (its blocks are not of one shape) is reported as [`BlocksError::NotBlocks`]
//! and the caller synthesizes it in one piece instead.

use std::ops::Range;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;
use ff::Field;

use super::matrix::INPUT;
use super::writer::{eval, prepare, Assignment, Lcs};
use super::{CValues, CircuitShape, WitnessBuffers, WitnessError};

/// Stack of each run's thread: 8 MiB, a Linux main thread's default.
pub(super) const RUN_STACK: usize = 8 << 20;

/// Counts of constraints, inputs and aux variables (constraints without bellperson's one
/// `input · 0 = 0` row per input; inputs with the constant ONE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub constraints: usize,
    pub inputs: usize,
    pub aux: usize,
}

impl Counts {
    fn of(shape: &CircuitShape) -> Counts {
        Counts {
            constraints: shape.num_constraints - shape.num_inputs,
            inputs: shape.num_inputs,
            aux: shape.num_aux,
        }
    }

    /// `self + k·block`.
    pub(super) fn plus(self, k: usize, block: Counts) -> Counts {
        Counts {
            constraints: self.constraints + k * block.constraints,
            inputs: self.inputs + k * block.inputs,
            aux: self.aux + k * block.aux,
        }
    }
}

/// Where each block of a circuit lies: block k's variables and constraints start at
/// `prefix + k·block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    pub prefix: Counts,
    pub block: Counts,
    pub blocks: usize,
}

impl BlockLayout {
    /// Measures the layout from the shapes of the prefix alone (`prefix`: the circuit with
    /// no block) and of the sub-circuit with block 0 (`one`): their difference is a block.
    /// Counting calls no witness closure but costs about half the synthesis of what it
    /// walks (here the prefix and one block), so callers keep the layout of a circuit type
    /// once measured.
    pub fn measure<P: Circuit<Fr>, C: Circuit<Fr>>(
        prefix: P,
        one: C,
        blocks: usize,
    ) -> Result<BlockLayout, BlocksError> {
        if blocks < 2 {
            return Err(BlocksError::NotBlocks(format!(
                "{blocks} block(s): nothing to split"
            )));
        }
        let prefix = Counts::of(&CircuitShape::of(prefix)?);
        let one = Counts::of(&CircuitShape::of(one)?);
        let diff = |x: usize, y: usize, what: &str| {
            y.checked_sub(x).ok_or_else(|| {
                BlocksError::NotBlocks(format!(
                    "{what}: {x} in the prefix, {y} with one block: not a prefix and blocks"
                ))
            })
        };
        let block = Counts {
            constraints: diff(prefix.constraints, one.constraints, "constraints")?,
            inputs: diff(prefix.inputs, one.inputs, "inputs")?,
            aux: diff(prefix.aux, one.aux, "aux variables")?,
        };
        Ok(BlockLayout {
            prefix,
            block,
            blocks,
        })
    }

    /// The whole circuit's shape as the prover sees it (with the input rows).
    pub fn shape(&self) -> CircuitShape {
        let all = self.prefix.plus(self.blocks, self.block);
        CircuitShape {
            num_constraints: all.constraints + all.inputs,
            num_inputs: all.inputs,
            num_aux: all.aux,
        }
    }

    /// A variable of the recording (the prefix and block 0; input k | `INPUT`, or aux k) in
    /// block k's place: past the prefix, k blocks on.
    #[inline]
    pub fn moved(&self, var: u32, k: usize) -> u32 {
        let (p, b) = (self.prefix, self.block);
        if var & INPUT != 0 {
            let i = (var & !INPUT) as usize;
            (if i < p.inputs { i } else { i + k * b.inputs }) as u32 | INPUT
        } else {
            let i = var as usize;
            (if i < p.aux { i } else { i + k * b.aux }) as u32
        }
    }

    /// The recorded row of whole-circuit row `g` and its block (0 for the prefix).
    #[inline]
    pub fn recorded_row(&self, g: usize) -> (usize, usize) {
        let (p, b) = (self.prefix.constraints, self.block.constraints);
        if g < p {
            (g, 0)
        } else {
            (p + (g - p) % b, (g - p) / b)
        }
    }

    /// Blocks split into at most `threads` runs as even as they go. A partition takes as
    /// long as its longest run, ⌈blocks / threads⌉ blocks, so only as many runs are made as
    /// that length needs: 18 blocks on 16 threads are 9 runs of 2, not 2 runs of 2 and 14
    /// of 1 that take as long and hold 7 threads more.
    pub fn runs(&self, threads: usize) -> Vec<Range<usize>> {
        let blocks = self.blocks.max(1);
        let longest = blocks.div_ceil(threads.clamp(1, blocks));
        let t = blocks.div_ceil(longest);
        (0..t)
            .map(|i| (i * self.blocks / t)..((i + 1) * self.blocks / t))
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BlocksError {
    /// The circuit is not a prefix and blocks of one shape (or its layout was measured on
    /// another circuit): synthesize it in one piece.
    #[error("not split into blocks: {0}")]
    NotBlocks(String),
    /// A thread did not start (resources, not the circuit): this circuit goes in one piece,
    /// the next may split.
    #[error("no thread for a run of blocks: {0}")]
    NoThread(String),
    #[error(transparent)]
    Witness(#[from] WitnessError),
}

impl From<SynthesisError> for BlocksError {
    fn from(e: SynthesisError) -> Self {
        BlocksError::Witness(WitnessError::Synthesis(e))
    }
}

/// Synthesizes the whole circuit into `bufs` from its sub-circuits, one thread each:
/// `runs` pairs each run of `layout.runs(threads)` with the sub-circuit of the prefix and
/// those blocks. Writes exactly what [`super::synthesize_into`] writes for the whole
/// circuit with the same `c` (with [`CValues::LeftOut`], C's combinations are neither built
/// nor evaluated and `bufs.c` is not written); `bufs` stays the caller's, so on
/// [`BlocksError::NotBlocks`] it can synthesize the circuit in one piece into the same
/// buffers.
pub fn synthesize_blocks_into<C: Circuit<Fr> + Send>(
    runs: Vec<(Range<usize>, C)>,
    layout: &BlockLayout,
    capacity: &CircuitShape,
    bufs: &mut WitnessBuffers<'_>,
    c: CValues,
) -> Result<CircuitShape, BlocksError> {
    synthesize_blocks_with(runs, layout, capacity, bufs, Lcs::of(c))
}

/// [`synthesize_blocks_into`] building and evaluating the combinations `lcs` names; with
/// [`Lcs::None`] only the assignment is written (`r1cs` makes the rest).
pub(super) fn synthesize_blocks_with<C: Circuit<Fr> + Send>(
    runs: Vec<(Range<usize>, C)>,
    layout: &BlockLayout,
    capacity: &CircuitShape,
    bufs: &mut WitnessBuffers<'_>,
    lcs: Lcs,
) -> Result<CircuitShape, BlocksError> {
    let shape = layout.shape();
    for (what, got, cap) in [
        (
            "constraints",
            shape.num_constraints,
            capacity.num_constraints,
        ),
        ("inputs", shape.num_inputs, capacity.num_inputs),
        ("aux variables", shape.num_aux, capacity.num_aux),
    ] {
        if got > cap {
            return Err(WitnessError::ShapeExceeded {
                what,
                capacity: cap,
            }
            .into());
        }
    }
    let covered: usize = runs.iter().map(|(r, _)| r.len()).sum();
    if runs.is_empty()
        || covered != layout.blocks
        || runs.windows(2).any(|w| w[0].0.end != w[1].0.start)
    {
        return Err(BlocksError::NotBlocks(format!(
            "runs {:?} do not cover blocks 0..{} in order",
            runs.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
            layout.blocks
        )));
    }
    prepare(&shape, bufs, lcs)?;
    let out = Out::new(bufs);
    let outcomes: Vec<Result<RunWriter<'_>, BlocksError>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut jobs = runs.into_iter();
        let (first_run, first) = jobs.next().expect("runs checked non-empty");
        for (run, circuit) in jobs {
            let out = &out;
            // The stack a main thread has (the gadgets ran there in one piece), not the
            // 2 MiB spawned threads get by default. A thread that cannot start leaves its
            // run unwritten: the whole is refused (synthesized in one piece by the caller),
            // never returned part-written.
            let thread = std::thread::Builder::new()
                .name(format!("synthesis {run:?}"))
                .stack_size(RUN_STACK)
                .spawn_scoped(s, move || synthesize_run(circuit, run, layout, out, lcs))
                .map_err(|e| BlocksError::NoThread(e.to_string()));
            handles.push(thread);
        }
        let mut all = vec![synthesize_run(first, first_run, layout, &out, lcs)];
        all.extend(
            handles
                .into_iter()
                .map(|h| h.and_then(|h| h.join().expect("a synthesis thread panicked"))),
        );
        all
    });
    let mut writers = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        writers.push(outcome?);
    }
    if lcs == Lcs::None {
        return Ok(shape);
    }
    for w in &writers {
        w.merge_densities(bufs);
    }
    // bellperson's `input_i · 0 = 0` rows after the circuit's own: a = the input, b = c = 0;
    // A's density tracks aux only, so these set no bit.
    let rows = shape.num_constraints - shape.num_inputs;
    for i in 0..shape.num_inputs {
        bufs.a[rows + i] = bufs.inputs[i];
    }
    let c = (lcs == Lcs::All).then_some(&mut *bufs.c);
    for v in [Some(&mut *bufs.b), c].into_iter().flatten() {
        v[rows..shape.domain_size()].fill(Fr::ZERO);
    }
    bufs.a[shape.num_constraints..shape.domain_size()].fill(Fr::ZERO);
    Ok(shape)
}

/// Runs one sub-circuit through its writer and checks it produced exactly its blocks.
fn synthesize_run<'o, C: Circuit<Fr>>(
    circuit: C,
    run: Range<usize>,
    layout: &'o BlockLayout,
    out: &'o Out,
    lcs: Lcs,
) -> Result<RunWriter<'o>, BlocksError> {
    let mut cs = RunWriter::new(run.clone(), layout, out, lcs);
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    if let Some(fault) = cs.fault.take() {
        return Err(BlocksError::NotBlocks(fault));
    }
    let want = layout.prefix.plus(run.len(), layout.block);
    if cs.n != want {
        return Err(BlocksError::NotBlocks(format!(
            "blocks {run:?} made {:?}, the layout says {want:?}",
            cs.n
        )));
    }
    Ok(cs)
}

/// One of the whole circuit's output buffers, shared by the threads.
struct Shared(*mut Fr);

// SAFETY: the pointer is into a buffer borrowed mutably for the whole scope of the threads;
// each index is written and read by one thread only (its run's ranges, the prefix by the
// first run), which `RunWriter` checks against the layout before every access, and every
// buffer holds the layout's shape (`prepare`).
unsafe impl Sync for Shared {}

impl Shared {
    /// SAFETY: `i` is inside the buffer and in a range only the calling thread accesses.
    unsafe fn write(&self, i: usize, v: Fr) {
        unsafe { self.0.add(i).write(v) }
    }

    /// SAFETY: as for `write`; element `i` was written by the calling thread.
    unsafe fn read(&self, i: usize) -> Fr {
        unsafe { *self.0.add(i) }
    }
}

struct Out {
    a: Shared,
    b: Shared,
    c: Shared,
    inputs: Shared,
    aux: Shared,
}

impl Out {
    fn new(bufs: &mut WitnessBuffers<'_>) -> Out {
        Out {
            a: Shared(bufs.a.as_mut_ptr()),
            b: Shared(bufs.b.as_mut_ptr()),
            c: Shared(bufs.c.as_mut_ptr()),
            inputs: Shared(bufs.inputs.as_mut_ptr()),
            aux: Shared(bufs.aux.as_mut_ptr()),
        }
    }
}

/// One kind of variable (inputs or aux) as a run sees it: the prefix's values kept (every
/// run reads them, only the first writes them out), its blocks' values written at their
/// place in the whole circuit.
struct Vars<'o> {
    out: &'o Shared,
    prefix: Vec<Fr>,
    prefix_len: usize,
    /// Added to a sub-circuit index past the prefix: `run.start` blocks.
    offset: usize,
    /// The whole circuit's index where this run ends.
    end: usize,
}

impl<'o> Vars<'o> {
    fn new(out: &'o Shared, prefix_len: usize, offset: usize, end: usize) -> Self {
        Vars {
            out,
            prefix: Vec::with_capacity(prefix_len),
            prefix_len,
            offset,
            end,
        }
    }

    /// Keeps variable `i`'s value (writing it out when it is this run's); the whole
    /// circuit's index it lies past this run's end otherwise.
    fn store(&mut self, i: usize, value: Fr, writes_prefix: bool) -> Result<(), usize> {
        if i < self.prefix_len {
            self.prefix.push(value);
            if writes_prefix {
                // SAFETY: prefix indices are below the shape's count; only the first run
                // writes them.
                unsafe { self.out.write(i, value) };
            }
            return Ok(());
        }
        let g = i + self.offset;
        if g >= self.end {
            return Err(g);
        }
        // SAFETY: g lies in this run's range, which no other thread touches.
        unsafe { self.out.write(g, value) };
        Ok(())
    }

    /// Variable `i`'s value and its index in the whole circuit.
    #[inline]
    fn load(&self, i: usize) -> (Fr, usize) {
        if let Some(v) = self.prefix.get(i) {
            return (*v, i);
        }
        let g = i + self.offset;
        // SAFETY: g lies in this run's range, written by this thread when the variable was
        // allocated (a combination names only allocated variables).
        let v = if g < self.end {
            unsafe { self.out.read(g) }
        } else {
            Fr::ZERO
        };
        (v, g)
    }
}

/// A run's values of both kinds.
struct RunValues<'o> {
    inputs: Vars<'o>,
    aux: Vars<'o>,
}

impl Assignment for RunValues<'_> {
    #[inline]
    fn input(&self, i: usize) -> (Fr, usize) {
        self.inputs.load(i)
    }

    #[inline]
    fn aux(&self, i: usize) -> (Fr, usize) {
        self.aux.load(i)
    }
}

/// One thread's constraint system: synthesizes the prefix and blocks `run`, writing blocks
/// at their place in the whole circuit (and the prefix, when `run` starts at block 0).
struct RunWriter<'o> {
    out: &'o Out,
    values: RunValues<'o>,
    layout: &'o BlockLayout,
    writes_prefix: bool,
    /// Which combinations are built and evaluated.
    lcs: Lcs,
    /// Rows: added to a sub-circuit row past the prefix, and where this run's rows end.
    row_offset: usize,
    row_end: usize,
    /// Counts so far, in the sub-circuit's own numbering.
    n: Counts,
    /// Density bits over the whole circuit's indices, merged after the threads end.
    a_aux_density: Vec<u64>,
    b_aux_density: Vec<u64>,
    b_input_density: Vec<u64>,
    fault: Option<String>,
}

impl<'o> RunWriter<'o> {
    fn new(run: Range<usize>, layout: &'o BlockLayout, out: &'o Out, lcs: Lcs) -> Self {
        let shape = layout.shape();
        let offset = Counts::default().plus(run.start, layout.block);
        let end = layout.prefix.plus(run.end, layout.block);
        // Zeroed allocations are untouched pages until a bit is set: a run only touches
        // the prefix's words and its own.
        let words = CircuitShape::bitmap_words;
        RunWriter {
            out,
            values: RunValues {
                inputs: Vars::new(&out.inputs, layout.prefix.inputs, offset.inputs, end.inputs),
                aux: Vars::new(&out.aux, layout.prefix.aux, offset.aux, end.aux),
            },
            layout,
            writes_prefix: run.start == 0,
            lcs,
            row_offset: offset.constraints,
            row_end: end.constraints,
            n: Counts::default(),
            a_aux_density: vec![0; words(shape.num_aux)],
            b_aux_density: vec![0; words(shape.num_aux)],
            b_input_density: vec![0; words(shape.num_inputs)],
            fault: None,
        }
    }

    fn note_fault(&mut self, what: &str, index: usize, end: usize) {
        if self.fault.is_none() {
            self.fault = Some(format!(
                "{what} {index} lies past its run's end {end}: not a prefix and blocks of one shape"
            ));
        }
    }

    /// ORs this run's density bits (the prefix's words and its own) into the buffers.
    fn merge_densities(&self, bufs: &mut WitnessBuffers<'_>) {
        let aux = &self.values.aux;
        let words = [
            0..aux.prefix_len.div_ceil(64),
            (aux.prefix_len + aux.offset) / 64..aux.end.div_ceil(64),
        ];
        for range in words {
            for (dst, src) in [
                (&mut *bufs.a_aux_density, &self.a_aux_density),
                (&mut *bufs.b_aux_density, &self.b_aux_density),
            ] {
                for w in range.clone() {
                    dst[w] |= src[w];
                }
            }
        }
        for (dst, src) in bufs.b_input_density.iter_mut().zip(&self.b_input_density) {
            *dst |= src;
        }
    }
}

impl ConstraintSystem<Fr> for RunWriter<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        let i = self.n.aux;
        self.n.aux += 1;
        if let Err(g) = self.values.aux.store(i, value, self.writes_prefix) {
            self.note_fault("aux variable", g, self.values.aux.end);
        }
        Ok(Variable::new_unchecked(Index::Aux(i)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let value = f()?;
        let i = self.n.inputs;
        self.n.inputs += 1;
        if let Err(g) = self.values.inputs.store(i, value, self.writes_prefix) {
            self.note_fault("input", g, self.values.inputs.end);
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
        let j = self.n.constraints;
        self.n.constraints += 1;
        let g = if j < self.layout.prefix.constraints {
            if !self.writes_prefix {
                // Another run writes the prefix's rows; the values they need are kept.
                return;
            }
            j
        } else {
            let g = j + self.row_offset;
            if g >= self.row_end {
                self.note_fault("constraint", g, self.row_end);
                return;
            }
            g
        };
        if self.lcs == Lcs::None {
            return;
        }
        let (a, b) = (a(LinearCombination::zero()), b(LinearCombination::zero()));
        let c = (self.lcs == Lcs::All).then(|| c(LinearCombination::zero()));
        let values = &self.values;
        // As in the one-thread writer: A tracks aux only, C tracks nothing.
        let va = eval(&a, values, None, Some(&mut self.a_aux_density));
        let vb = eval(
            &b,
            values,
            Some(&mut self.b_input_density),
            Some(&mut self.b_aux_density),
        );
        let vc = c.map(|c| eval(&c, values, None, None));
        // SAFETY: g is a prefix row (first run only) or inside this run's rows.
        unsafe {
            self.out.a.write(g, va);
            self.out.b.write(g, vb);
            if let Some(vc) = vc {
                self.out.c.write(g, vc);
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
