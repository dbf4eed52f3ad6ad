//! `cuzk bench witness`: the scalar mix of L, A and B, measured on a real C1's partitions
//! or predicted for a sector size we cannot synthesize here.
//!
//! - `--c1 FILE`: synthesizes each partition (no parameters needed: the shape is counted
//!   from the circuit) and prints, per MSM, the zeros, ones and Pippenger terms, the terms
//!   by bit length and the bucket additions they cost at the GPU's window widths; the
//!   census of its gadgets (witness::census) goes to `--census-out`.
//! - `--blank-sector-size 32GiB`: the census of the blank partition circuit, built from
//!   the public parameters alone.
//! - `--learn FILE...` (either mode): the mix predicted from the classes of the censuses
//!   given (real ones), printed beside the measurement when there is one.
//!
//! The synthetic 32 GiB partitions draw their scalars from the mix this predicts
//! (kernels/src/synthetic.rs, docs/gpu.md).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bellpepper_core::Circuit;
use blstrs::{G1Affine, G1Projective};
use cuzk_c1::proof_type::{interactive_proof_type, parse_sector_size};
use cuzk_c1::{with_tree_shape, C1Input, ShapeVisitor};
use cuzk_kernels::groth16::steps::{self, Densities};
use cuzk_kernels::msm::mix::{MixStats, DIGIT_WIDTHS};
use cuzk_kernels::witness::c_matrix::CStats;
use cuzk_kernels::witness::census::{Census, CensusCs, Predicted, QUERIES};
use cuzk_kernels::witness::CValues::{LeftOut, Written};
use cuzk_kernels::witness::{BlockLayout, R1cs, R1csMatrix, Recorded, Which};
use cuzk_kernels::witness::{CircuitShape, OwnedWitness};
use cuzk_synthesis::{synthesize_partition, with_porep_circuits, CircuitsVisitor, PorepCircuits};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::public_params;
use filecoin_proofs::MerkleTreeTrait;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use indicatif::{ProgressBar, ProgressStyle};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{Challenges, StackedCompound, StackedDrg};

use crate::ids::IdArgs;
use crate::progress;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["c1", "blank_sector_size", "census"])))]
pub struct BenchWitnessArgs {
    /// A real C1 file: its partitions are synthesized and measured.
    #[arg(long)]
    pub c1: Option<PathBuf>,
    #[command(flatten)]
    pub ids: IdArgs,
    /// No C1: the blank partition circuit of this sector size (2KiB ... 64GiB).
    #[arg(long)]
    pub blank_sector_size: Option<String>,
    /// No C1: a census written by an earlier run (--census-out), e.g. the blank 32 GiB
    /// circuit's, which takes minutes to count.
    #[arg(long)]
    pub census: Option<PathBuf>,
    /// Write the census (classes of aux variables, JSON) here; with --c1, of partition 0.
    #[arg(long)]
    pub census_out: Option<PathBuf>,
    /// Censuses of real witnesses (--census-out of earlier runs) to predict the mix from.
    #[arg(long, num_args = 1..)]
    pub learn: Vec<PathBuf>,
    /// With --blank-sector-size: also record the circuit's C and print what it holds (rows
    /// with an empty C, entries by coefficient) and time folding it: the size of folding C
    /// into L (docs/gpu.md "C folded into L"). With --c1: check on every partition that the
    /// blank circuit's C gives the witness's c row for row (what folding relies on).
    #[arg(long)]
    pub c_matrix: bool,
    /// With --blank-sector-size: also record the circuit's whole A, B and C and print their
    /// entries, what they hold and how long recording took: the size of synthesis from a
    /// recorded R1CS (a process keeps the prefix and one challenge of it; docs/kernels.md
    /// "Synthesis from a recorded R1CS").
    #[arg(long)]
    pub r1cs: bool,
}

