//! The epilogue of one partition slot, and of its job once every partition is in.
//!
//! Per partition, with fresh r, s (bellperson's prover):
//!   A = α + ΣA + r·δ,   B = β + ΣB + s·δ (G2),   B_G1 = β + ΣB_G1 + s·δ (G1),
//!   C = s·A + r·B_G1 − r·s·δ + H + L
//!     = s·ΣA + r·ΣB_G1 + s·α + r·β + r·s·δ + H + L   (`cuzk_kernels::groth16::combine`)
//! The 192-byte proof goes into the job record; the partition is marked done. The
//! process whose mark completes the job (or, after a crash, the one that redoes that
//! slot) assembles the proof, checks it with `verify_seal`, and writes it to done/.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use blstrs::Scalar as Fr;
use cuzk_c1::proof_type::proof_type_name;
use cuzk_dropdir::DropDir;
use cuzk_kernels::groth16::{combine, MsmResults};
use cuzk_kernels::srs::VerifyingKey;
use cuzk_shm_layout::job::PROOF_BYTES;
use cuzk_shm_layout::{JobView, Region, ShmError, SlotClaim};
use cuzk_stage_common::slot_view::{read_b_g2, read_g1, MsmResult};
use cuzk_stage_common::JobSpec;
use ff::Field;
use rand::rngs::OsRng;

use crate::{assemble_proof, result_json, verify_assembled_proof, PartitionProof, ResultRecord};

/// The partition's proof from the MSM results in its slot, blinded with fresh r, s.
pub fn combine_slot(claim: &SlotClaim<'_>, vk: &VerifyingKey) -> [u8; PROOF_BYTES] {
    let res = claim.region(Region::MsmResults);
    let m = MsmResults {
        h: read_g1(res, MsmResult::H),
        l: read_g1(res, MsmResult::L),
        a: read_g1(res, MsmResult::A),
        b_g1: read_g1(res, MsmResult::BG1),
        b_g2: read_b_g2(res),
    };
    let (r, s) = (Fr::random(OsRng), Fr::random(OsRng));
    combine(vk, &m, r, s).to_bytes()
}

/// Stores the partition's proof and marks it done. Returns whether this call must finish
/// the job: it completed it, or it redoes a slot whose owner completed it and died
/// before the job was written.
pub fn record_partition(
    job: &JobView<'_>,
    partition: u32,
    proof: &[u8; PROOF_BYTES],
) -> Result<bool> {
    // A redo after a crash (the slot given back by recovery): the first proof stands. It
    // is not overwritten, because an epilogue finishing the job may be reading it; both are
    // valid, but a mix of their words is not.
    if job.is_partition_done(partition)? {
        return Ok(job.is_complete());
    }
    job.set_partition_proof(partition, proof)?;
    match job.mark_partition_done(partition) {
        Ok(all_done) => Ok(all_done),
        Err(ShmError::PartitionAlreadyDone { .. }) => Ok(job.is_complete()),
        Err(e) => Err(e.into()),
    }
}

/// The job's proof from its partitions' (an aggregate for NonInteractivePoRep), checked
/// with `verify_seal`. The verifying key and the inner-product SRS are looked at first, so
/// that one gone bad since admission is named as such, not as a failed aggregation.
fn assemble_and_verify(
    name: &str,
    c1: &cuzk_c1::C1Input,
    partitions: &[PartitionProof],
    timings: &mut BTreeMap<String, Duration>,
) -> Result<Vec<u8>, crate::EpilogueError> {
    crate::load_verifying_key(c1.proof_type())?;
    crate::check_aggregation_srs(c1.proof_type())?;
    let started = Instant::now();
    let proof = assemble_proof(name, c1, partitions)?;
    timings.insert("assemble".to_string(), started.elapsed());
    let started = Instant::now();
    verify_assembled_proof(name, c1, &proof, partitions)?;
    timings.insert("verify".to_string(), started.elapsed());
    Ok(proof)
}

