//! `cuzk bench r1cs-device`: a = A·z and b = B·z made on the device from the recorded R1CS
//! (kernels/cuda/r1cs.cu) against the host's evaluation of the same recording (what
//! synthesis spends on them now), side by side on a real C1's partition 0, and on a layout
//! of its challenges stretched to fill a larger domain (2^27: a 32 GiB partition's size).
//!
//! Checks: on the real partition the device's a and b equal synthesis's on every row and
//! the device's a·b = C·z check finds no unsatisfied row; on the stretched layout (z the
//! real assignment repeated, which satisfies no circuit: unchecked) sampled rows equal the
//! CPU reference `DeviceForm::row`. Needs no parameters. What it prints is what docs/gpu.md
//! "a and b from the recorded R1CS" weighs: the device's milliseconds against the host's.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use cuzk_c1::C1Input;
use cuzk_kernels::cuda::r1cs_eval::eval_on_device;
use cuzk_kernels::msm::scalars::{to_limbs_vec, Limbs};
use cuzk_kernels::witness::{BlockLayout, CValues, OwnedWitness, R1cs};
use cuzk_kernels::witness::{Recorded, Which};
use cuzk_synthesis::{with_porep_circuits, CircuitsVisitor, PorepCircuits};
use filecoin_proofs::MerkleTreeTrait;
use rand::Rng;

use crate::ids::IdArgs;

#[derive(Debug, clap::Args)]
pub struct BenchR1csDeviceArgs {
    /// A real C1 file (partition 0 is evaluated).
    #[arg(long)]
    pub c1: std::path::PathBuf,
    #[command(flatten)]
    pub ids: IdArgs,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Timed runs of each side (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Also time the recording's challenges stretched to fill a domain of 2^this (27: a
    /// 32 GiB partition's).
    #[arg(long)]
    pub stretch_log: Option<u32>,
}

pub fn run(args: &BenchR1csDeviceArgs) -> Result<()> {
    let c1 = C1Input::read(&args.c1, args.ids.given_ids())?;
    with_porep_circuits(&c1, SideBySide { args })?
}

struct SideBySide<'a> {
    args: &'a BenchR1csDeviceArgs,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn best(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}

impl CircuitsVisitor for SideBySide<'_> {
    type Output = Result<()>;

    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Result<()> {
        let runs = self.args.runs.max(1);
        // As a synthesis process records it: the prefix and challenge 0, every challenge
        // then moved into place.
        let started = Instant::now();
        let layout = BlockLayout::measure(
            circuits.prefix_circuit(),
            circuits.challenge_run(0, 0..1)?,
            circuits.challenges(0),
        )
        .map_err(|e| anyhow::anyhow!("{}: its layout: {e}", circuits.c1().file().display()))?;
        let one = Recorded::record(circuits.challenge_run(0, 0..1)?, Which::ALL)?;
        let r1cs = R1cs::blocks(one, layout)?;
        let [ea, eb, ec] = r1cs.entries();
        println!(
            "{}: R1CS recorded in {:.0} ms ({} challenges; prefix and one challenge: entries A {ea}, B {eb}, C {ec})",
            circuits.c1().file().display(),
            ms(started.elapsed()),
            layout.blocks
        );
        let shape = r1cs.shape();
        let mut w = OwnedWitness::new(shape);
        let started = Instant::now();
        r1cs.synthesize_into(
            circuits.partition(0)?.circuit,
            &shape,
            w.buffers(),
            CValues::LeftOut,
        )?;
        let t_synth = started.elapsed();
        // The host's side: a, b and the a·b = c check from the same recording, on every
        // thread of the pool, as synthesis does after the assignment.
        let mut host = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            r1cs.evaluate_into(&shape, &mut w.buffers(), CValues::LeftOut)?;
            host.push(started.elapsed());
        }
        let b = w.buffers();
        let mut z = to_limbs_vec(&b.inputs[..shape.num_inputs]);
        z.extend(to_limbs_vec(&b.aux[..shape.num_aux]));
        let n = shape.domain_size();
        let form = r1cs.device_form();
        println!(
            "  {} of the {} recorded rows have more than {} entries in A, B or C: a warp each on the device",
            form.long.len(),
            form.m[0].start.len() - 1,
            cuzk_kernels::witness::device_form::LONG
        );
        let dev = eval_on_device(self.args.device, &form, &z, shape.domain_log2(), true, runs)?;
        if let Some(row) = dev.unsatisfied {
            bail!("the device found row {row} unsatisfied (a·b ≠ C·z) on a real witness");
        }
        if let Some(g) = (0..n).find(|&g| dev.a[g] != b.a[g] || dev.b[g] != b.b[g]) {
            bail!(
                "row {g} of 2^{}: the device's a, b differ from synthesis's",
                shape.domain_log2()
            );
        }
        let threads = rayon::current_num_threads();
        println!(
            "partition 0 (2^{} rows, {} aux): the device's a and b equal synthesis's on every row; no row unsatisfied",
            shape.domain_log2(),
            shape.num_aux
        );
        println!("  {:<52} {:>10}", "step (best of runs)", "ms");
        for (step, d) in [
            (
                "synthesis from the recording (assignment + a, b)".to_string(),
                t_synth,
            ),
            (
                format!("host: a, b and the check ({threads} threads)"),
                best(&host),
            ),
            (
                "device: the form and z uploaded (pageable)".to_string(),
                dev.upload,
            ),
            (
                "device: a, b and the check (kernel)".to_string(),
                best(&dev.runs),
            ),
        ] {
            println!("  {step:<52} {:>10.2}", ms(d));
        }
        println!(
            "  host vs device kernel (same run): {:.1}x",
            best(&host).as_secs_f64() / best(&dev.runs).as_secs_f64().max(1e-9)
        );
        if let Some(log) = self.args.stretch_log {
            stretched(self.args.device, form, &z, log, runs)?;
        }
        Ok(())
    }
}

