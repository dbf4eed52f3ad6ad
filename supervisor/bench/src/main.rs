//! `cuzk-bench`: measure the cuzk pipeline (see docs/bench.md).

mod batch_cmd;
mod ceilings_cmd;
mod compare_cmd;
mod steps_cmd;
mod synth_cmd;
mod timeline_cmd;
mod variants_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cuzk-bench", version, about = "Measure the cuzk pipeline")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read a timeline log: stage percentiles, GPU busy time, slots, jobs, the bottleneck,
    /// and a waterfall picture.
    Timeline(timeline_cmd::TimelineArgs),
    /// Prove N copies of a C1 through a running supervisor's drop directory, C in flight.
    Batch(batch_cmd::BatchArgs),
    /// filecoin-proofs seal_commit_phase2 against cuzk on the same C1 and parameters, in
    /// one run (through `cuzk bench c2`), with the ratio.
    Compare(compare_cmd::CompareArgs),
    /// Synthetic partitions (a 32 GiB partition's shape, random witness, synthetic SRS)
    /// through the real stage processes of a `cuzk run --synthetic` it starts: the
    /// pipeline measured at full scale without a sealed sector. No proof is written.
    Synth(synth_cmd::SynthArgs),
    /// A partition's GPU steps from a `cuzk-gpu-check scale` log against their floors: a
    /// table and a picture.
    Steps(steps_cmd::StepsArgs),
    /// The kernels of a `cuzk-gpu-check ceilings` log (each field product and the madd
    /// alone) against the floors' multiply-add rate, whole workloads beside them: a table
    /// and a picture.
    Ceilings(ceilings_cmd::CeilingsArgs),
    /// Builds of the kernels side by side from `cuzk-gpu-check` reports of one device call:
    /// each row's best time a variant and its ratio to the first.
    Variants(variants_cmd::VariantsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Timeline(args) => timeline_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Batch(args) => batch_cmd::run(args),
        Command::Compare(args) => compare_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Synth(args) => synth_cmd::run(args),
        Command::Steps(args) => steps_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Ceilings(args) => ceilings_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Variants(args) => variants_cmd::run(args),
    };
    outcome.unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        ExitCode::from(2)
    })
}
