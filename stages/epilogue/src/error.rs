use std::path::PathBuf;

use cuzk_c1::C1Error;

#[derive(Debug, thiserror::Error)]
pub enum EpilogueError {
    #[error(transparent)]
    C1(#[from] C1Error),

    #[error("job {job}: {found} partition proofs, but {proof_type} has {expected} partitions")]
    PartitionCount {
        job: String,
        found: usize,
        proof_type: String,
        expected: usize,
    },

    #[error("job {job}: partition {partition}: {reason}")]
    MalformedPartitionProof {
        job: String,
        partition: usize,
        reason: String,
    },

    #[error("job {job}: aggregating the NonInteractivePoRep partition proofs failed: {reason}")]
    Aggregate { job: String, reason: String },

    #[error("{path}: missing parameter file: the verifying key of {proof_type} is not in the parameter cache (see docs/params.md: cuzk params generate)")]
    MissingParameterFile { path: PathBuf, proof_type: String },

    #[error("{path}: missing parameter file (or not a regular file): {proof_type} aggregates its partition proofs (SnarkPack) with filecoin-proofs' inner-product SRS, which is not in the parameter cache; fetch it with the other parameters (paramfetch, srs-inner-product.json), or for test sizes make a random one with `cuzk params generate --proof-type {proof_type}` (docs/params.md)")]
    MissingAggregationSrs { path: PathBuf, proof_type: String },

    #[error("{path}: unusable inner-product SRS for {proof_type}: {reason}")]
    BadAggregationSrs {
        path: PathBuf,
        proof_type: String,
        reason: String,
    },

    #[error("{path}: unreadable parameter file (truncated or corrupt verifying key): {reason}")]
    BadParameterFile { path: PathBuf, reason: String },

    #[error("job {job}: verify_seal could not run: {reason}")]
    VerifyFailed { job: String, reason: String },

    #[error("job {job}: invalid proof: {reason}")]
    InvalidProof {
        job: String,
        /// The partitions whose Groth16 proof fails on its own, when that could be told.
        partitions: Vec<usize>,
        reason: String,
    },

    #[error("{path}: writing the result failed: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl EpilogueError {
    /// Whether the error is a parameter file missing (the verifying key, the inner-product
    /// SRS), which the machine mends (a cache being fetched again), not the job: a proof
    /// waits for it. A file that is there but bad (truncated, corrupt, an SRS too small)
    /// does not mend by waiting: its jobs fail, naming it.
    pub fn is_parameter_file_trouble(&self) -> bool {
        matches!(
            self,
            EpilogueError::MissingParameterFile { .. }
                | EpilogueError::MissingAggregationSrs { .. }
        )
    }
}