pub fn run(args: &BenchWitnessArgs) -> Result<()> {
    let learned: Vec<Census> = args
        .learn
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let c: Census = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a census", p.display()))?;
            if !c.with_values {
                bail!(
                    "{}: a blank circuit's census has no values to learn from",
                    p.display()
                );
            }
            Ok(c)
        })
        .collect::<Result<_>>()?;
    let census = match (&args.c1, &args.blank_sector_size) {
        (None, None) if args.census.is_some() => {
            let census = read_census(args.census.as_ref().expect("checked"))?;
            print_census(&census);
            if !learned.is_empty() {
                print_predicted(&census.predict(&learned), None);
            }
            census
        }
        (Some(path), _) => {
            let c1 = C1Input::read(path, args.ids.given_ids())?;
            with_porep_circuits(
                &c1,
                Measure {
                    learned: &learned,
                    c_matrix: args.c_matrix,
                },
            )??
        }
        (None, Some(size)) => {
            let Some(sector_size) = parse_sector_size(size) else {
                bail!("unsupported sector size {size:?}: use 2KiB, 8MiB, 512MiB, 32GiB or 64GiB");
            };
            let census = with_tree_shape(
                sector_size,
                Blank {
                    sector_size,
                    c_matrix: args.c_matrix,
                    r1cs: args.r1cs,
                },
            )
            .context("no PoRep tree shape for this sector size")??;
            print_census(&census);
            if !learned.is_empty() {
                print_predicted(&census.predict(&learned), None);
            }
            census
        }
        (None, None) => bail!("give --c1, --blank-sector-size or --census"),
    };
    if let Some(out) = &args.census_out {
        std::fs::write(out, serde_json::to_string_pretty(&census)?)
            .with_context(|| format!("writing {}", out.display()))?;
        println!(
            "census written to {} ({} classes)",
            out.display(),
            census.classes.len()
        );
    }
    Ok(())
}

fn read_census(p: &std::path::Path) -> Result<Census> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a census", p.display()))
}

struct Measure<'a> {
    learned: &'a [Census],
    c_matrix: bool,
}

impl CircuitsVisitor for Measure<'_> {
    type Output = Result<Census>;

    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Result<Census> {
        let mut first = None;
        let c = if self.c_matrix {
            Some(record_both_ways(&circuits)?)
        } else {
            None
        };
        for k in 0..circuits.partitions() {
            // The census (values included) first: its counts are the shape the witness
            // buffers need, so the circuit is not run a third time just to count it.
            let mut cs = CensusCs::new(true, None);
            circuits.partition(k)?.circuit.synthesize(&mut cs)?;
            let census = cs.finish();
            let shape = census.shape();
            let mut witness = OwnedWitness::new(shape);
            synthesize_partition(circuits.partition(k)?, &shape, witness.buffers(), Written)?;
            let w = witness.buffers();
            let d = Densities::of(&w);
            let z =
                steps::canonical_assignment(&w.inputs[..shape.num_inputs], &w.aux[..shape.num_aux]);
            let plans = steps::plan_msms(&z, shape.num_inputs, d);
            println!(
                "partition {k}: {} constraints, {} inputs, {} aux",
                shape.num_constraints, shape.num_inputs, shape.num_aux
            );
            let stats = [
                MixStats::of(&plans.l, &z),
                MixStats::of(&plans.a, &z),
                MixStats::of(&plans.b, &z),
            ];
            print_measured(&stats);
            if let Some(c) = &c {
                check_c(c, &w, &shape, k)?;
                time_without_c(&circuits, k, &shape, &mut witness)?;
            }
            if !self.learned.is_empty() {
                print_predicted(&census.predict(self.learned), Some(&stats));
            }
            first.get_or_insert(census);
        }
        first.context("the C1 has no partitions")
    }
}

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;

struct Blank {
    sector_size: u64,
    c_matrix: bool,
    r1cs: bool,
}

impl ShapeVisitor for Blank {
    type Output = Result<Census>;

