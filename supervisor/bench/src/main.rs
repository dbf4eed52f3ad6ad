//! `cuzk-bench`: measure the cuzk pipeline (see docs/bench.md).

mod batch_cmd;
mod timeline_cmd;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Timeline(args) => timeline_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Batch(args) => batch_cmd::run(args),
    };
    outcome.unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        ExitCode::from(2)
    })
}
