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
}