    fn visit<Tree: 'static + MerkleTreeTrait>(self) -> Result<Census> {
        let proof =
            interactive_proof_type(self.sector_size).context("no interactive PoRep proof type")?;
        let public_params = public_params::<Tree>(&proof.as_v1_config())?;
        let blank = || {
            <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(
                &public_params,
            )
        };
        let spinner = progress::spinner(
            "counting the blank partition circuit's constraints".into(),
            None,
        );
        let shape = CircuitShape::of(blank())?;
        spinner.finish_and_clear();
        println!(
            "blank partition circuit: {} constraints, {} inputs, {} aux",
            shape.num_constraints, shape.num_inputs, shape.num_aux
        );
        let done = AtomicU64::new(0);
        let bar = ProgressBar::new(shape.num_constraints as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "census {bar:30} {pos}/{len} constraints, {per_sec}, ETA {eta}",
            )
            .expect("the bar template is valid"),
        );
        let started = Instant::now();
        let census = std::thread::scope(|s| {
            let watcher = s.spawn(|| {
                let mut last_line = Instant::now();
                while !bar.is_finished() {
                    std::thread::sleep(Duration::from_millis(250));
                    let n = done.load(Ordering::Relaxed);
                    bar.set_position(n);
                    // Not a terminal (a log): a line every 10 s instead of the bar.
                    if bar.is_hidden() && last_line.elapsed() >= Duration::from_secs(10) {
                        let rate = n as f64 / started.elapsed().as_secs_f64();
                        let left =
                            (shape.num_constraints as f64 - n as f64).max(0.0) / rate.max(1.0);
                        eprintln!(
                            "census: {n} of {} constraints, {:.1} M/s, ETA {left:.0} s",
                            shape.num_constraints,
                            rate / 1e6
                        );
                        last_line = Instant::now();
                    }
                }
            });
            let mut cs = CensusCs::new(false, Some(&done));
            let r = blank().synthesize(&mut cs).map(|()| cs.finish());
            bar.finish_and_clear();
            watcher.join().expect("the progress thread does not panic");
            r
        })?;
        println!(
            "census taken in {}",
            progress::minutes_seconds(started.elapsed())
        );
        if self.c_matrix {
            let spinner = progress::spinner("recording the blank circuit's C".into(), None);
            let started = Instant::now();
            let c = R1csMatrix::record_c(blank())?;
            spinner.finish_and_clear();
            print_c_stats(&c.stats());
            println!(
                "C recorded in {}",
                progress::minutes_seconds(started.elapsed())
            );
            time_fold(&c);
        }
        if self.r1cs {
            let spinner =
                progress::spinner("recording the blank circuit's A, B and C".into(), None);
            let started = Instant::now();
            let m = Recorded::record(blank(), Which::ALL)?;
            spinner.finish_and_clear();
            let [a, b, c] = [&m.a, &m.b, &m.c].map(|m| m.entries.len());
            let challenges = public_params.challenges.num_challenges_per_partition();
            println!(
                "R1CS recorded whole in {}: {} rows; entries A {a}, B {b}, C {c} ({:.2} a row), {:.2} GiB; a synthesis process holds the prefix and one of {challenges} challenges: ~{:.2} GiB",
                progress::minutes_seconds(started.elapsed()),
                m.a.rows,
                (a + b + c) as f64 / m.a.rows.max(1) as f64,
                m.bytes() as f64 / (1u64 << 30) as f64,
                m.bytes() as f64 / challenges.max(1) as f64 / (1u64 << 30) as f64,
            );
            // What a synthesis process records instead: the prefix (the circuit of no
            // challenge) and one challenge, each block then moved into place. Checked here
            // against the whole recording on the circuit's structure alone.
            let with = |n: usize| {
                let mut pp = public_params.clone();
                pp.challenges = Challenges::new_interactive(n);
                <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(&pp)
            };
            let started = Instant::now();
            let layout = BlockLayout::measure(with(0), with(1), challenges)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let one = Recorded::record(with(1), Which::ALL)?;
            let pattern = R1cs::blocks(one, layout)?;
            let recorded = started.elapsed();
            let started = Instant::now();
            match pattern.differs_from(&m) {
                None => println!(
                    "the prefix and one challenge (layout measured and recorded in {}, {:.2} GiB held) moved into each block's place give the whole circuit's A, B and C entry for entry (compared in {})",
                    progress::minutes_seconds(recorded),
                    pattern.bytes() as f64 / (1u64 << 30) as f64,
                    progress::minutes_seconds(started.elapsed()),
                ),
                Some(why) => bail!("the prefix and one challenge, moved, differ from the whole circuit: {why}"),
            }
        }
        Ok(census)
    }
}

/// What the circuit's C holds: how many rows can never have c ≠ 0, and the fold's work
/// (an addition an entry of 1 or −1, a short double-and-add a small coefficient, a
/// full-width product a wide one).
fn print_c_stats(s: &CStats) {
    let e = s.entries as f64;
    println!(
        "C: {} rows, {} with an empty C ({:.1} %); {} entries ({:.2} a row): 1 {:.1} %, −1 {:.1} %, below 2^64 {:.1} %, wide {:.1} % ({:.2} a variable that has any; {} distinct coefficients)",
        s.rows,
        s.empty_rows,
        pct(s.empty_rows as f64, s.rows as f64),
        s.entries,
        e / (s.rows as f64).max(1.0),
        pct(s.ones as f64, e),
        pct(s.minus_ones as f64, e),
        pct(s.small as f64, e),
        pct(s.wide as f64, e),
        s.wide as f64 / (s.wide_vars as f64).max(1.0),
        s.distinct_coeffs
    );
}