/// How a job ended in the epilogue.
#[derive(Debug)]
pub enum JobOutcome {
    /// Verified and written to done/ (paths of the proof and its result).
    Written(std::path::PathBuf),
    /// A crash after the write: the proof was already in done/.
    AlreadyWritten,
    /// Verified, but done/ could not be written before the process was asked to stop (or
    /// not verified yet, its parameter files away): the job is neither done nor failed. Its last slot must stay held, so that recovery
    /// gives it back and the next epilogue redoes the finish.
    Unwritten,
}

/// Assembles, verifies and writes the job's proof to done/, retiring its input. An error
/// (notably a proof that does not verify) means the job failed; nothing was written.
///
/// Once the proof is verified, what can still fail is the drop directory (a full disk,
/// done/ not writable), not the job: the write is tried again while `retry_write`, given
/// the error and the attempt's number, waits and returns true. The job and its last slot
/// wait meanwhile, so the pipeline behind them pauses instead of proving work it could
/// not write either, and no proved job goes to failed/ for the disk's sake.
pub fn finish_job_to_dropdir(
    job: &JobView<'_>,
    spec: &JobSpec,
    mut retry_write: impl FnMut(&anyhow::Error, u32) -> bool,
) -> Result<JobOutcome> {
    if let Some(synthetic) = &spec.synthetic {
        let written = crate::synthetic::finish_synthetic_job(job, spec, synthetic)?;
        return Ok(JobOutcome::Written(written));
    }
    // Only done/ and working/ are touched here (`DropDir::at` creates nothing): failed/
    // or incoming/ being broken must not hold a proof back from a healthy done/.
    let drop_dir = DropDir::at(&spec.data_dir);
    if drop_dir.is_proved(&spec.c1_path) {
        // Written before a crash (which may have come before done/ was fsynced or the
        // input removed): done/ made durable, then the input retired. The proof is what
        // counts; a removal that fails leaves the input to the start-up requeue, which
        // drops an input with a proof.
        if let Err(e) = drop_dir.retire_proved_input(&spec.c1_path) {
            eprintln!("cuzk-epilogue: {e}; the proof is in done/, the input stays");
        }
        return Ok(JobOutcome::AlreadyWritten);
    }
    let name = job.name();
    let c1 = spec.read_c1()?;
    let partitions = (0..job.num_partitions())
        .map(|p| job.partition_proof(p).map(PartitionProof))
        .collect::<Result<Vec<_>, _>>()?;
    let mut timings = BTreeMap::new();
    let mut attempt = 0;
    let proof = loop {
        attempt += 1;
        match assemble_and_verify(&name, &c1, &partitions, &mut timings) {
            Ok(proof) => break proof,
            // A parameter file missing is this machine's trouble (paramfetch rewriting
            // the cache), not the job's: its proofs wait for it as for a full done/. New
            // files wait in incoming/ meanwhile (admission checks the same files).
            Err(e) if e.is_parameter_file_trouble() => {
                let e = anyhow::Error::new(e).context(format!("job {name}: not verified yet"));
                if !retry_write(&e, attempt) {
                    return Ok(JobOutcome::Unwritten);
                }
            }
            Err(e) => return Err(e.into()),
        }
    };
    let claimed = Duration::from_nanos(
        cuzk_shm_layout::clock::unix_ns().saturating_sub(spec.claimed_unix_ns),
    );
    timings.insert("since_claim".to_string(), claimed);
    let record = ResultRecord {
        job: &name,
        c1_file: &spec.c1_path,
        proof_type: proof_type_name(c1.proof_type()),
        sector_num: c1.sector_id().ok().map(u64::from),
        miner_id: c1.miner_id(),
        timings: &timings,
    };
    let json = result_json(&proof, &record);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let written = drop_dir
            .finish(&spec.c1_path, &proof, &json)
            .with_context(|| format!("job {name}: writing the verified proof"));
        match written {
            Ok((path, _)) => return Ok(JobOutcome::Written(path)),
            // A directory where this job's result goes: no wait mends it, and holding the
            // slot for it would stop the pipeline. The job fails saying so.
            Err(e)
                if e.downcast_ref::<cuzk_dropdir::DropDirError>()
                    .is_some_and(|d| d.is_directory_in_the_way()) =>
            {
                return Err(e);
            }
            Err(e) if retry_write(&e, attempt) => {}
            Err(_) => return Ok(JobOutcome::Unwritten),
        }
    }
}
