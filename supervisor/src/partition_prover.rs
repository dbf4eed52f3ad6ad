//! The Groth16 prover `cuzk prove` runs on each partition: our own synthesis into reused
//! buffers, then our own CPU prover (`cuzk_kernels::groth16`) with fresh r, s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use blstrs::Scalar as Fr;
use cuzk_epilogue::PartitionProof;
use cuzk_kernels::groth16;
use cuzk_kernels::srs::{Srs, Validation};
use cuzk_kernels::witness::{CValues, CircuitShape, OwnedWitness};
use cuzk_stage_common::params_check;
use cuzk_synthesis::{params_path, PorepCircuits, ThreadedSynthesis};
use ff::Field;
use filecoin_proofs::MerkleTreeTrait;
use rand::rngs::OsRng;

pub struct PartitionProver {
    srs: SrsLoad,
    params_path: PathBuf,
    /// Sized once from the parameters and reused by every partition of the job.
    witness: OwnedWitness,
    /// A partition's challenges a run per thread of the process's pool.
    synthesis: ThreadedSynthesis,
}

/// The SRS, or the thread still decoding it.
enum SrsLoad {
    Decoding(std::thread::JoinHandle<Result<Srs, cuzk_kernels::srs::SrsError>>),
    Ready(Box<Srs>),
    Failed,
}

impl SrsLoad {
    fn get(&mut self) -> Result<&Srs> {
        if let SrsLoad::Decoding(_) = self {
            let SrsLoad::Decoding(handle) = std::mem::replace(self, SrsLoad::Failed) else {
                unreachable!()
            };
            let srs = handle
                .join()
                .map_err(|_| anyhow::anyhow!("parameter decoding thread panicked"))??;
            *self = SrsLoad::Ready(Box::new(srs));
        }
        match self {
            SrsLoad::Ready(srs) => Ok(srs),
            _ => bail!("parameters failed to load earlier in this job"),
        }
    }
}

impl PartitionProver {
    /// Reads the proof type's `.params` from the parameter cache (never generates them).
    /// Every point is checked (on the curve, in the subgroup) the first time a file is
    /// used, unless `trust_params`; see `params_check`.
    pub fn load<Tree: 'static + MerkleTreeTrait>(
        circuits: &PorepCircuits<'_, Tree>,
        trust_params: bool,
    ) -> Result<Self> {
        let params_path = params_path(circuits);
        if !params_path.exists() {
            bail!(
                "{}: parameter file not found (set FIL_PROOFS_PARAMETER_CACHE or --param-cache; \
                 for a test sector size make it with `cuzk params generate --sector-size {}`)",
                params_path.display(),
                cuzk_c1::proof_type::format_sector_size(circuits.c1().sector_size())
            );
        }
        // The parameters fix the shape: a domain of h + 1 points, one ic point per input,
        // one l point per aux variable. The counts are read now; the points decode on
        // another thread while the first partition synthesizes.
        let layout = Srs::layout(&params_path)?;
        let [h, l, ..] = layout.vectors.expect("a .params layout has its vectors");
        let capacity = CircuitShape {
            num_constraints: h.count + 1,
            num_inputs: layout.ic.count,
            num_aux: l.count,
        };
        let validation = params_check::validation_for(&params_path, trust_params);
        let path = params_path.clone();
        let decoding = std::thread::spawn(move || {
            let srs = Srs::read(&path, validation)?;
            if validation == Validation::Full {
                params_check::record_checked(&path);
            }
            Ok(srs)
        });
        Ok(PartitionProver {
            witness: OwnedWitness::new(capacity),
            synthesis: ThreadedSynthesis::new(rayon::current_num_threads())
                .map_err(anyhow::Error::msg)?,
            srs: SrsLoad::Decoding(decoding),
            params_path,
        })
    }

    /// Synthesizes (a run of challenges per thread) and proves partition `k`; step timings
    /// go into `timings` as `partition<k>.<step>`.
    pub fn prove_partition<Tree: 'static + MerkleTreeTrait>(
        &mut self,
        circuits: &PorepCircuits<'_, Tree>,
        k: usize,
        timings: &mut BTreeMap<String, Duration>,
    ) -> Result<PartitionProof> {
        let started = Instant::now();
        let capacity = self.witness.shape;
        let (shape, _split) = self
            .synthesis
            .synthesize(
                circuits,
                k,
                &capacity,
                self.witness.buffers(),
                CValues::Written,
            )
            .with_context(|| format!("partition {k}: synthesis"))?;
        timings.insert(format!("partition{k}.synthesis"), started.elapsed());

        let started = Instant::now();
        let srs = self.srs.get()?;
        timings.insert(format!("partition{k}.wait_params"), started.elapsed());
        let (r, s) = (Fr::random(OsRng), Fr::random(OsRng));
        let (proof, t) =
            groth16::prove(srs, &shape, self.witness.buffers(), r, s).with_context(|| {
                format!("partition {k}: proving with {}", self.params_path.display())
            })?;
        for (step, d) in [
            ("h", t.quotient),
            ("prep_msm", t.prep),
            ("msm_h", t.msm_h),
            ("msm_l", t.msm_l),
            ("msm_a", t.msm_a),
            ("msm_b_g1", t.msm_b_g1),
            ("msm_b_g2", t.msm_b_g2),
            ("combine", t.epilogue),
        ] {
            timings.insert(format!("partition{k}.{step}"), d);
        }
        Ok(PartitionProof(proof.to_bytes()))
    }
}
