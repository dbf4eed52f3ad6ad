//! The epilogue stage process: combines each proved slot into its partition's proof,
//! frees the slot, and writes each completed job's verified proof to done/.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use cuzk_epilogue::slot::{combine_slot, finish_job_to_dropdir, record_partition, JobOutcome};
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, SlotState, Stage};
use cuzk_stage_common::pass_through::{live_job, ms};
use cuzk_stage_common::{JobSpec, SrsCache, StageArgs, StageRuntime};

#[derive(Parser)]
#[command(
    name = "cuzk-epilogue",
    about = "cuzk epilogue stage (started by `cuzk run`)"
)]
struct Args {
    #[command(flatten)]
    stage: StageArgs,
}

fn main() -> ExitCode {
    cuzk_stage_common::runtime::exit_code("cuzk-epilogue", run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    let rt = StageRuntime::start(args.stage, Stage::Epilogue)?;
    let freed = rt.control.sender(SlotState::Free)?;
    let mut srs = SrsCache::new(&rt.srs_dir(), rt.args.trust_params);
    rt.serve(Stage::Epilogue, |claim| {
        let Some((job, claim)) = live_job(&rt, claim, &freed)? else {
            return Ok(());
        };
        let p = claim.partition();
        let at = At::slot(job.job_id(), p, claim.slot());
        rt.timeline.emit(names::EPILOGUE_START, at);
        let spec: JobSpec = job.decode_job()?;
        let finish = srs
            .for_job(&spec)
            .map(|srs| combine_slot(&claim, &srs.vk))
            .and_then(|proof| record_partition(&job, p, &proof));
        rt.timeline.emit(names::EPILOGUE_END, at);
        let must_finish = match finish {
            Ok(last) => last,
            Err(e) => {
                job.mark_failed(&format!("partition {p}: epilogue: {e:#}"));
                false
            }
        };
        if must_finish && job.take_finish() {
            abort_once_if_asked();
            let started = std::time::Instant::now();
            let job_at = At::job(job.job_id());
            let name = job.name();
            match finish_job_to_dropdir(&job, &spec) {
                Ok(outcome) => {
                    rt.timeline.emit_steps(
                        names::VERIFY,
                        job_at,
                        &[("finish", ms(started.elapsed()))],
                    );
                    let detail = match outcome {
                        JobOutcome::Written(p) => p.display().to_string(),
                        JobOutcome::AlreadyWritten => "already written".to_string(),
                    };
                    rt.timeline
                        .emit_full(names::JOB_DONE, job_at, Some(&name), &[], Some(&detail));
                    job.retire();
                }
                Err(e) => {
                    // The supervisor moves the input to failed/ with this reason.
                    let reason = format!("{e:#}");
                    eprintln!("cuzk-epilogue: job {} ({name}): {reason}", job.job_id());
                    job.mark_failed(&reason);
                }
            }
        }
        // The slot is freed only now, after the job's proof is written (or the job failed):
        // if this process dies while finishing, recovery gives the slot back as proved, and
        // the epilogue that redoes it finds the job complete and takes the finish over from
        // the dead pid. Freed before, a death here left a complete job nobody would finish.
        freed.announce(claim.complete()?)?;
        Ok(())
    })
}

/// A test hook (tests/pipeline): with `CUZK_TEST_EPILOGUE_ABORT_ONCE` naming a file that does
/// not exist yet, the first epilogue to become a job's finisher creates it and aborts, so a
/// test sees what a finisher's death at that point leaves (the job must still be written).
fn abort_once_if_asked() {
    let Some(marker) = std::env::var_os("CUZK_TEST_EPILOGUE_ABORT_ONCE") else {
        return;
    };
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker);
    if created.is_ok() {
        eprintln!("cuzk-epilogue: CUZK_TEST_EPILOGUE_ABORT_ONCE: aborting as a job's finisher");
        std::process::abort();
    }
}
