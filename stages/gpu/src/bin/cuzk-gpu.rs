//! The GPU stage process: one per device. Takes prepped slots, computes H and the G1
//! MSMs (and B_G2 when the job puts it here), and hands the slot to the epilogue.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Parser;
use cuzk_gpu::device_error::{after_device_error, injected_error, AfterDeviceError};
use cuzk_gpu::wrong_sum::corrupt_if_asked;
use cuzk_gpu::{
    prove_slot, CpuDevice, CudaDevice, DeviceError, FoldedC, HeldR1cs, PartitionDevice, ReadyAhead,
};
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, SlotClaim, SlotState, Stage, StageSender};
use cuzk_stage_common::pass_through::{live_job, steps_ms};
use cuzk_stage_common::runtime::{Lookahead, Turn};
use cuzk_stage_common::{
    is_fault_in_the_file, BG2Stage, JobSpec, SrsCache, StageArgs, StageRuntime,
};

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
    /// cost the start ~6.5 min at 32 GiB unless `lagrange_cache` holds their bases
    /// (docs/operations.md).
    #[arg(long, env = "CUZK_GPU_H_FORM", default_value = "coefficients")]
    h_form: HFormArg,
    /// With `lagrange` or `folded`: a directory where H's bases in Lagrange form are kept
    /// between starts (made once per parameter file: 0.8 GB at 2 KiB, 24 GiB at 32 GiB);
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
    let domain = 1usize << rt.arena.header().shape.domain_log2;
    let device: Box<dyn PartitionDevice> = match args.device {
        None => Box::new(CpuDevice::new(domain)),
        Some(d) => Box::new(CudaDevice::new(d, &rt.arena)?),
    };
    // With a and b left to the prover (`CUZK_SYNTHESIS_AB=prover`, as synthesis reads it),
    // the jobs' recorded R1CS, given to the device before their prover is made.
    // (Or the arena was sized without room for them.)
    let by_prover = cuzk_synthesis::slot_evals_from_env().map_err(anyhow::Error::msg)?
        == cuzk_kernels::witness::Evaluated::ByProver
        || rt.arena.header().shape.leaves_evals_to_prover();
    let mut serving = Serving {
        to_epilogue: rt.control.sender(SlotState::Proved)?,
        srs: SrsCache::new(&rt.srs_dir(), rt.args.trust_params),
        rt: &rt,
        device,
        folded_c: matches!(args.h_form, HFormArg::Folded).then(FoldedC::default),
        held_r1cs: by_prover.then(HeldR1cs::default),
        ready_ahead: ReadyAhead::default(),
    };
    eprintln!("cuzk-gpu: serving on {}", serving.device.describe());
    rt.serve_ahead(Stage::Gpu, |turn| match turn {
        Turn::Idle => {
            serving.ready_ahead();
            Ok(())
        }
        // Slots are taken one ahead when ready, so the CUDA device can upload the next
        // partition's first input under the current one's compute.
        Turn::Slot(claim, ahead) if args.upload_ahead => serving.partition(claim, ahead),
        Turn::Slot(claim, _) => serving.partition(claim, &mut Lookahead::none(&mut None)),
    })
}

/// What the gpu process keeps between partitions.
struct Serving<'r> {
    rt: &'r StageRuntime,
    to_epilogue: StageSender,
    /// Before `srs`: fields drop in declaration order, and a prover streaming its bases
    /// holds the SRS mapping page-locked, so it must unregister before the mapping goes.
    device: Box<dyn PartitionDevice>,
    srs: SrsCache,
    /// With C folded into L, the jobs' circuit's C, set before their prover is made.
    folded_c: Option<FoldedC>,
    /// With a and b left to the prover, the jobs' recorded R1CS.
    held_r1cs: Option<HeldR1cs>,
    ready_ahead: ReadyAhead,
}

impl<'r> Serving<'r> {
    /// Records what the device needs of `spec`'s circuit (its C folded into L, its R1CS
    /// when a and b are made here) unless it holds that already; whether it recorded any.
    fn record_circuit(&mut self, spec: &JobSpec) -> Result<bool> {
        let mut recorded = false;
        if let Some(f) = self.folded_c.as_mut() {
            recorded |= f.ensure(spec)?;
        }
        if let Some(r) = self.held_r1cs.as_mut() {
            recorded |= r.ensure(spec, self.device.as_mut())?;
        }
        Ok(recorded)
    }

