//! The job-level value the supervisor publishes in the arena's job table (bincode): what
//! every stage needs to find the C1, its parameters and its output.

use std::path::PathBuf;

use cuzk_c1::{C1Error, C1Input, GivenIds};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The C1 file, claimed into the drop directory's working/ (read by synthesis and by
    /// the epilogue's verification).
    pub c1_path: PathBuf,
    /// Miner id and sector number when the C1 does not carry them (from the config).
    pub miner_id: Option<u64>,
    pub sector_num: Option<u64>,
    /// The proof type's `.params` file.
    pub params_path: PathBuf,
    /// The drop directory root (the epilogue writes done/ or failed/ there).
    pub data_dir: PathBuf,
    /// Unix time (ns) the supervisor claimed the file.
    pub claimed_unix_ns: u64,
    /// A synthetic job (speed measurement at a size we cannot seal): its partitions are
    /// generated, not synthesized from `c1_path`, against a synthetic SRS, and its proof is
    /// not expected to verify, so none is written (a result record goes to done/ instead).
    pub synthetic: Option<SyntheticJob>,
    /// Which stage computes the partitions' B_G2 MSM (chosen by the supervisor for the
    /// whole run: `b_g2_msm` in the configuration).
    pub b_g2: BG2Stage,
}

/// Where B_G2 = Σ_{j ∈ B} z_j·[v_j(τ)]₂ (Groth16's one G2 sum) is computed. On the CPU it
/// is the costliest host step (22 s per 32 GiB partition on 6 threads); on a GPU holding
/// the B_G2 bases it is ~0.3 s beside the G1 sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BG2Stage {
    /// host-prep, on its CPU threads, while the GPU works on other partitions.
    HostPrep,
    /// The gpu stage, after the G1 sums (on the CPU device's threads without a GPU).
    Gpu,
}

impl BG2Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            BG2Stage::HostPrep => "host_prep",
            BG2Stage::Gpu => "gpu",
        }
    }
}

impl JobSpec {
    /// Reads the job's C1 file, with the miner id and sector number the configuration gave
    /// where the file does not carry them. Every stage that needs the circuit reads it so.
    pub fn read_c1(&self) -> Result<C1Input, C1Error> {
        let ids = GivenIds {
            miner_id: self.miner_id,
            sector_num: self.sector_num,
        };
        C1Input::read_dropped(&self.c1_path, ids)
    }

    /// Whether `stage` computes B_G2 for this job: the stage the supervisor chose, unless a
    /// synthetic job leaves B_G2 out altogether (`skip_b_g2`).
    pub fn b_g2_in(&self, stage: BG2Stage) -> bool {
        self.b_g2 == stage && !self.synthetic.as_ref().is_some_and(|s| s.skip_b_g2)
    }
}

/// What a synthetic job file in incoming/ asks for (JSON), e.g.
/// `{"synthetic": "32GiB", "partitions": 10, "seed": 1}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticJob {
    /// A `cuzk_kernels::synthetic::SyntheticShape` name ("32GiB", "tiny").
    pub synthetic: String,
    pub partitions: u32,
    #[serde(default)]
    pub seed: u64,
    /// No stage computes the B_G2 MSM (host-prep leaves it as the identity): isolates the
    /// G1 work, for measuring how the GPU stage scales over devices.
    #[serde(default)]
    pub skip_b_g2: bool,
}

impl SyntheticJob {
    pub fn shape(&self) -> anyhow::Result<cuzk_kernels::synthetic::SyntheticShape> {
        cuzk_kernels::synthetic::SyntheticShape::by_name(&self.synthetic).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown synthetic shape {:?} (known: {})",
                self.synthetic,
                cuzk_kernels::synthetic::SyntheticShape::ALL
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}
