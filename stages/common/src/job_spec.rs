//! The job-level value the supervisor publishes in the arena's job table (bincode): what
//! every stage needs to find the C1, its parameters and its output.

use std::path::PathBuf;

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
    /// Host-prep leaves out the B_G2 MSM (CPU): isolates the GPU stage, for measuring how
    /// it scales over devices where the host's cores could not keep up with B_G2.
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
