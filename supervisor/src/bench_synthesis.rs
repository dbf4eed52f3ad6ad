//! `cuzk bench synthesis`: each partition of a real C1 synthesized in one piece on one
//! thread (what the synthesis stage did before it split partitions) and a run of
//! challenges per thread (`cuzk_synthesis::ThreadedSynthesis`), alternating in the same
//! run, into buffers of the partition's exact shape; every threaded run's buffers are
//! compared with the one-piece run's (a, b, c, inputs, aux, densities) before its time
//! counts. The first threaded call also measures the circuit's layout (a walk of the
//! prefix and one challenge), timed on its own line.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use cuzk_c1::C1Input;
use cuzk_kernels::witness::{
    first_difference, synthesize_into, CValues, CircuitShape, OwnedWitness,
};
use cuzk_synthesis::{
    with_porep_circuits, CircuitsVisitor, PorepCircuits, Split, ThreadedSynthesis,
};
use filecoin_proofs::MerkleTreeTrait;

use crate::ids::IdArgs;

#[derive(Debug, clap::Args)]
pub struct BenchSynthesisArgs {
    /// A real C1 file: its partitions are synthesized both ways.
    #[arg(long)]
    pub c1: std::path::PathBuf,
    #[command(flatten)]
    pub ids: IdArgs,
    /// Threads for the split synthesis (default: the CPUs this process may use).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Timed runs of each way per partition (after the layout's first call).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
}

pub fn run(args: &BenchSynthesisArgs) -> Result<()> {
    let c1 = C1Input::read(&args.c1, args.ids.given_ids())?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!(
        "{}: {} partition(s), {} thread(s), {} run(s) each way",
        args.c1.display(),
        c1.partitions(),
        threads,
        args.runs
    );
    with_porep_circuits(
        &c1,
        SideBySide {
            threads,
            runs: args.runs.max(1),
        },
    )?
}

struct SideBySide {
    threads: usize,
    runs: usize,
}

impl CircuitsVisitor for SideBySide {
    type Output = Result<()>;

    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Result<()> {
        let synthesis = ThreadedSynthesis::new(self.threads);
        let secs = |d: Duration| d.as_secs_f64();
        let (mut best_one, mut best_split) = (Duration::MAX, Duration::MAX);
        let mut used = 1;
        for k in 0..circuits.partitions() {
            let shape = CircuitShape::of(circuits.partition(k)?.circuit)?;
            let mut one = OwnedWitness::new(shape);
            let mut split = OwnedWitness::new(shape);
            let started = Instant::now();
            let (_, how) =
                synthesis.synthesize(&circuits, k, &shape, split.buffers(), CValues::Written)?;
            println!(
                "partition {k}: {} challenges; first split call (measures the layout) {:.3} s, {how:?}",
                circuits.challenges(k),
                secs(started.elapsed())
            );
            if let Split::Threads(n) = how {
                used = n;
            }
            for run in 0..self.runs {
                let started = Instant::now();
                synthesize_into(
                    circuits.partition(k)?.circuit,
                    &shape,
                    one.buffers(),
                    CValues::Written,
                )?;
                let t_one = started.elapsed();
                let started = Instant::now();
                synthesis.synthesize(&circuits, k, &shape, split.buffers(), CValues::Written)?;
                let t_split = started.elapsed();
                if let Some(name) = first_difference(&one.buffers(), &split.buffers()) {
                    bail!("partition {k}, run {run}: the split synthesis's {name} differs from one piece");
                }
                println!(
                    "partition {k} run {run}: one piece {:.3} s, split {:.3} s: {:.2}x (buffers equal)",
                    secs(t_one),
                    secs(t_split),
                    secs(t_one) / secs(t_split)
                );
                best_one = best_one.min(t_one);
                best_split = best_split.min(t_split);
            }
        }
        println!();
        println!("| way | best | ratio |");
        println!("|---|---|---|");
        println!("| one piece, 1 thread | {:.3} s | 1.00x |", secs(best_one));
        println!(
            "| a run of challenges per thread, {used} threads | {:.3} s | **{:.2}x** |",
            secs(best_split),
            secs(best_one) / secs(best_split)
        );
        Ok(())
    }
}