/// The recording's challenges repeated to fill 2^log rows, z the real assignment repeated:
/// the kernel timed with and without the check, sampled rows against the CPU reference.
fn stretched(
    device: usize,
    mut form: cuzk_kernels::witness::device_form::DeviceForm,
    real_z: &[Limbs],
    log: u32,
    runs: usize,
) -> Result<()> {
    let (p, b) = (form.layout.prefix, form.layout.block);
    let n = 1usize << log;
    let fixed = p.constraints + p.inputs;
    let per = b.constraints + b.inputs;
    if fixed + per > n {
        bail!("one challenge does not fit 2^{log} rows");
    }
    form.layout.blocks = (n - fixed) / per;
    let (n_in, n_aux) = form.vars();
    let z: Vec<Limbs> = (0..n_in + n_aux)
        .map(|i| real_z[i % real_z.len()])
        .collect();
    println!(
        "stretched: {} challenges, {} rows of 2^{log}, {} aux variables (z: the real assignment repeated)",
        form.layout.blocks,
        form.rows(),
        n_aux
    );
    let plain = eval_on_device(device, &form, &z, log, false, runs)?;
    let mut rng = rand::thread_rng();
    let rows = form.rows();
    let samples: Vec<usize> = (0..4096)
        .map(|_| rng.gen_range(0..n))
        .chain(0..256)
        .chain(rows.saturating_sub(256)..(rows + n_in + 256).min(n))
        .collect();
    for &g in &samples {
        let [ra, rb, _] = form.row(g, &z);
        if plain.a[g] != ra || plain.b[g] != rb {
            bail!("stretched row {g}: the device's a, b differ from the CPU reference");
        }
    }
    drop(plain.a);
    drop(plain.b);
    let checked = eval_on_device(device, &form, &z, log, true, runs)?;
    println!(
        "  {} sampled rows equal the CPU reference (DeviceForm::row)",
        samples.len()
    );
    println!("  {:<52} {:>10}", "step (best of runs)", "ms");
    for (step, d) in [
        ("device: the form and z uploaded (pageable)", plain.upload),
        ("device: a and b (kernel)", best(&plain.runs)),
        (
            "device: a, b and the a·b = C·z check (kernel)",
            best(&checked.runs),
        ),
    ] {
        println!("  {step:<52} {:>10.2}", ms(d));
    }
    Ok(())
}
