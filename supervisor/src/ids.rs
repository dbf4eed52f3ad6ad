//! Command-line arguments shared by the commands that read a C1.

use std::path::PathBuf;

use cuzk_c1::GivenIds;

#[derive(Debug, Clone, clap::Args)]
pub struct C1Args {
    /// The C1 file: a lotus/Curio envelope or a bare SealCommitPhase1Output JSON.
    #[arg(long)]
    pub c1: PathBuf,
    #[command(flatten)]
    pub ids: IdArgs,
    /// Parameter cache directory (sets FIL_PROOFS_PARAMETER_CACHE).
    #[arg(long)]
    pub param_cache: Option<PathBuf>,
}

/// The ids a C1 may lack, given on the command line.
#[derive(Debug, Clone, clap::Args)]
pub struct IdArgs {
    /// Miner actor id (the prover id is derived from it); needed when the C1 has no MinerID.
    #[arg(long)]
    pub miner_id: Option<u64>,
    /// Sector number; needed when the C1 has no SectorNum (a bare SealCommitPhase1Output).
    #[arg(long)]
    pub sector_num: Option<u64>,
}

impl IdArgs {
    pub fn given_ids(&self) -> GivenIds {
        GivenIds {
            miner_id: self.miner_id,
            sector_num: self.sector_num,
        }
    }
}

impl C1Args {
    pub fn given_ids(&self) -> GivenIds {
        self.ids.given_ids()
    }

    /// A job name for messages and the result record: the C1 file's name.
    pub fn job_name(&self) -> String {
        self.c1
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.c1.display().to_string())
    }
}
