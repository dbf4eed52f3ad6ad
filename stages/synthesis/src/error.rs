use std::path::PathBuf;

use cuzk_c1::C1Error;

#[derive(Debug, thiserror::Error)]
pub enum SynthesisError {
    #[error(transparent)]
    C1(#[from] C1Error),

    #[error("{file}: unsupported sector size {sector_size}")]
    UnsupportedSectorSize { file: PathBuf, sector_size: u64 },

    #[error("{file}: invalid C1 for proving: {reason}")]
    InvalidC1 { file: PathBuf, reason: String },

    #[error("{file}: setting up the {proof_type} public parameters failed: {reason}")]
    Setup {
        file: PathBuf,
        proof_type: String,
        reason: String,
    },

    #[error("{file}: partition {partition} does not exist: the proof has {partitions}")]
    NoSuchPartition {
        file: PathBuf,
        partition: usize,
        partitions: usize,
    },

    #[error("{file}: partition {partition}: building the circuit failed: {reason}")]
    Circuit {
        file: PathBuf,
        partition: usize,
        reason: String,
    },

    /// Upstream code panicked on the C1's data (it rejects malformed vanilla proofs by
    /// panicking, `crate::panics`): this partition's error, not the process's end.
    #[error(
        "{file}: partition {partition}: {during} panicked (malformed vanilla proofs?): {message}"
    )]
    Panicked {
        file: PathBuf,
        partition: usize,
        /// "building the circuit", "synthesizing the circuit" or "recording the circuit".
        during: &'static str,
        message: String,
    },

    #[error("{file}: partition {partition}: computing the public inputs failed: {reason}")]
    PublicInputs {
        file: PathBuf,
        partition: usize,
        reason: String,
    },
}