    /// While no slot is ready: readies the device for the oldest live job (ready_ahead.rs).
    fn ready_ahead(&mut self) {
        let live = self.rt.arena.active_jobs();
        let Some(id) = self
            .ready_ahead
            .job_to_ready(live.map(|j| (j.job_id(), j.is_failed())))
        else {
            return;
        };
        let started = Instant::now();
        let readied = self
            .rt
            .arena
            .job(id)
            .map_err(anyhow::Error::from)
            .and_then(|job| job.decode_job::<JobSpec>().map_err(anyhow::Error::from))
            .and_then(|spec| {
                let recorded = self.record_circuit(&spec)?;
                let mut steps = Vec::new();
                if recorded {
                    steps.push(("record_circuit", started.elapsed()));
                }
                // Mapping waits while another stage decodes the file (minutes on its
                // first use, with the full point check): a step of its own when shown.
                let mapping = Instant::now();
                let srs = self.srs.for_job(&spec)?;
                let mapped = mapping.elapsed();
                let prepared = self.device.prepare(&srs, spec.b_g2_in(BG2Stage::Gpu))?;
                if recorded || !prepared.is_empty() {
                    steps.push(("map_srs", mapped));
                }
                steps.extend(prepared);
                Ok(steps)
            });
        match readied {
            // Nothing was missing (the job's parameters are those the device serves now):
            // no line per job in a prover that runs all day.
            Ok(steps) if steps.is_empty() => {}
            Ok(mut steps) => {
                let total = started.elapsed();
                let parts: Vec<String> = steps
                    .iter()
                    .map(|(k, d)| format!("{k} {:.2} s", d.as_secs_f64()))
                    .collect();
                // The whole readying (the SRS mapped too): where the waterfall draws it.
                steps.push((names::READIED_TOTAL, total));
                self.rt
                    .timeline
                    .emit_steps(names::GPU_READIED, At::job(id), &steps_ms(&steps));
                eprintln!(
                    "cuzk-gpu: readied for job {id} before its first partition in {:.2} s ({})",
                    total.as_secs_f64(),
                    parts.join(", ")
                );
            }
            // Met again, with its message, when the job's first partition comes: a lost
            // context then as that partition's lost attempt (not as set-up: GpuError::is_setup).
            Err(e) => {
                let lost = e
                    .downcast_ref::<DeviceError>()
                    .is_some_and(|DeviceError(gpu)| !gpu.context_usable());
                eprintln!(
                    "cuzk-gpu: job {id}: readying ahead of its partitions: {e:#}{}",
                    if lost {
                        "; the next partition finds the context lost and restarts this process"
                    } else {
                        ""
                    }
                );
            }
        }
    }

    /// Proves the partition in `claim` and hands the slot to the epilogue; a device error
    /// gives it back for a retry (or fails its job: device_error.rs).
    fn partition<'a>(&mut self, claim: SlotClaim<'a>, ahead: &mut Lookahead<'_, 'a>) -> Result<()> {
        let rt = self.rt;
        let Some((job, mut claim)) = live_job(rt, claim, &self.to_epilogue)? else {
            return Ok(());
        };
        let at = At::slot(job.job_id(), claim.partition(), claim.slot());
        rt.timeline.emit(names::GPU_START, at);
        let mut srs_trouble = false;
        let proved = job
            .decode_job::<JobSpec>()
            .map_err(anyhow::Error::from)
            .and_then(|spec| {
                self.record_circuit(&spec)?;
                let srs = self.srs.for_job(&spec).inspect_err(|e| {
                    srs_trouble = !is_fault_in_the_file(e);
                })?;
                let b_g2 = spec.b_g2_in(BG2Stage::Gpu);
                let steps = prove_slot(self.device.as_mut(), &mut claim, &srs, b_g2, ahead)?;
                if corrupt_if_asked(&job.name(), &mut claim) {
                    eprintln!(
                        "cuzk-gpu: CUZK_TEST_WRONG_SUM: H of partition {} doubled",
                        claim.partition()
                    );
                }
                Ok(steps)
            })
            .and_then(|steps| match injected_error() {
                Some(gpu) => Err(DeviceError(gpu).into()),
                None => Ok(steps),
            });
        match proved {
            Ok(steps) => {
                if let Some(r) = self.held_r1cs.as_mut() {
                    r.partition_proved();
                }
                rt.timeline
                    .emit_steps(names::GPU_END, at, &steps_ms(&steps));
                self.to_epilogue.announce(claim.complete()?)?;
            }
            // The SRS could not be mapped for this machine's sake (a full /dev/shm, the
            // parameter file away a moment): as for a device it cannot set up, the slot goes
            // back uncounted and the process restarts after back-off; the jobs wait.
            Err(e) if srs_trouble => {
                claim.abandon()?;
                anyhow::bail!(
                    "job {} ({}): the SRS cannot be loaded on this machine, its jobs wait: {e:#}",
                    job.job_id(),
                    job.name()
                );
            }
            Err(e) => {
                let reason = format!("partition {}: gpu: {e:#}", claim.partition());
                eprintln!("cuzk-gpu: job {} ({}): {reason}", job.job_id(), job.name());
                if let Some(DeviceError(gpu)) = e.downcast_ref::<DeviceError>() {
                    // Counted in the job record, which outlives this process
                    // (device_error.rs); set-up errors are not the partition's.
                    let note_lost = || {
                        let what = format!("the gpu failed on it ({gpu})");
                        job.note_lost_attempt(claim.partition(), &what)
                            .unwrap_or(u8::MAX)
                    };
                    match after_device_error(gpu, note_lost) {
                        AfterDeviceError::WaitForSetup => {
                            // The device cannot be set up (the install or the machine):
                            // failing jobs for it would empty the queue into failed/
                            // within seconds. The supervisor restarts this process after
                            // back-off; the jobs wait.
                            claim.abandon()?;
                            anyhow::bail!("the device cannot be set up, its jobs wait: {gpu}");
                        }
                        AfterDeviceError::RestartContext => {
                            // The context is lost: the slot goes back for a retry, and
                            // the restarted process gets a fresh context.
                            claim.abandon()?;
                            anyhow::bail!("device context lost: {gpu}");
                        }
                        AfterDeviceError::Retry => {
                            claim.abandon()?;
                            rt.timeline.emit_full(
                                names::SLOT_RETURNED,
                                at,
                                None,
                                &[],
                                Some(&reason),
                            );
                            return Ok(());
                        }
                        AfterDeviceError::FailJob => {}
                    }
                }
                // The job fails (not the device): perhaps for a recording made from a bad
                // first job (held_r1cs.rs).
                if let Some(r) = self.held_r1cs.as_mut() {
                    r.partition_failed();
                }
                job.mark_failed(&reason);
                self.to_epilogue.announce(claim.complete()?)?;
                rt.timeline
                    .emit_full(names::SLOT_RETURNED, at, None, &[], Some(&reason));
            }
        }
        Ok(())
    }
}
