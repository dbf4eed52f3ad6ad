//! `cuzk bench c2`: our `cuzk prove` path against filecoin-proofs' `seal_commit_phase2` on
//! the same C1 and parameter cache, side by side in one run, with the ratio.
//!
//! Both sides are timed whole, as an operator runs them: parameter load, synthesis,
//! proving, and the verify_seal check (filecoin-proofs verifies inside seal_commit_phase2;
//! we verify in the epilogue and write the proof).

use std::time::Instant;

use anyhow::{Context, Result};
use cuzk_c1::C1Input;
use cuzk_epilogue::verify_proof_bytes;

use crate::ids::C1Args;
use crate::prove::{self, ProveArgs};

#[derive(Debug, clap::Args)]
pub struct BenchC2Args {
    #[command(flatten)]
    pub c1: C1Args,
    /// Alternating runs of each side; the best of each is compared.
    #[arg(long, default_value_t = 2)]
    pub runs: usize,
}

pub fn run(args: &BenchC2Args) -> Result<()> {
    let c1 = C1Input::read(&args.c1.c1, args.c1.given_ids())?;
    let (prover_id, sector_id) = (c1.prover_id()?, c1.sector_id()?);
    // Both sides need it for a NonInteractivePoRep C1: named now, not after a whole C2.
    cuzk_epilogue::check_aggregation_srs(c1.proof_type())?;
    let out_dir = tempfile::tempdir().context("temporary directory for our proofs")?;
    let threads = rayon::current_num_threads();
    println!(
        "C2 of {} ({}), {} run(s) each, {threads} threads",
        args.c1.c1.display(),
        cuzk_c1::proof_type::proof_type_name(c1.proof_type()),
        args.runs
    );
    let (mut ours, mut theirs) = (f64::MAX, f64::MAX);
    for run in 0..args.runs {
        let started = Instant::now();
        let output = filecoin_proofs_api::seal::seal_commit_phase2(
            c1.api_output().clone(),
            prover_id,
            sector_id,
        )
        .context("filecoin-proofs seal_commit_phase2")?;
        let t_theirs = started.elapsed().as_secs_f64();
        verify_proof_bytes("bench", &c1, &output.proof).context("filecoin-proofs' own proof")?;

        let started = Instant::now();
        prove::run(&ProveArgs {
            c1: args.c1.clone(),
            out: out_dir.path().join(format!("run{run}.proof")),
            // filecoin-proofs maps its parameters without subgroup checks; so do we here.
            trust_params: true,
        })?;
        let t_ours = started.elapsed().as_secs_f64();
        println!(
            "run {run}: filecoin-proofs seal_commit_phase2 {t_theirs:.2} s | cuzk prove {t_ours:.2} s | {:.2}x",
            t_theirs / t_ours
        );
        ours = ours.min(t_ours);
        theirs = theirs.min(t_theirs);
    }
    println!(
        "best: filecoin-proofs {theirs:.2} s, cuzk {ours:.2} s, speedup {:.2}x (both proofs verified by verify_seal)",
        theirs / ours
    );
    Ok(())
}
