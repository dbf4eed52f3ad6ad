//! `cuzk bench gpu`: the gpu stage's device (our CUDA kernels) against the CPU device on
//! the same synthesized partitions of a real C1, in one run: the four G1 sums and B_G2
//! must be equal (so proofs are bit-exact with the same r, s: checked on the combined bytes too),
//! the proof made from the GPU's sums must pass verify_seal, and each side is timed.
//! Prints the split between CPU synthesis, prep and the GPU; synthesis as a serving stage
//! process spends it (its first call of the proof type, which measures the layout and
//! records the R1CS, is timed on a line of its own).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use blstrs::Scalar as Fr;
use cuzk_c1::C1Input;
use cuzk_epilogue::{assemble_proof, verify_assembled_proof, PartitionProof};
use cuzk_kernels::cuda::{Evals, GpuPartition, GpuProver, ResidentBases};
use cuzk_kernels::groth16::steps::{self, Densities};
use cuzk_kernels::groth16::{combine, MsmResults};
use cuzk_kernels::srs::{Srs, Validation};
use cuzk_kernels::witness::{CValues, CircuitShape, Evaluated, OwnedWitness};
use cuzk_synthesis::{
    params_path, with_porep_circuits, CircuitsVisitor, PorepCircuits, Split, ThreadedSynthesis,
};
use ff::Field;
use filecoin_proofs::MerkleTreeTrait;
use rand::rngs::OsRng;

use crate::ids::C1Args;

#[derive(Debug, clap::Args)]
pub struct BenchGpuArgs {
    #[command(flatten)]
    pub c1: C1Args,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// GPU runs per partition (the first includes warm-up); the best is reported.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// H's MSM in Lagrange form (H's bases transformed on the device first), or in that form
    /// with C folded into L (`folded`: C of the C1's proof type recorded as the gpu stage
    /// records it), as the gpu stage takes it from the same variable.
    #[arg(long, env = "CUZK_GPU_H_FORM", default_value = "coefficients", value_parser = ["coefficients", "lagrange", "folded"])]
    pub h_form: String,
    /// Where H's bases in Lagrange form are kept between runs (as the gpu stage's
    /// `CUZK_GPU_LAGRANGE_CACHE`).
    #[arg(long, env = "CUZK_GPU_LAGRANGE_CACHE")]
    pub lagrange_cache: Option<std::path::PathBuf>,
    /// Who makes a and b, as the stages take it from the same variable: `synthesis` (into
    /// the slot) or `prover` (the default: the GPU, from the assignment and the recorded R1CS; synthesis
    /// is then also timed leaving them out, beside the synthesis that writes them, and the
    /// CPU device's reference still takes synthesis's a and b).
    #[arg(long, env = "CUZK_SYNTHESIS_AB", default_value = "prover", value_parser = ["synthesis", "prover"])]
    pub ab: String,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn run(args: &BenchGpuArgs) -> Result<()> {
    cuzk_kernels::cuda::set_h_form(match args.h_form.as_str() {
        "lagrange" => cuzk_kernels::cuda::HForm::Lagrange,
        "folded" => cuzk_kernels::cuda::HForm::Folded,
        _ => cuzk_kernels::cuda::HForm::Coefficients,
    });
    cuzk_kernels::cuda::set_lagrange_cache(args.lagrange_cache.clone());
    let c1 = C1Input::read(&args.c1.c1, args.c1.given_ids())?;
    let proofs = with_porep_circuits(&c1, Compare { args })??;
    let proof = assemble_proof("bench-gpu", &c1, &proofs)?;
    verify_assembled_proof("bench-gpu", &c1, &proof, &proofs)
        .context("the proof from the GPU's sums")?;
    println!(
        "verify_seal accepts the proof made from the GPU's sums ({} bytes)",
        proof.len()
    );
    Ok(())
}

struct Compare<'a> {
    args: &'a BenchGpuArgs,
}

