//! `cuzk`: the cuzk command line.

mod params;
mod progress;

use std::path::Path;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cuzk", version, about = "Filecoin PoRep C2 proving engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Groth16 parameter cache.
    #[command(subcommand)]
    Params(ParamsCommand),
}

#[derive(Debug, Subcommand)]
enum ParamsCommand {
    /// Generate random (test) parameters for a sector size.
    Generate(params::GenerateArgs),
}

impl Command {
    fn param_cache(&self) -> Option<&Path> {
        match self {
            Command::Params(ParamsCommand::Generate(args)) => args.param_cache.as_deref(),
        }
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // filecoin-proofs reads FIL_PROOFS_PARAMETER_CACHE once, into a lazily initialized
    // SETTINGS, the first time any of its code asks: it must be set before that, and before
    // any thread is started.
    if let Some(dir) = cli.command.param_cache() {
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir);
    }
    match &cli.command {
        Command::Params(ParamsCommand::Generate(args)) => params::run(args),
    }
}
