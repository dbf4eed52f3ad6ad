//! Command-line arguments shared by the commands that read a C1.

use std::path::PathBuf;

use cuzk_c1::GivenIds;

#[derive(Debug, Clone, clap::Args)]
pub struct C1Args {
    /// The C1 file: a lotus/Curio envelope or a bare SealCommitPhase1Output JSON.
    #[arg(long)]
    pub c1: PathBuf,
    /// Miner actor id (the prover id is derived from it); needed when the C1 has no MinerID.
    #[arg(long)]
    pub miner_id: Option<u64>,
    /// Sector number; needed when the C1 has no SectorNum (a bare SealCommitPhase1Output).
    #[arg(long)]
    pub sector_num: Option<u64>,
    /// Parameter cache directory (sets FIL_PROOFS_PARAMETER_CACHE).
    #[arg(long)]
    pub param_cache: Option<PathBuf>,
}

impl C1Args {
    pub fn given_ids(&self) -> GivenIds {
        GivenIds {
            miner_id: self.miner_id,
            sector_num: self.sector_num,
        }
    }

    /// A job name for messages and the result record: the C1 file's name.
    pub fn job_name(&self) -> String {
        self.c1
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.c1.display().to_string())
    }
}