/// Synthesis of partition `k` with C and without it (what a prover with C folded into L
/// needs), three of each alternating on one thread; the medians and their ratio.
fn time_without_c<Tree: 'static + MerkleTreeTrait>(
    circuits: &PorepCircuits<'_, Tree>,
    k: usize,
    shape: &CircuitShape,
    witness: &mut OwnedWitness,
) -> Result<()> {
    let (mut with, mut without) = (vec![], vec![]);
    for _ in 0..3 {
        let started = Instant::now();
        synthesize_partition(circuits.partition(k)?, shape, witness.buffers(), Written)?;
        with.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        synthesize_partition(circuits.partition(k)?, shape, witness.buffers(), LeftOut)?;
        without.push(started.elapsed().as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut with), median(&mut without));
    println!(
        "  synthesis with C {a:.3} s, without C {b:.3} s (medians of 3, alternating): {:.2}x, {:.1} % less",
        a / b,
        100.0 * (1.0 - b / a)
    );
    Ok(())
}

/// Fails unless C·z equals the witness's c on every row (and the rows past C's are 0).
/// C recorded from the blank circuit in one piece and a run of challenges per thread (what
/// a gpu process folding C does at its start), side by side: timed, and checked equal.
fn record_both_ways<Tree: 'static + MerkleTreeTrait>(
    circuits: &PorepCircuits<'_, Tree>,
) -> Result<R1csMatrix> {
    let started = Instant::now();
    let whole = R1csMatrix::record_c(circuits.blank_circuit())?;
    let t_whole = started.elapsed();
    let threads = rayon::current_num_threads();
    let started = Instant::now();
    let (by_runs, split) = cuzk_synthesis::record_c(circuits.c1(), threads)?;
    let t_runs = started.elapsed();
    if by_runs.entries != whole.entries || by_runs.coeffs != whole.coeffs {
        bail!("C recorded by runs of challenges differs from the blank circuit's");
    }
    println!(
        "C recorded: blank circuit in one piece {:.3} s; by runs of challenges ({split:?}, layout measured included) {:.3} s: {:.2}x, equal",
        t_whole.as_secs_f64(),
        t_runs.as_secs_f64(),
        t_whole.as_secs_f64() / t_runs.as_secs_f64()
    );
    Ok(whole)
}

fn check_c(
    c: &R1csMatrix,
    w: &cuzk_kernels::witness::WitnessBuffers<'_>,
    shape: &CircuitShape,
    partition: usize,
) -> Result<()> {
    let cz = c.apply(&w.inputs[..shape.num_inputs], &w.aux[..shape.num_aux]);
    let n = shape.domain_size();
    let differing = cz
        .iter()
        .zip(&w.c[..c.rows])
        .filter(|(x, y)| x != y)
        .count()
        + w.c[c.rows..n]
            .iter()
            .filter(|v| !bool::from(ff::Field::is_zero(*v)))
            .count();
    if differing > 0 || (c.num_inputs, c.num_aux) != (shape.num_inputs, shape.num_aux) {
        bail!(
            "partition {partition}: the blank circuit's C ({} inputs, {} aux) gives another c than the witness on {differing} of {n} rows",
            c.num_inputs,
            c.num_aux
        );
    }
    println!("  C from the blank circuit gives the witness's c on all {n} rows");
    Ok(())
}

/// Times `R1csMatrix::fold` (Q = Cᵀ·P, what a prover with C folded into L does once at start)
/// over stand-in points P_j = (j + 1)·G on this machine's threads; up to 2^24 rows (the
/// points of a 32 GiB circuit would not fit beside C in 24 GiB).
fn time_fold(c: &R1csMatrix) {
    if c.rows > 1 << 24 {
        println!("fold not timed: {} rows (timed up to 2^24)", c.rows);
        return;
    }
    let g = G1Projective::generator();
    let mut acc = G1Projective::identity();
    let proj: Vec<G1Projective> = (0..c.rows)
        .map(|_| {
            acc += g;
            acc
        })
        .collect();
    let mut points = vec![G1Affine::identity(); c.rows];
    G1Projective::batch_normalize(&proj, &mut points);
    drop(proj);
    let spinner = progress::spinner("folding C over stand-in points".into(), None);
    let started = Instant::now();
    let (q_in, q_aux) = c.fold(&points);
    let took = started.elapsed();
    spinner.finish_and_clear();
    let threads = rayon::current_num_threads();
    println!(
        "fold Q = Cᵀ·P: {} entries into {} variables in {:.1} s on {threads} threads ({:.2} µs an entry a thread)",
        c.entries.len(),
        q_in.len() + q_aux.len(),
        took.as_secs_f64(),
        took.as_secs_f64() * 1e6 * threads as f64 / c.entries.len().max(1) as f64,
    );
}

