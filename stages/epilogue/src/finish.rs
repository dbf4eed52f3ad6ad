//! The epilogue of one job: assemble the partition proofs, verify, write.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::C1Input;

use crate::assemble::{assemble_proof, PartitionProof};
use crate::error::EpilogueError;
use crate::verify::verify_assembled_proof;
use crate::write::{write_proof, ResultRecord};

/// A proof that verified and is on disk.
#[derive(Debug)]
pub struct FinishedProof {
    pub proof_path: PathBuf,
    pub result_path: PathBuf,
    pub proof: Vec<u8>,
}

/// Assembles `partitions` (index = partition number) into the proof for `c1`, checks it
/// with `verify_seal` and only then writes it to `proof_path` with its JSON result beside
/// it. `timings` are the caller's steps; assembly and verification are added to them.
pub fn finish_job(
    job: &str,
    c1: &C1Input,
    partitions: &[PartitionProof],
    mut timings: BTreeMap<String, Duration>,
    proof_path: &Path,
) -> Result<FinishedProof, EpilogueError> {
    let started = Instant::now();
    let proof = assemble_proof(job, c1, partitions)?;
    timings.insert("assemble".to_string(), started.elapsed());

    let started = Instant::now();
    verify_assembled_proof(job, c1, &proof, partitions)?;
    timings.insert("verify".to_string(), started.elapsed());

    let record = ResultRecord {
        job,
        c1_file: c1.file(),
        proof_type: proof_type_name(c1.proof_type()),
        sector_num: c1.sector_id().ok().map(u64::from),
        miner_id: c1.miner_id(),
        timings: &timings,
    };
    let result_path = write_proof(proof_path, &proof, &record)?;
    Ok(FinishedProof {
        proof_path: proof_path.to_path_buf(),
        result_path,
        proof,
    })
}
