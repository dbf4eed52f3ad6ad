//! The synthesis stage process: takes the next untaken partition of the oldest job into a
//! free slot, synthesizes it there and hands the slot to host-prep.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use cuzk_c1::C1Input;
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, JobView, SlotState, Stage};
use cuzk_stage_common::{JobSpec, StageArgs, StageRuntime};
use cuzk_synthesis::{
    slot_evals_from_env, synthesize_into_slot, synthetic_into_slot, ParamsShape, Split,
    ThreadedSynthesis,
};

#[derive(Parser)]
#[command(
    name = "cuzk-synthesis",
    about = "cuzk synthesis stage (started by `cuzk run`)"
)]
struct Args {
    #[command(flatten)]
    stage: StageArgs,
}

fn main() -> ExitCode {
    cuzk_stage_common::runtime::exit_code("cuzk-synthesis", run(Args::parse()))
}

/// The oldest job with a partition nobody has taken yet, and that partition.
fn take_next<'a>(rt: &'a StageRuntime, slot: u32) -> Option<(JobView<'a>, u32)> {
    let mut jobs: Vec<JobView<'a>> = rt.arena.active_jobs().collect();
    jobs.sort_by_key(|j| j.job_id());
    jobs.into_iter()
        .find_map(|j| j.take_partition(slot).map(|p| (j, p)))
}

fn run(args: Args) -> Result<()> {
    let rt = StageRuntime::start(args.stage, Stage::Synthesis)?;
    let free_slots = rt.control.receiver(Stage::Synthesis)?;
    let to_prep = rt.control.sender(SlotState::Synthesized)?;
    // The last job's parsed C1: its partitions usually come one after another.
    let mut c1_cache: Option<(u64, C1Input, Option<ParamsShape>)> = None;
    // A partition's challenges split over the threads this process may use (the stage's
    // `threads`, default one per CPU it is pinned to).
    let synthesis =
        ThreadedSynthesis::new(rayon::current_num_threads()).map_err(anyhow::Error::msg)?;
    // Who makes a and b (`CUZK_SYNTHESIS_AB`): said once, so an operator sees the choice.
    let evals = slot_evals_from_env().map_err(anyhow::Error::msg)?;
    if evals == cuzk_kernels::witness::Evaluated::ByProver {
        eprintln!(
            "cuzk-synthesis: a and b left to the prover (CUZK_SYNTHESIS_AB=prover, the default): slots get the assignment only"
        );
    } else {
        let why = match std::env::var("CUZK_SYNTHESIS_AB").as_deref() {
            Ok("synthesis") => "CUZK_SYNTHESIS_AB=synthesis",
            _ => "CUZK_SYNTHESIS_R1CS=built: no recording to make them from",
        };
        eprintln!("cuzk-synthesis: a and b written by synthesis ({why})");
    }
    let mut told_split = None;
    while !rt.stopping() {
        if !rt.arena.active_jobs().any(|j| j.has_untaken_partition()) {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let handoff = match free_slots.claim_next(&rt.arena, Duration::from_millis(200)) {
            Ok(Some(h)) => h,
            Ok(None) => continue,
            Err(_) if rt.stopping() => break,
            Err(e) => return Err(e.into()),
        };
        let mut claim = handoff.claim;
        let Some((job, p)) = take_next(&rt, claim.slot()) else {
            claim.abandon()?; // another process took the work first
            continue;
        };
        claim.set_partition(job.job_id(), p);
        // The slot names the job now, so it is no longer retired under us; but it may
        // have been between the listing and the take (a failed job whose last slot had
        // just drained), its record given to the next job, whose partition the take then
        // took. That goes back to whichever job holds the record, and this slot is free.
        if !job.is_current() {
            job.release_partitions_of_slot(claim.slot());
            claim.abandon()?;
            continue;
        }
        let at = At::slot(job.job_id(), p, claim.slot());
        rt.timeline.emit(names::SYNTH_START, at);
        let synthesized = (|| -> Result<()> {
            let spec: JobSpec = job
                .decode_job()
                .with_context(|| format!("job {} ({}): its record", job.job_id(), job.name()))?;
            if let Some(synthetic) = &spec.synthetic {
                synthetic_into_slot(synthetic, p, &mut claim)?;
                return Ok(());
            }
            if c1_cache.as_ref().map(|(id, ..)| *id) != Some(job.job_id()) {
                // Read for the exact-shape check (stages/synthesis/src/exact.rs); a file
                // unreadable for a moment skips it rather than failing the job for the
                // machine's trouble (host-prep checks the parameters again).
                let params = ParamsShape::of(&spec.params_path)
                    .inspect_err(|e| {
                        eprintln!(
                            "cuzk-synthesis: job {}: {e:#}; its partitions are not held to their parameters' exact shape",
                            job.job_id()
                        )
                    })
                    .ok();
                c1_cache = Some((job.job_id(), spec.read_c1()?, params));
            }
            let (_, c1, params) = c1_cache.as_ref().expect("just filled");
            let (_, split) = synthesize_into_slot(
                c1,
                p as usize,
                &mut claim,
                &synthesis,
                evals,
                params.as_ref(),
            )?;
            // Said once, and again whenever it changes (a circuit that does not split).
            if told_split.as_ref() != Some(&split) {
                match &split {
                    Split::Threads(n) => eprintln!(
                        "cuzk-synthesis: job {}: partitions synthesized a run of challenges per thread, {n} threads",
                        job.job_id()
                    ),
                    Split::OnePiece(why) => eprintln!(
                        "cuzk-synthesis: job {}: partitions synthesized in one piece ({why})",
                        job.job_id()
                    ),
                }
                told_split = Some(split);
            }
            Ok(())
        })();
        match synthesized {
            Ok(()) => match claim.complete() {
                Ok(d) => {
                    rt.timeline.emit(names::SYNTH_END, at);
                    to_prep.announce(d)?;
                }
                // Recovery took the slot (we were thought dead): the work is discarded.
                Err(e) => eprintln!("cuzk-synthesis: {e}"),
            },
            Err(e) => {
                let reason = format!("partition {p}: {e:#}");
                eprintln!(
                    "cuzk-synthesis: job {} ({}): {reason}",
                    job.job_id(),
                    job.name()
                );
                job.mark_failed(&reason);
                job.release_partitions_of_slot(claim.slot());
                claim.abandon()?;
                rt.timeline
                    .emit_full(names::SLOT_RETURNED, at, None, &[], Some(&reason));
            }
        }
    }
    rt.timeline.emit(names::STAGE_EXIT, At::default());
    Ok(())
}
