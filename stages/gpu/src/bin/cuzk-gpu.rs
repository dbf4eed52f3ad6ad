//! The GPU stage process: one per device. Takes prepped slots, computes H and the G1
//! MSMs (and B_G2 when the job puts it here), and hands the slot to the epilogue.

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use cuzk_gpu::{
    prove_slot, CpuDevice, CudaDevice, DeviceError, FoldedC, HeldR1cs, PartitionDevice,
};
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, SlotClaim, SlotState, Stage};
use cuzk_stage_common::pass_through::{live_job, ms};
use cuzk_stage_common::runtime::Lookahead;
use cuzk_stage_common::{BG2Stage, JobSpec, SrsCache, StageArgs, StageRuntime};

#[derive(Parser)]
#[command(
    name = "cuzk-gpu",
    about = "cuzk GPU stage, one per device (started by `cuzk run`)"
)]
struct Args {
    #[command(flatten)]
    stage: StageArgs,
    /// Device ordinal (PCI bus order); absent: the CPU device.
    #[arg(long, env = "CUZK_GPU_DEVICE")]
    device: Option<usize>,
    /// Take the next ready slot while the current partition computes and upload its `a`
    /// under that compute (CUDA devices); false: one slot at a time.
    #[arg(long, env = "CUZK_GPU_UPLOAD_AHEAD", default_value_t = true, action = clap::ArgAction::Set)]
    upload_ahead: bool,
    /// How H's MSM is formed on a CUDA device: `coefficients` (six transforms, a dense MSM
    /// over H's bases) or `lagrange` (H's bases put in Lagrange form on the device when the
    /// prover starts: four transforms, a dense MSM and a sparse one; ~17 ms less a 32 GiB
    /// partition on an H200), or `folded` (Lagrange form with the circuit's C folded into
    /// L: no sparse MSM, 0.993 against 1.066 s a 32 GiB partition on an H200). Both others
    /// cost the start ~6 min at 32 GiB unless `lagrange_cache` holds their bases
    /// (docs/operations.md).
    #[arg(long, env = "CUZK_GPU_H_FORM", default_value = "coefficients")]
    h_form: HFormArg,
    /// With `lagrange` or `folded`: a directory where H's bases in Lagrange form are kept
    /// between starts (made once per parameter file: 0.4 GiB at 2 KiB, 24 GiB at 32 GiB);
    /// absent: made at every start.
    #[arg(long, env = "CUZK_GPU_LAGRANGE_CACHE")]
    lagrange_cache: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum HFormArg {
    Coefficients,
    Lagrange,
    Folded,
}

fn main() -> ExitCode {
    cuzk_stage_common::runtime::exit_code("cuzk-gpu", run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    cuzk_kernels::cuda::set_h_form(match args.h_form {
        HFormArg::Coefficients => cuzk_kernels::cuda::HForm::Coefficients,
        HFormArg::Lagrange => cuzk_kernels::cuda::HForm::Lagrange,
        HFormArg::Folded => cuzk_kernels::cuda::HForm::Folded,
    });
    cuzk_kernels::cuda::set_lagrange_cache(args.lagrange_cache.clone());
    let rt = StageRuntime::start(args.stage, Stage::Gpu)?;
    let to_epilogue = rt.control.sender(SlotState::Proved)?;
    let mut srs = SrsCache::new(&rt.srs_dir(), rt.args.trust_params);
    let domain = 1usize << rt.arena.header().shape.domain_log2;
    let mut device: Box<dyn PartitionDevice> = match args.device {
        None => Box::new(CpuDevice::new(domain)),
        Some(d) => Box::new(CudaDevice::new(d, &rt.arena)?),
    };
    // GPU errors per (job, partition): a partition is retried on a device error, and its
    // job fails after the third.
    let mut device_errors: std::collections::HashMap<(u64, u32), u32> = Default::default();
    // With C folded into L, the jobs' circuit's C, set before their prover is made.
    let mut folded_c = matches!(args.h_form, HFormArg::Folded).then(FoldedC::default);
    // With a and b left to the prover (`CUZK_SYNTHESIS_AB=prover`, as synthesis reads it),
    // the jobs' recorded R1CS, given to the device before their prover is made.
    // (Or the arena was sized without room for them.)
    let by_prover = cuzk_synthesis::slot_evals_from_env().map_err(anyhow::Error::msg)?
        == cuzk_kernels::witness::Evaluated::ByProver
        || rt.arena.header().shape.leaves_evals_to_prover();
    let mut held_r1cs = by_prover.then(HeldR1cs::default);
    eprintln!("cuzk-gpu: serving on {}", device.describe());
    let mut work = |claim: SlotClaim<'_>, ahead: &mut Lookahead<'_, '_>| -> Result<()> {
        let Some((job, mut claim)) = live_job(&rt, claim, &to_epilogue)? else {
            return Ok(());
        };
        let at = At::slot(job.job_id(), claim.partition(), claim.slot());
        rt.timeline.emit(names::GPU_START, at);
        let proved = job
            .decode_job::<JobSpec>()
            .map_err(anyhow::Error::from)
            .and_then(|spec| {
                if let Some(f) = folded_c.as_mut() {
                    f.ensure(&spec)?;
                }
                if let Some(r) = held_r1cs.as_mut() {
                    r.ensure(&spec, device.as_mut())?;
                }
                let srs = srs.for_job(&spec)?;
                let b_g2 = spec.b_g2_in(BG2Stage::Gpu);
                prove_slot(device.as_mut(), &mut claim, &srs, b_g2, ahead)
            });
        match proved {
            Ok(steps) => {
                let steps: Vec<(&str, f64)> = steps.iter().map(|(k, d)| (*k, ms(*d))).collect();
                rt.timeline.emit_steps(names::GPU_END, at, &steps);
                to_epilogue.announce(claim.complete()?)?;
            }
            Err(e) => {
                let reason = format!("partition {}: gpu: {e:#}", claim.partition());
                eprintln!("cuzk-gpu: job {} ({}): {reason}", job.job_id(), job.name());
                if let Some(DeviceError(gpu)) = e.downcast_ref::<DeviceError>() {
                    let tries = device_errors
                        .entry((job.job_id(), claim.partition()))
                        .or_default();
                    *tries += 1;
                    if !gpu.context_usable() {
                        // The context is lost: give the slot back for a retry and exit so
                        // the supervisor restarts this process with a fresh context.
                        claim.abandon()?;
                        anyhow::bail!("device context lost: {gpu}");
                    }
                    if *tries < 3 && gpu.worth_a_retry() {
                        claim.abandon()?;
                        rt.timeline
                            .emit_full(names::SLOT_RETURNED, at, None, &[], Some(&reason));
                        return Ok(());
                    }
                }
                job.mark_failed(&reason);
                to_epilogue.announce(claim.complete()?)?;
                rt.timeline
                    .emit_full(names::SLOT_RETURNED, at, None, &[], Some(&reason));
            }
        }
        Ok(())
    };
    if args.upload_ahead {
        // Slots are taken one ahead when ready, so the CUDA device can upload the next
        // partition's first input under the current one's compute.
        rt.serve_ahead(Stage::Gpu, work)
    } else {
        rt.serve(Stage::Gpu, |claim| {
            work(claim, &mut Lookahead::none(&mut None))
        })
    }
}
