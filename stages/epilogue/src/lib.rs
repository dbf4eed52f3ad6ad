//! cuzk-epilogue: the end of a job. Partition proofs are assembled into the proof bytes
//! filecoin-proofs' `seal_commit_phase2` returns, checked with `verify_seal`, and written
//! atomically with a JSON result beside them. A proof that does not verify is never written.

pub mod aggregation_srs;
pub mod assemble;
pub mod error;
pub mod finish;
pub mod slot;
pub mod synthetic;
pub mod verify;
pub mod write;

pub use aggregation_srs::{aggregation_srs_path, check_aggregation_srs};
pub use assemble::{assemble_proof, split_partition_proofs, PartitionProof, PARTITION_PROOF_LEN};
pub use error::EpilogueError;
pub use finish::{finish_job, FinishedProof};
pub use verify::{load_verifying_key, verify_assembled_proof, verify_proof_bytes};
pub use write::{result_json, result_path, write_atomically, write_proof, ResultRecord};
