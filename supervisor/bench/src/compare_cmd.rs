//! `cuzk-bench compare`: the command line around [`cuzk_bench::compare`].

use std::path::PathBuf;

use anyhow::Result;
use cuzk_bench::compare;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The C1 file both sides prove.
    #[arg(long)]
    pub c1: PathBuf,
    /// Parameter cache directory (both sides read the same files).
    #[arg(long, env = "FIL_PROOFS_PARAMETER_CACHE")]
    pub param_cache: PathBuf,
    /// Alternating runs of each side; the best of each is compared.
    #[arg(long, default_value_t = 2)]
    pub runs: usize,
    /// The `cuzk` binary (default: the one beside cuzk-bench, else from PATH).
    #[arg(long)]
    pub cuzk: Option<PathBuf>,
    /// Print the runs and the ratio as JSON (the child's lines go to stderr).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &CompareArgs) -> Result<()> {
    let cuzk = compare::find_cuzk(args.cuzk.as_deref());
    let json = args.json;
    let mut echo = |line: &str| {
        if json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let report = compare::run(&cuzk, &args.c1, &args.param_cache, args.runs, &mut echo)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "compare: filecoin-proofs {:.2} s, cuzk {:.2} s (best of {} each): cuzk is {:.2}x faster",
            report.best_filecoin_proofs_s,
            report.best_cuzk_s,
            report.runs.len(),
            report.speedup
        );
    }
    Ok(())
}
