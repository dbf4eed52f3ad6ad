//! C for H in Lagrange form with C folded into L (`CUZK_GPU_H_FORM=folded`; docs/gpu.md
//! "C folded into L"): the gpu process records the circuit's C from the blank circuit of
//! its jobs' proof type before the first prover for their parameters is made, and again
//! only when a job brings other parameters. A synthetic job gets a C of its shape without
//! entries (L' = L: its bases are random points, the speed is the same).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use blstrs::Scalar as Fr;
use cuzk_c1::{C1Input, GivenIds};
use cuzk_kernels::cuda::set_folded_c;
use cuzk_kernels::msm::scalars::Limbs;
use cuzk_kernels::synthetic::SyntheticShape;
use cuzk_kernels::witness::matrix::R1csMatrix;
use cuzk_shm_layout::{Region, SlotClaim};
use cuzk_stage_common::slot_view::{cast, cast_mut, meta};
use cuzk_stage_common::JobSpec;
use cuzk_synthesis::Split;
use ff::Field;
use rayon::prelude::*;

/// The parameters whose circuit's C the process has set (`set_folded_c`), and that C.
#[derive(Default)]
pub struct FoldedC {
    params: Option<PathBuf>,
    c: Option<Arc<R1csMatrix>>,
}

impl FoldedC {
    /// Sets C for `spec`'s parameters unless it is set already.
    pub fn ensure(&mut self, spec: &JobSpec) -> Result<()> {
        if self.params.as_ref() == Some(&spec.params_path) {
            return Ok(());
        }
        let started = Instant::now();
        let (c, how) = match &spec.synthetic {
            Some(s) => {
                let shape = SyntheticShape::by_name(&s.synthetic)
                    .with_context(|| format!("no synthetic shape {:?}", s.synthetic))?;
                let empty = R1csMatrix {
                    num_inputs: shape.num_inputs,
                    num_aux: shape.num_aux,
                    ..Default::default()
                };
                (empty, "empty: a synthetic job".to_string())
            }
            None => {
                let ids = GivenIds {
                    miner_id: spec.miner_id,
                    sector_num: spec.sector_num,
                };
                let c1 = C1Input::read(&spec.c1_path, ids)?;
                let (c, split) = cuzk_synthesis::record_c(&c1, rayon::current_num_threads())?;
                let how = match split {
                    Split::Threads(n) => format!("a run of challenges per thread, {n} threads"),
                    Split::OnePiece(why) => format!("in one piece: {why}"),
                };
                (c, how)
            }
        };
        eprintln!(
            "cuzk-gpu: C of {} recorded ({} entries; {how}) in {:.1} s; folded into L when the prover starts",
            spec.params_path.display(),
            c.entries.len(),
            started.elapsed().as_secs_f64()
        );
        let c = Arc::new(c);
        set_folded_c(Some(c.clone()));
        self.params = Some(spec.params_path.clone());
        self.c = Some(c);
        Ok(())
    }

    /// Writes c = C·z into the slot's c region, which synthesis left out
    /// (`JobSpec::c_left_out`), for a prover that reads it (the CPU device, or a CUDA
    /// prover not in the folded form): from the slot's assignment (canonical limbs) and the
    /// C that `ensure` set for the job's parameters.
    pub fn make_c(&self, claim: &mut SlotClaim<'_>) -> Result<()> {
        let c = self
            .c
            .as_ref()
            .context("c was left out and no C is recorded for this job's parameters")?;
        let shape = meta(claim);
        if (c.num_inputs, c.num_aux) != (shape.num_inputs, shape.num_aux) {
            anyhow::bail!(
                "C recorded for {} inputs and {} aux, the partition has {} and {}",
                c.num_inputs,
                c.num_aux,
                shape.num_inputs,
                shape.num_aux
            );
        }
        let z: Vec<Fr> = cast::<Limbs>(claim.region(Region::Assignment))
            [..shape.num_inputs + shape.num_aux]
            .par_iter()
            .map(|l| {
                Option::from(Fr::from_u64s_le(l))
                    .context("a scalar of the assignment is not below r")
            })
            .collect::<Result<_>>()?;
        let values = c.apply(&z[..shape.num_inputs], &z[shape.num_inputs..]);
        let n = shape.domain_size();
        let out = &mut cast_mut::<Fr>(claim.region_mut(Region::EvalC))[..n];
        out[..values.len()].copy_from_slice(&values);
        out[values.len()..].fill(Fr::ZERO);
        Ok(())
    }
}
