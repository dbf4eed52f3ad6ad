//! `cuzk bench synthesis`: each partition of a real C1 synthesized three ways, taking turns
//! in the same run, into buffers of the partition's exact shape: in one piece on one
//! thread with its combinations built (what the synthesis stage did before it split
//! partitions), a run of challenges per thread with its combinations built, and a run of
//! challenges per thread with a, b, c from the recorded R1CS (`cuzk_synthesis::
//! ThreadedSynthesis`, `Combinations::Built` and `Recorded`). Every other way's buffers are
//! compared with the one-piece run's (a, b, c, inputs, aux, densities) before its time
//! counts. The first call of each threaded way also measures the circuit's layout (a walk
//! of the prefix and one challenge) and, recorded, records the R1CS: timed on its own line.
//! A fourth way, from the recorded R1CS with a and b left to the prover (`--ab-by-prover`:
//! what a slot gets with `CUZK_SYNTHESIS_AB=prover`), is compared on the assignment and the
//! densities only (it writes nothing else).

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use cuzk_c1::C1Input;
use cuzk_kernels::witness::{
    first_difference, synthesize_into, CValues, CircuitShape, Evaluated, OwnedWitness,
};
use cuzk_synthesis::{
    with_porep_circuits, CircuitsVisitor, Combinations, PorepCircuits, Split, ThreadedSynthesis,
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
    /// Leave C's values out in every way, as the synthesis stage does (slots hold no c: the
    /// prover makes c = a∘b or folds C into L); the recorded way still makes c a chunk at a
    /// time for its a·b = c check.
    #[arg(long)]
    pub without_c: bool,
    /// Also time synthesis from the recorded R1CS leaving a and b (and c) to the prover, as
    /// a slot gets it with `CUZK_SYNTHESIS_AB=prover`.
    #[arg(long)]
    pub ab_by_prover: bool,
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
            c: if args.without_c {
                CValues::LeftOut
            } else {
                CValues::Written
            },
            ab_by_prover: args.ab_by_prover,
        },
    )?
}

struct SideBySide {
    threads: usize,
    runs: usize,
    c: CValues,
    ab_by_prover: bool,
}

/// Whether `w` holds `one`'s assignment and densities (what synthesis leaving a and b to
/// the prover writes).
fn same_assignment(one: &mut OwnedWitness, w: &mut OwnedWitness) -> bool {
    let (x, y) = (one.buffers(), w.buffers());
    x.inputs == y.inputs
        && x.aux == y.aux
        && x.a_aux_density == y.a_aux_density
        && x.b_aux_density == y.b_aux_density
        && x.b_input_density == y.b_input_density
}

impl CircuitsVisitor for SideBySide {
    type Output = Result<()>;

    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Result<()> {
        let ways = [
            (
                "combinations built",
                ThreadedSynthesis::with(self.threads, Combinations::Built),
            ),
            (
                "from the recorded R1CS",
                ThreadedSynthesis::with(self.threads, Combinations::Recorded),
            ),
        ];
        let secs = |d: Duration| d.as_secs_f64();
        let mut best_one = Duration::MAX;
        let mut best = [Duration::MAX; 2];
        let mut best_left = Duration::MAX;
        let left = ThreadedSynthesis::with(self.threads, Combinations::Recorded);
        let mut used = 1;
        for k in 0..circuits.partitions() {
            let shape = CircuitShape::of(circuits.partition(k)?.circuit)?;
            let mut one = OwnedWitness::new(shape);
            let mut split = OwnedWitness::new(shape);
            for (name, synthesis) in &ways {
                let started = Instant::now();
                let (_, how) =
                    synthesis.synthesize(&circuits, k, &shape, split.buffers(), self.c)?;
                println!(
                    "partition {k}: {} challenges; first call {name} (measures the layout, records the R1CS) {:.3} s, {how:?}",
                    circuits.challenges(k),
                    secs(started.elapsed())
                );
                if let Split::Threads(n) = how {
                    used = n;
                }
            }
            if self.ab_by_prover {
                // Its own first call: the layout measured, the R1CS recorded.
                let mut w = OwnedWitness::new(shape);
                left.synthesize_for(&circuits, k, &shape, w.buffers(), Evaluated::ByProver)?;
            }
            for run in 0..self.runs {
                let started = Instant::now();
                synthesize_into(
                    circuits.partition(k)?.circuit,
                    &shape,
                    one.buffers(),
                    self.c,
                )?;
                let t_one = started.elapsed();
                best_one = best_one.min(t_one);
                let mut line = format!("partition {k} run {run}: one piece {:.3} s", secs(t_one));
                for (i, (name, synthesis)) in ways.iter().enumerate() {
                    let started = Instant::now();
                    synthesis.synthesize(&circuits, k, &shape, split.buffers(), self.c)?;
                    let t = started.elapsed();
                    if let Some(buffer) = first_difference(&one.buffers(), &split.buffers()) {
                        bail!("partition {k}, run {run}: {name}: {buffer} differs from one piece");
                    }
                    best[i] = best[i].min(t);
                    line += &format!(", {name} {:.3} s ({:.2}x)", secs(t), secs(t_one) / secs(t));
                }
                if self.ab_by_prover {
                    let mut w = OwnedWitness::new(shape);
                    let started = Instant::now();
                    let (_, _, what) = left.synthesize_for(
                        &circuits,
                        k,
                        &shape,
                        w.buffers(),
                        Evaluated::ByProver,
                    )?;
                    let t = started.elapsed();
                    if what != Evaluated::ByProver || !same_assignment(&mut one, &mut w) {
                        bail!("partition {k}, run {run}: a and b left to the prover: the assignment or densities differ from one piece, or a and b were written ({what:?})");
                    }
                    best_left = best_left.min(t);
                    line += &format!(
                        ", a and b left to the prover {:.3} s ({:.2}x)",
                        secs(t),
                        secs(t_one) / secs(t)
                    );
                }
                println!("{line} (buffers equal)");
            }
        }
        println!();
        println!("| way | best | ratio |");
        println!("|---|---|---|");
        println!(
            "| one piece, 1 thread, combinations built | {:.3} s | 1.00x |",
            secs(best_one)
        );
        for (i, (name, _)) in ways.iter().enumerate() {
            println!(
                "| a run of challenges per thread, {used} threads, {name} | {:.3} s | **{:.2}x** |",
                secs(best[i]),
                secs(best_one) / secs(best[i])
            );
        }
        if best_left < Duration::MAX {
            println!(
                "| a run of challenges per thread, {used} threads, from the recorded R1CS, a and b left to the prover | {:.3} s | **{:.2}x** ({:.2}x the recorded way writing them) |",
                secs(best_left),
                secs(best_one) / secs(best_left),
                secs(best[1]) / secs(best_left)
            );
        }
        Ok(())
    }
}