/// Percent of `n` in `of`.
fn pct(n: f64, of: f64) -> f64 {
    100.0 * n / of.max(1.0)
}

/// The mix, and the ones' madds over the pair sums as a fraction of the ones ("units": with
/// the aligned pair sums alone, and with the odd ones too; docs/gpu.md "Ones in pairs").
fn print_measured(stats: &[MixStats; 3]) {
    println!(
        "  measured {:>11} {:>7} {:>7} {:>7} {:>13} | terms with at most 8 / 16 / 32 / 64 / 128 / 253 bits, % of terms | full-width equivalent at c = {} / {}",
        "scalars", "0 %", "1 %", "other %", "units al/any", DIGIT_WIDTHS[0], DIGIT_WIDTHS[1]
    );
    for (name, s) in QUERIES.iter().zip(stats) {
        let n = s.total() as f64;
        let up_to = [8, 16, 32, 64, 128, 253]
            .map(|b| format!("{:5.1}", pct(s.terms_up_to(b) as f64, s.terms as f64)));
        println!(
            "  {:<8} {:>11} {:>7.2} {:>7.2} {:>7.2} {:>6.3}/{:.3} | {} | {:.0} / {:.0} terms ({:.2} / {:.2} % of the scalars)",
            name,
            s.total(),
            pct(s.zeros as f64, n),
            pct(s.ones as f64, n),
            pct(s.terms as f64, n),
            s.one_units as f64 / s.ones.max(1) as f64,
            s.one_units_any as f64 / s.ones.max(1) as f64,
            up_to.join(" "),
            s.full_width_equivalent(0),
            s.full_width_equivalent(1),
            pct(s.full_width_equivalent(0), n),
            pct(s.full_width_equivalent(1), n),
        );
    }
}

fn print_census(c: &Census) {
    let t = c.totals();
    println!(
        "census: {} constraints, {} inputs, {} classes; aux variables in L / A / B: {} / {} / {}",
        c.constraints,
        c.inputs,
        c.classes.len(),
        t[0].vars,
        t[1].vars,
        t[2].vars
    );
}

/// The prediction, and beside it the measured aux mix when there is one (the measured
/// plans also hold the inputs: 40 of 2.7 M scalars at 2 KiB).
fn print_predicted(p: &[Predicted; 3], measured: Option<&[MixStats; 3]>) {
    println!("  predicted from the learned classes (0 % / 1 % / other %; unseen classes counted as other):");
    // The aux variables outside B (L less B): the synthetic witness draws B's variables and
    // the others from two mixes (synthetic::ScalarMix).
    let outside_b = Predicted {
        vars: p[0].vars - p[2].vars,
        zeros: p[0].zeros - p[2].zeros,
        ones: p[0].ones - p[2].ones,
        others: p[0].others - p[2].others,
        unseen: p[0].unseen - p[2].unseen,
    };
    let rows = [p[0], p[1], p[2], outside_b];
    for (q, name) in QUERIES.iter().chain(&["not B"]).enumerate() {
        let p = &rows;
        let n = p[q].vars as f64;
        let line = format!(
            "  {:<8} {:>11} {:>7.2} {:>7.2} {:>7.2} (unseen {:.3} %)",
            name,
            p[q].vars,
            pct(p[q].zeros, n),
            pct(p[q].ones, n),
            pct(p[q].others, n),
            pct(p[q].unseen as f64, n)
        );
        match measured.and_then(|m| m.get(q)) {
            Some(s) => {
                let t = s.total() as f64;
                println!(
                    "{line}   measured {:.2} / {:.2} / {:.2}",
                    pct(s.zeros as f64, t),
                    pct(s.ones as f64, t),
                    pct(s.terms as f64, t)
                );
            }
            None => println!("{line}"),
        }
    }
}
