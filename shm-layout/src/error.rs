//! Errors of the shared-memory contract. Each says which file or slot and what to do.

use std::path::PathBuf;

use crate::shape::PartitionShape;
use crate::slot_state::SlotState;

#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("partition shape {shape:?} needs more than 2^64 bytes")]
    LayoutOverflow { shape: PartitionShape },

    #[error("{path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: not a cuzk arena (magic {found:#018x})")]
    BadMagic { path: PathBuf, found: u64 },

    #[error(
        "{path}: arena format version {found}, this build speaks {expected}; \
         restart every stage from one build"
    )]
    VersionMismatch {
        path: PathBuf,
        found: u32,
        expected: u32,
    },

    #[error(
        "{path}: arena layout hash {found:#018x} differs from this build's {expected:#018x}; \
         the process was built with a different shm-layout"
    )]
    LayoutMismatch {
        path: PathBuf,
        found: u64,
        expected: u64,
    },

    #[error("{path}: arena file is {actual} bytes, its header says {expected}; refusing a truncated arena")]
    Truncated {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },

    #[error("{path}: arena of {bytes} bytes does not fit this address space")]
    TooLarge { path: PathBuf, bytes: u64 },

    #[error("slot {slot} out of range (arena has {count})")]
    NoSuchSlot { slot: u32, count: u32 },

    #[error("slot {slot}: expected {expected:?} at generation {generation}, found {found:?} at generation {found_generation}")]
    SlotRace {
        slot: u32,
        expected: SlotState,
        generation: u32,
        found: SlotState,
        found_generation: u32,
    },

    #[error("pid {pid} is still alive; recovery only takes slots from dead owners")]
    OwnerAlive { pid: u32 },

    #[error("{state:?} is not a state a stage can claim from")]
    NotClaimable { state: SlotState },

    #[error("job table full ({capacity} jobs in flight)")]
    JobTableFull { capacity: u32 },

    #[error("job {job_id}: not found in the job table")]
    NoSuchJob { job_id: u64 },

    #[error("job {job_id}: {partitions} partitions, at most {max} supported")]
    TooManyPartitions {
        job_id: u64,
        partitions: usize,
        max: usize,
    },

    #[error("job {job_id}: partition {partition} out of range ({partitions} partitions)")]
    NoSuchPartition {
        job_id: u64,
        partition: u32,
        partitions: u32,
    },

    #[error("job {job_id}: partition {partition} was already marked done")]
    PartitionAlreadyDone { job_id: u64, partition: u32 },

    #[error("job blob of {needed} bytes exceeds the per-job capacity of {capacity} bytes")]
    JobBlobTooLarge { needed: u64, capacity: u64 },

    #[error("job {job_id}: bincode: {message}")]
    Codec { job_id: u64, message: String },

    #[error("{path}: SRS segment key mismatch: file holds {found:?}, caller wants {expected:?}")]
    SrsKeyMismatch {
        path: PathBuf,
        found: String,
        expected: String,
    },

    #[error("{path}: SRS fill failed: {message}")]
    SrsFill { path: PathBuf, message: String },

    #[error("iceoryx2 {what}: {message}")]
    ControlPlane { what: &'static str, message: String },
}

impl ShmError {
    pub(crate) fn io(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> Self {
        ShmError::Io {
            path: path.into(),
            what,
            source,
        }
    }

    pub(crate) fn control(what: &'static str, e: impl std::fmt::Debug) -> Self {
        ShmError::ControlPlane {
            what,
            message: format!("{e:?}"),
        }
    }
}
