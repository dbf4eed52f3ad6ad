//! `cuzk verify`: the verify_seal verdict on a proof file for a C1.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::C1Input;
use cuzk_epilogue::{verify_proof_bytes, EpilogueError};

use crate::ids::C1Args;

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub c1: C1Args,
    /// The proof bytes, as seal_commit_phase2 returns them.
    #[arg(long)]
    pub proof: PathBuf,
}

/// Exit 0 when the proof is valid, 1 when it is invalid; errors (exit 2) are returned.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    let c1 = C1Input::read(&args.c1.c1, args.c1.given_ids())?;
    let proof = std::fs::read(&args.proof)
        .with_context(|| format!("{}: cannot read the proof", args.proof.display()))?;
    match verify_proof_bytes(&args.c1.job_name(), &c1, &proof) {
        Ok(()) => {
            println!(
                "valid: {} proves {} ({}, sector {}, miner {})",
                args.proof.display(),
                c1.file().display(),
                proof_type_name(c1.proof_type()),
                u64::from(c1.sector_id()?),
                c1.miner_id().map_or("?".to_string(), |id| id.to_string()),
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(invalid @ EpilogueError::InvalidProof { .. }) => {
            println!("invalid: {}: {invalid}", args.proof.display());
            Ok(ExitCode::from(1))
        }
        Err(err) => Err(err.into()),
    }
}
