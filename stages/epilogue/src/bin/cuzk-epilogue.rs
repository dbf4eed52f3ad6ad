//! The epilogue stage process: combines each proved slot into its partition's proof,
//! frees the slot, and writes each completed job's verified proof to done/.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;
use cuzk_epilogue::slot::{combine_slot, finish_job_to_dropdir, record_partition, JobOutcome};
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, SlotState, Stage};
use cuzk_stage_common::pass_through::{live_job, ms};
use cuzk_stage_common::{is_fault_in_the_file, JobSpec, SrsCache, StageArgs, StageRuntime};

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
        let spec: JobSpec = match job.decode_job() {
            Ok(spec) => spec,
            Err(e) => {
                // A record this binary cannot read (say, a supervisor of another version):
                // the job fails here. Returned as an error it would end this process, and
                // its restart would take the same slot again.
                job.mark_failed(&format!("partition {p}: epilogue: the job record: {e:#}"));
                rt.timeline.emit(names::EPILOGUE_END, at);
                freed.announce(claim.complete()?)?;
                return Ok(());
            }
        };
        // A redo of a slot whose proof is in (its epilogue died finishing the job) needs
        // neither the SRS nor a new combination: whatever fails there (the segment's
        // mapping, say) must not fail a job whose proofs are all in.
        let mut srs_trouble = false;
        let finish = if job.is_partition_done(p).unwrap_or(false) {
            Ok(job.is_complete())
        } else {
            srs.for_job(&spec)
                .inspect_err(|e| srs_trouble = !is_fault_in_the_file(e))
                .map(|srs| combine_slot(&claim, &srs.vk))
                .and_then(|proof| record_partition(&job, p, &proof))
        };
        if srs_trouble {
            // This machine's trouble (a full /dev/shm, the parameter file away a moment),
            // not the job's: the slot goes back uncounted and the process restarts after
            // back-off while the jobs wait (the host-prep and gpu stages do the same).
            let e = finish.expect_err("set on an error");
            claim.abandon()?;
            anyhow::bail!(
                "job {} ({}): the SRS cannot be loaded on this machine, its jobs wait: {e:#}",
                job.job_id(),
                job.name()
            );
        }
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
            let retry = |e: &anyhow::Error, attempt| wait_to_retry_write(&rt, e, attempt);
            match finish_job_to_dropdir(&job, &spec, retry) {
                Ok(JobOutcome::Unwritten) => {
                    // Asked to stop while done/ could not be written: the slot stays
                    // held, so recovery gives it back once this process has exited and
                    // the next epilogue finishes the job (this pid's finish duty then
                    // passes to it). Marked as left on purpose, so that recovery counts
                    // no lost attempt for it.
                    eprintln!(
                        "cuzk-epilogue: job {} ({name}): stopping with its verified proof unwritten; its last slot is left to recovery",
                        job.job_id()
                    );
                    job.leave_unwritten();
                    claim.leave_to_recovery();
                    return Ok(());
                }
                Ok(outcome) => {
                    rt.timeline.emit_steps(
                        names::VERIFY,
                        job_at,
                        &[("finish", ms(started.elapsed()))],
                    );
                    let detail = match outcome {
                        JobOutcome::Written(p) => p.display().to_string(),
                        JobOutcome::AlreadyWritten => "already written".to_string(),
                        JobOutcome::Unwritten => "not written".to_string(),
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

/// Waits before the next attempt at writing a verified proof that done/ did not take, and
/// says whether to make it: 1 s after the first failure, doubling to a minute between
/// attempts, one log line each, until SIGTERM (then false).
fn wait_to_retry_write(rt: &StageRuntime, e: &anyhow::Error, attempt: u32) -> bool {
    let wait = Duration::from_secs(1 << attempt.saturating_sub(1).min(6)).min(MAX_WRITE_WAIT);
    eprintln!(
        "cuzk-epilogue: {e:#}; the job and its slot wait, attempt {} in {} s",
        attempt + 1,
        wait.as_secs()
    );
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if rt.stopping() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    !rt.stopping()
}

/// The longest wait between attempts at writing a proof to done/.
const MAX_WRITE_WAIT: Duration = Duration::from_secs(60);

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
