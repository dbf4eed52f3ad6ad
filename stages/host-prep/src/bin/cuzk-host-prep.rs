//! The host-prep stage process: prep_msm (and B_G2, when the job puts it here) for each
//! synthesized slot, then the slot goes to the GPU stage.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use cuzk_host_prep::prep_slot;
use cuzk_kernels::groth16::steps::PlanPieces;
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, SlotState, Stage};
use cuzk_stage_common::pass_through::{live_job, ms};
use cuzk_stage_common::{
    is_fault_in_the_file, BG2Stage, JobSpec, SrsCache, StageArgs, StageRuntime,
};

#[derive(Parser)]
#[command(
    name = "cuzk-host-prep",
    about = "cuzk host-prep stage (started by `cuzk run`)"
)]
struct Args {
    #[command(flatten)]
    stage: StageArgs,
}

fn main() -> ExitCode {
    cuzk_stage_common::runtime::exit_code("cuzk-host-prep", run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    let rt = StageRuntime::start(args.stage, Stage::HostPrep)?;
    let to_gpu = rt.control.sender(SlotState::Prepped)?;
    let mut srs = SrsCache::new(&rt.srs_dir(), rt.args.trust_params);
    // prep_msm's buffers, kept from one partition to the next.
    let mut pieces = PlanPieces::default();
    rt.serve(Stage::HostPrep, |claim| {
        let Some((job, mut claim)) = live_job(&rt, claim, &to_gpu)? else {
            return Ok(());
        };
        let at = At::slot(job.job_id(), claim.partition(), claim.slot());
        rt.timeline.emit(names::PREP_START, at);
        let mut machine_trouble = false;
        let prepped = job
            .decode_job::<JobSpec>()
            .map_err(anyhow::Error::from)
            .and_then(|spec| {
                let b_g2 = spec.b_g2_in(BG2Stage::HostPrep);
                let view = srs.for_job(&spec).inspect_err(|e| {
                    machine_trouble = !is_fault_in_the_file(e);
                })?;
                // Named: a mismatch between the circuit and the parameters is one of the
                // two files, and the reason reaches failed/<stem>.reason.
                prep_slot(&mut claim, &view, b_g2, &mut pieces).with_context(|| {
                    format!(
                        "{} against {}",
                        spec.c1_path.display(),
                        spec.params_path.display()
                    )
                })
            });
        match prepped {
            // The SRS could not be loaded for this machine's sake (a full /dev/shm, the
            // parameter file away while the cache is fetched again): no job's fault. The
            // slot goes back uncounted, and this process ends to be restarted after
            // back-off while the jobs wait, as the gpu stage does for a device it cannot
            // set up; failing the job would empty the queue into failed/.
            Err(e) if machine_trouble => {
                claim.abandon()?;
                anyhow::bail!(
                    "job {} ({}): the SRS cannot be loaded on this machine, its jobs wait: {e:#}",
                    job.job_id(),
                    job.name()
                );
            }
            Ok(report) => {
                let mut steps = vec![("prep_msm", ms(report.plan))];
                if let Some(b_g2) = report.b_g2 {
                    steps.push(("msm_b_g2", ms(b_g2)));
                }
                rt.timeline.emit_steps(names::PREP_END, at, &steps);
                let d = claim.complete()?;
                rt.timeline.emit(names::GPU_QUEUE, at);
                to_gpu.announce(d)?;
            }
            Err(e) => {
                let reason = format!("partition {}: host-prep: {e:#}", claim.partition());
                eprintln!(
                    "cuzk-host-prep: job {} ({}): {reason}",
                    job.job_id(),
                    job.name()
                );
                job.mark_failed(&reason);
                // Passed on: the stages after this one see the job failed and free the slot.
                to_gpu.announce(claim.complete()?)?;
                rt.timeline
                    .emit_full(names::SLOT_RETURNED, at, None, &[], Some(&reason));
            }
        }
        Ok(())
    })
}
