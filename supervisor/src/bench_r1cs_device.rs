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
use blstrs::Scalar as Fr;
use cuzk_c1::C1Input;
use cuzk_kernels::cuda::r1cs_eval::eval_on_device;
use cuzk_kernels::msm::scalars::{to_limbs_vec, Limbs};
use cuzk_kernels::witness::{BlockLayout, CValues, OwnedWitness, R1cs};
use cuzk_kernels::witness::{Recorded, Which};
use cuzk_synthesis::{with_porep_circuits, CircuitsVisitor, PorepCircuits};
use filecoin_proofs::MerkleTreeTrait;

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

/// The host's side, `runs` times: a, b and the a·b = c check from the recording for the
/// assignment in `w`, on every thread of the pool, as synthesis does after the assignment.
fn host_runs(r1cs: &R1cs, w: &mut OwnedWitness, runs: usize) -> Result<Vec<Duration>> {
    let shape = r1cs.shape();
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            r1cs.evaluate_into(&shape, &mut w.buffers(), CValues::LeftOut)?;
            Ok(started.elapsed())
        })
        .collect()
}

/// The steps' best times in ms, then the host's a, b and check against the device's
/// kernels doing the same (both with the check).
fn table(steps: Vec<(String, Duration)>, (host, device): (Duration, Duration)) {
    println!("  {:<52} {:>10}", "step (best of runs)", "ms");
    for (step, d) in steps {
        println!("  {step:<52} {:>10.2}", ms(d));
    }
    println!(
        "  host vs device kernels, both with the check (same run): {:.1}x",
        host.as_secs_f64() / device.as_secs_f64().max(1e-9)
    );
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
        let r1cs = R1cs::blocks(one.clone(), layout)?;
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
        let host = host_runs(&r1cs, &mut w, runs)?;
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
        table(
            vec![
                (
                    "synthesis from the recording (assignment + a, b)".into(),
                    t_synth,
                ),
                (
                    format!("host: a, b and the check ({threads} threads)"),
                    best(&host),
                ),
                (
                    "device: the form and z uploaded (pageable)".into(),
                    dev.upload,
                ),
                (
                    "device: a, b and the check (kernels)".into(),
                    best(&dev.runs),
                ),
                ("  of which the long rows' kernel".into(), best(&dev.long)),
            ],
            (best(&host), best(&dev.runs)),
        );
        if let Some(log) = self.args.stretch_log {
            stretched(self.args.device, one, layout, &z, log, runs)?;
        }
        Ok(())
    }
}

/// The recording's challenges repeated to fill 2^log rows, every challenge's variables
/// given challenge 0's values (a witness of the stretched circuit: each challenge's rows read
/// only the prefix and its own variables), so every row is checked on the device and a, b
/// compared with the host's evaluation of the same stretched recording on every row, both
/// timed.
fn stretched(
    device: usize,
    one: Recorded,
    mut layout: BlockLayout,
    real_z: &[Limbs],
    log: u32,
    runs: usize,
) -> Result<()> {
    let (p, b) = (layout.prefix, layout.block);
    let n = 1usize << log;
    let fixed = p.constraints + p.inputs;
    let per = b.constraints + b.inputs;
    if fixed + per > n {
        bail!("one challenge does not fit 2^{log} rows");
    }
    let real_inputs = p.inputs + layout.blocks * b.inputs;
    layout.blocks = (n - fixed) / per;
    let r1cs = R1cs::blocks(one, layout)?;
    let shape = r1cs.shape();
    // Variable i of the stretched circuit: the prefix's own, or challenge 0's of its place.
    let from = |i: usize, prefix: usize, block: usize| {
        if i < prefix {
            i
        } else {
            prefix + (i - prefix) % block
        }
    };
    let z: Vec<Limbs> = (0..shape.num_inputs)
        .map(|i| real_z[from(i, p.inputs, b.inputs)])
        .chain((0..shape.num_aux).map(|i| real_z[real_inputs + from(i, p.aux, b.aux)]))
        .collect();
    println!(
        "stretched: {} challenges, {} rows of 2^{log}, {} aux variables (every challenge given challenge 0's values)",
        layout.blocks,
        shape.num_constraints - shape.num_inputs,
        shape.num_aux
    );
    // The host's side: the same recording evaluated for the same z.
    let mut w = OwnedWitness::new(shape);
    {
        let bufs = w.buffers();
        let fr = |l: &Limbs| -> Fr { Option::from(Fr::from_u64s_le(l)).expect("canonical") };
        for (dst, src) in bufs.inputs.iter_mut().zip(&z[..shape.num_inputs]) {
            *dst = fr(src);
        }
        for (dst, src) in bufs.aux.iter_mut().zip(&z[shape.num_inputs..]) {
            *dst = fr(src);
        }
    }
    let host = host_runs(&r1cs, &mut w, runs)?;
    let form = r1cs.device_form();
    let plain = eval_on_device(device, &form, &z, log, false, runs)?;
    let bufs = w.buffers();
    if let Some(g) = (0..n).find(|&g| plain.a[g] != bufs.a[g] || plain.b[g] != bufs.b[g]) {
        bail!("stretched row {g}: the device's a, b differ from the host's");
    }
    drop(plain.a);
    drop(plain.b);
    let checked = eval_on_device(device, &form, &z, log, true, runs)?;
    if let Some(row) = checked.unsatisfied {
        bail!("stretched: the device found row {row} unsatisfied (a·b ≠ C·z)");
    }
    let threads = rayon::current_num_threads();
    println!("  the device's a and b equal the host's on every row; no row unsatisfied");
    table(
        vec![
            (
                format!("host: a, b and the check ({threads} threads)"),
                best(&host),
            ),
            (
                "device: the form and z uploaded (pageable)".into(),
                plain.upload,
            ),
            ("device: a and b (kernels)".into(), best(&plain.runs)),
            ("  of which the long rows' kernel".into(), best(&plain.long)),
            (
                "device: a, b and the a·b = C·z check (kernels)".into(),
                best(&checked.runs),
            ),
            (
                "  of which the long rows' kernel".into(),
                best(&checked.long),
            ),
        ],
        (best(&host), best(&checked.runs)),
    );
    Ok(())
}