impl CircuitsVisitor for Compare<'_> {
    type Output = Result<Vec<PartitionProof>>;

    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let params = params_path(&circuits);
        let started = Instant::now();
        let srs = Srs::read(&params, Validation::Trusted)?;
        let load = started.elapsed();
        let view = srs.view();
        let capacity = CircuitShape {
            num_constraints: srs.h.len() + 1,
            num_inputs: srs.vk.ic.len(),
            num_aux: srs.l.len(),
        };
        let mut witness = OwnedWitness::new(capacity);
        // C of the proof type's circuit, recorded once as the gpu stage does for the folded
        // form: here in every form, for the CPU device's c = C·z (synthesis leaves c out, as
        // in a slot, and the GPU makes it as a∘b: equal sums check the two agree).
        let started = Instant::now();
        let (c_matrix, split) =
            cuzk_synthesis::record_c(circuits.c1(), rayon::current_num_threads())?;
        let c_matrix = std::sync::Arc::new(c_matrix);
        println!(
            "C recorded ({split:?}): {} entries in {:.0} ms",
            c_matrix.entries.len(),
            ms(started.elapsed())
        );
        if self.args.h_form == "folded" {
            cuzk_kernels::cuda::set_folded_c(Some(c_matrix.clone()));
        }
        // a and b by the GPU: the R1CS recorded as the gpu stage records it, its device
        // form held by the prover made below.
        let by_prover = self.args.ab == "prover";
        if by_prover {
            let started = Instant::now();
            let r1cs = cuzk_synthesis::record_r1cs(circuits.c1())?;
            cuzk_kernels::cuda::set_r1cs_form(Some(std::sync::Arc::new(r1cs.device_form())));
            println!(
                "R1CS recorded for the GPU's a and b in {:.0} ms",
                ms(started.elapsed())
            );
        }
        let started = Instant::now();
        let mut gpu = GpuProver::new(
            self.args.device,
            capacity.domain_log2(),
            capacity.num_inputs + capacity.num_aux,
            ResidentBases {
                h: &srs.h,
                l: &srs.l,
                a: &srs.a,
                b_g1: &srs.b_g1,
                b_g2: Some(&srs.b_g2),
            },
        )?;
        let gpu_setup = started.elapsed();
        println!("device: {}", gpu.describe());
        println!(
            "parameters decoded in {:.0} ms; GPU plan + resident SRS upload {:.0} ms",
            ms(load),
            ms(gpu_setup)
        );
        let mut proofs = Vec::new();
        // As the synthesis stage does: a run of challenges per thread of the pool.
        let synthesis =
            ThreadedSynthesis::new(rayon::current_num_threads()).map_err(anyhow::Error::msg)?;
        // As in a slot: no c (the GPU makes it, or folds C into L).
        let c = CValues::LeftOut;
        // A stage process measures the layout and records the R1CS at its first partition
        // of a proof type, then serves: that first call is timed apart, so the partitions'
        // synthesis below is what a serving process spends.
        let started = Instant::now();
        synthesis.synthesize(&circuits, 0, &capacity, witness.buffers(), c)?;
        println!(
            "first synthesis of the proof type (layout, R1CS recording): {:.0} ms",
            ms(started.elapsed())
        );
        for k in 0..circuits.partitions() {
            // Synthesis as a slot gets it with a and b left to the prover, timed beside the
            // one that writes them (which the CPU device's reference below reads).
            let t_synth_left = if by_prover {
                let started = Instant::now();
                let (_, _, what) = synthesis.synthesize_for(
                    &circuits,
                    k,
                    &capacity,
                    witness.buffers(),
                    Evaluated::ByProver,
                )?;
                if what != Evaluated::ByProver {
                    bail!("partition {k}: synthesis wrote a and b (its recording did not fit)");
                }
                Some(started.elapsed())
            } else {
                None
            };
            let started = Instant::now();
            let (shape, split) =
                synthesis.synthesize(&circuits, k, &capacity, witness.buffers(), c)?;
            let synth_step = match split {
                Split::Threads(n) => format!("synthesis without C (CPU, {n} threads)"),
                Split::OnePiece(_) => "synthesis without C (CPU, 1 thread)".to_string(),
            };
            let t_synth = started.elapsed();
            {
                // The CPU device's reference takes c = C·z, outside the synthesis time.
                let w = witness.buffers();
                let cz = c_matrix.apply(&w.inputs[..shape.num_inputs], &w.aux[..shape.num_aux]);
                w.c[..cz.len()].copy_from_slice(&cz);
                w.c[cz.len()..shape.domain_size()].fill(Fr::ZERO);
            }
            let w = witness.buffers();
            let n = shape.domain_size();
            let d = Densities::of(&w);
            steps::check_params(&view, &shape, d)?;
            let started = Instant::now();
            let z =
                steps::canonical_assignment(&w.inputs[..shape.num_inputs], &w.aux[..shape.num_aux]);
            let plans = steps::plan_msms(&z, shape.num_inputs, d);
            let t_prep = started.elapsed();
            let started = Instant::now();
            let b_g2 = steps::b_g2_msm(&view, &z, plans.b.as_ref());
            let t_b_g2 = started.elapsed();

            let partition = GpuPartition {
                domain_log2: shape.domain_log2(),
                evals: if by_prover {
                    Evals::FromR1cs
                } else {
                    Evals::Given {
                        a: &w.a[..n],
                        b: &w.b[..n],
                    }
                },
                // As the gpu stage proves: c made on the device as a∘b. The CPU device's
                // reference below takes the c synthesis wrote (C·z), so equal sums check
                // a∘b = C·z on this witness too.
                c: None,
                scalars: &z,
                l: plans.l.as_ref(),
                a_plan: plans.a.as_ref(),
                b_plan: plans.b.as_ref(),
                b_g2: true,
                bases: None,
            };
            let mut best: Option<(
                cuzk_kernels::cuda::GpuResults,
                cuzk_kernels::cuda::GpuTimings,
            )> = None;
            for _ in 0..self.args.runs.max(1) {
                let (r, t) = gpu.prove(&partition)?;
                if let Some((prev, _)) = &best {
                    if *prev != r {
                        bail!("partition {k}: the GPU gave different sums on two runs");
                    }
                }
                if best.as_ref().is_none_or(|(_, bt)| t.total < bt.total) {
                    best = Some((r, t));
                }
            }
            let (g, t) = best.expect("at least one run");

            let started = Instant::now();
            let (mut a, mut b, mut c) = (w.a[..n].to_vec(), w.b[..n].to_vec(), w.c[..n].to_vec());
            let h = steps::h_scalars(&mut a, &mut b, &mut c, shape.domain_log2());
            let t_ntt_cpu = started.elapsed();
            let mut times = [Duration::ZERO; 4];
            let cpu = steps::g1_msms(
                &view,
                h,
                &z,
                [plans.l.as_ref(), plans.a.as_ref(), plans.b.as_ref()],
                &mut times,
            );
            let t_cpu = started.elapsed();
            // With C folded into L only H's and L's sum is ΣH + ΣL (groth16::folded).
            let folded = gpu.c_folded_into_l();
            let mut checks = if folded {
                vec![("H + L", g.h + g.l, cpu.h + cpu.l)]
            } else {
                vec![("H", g.h, cpu.h), ("L", g.l, cpu.l)]
            };
            checks.extend([("A", g.a, cpu.a), ("B_G1", g.b_g1, cpu.b_g1)]);
            for (name, ours, theirs) in checks {
                if ours != theirs {
                    bail!("partition {k}: {name} from the GPU differs from the CPU's");
                }
            }
            let Some(g_b_g2) = g.b_g2 else {
                bail!("partition {k}: the GPU returned no B_G2");
            };
            if g_b_g2 != b_g2 {
                bail!("partition {k}: B_G2 from the GPU differs from the CPU's");
            }
            let (r, s) = (Fr::random(OsRng), Fr::random(OsRng));
            let results = |h, l, a, b_g1, b_g2| MsmResults {
                h,
                l,
                a,
                b_g1,
                b_g2,
            };
            let from_gpu =
                combine(&view.vk, &results(g.h, g.l, g.a, g.b_g1, g_b_g2), r, s).to_bytes();
            let from_cpu = combine(
                &view.vk,
                &results(cpu.h, cpu.l, cpu.a, cpu.b_g1, b_g2),
                r,
                s,
            )
            .to_bytes();
            if from_gpu != from_cpu {
                bail!("partition {k}: proofs differ with the same r, s");
            }
            println!(
                "partition {k}: GPU sums equal the CPU's; proofs bit-exact with the same r, s"
            );
            println!("  {:<28} {:>10}", "step", "ms");
            // In Lagrange form: A and B to the coset and c's values sorted by kind, then the
            // MSM over LC and the sums over LD' (docs/gpu.md "H in Lagrange form").
            let lagrange = gpu.h_in_lagrange_form();
            let (ntt_step, h_step, l_step) = if folded {
                ("GPU 4 NTTs", "GPU MSM H (over LC)", "GPU MSM L (over L')")
            } else if lagrange {
                ("GPU 4 NTTs + c's kinds", "GPU MSM H (over LC)", "GPU MSM L")
            } else {
                ("GPU 6 NTTs + H", "GPU MSM H", "GPU MSM L")
            };
            let c_row = (lagrange && !folded).then_some(("GPU sums over LD' (c)", t.msm_c));
            let left_row = t_synth_left.map(|d| ("synthesis without a, b, C", d));
            let ab_row = by_prover.then_some(("GPU a, b from the R1CS", t.r1cs));
            for (step, d) in [(synth_step.as_str(), t_synth)]
                .into_iter()
                .chain(left_row)
                .chain([
                    ("prep_msm (CPU)", t_prep),
                    ("B_G2 MSM (CPU)", t_b_g2),
                    ("GPU upload", t.upload),
                ])
                .chain(ab_row)
                .chain([(ntt_step, t.ntt), (h_step, t.msm_h)])
                .chain(c_row)
                .chain([
                    (l_step, t.msm_l),
                    ("GPU MSM A", t.msm_a),
                    ("GPU MSM B_G1", t.msm_b_g1),
                    ("GPU MSM B_G2", t.msm_b_g2),
                    ("GPU total", t.total),
                    ("CPU NTTs + H", t_ntt_cpu),
                    ("CPU H..B_G1 total", t_cpu),
                    ("CPU H..B_G1 + B_G2 total", t_cpu + t_b_g2),
                ])
            {
                println!("  {step:<28} {:>10.1}", ms(d));
            }
            println!(
                "  GPU vs CPU device (same run, H..B_G2): {:.1}x",
                (t_cpu + t_b_g2).as_secs_f64() / t.total.as_secs_f64().max(1e-9)
            );
            if let Some(left) = t_synth_left {
                println!(
                    "  synthesis writing a, b vs leaving them to the GPU (same run): {:.2}x",
                    t_synth.as_secs_f64() / left.as_secs_f64().max(1e-9)
                );
            }
            proofs.push(PartitionProof(from_gpu));
        }
        Ok(proofs)
    }
}
