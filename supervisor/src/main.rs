//! `cuzk`: the cuzk command line.
//!
//! Exit status: 0 on success (for `verify`: the proof is valid), 1 when `verify` finds the
//! proof invalid, 2 on any error (the message names the file and the problem).

mod admission;
mod bench_c2;
mod bench_gpu;
mod bench_r1cs_device;
mod bench_synthesis;
mod bench_witness;
mod children;
mod config;
mod fixture;
mod ids;
mod instance;
mod params;
mod partition_prover;
mod placement;
mod progress;
mod prove;
mod replica_check;
mod run;
mod sd_notify;
mod shm_room;
mod stalled;
mod status;
mod topology;
mod trouble;
mod verify;
mod waiting;

use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cuzk", version, about = "Filecoin PoRep C2 proving engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The supervisor: stage processes fed from the drop directory (incoming/ → done/).
    Run(Box<run::RunArgs>),
    /// What a running `cuzk run` is doing: jobs, slots, stage processes, throughput.
    Status(status::StatusArgs),
    /// Groth16 parameter cache.
    #[command(subcommand)]
    Params(ParamsCommand),
    /// Prove a C1 file: a verified proof and its JSON result, or an error.
    Prove(prove::ProveArgs),
    /// Check a proof against its C1 with filecoin-proofs verify_seal (exit 0 valid, 1 invalid).
    Verify(verify::VerifyArgs),
    /// Real C1 files for tests.
    #[command(subcommand)]
    Fixture(FixtureCommand),
    /// Benchmarks against the reference implementations, side by side in one run.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// `cuzk prove` against filecoin-proofs seal_commit_phase2 on the same C1.
    C2(bench_c2::BenchC2Args),
    /// The gpu stage's CUDA device against its CPU device on a real C1's partitions:
    /// sums equal, proofs bit-exact with the same r, s, verify_seal, timings.
    Gpu(bench_gpu::BenchGpuArgs),
    /// The scalar mix of a real C1's partitions (L, A, B: zeros, ones, terms by bit
    /// length, their Pippenger cost): what the synthetic 32 GiB partitions reproduce.
    Witness(bench_witness::BenchWitnessArgs),
    /// A real C1's partitions synthesized in one piece on one thread and a run of
    /// challenges per thread, side by side, buffers compared every run.
    Synthesis(bench_synthesis::BenchSynthesisArgs),
    /// a and b made on the device from the recorded R1CS against the host's evaluation of
    /// the same recording, on a real C1's partition 0 (and stretched to a larger domain).
    R1csDevice(bench_r1cs_device::BenchR1csDeviceArgs),
}

#[derive(Debug, Subcommand)]
enum ParamsCommand {
    /// Generate random (test) parameters for a sector size.
    Generate(params::GenerateArgs),
}

#[derive(Debug, Subcommand)]
enum FixtureCommand {
    /// Seal a small sector with filecoin-proofs and write its C1 envelope.
    Seal(fixture::SealArgs),
}

impl Command {
    fn param_cache(&self) -> Option<&Path> {
        match self {
            Command::Params(ParamsCommand::Generate(args)) => args.param_cache.as_deref(),
            Command::Prove(args) => args.c1.param_cache.as_deref(),
            Command::Verify(args) => args.c1.param_cache.as_deref(),
            Command::Fixture(FixtureCommand::Seal(_)) => None,
            // `cuzk run` sets it from its configuration; `cuzk status` needs none.
            Command::Run(_) | Command::Status(_) => None,
            Command::Bench(BenchCommand::C2(args)) => args.c1.param_cache.as_deref(),
            Command::Bench(BenchCommand::Gpu(args)) => args.c1.param_cache.as_deref(),
            Command::Bench(
                BenchCommand::Witness(_) | BenchCommand::Synthesis(_) | BenchCommand::R1csDevice(_),
            ) => None,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Library warnings (e.g. files the drop directory ignores) go to stderr, the journal.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    // filecoin-proofs reads FIL_PROOFS_PARAMETER_CACHE (and the parent cache location) once,
    // into a lazily initialized SETTINGS, the first time any of its code asks: they must be
    // set before that, and before any thread is started.
    if let Some(dir) = cli.command.param_cache() {
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir);
    }
    fixture::default_parent_cache();

    let outcome = match &cli.command {
        Command::Params(ParamsCommand::Generate(args)) => {
            params::run(args).map(|()| ExitCode::SUCCESS)
        }
        Command::Prove(args) => prove::run(args).map(|()| ExitCode::SUCCESS),
        Command::Run(args) => run::run(args),
        Command::Status(args) => status::show(args),
        Command::Verify(args) => verify::run(args),
        Command::Bench(BenchCommand::C2(args)) => bench_c2::run(args).map(|()| ExitCode::SUCCESS),
        Command::Bench(BenchCommand::Gpu(args)) => bench_gpu::run(args).map(|()| ExitCode::SUCCESS),
        Command::Bench(BenchCommand::Witness(args)) => {
            bench_witness::run(args).map(|()| ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::Synthesis(args)) => {
            bench_synthesis::run(args).map(|()| ExitCode::SUCCESS)
        }
        Command::Bench(BenchCommand::R1csDevice(args)) => {
            bench_r1cs_device::run(args).map(|()| ExitCode::SUCCESS)
        }
        Command::Fixture(FixtureCommand::Seal(args)) => {
            fixture::run(args).map(|()| ExitCode::SUCCESS)
        }
    };
    outcome.unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        ExitCode::from(2)
    })
}
