//! The end of a synthetic job: its partitions were random (speed measurement only), so
//! there is no proof to assemble or verify and none is written. A result record
//! `done/<stem>.synthetic.json` says what ran and how long it took from claim to here.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use cuzk_dropdir::DropDir;
use cuzk_shm_layout::JobView;
use cuzk_stage_common::{JobSpec, SyntheticJob};
use serde::Serialize;

use crate::write_atomically;

#[derive(Serialize)]
struct SyntheticResult<'a> {
    job: &'a str,
    synthetic: &'a str,
    partitions: u32,
    seed: u64,
    proof: &'static str,
    since_claim_ms: f64,
}

/// Writes the result record and retires the job file. Returns the record's path.
pub fn finish_synthetic_job(
    job: &JobView<'_>,
    spec: &JobSpec,
    synthetic: &SyntheticJob,
) -> Result<PathBuf> {
    let drop_dir = DropDir::open(&spec.data_dir)?;
    let (proof_path, _) = drop_dir.done_paths(&spec.c1_path);
    let path = proof_path.with_extension("synthetic.json");
    let since_claim = Duration::from_nanos(
        cuzk_shm_layout::clock::unix_ns().saturating_sub(spec.claimed_unix_ns),
    );
    let name = job.name();
    let record = SyntheticResult {
        job: &name,
        synthetic: &synthetic.synthetic,
        partitions: job.num_partitions(),
        seed: synthetic.seed,
        proof:
            "none: a synthetic job measures speed only (random partitions, not a satisfied circuit)",
        since_claim_ms: since_claim.as_secs_f64() * 1e3,
    };
    let mut bytes = serde_json::to_vec_pretty(&record)?;
    bytes.push(b'\n');
    write_atomically(&path, &bytes)?;
    let _ = std::fs::remove_file(&spec.c1_path);
    Ok(path)
}
