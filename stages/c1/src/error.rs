//! Everything that can be wrong with a C1 file, each naming the file.

use std::path::PathBuf;

/// Which JSON document of a C1 file an error is in: the lotus/Curio envelope, the
/// SealCommitPhase1Output inside its base64 `Phase1Out`, or a bare SealCommitPhase1Output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum C1Part {
    Envelope,
    Phase1Out,
    Bare,
}

impl std::fmt::Display for C1Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            C1Part::Envelope => "the C1 envelope",
            C1Part::Phase1Out => "the base64-decoded Phase1Out",
            C1Part::Bare => "the SealCommitPhase1Output",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum C1Error {
    #[error("{file}: cannot read the C1 file: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "{file}: not read: it is {kind}, and a C1 must be a regular file (links are not followed)"
    )]
    NotRegularFile { file: PathBuf, kind: &'static str },

    #[error("{file}: the file is empty (a writer that has not finished, or one that failed)")]
    Empty { file: PathBuf },

    #[error("{file}: not read: {bytes} bytes, more than any C1 file ({max} bytes at most)")]
    TooLarge { file: PathBuf, bytes: u64, max: u64 },

    #[error("{file}: truncated C1 file: {part} ends at line {line} column {column} before its JSON is complete")]
    Truncated {
        file: PathBuf,
        part: C1Part,
        line: usize,
        column: usize,
    },

    #[error("{file}: malformed JSON in {part}: {reason}")]
    MalformedJson {
        file: PathBuf,
        part: C1Part,
        reason: String,
    },

    #[error("{file}: not a C1 file: neither a lotus/Curio envelope (no \"Phase1Out\") nor a bare SealCommitPhase1Output (no \"registered_proof\")")]
    NotC1 { file: PathBuf },

    #[error("{file}: Phase1Out is not valid base64: {source}")]
    BadBase64 {
        file: PathBuf,
        source: base64::DecodeError,
    },

    #[error("{file}: unsupported proof type {name:?}: cuzk proves the StackedDrg PoRep types of 2KiB, 8MiB, 512MiB, 32GiB and 64GiB sectors (V1, V1_1, V1_1_Feat_SyntheticPoRep, V1_2_Feat_NonInteractivePoRep)")]
    UnsupportedProofType { file: PathBuf, name: String },

    #[error("{file}: sector size mismatch: the envelope says SectorSize {envelope} but {proof_type} is a {expected}-byte sector")]
    SectorSizeMismatch {
        file: PathBuf,
        envelope: u64,
        proof_type: String,
        expected: u64,
    },

    #[error("{file}: the vanilla proofs are {found}, not the tree shape of {proof_type}")]
    VanillaShapeMismatch {
        file: PathBuf,
        found: String,
        proof_type: String,
    },

    #[error("{file}: {found} partitions of vanilla proofs, but {proof_type} has {expected}")]
    PartitionCountMismatch {
        file: PathBuf,
        found: usize,
        proof_type: String,
        expected: usize,
    },

    #[error("{file}: missing prover id: {why}; give --miner-id (cuzk prove, verify, bench) or set miner_id (cuzk run)")]
    MissingProverId { file: PathBuf, why: &'static str },

    #[error("{file}: missing sector number: {why}; give --sector-num (cuzk prove, verify, bench); cuzk run takes it from the envelope's SectorNum")]
    MissingSectorNumber { file: PathBuf, why: &'static str },

    #[error(
        "{file}: the {field} in the envelope ({envelope}) contradicts the one given ({given})"
    )]
    Conflict {
        file: PathBuf,
        field: &'static str,
        envelope: u64,
        given: u64,
    },
}
