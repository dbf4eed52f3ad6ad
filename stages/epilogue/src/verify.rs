//! The whole proof checked with filecoin-proofs `verify_seal` before anything is written;
//! when it fails, each partition's Groth16 proof is checked alone to say which is bad.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use bellperson::groth16::{self, prepare_verifying_key, VerifyingKey};
use blstrs::{Bls12, Scalar as Fr};
use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::{with_tree_shape, C1Input, RegisteredSealProof, ShapeVisitor};
use filecoin_proofs::{MerkleTreeTrait, ProverId};
use filecoin_proofs_api::{ApiFeature, SectorId};

use crate::assemble::split_partition_proofs;
use crate::error::EpilogueError;

/// Reads the proof type's verifying key from the parameter cache
/// (`FIL_PROOFS_PARAMETER_CACHE`). Done before `verify_seal` so that a missing or truncated
/// file is reported by name; filecoin-proofs would instead try to rebuild the key from the
/// `.params` file and report that one.
pub fn load_verifying_key(
    proof_type: RegisteredSealProof,
) -> Result<(PathBuf, VerifyingKey<Bls12>), EpilogueError> {
    let path =
        proof_type
            .cache_verifying_key_path()
            .map_err(|err| EpilogueError::BadParameterFile {
                path: PathBuf::from("<parameter cache>"),
                reason: format!("cannot name the verifying key file: {err:#}"),
            })?;
    let file = File::open(&path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => EpilogueError::MissingParameterFile {
            path: path.clone(),
            proof_type: proof_type_name(proof_type),
        },
        _ => EpilogueError::BadParameterFile {
            path: path.clone(),
            reason: err.to_string(),
        },
    })?;
    let key = VerifyingKey::read(BufReader::new(file)).map_err(|err| {
        EpilogueError::BadParameterFile {
            path: path.clone(),
            reason: err.to_string(),
        }
    })?;
    Ok((path, key))
}

/// `Ok(())` when `verify_seal` accepts `proof` for this C1; `EpilogueError::InvalidProof`
/// naming the failing partitions when it rejects it; another error when it cannot run.
pub fn verify_proof_bytes(job: &str, c1: &C1Input, proof: &[u8]) -> Result<(), EpilogueError> {
    let prover_id = c1.prover_id()?;
    let sector_id = c1.sector_id()?;
    let (key_path, key) = load_verifying_key(c1.proof_type())?;
    crate::aggregation_srs::check_aggregation_srs(c1.proof_type())?;

    let valid = filecoin_proofs_api::seal::verify_seal(
        c1.proof_type(),
        c1.comm_r(),
        c1.comm_d(),
        prover_id,
        sector_id,
        c1.ticket(),
        c1.seed(),
        proof,
    )
    .map_err(|err| EpilogueError::VerifyFailed {
        job: job.to_string(),
        reason: format!("{err:#}"),
    })?;
    if valid {
        return Ok(());
    }
    Err(diagnose(
        job, c1, prover_id, sector_id, &key_path, &key, proof,
    ))
}

/// Tells which partitions make `verify_seal` reject a proof.
fn diagnose(
    job: &str,
    c1: &C1Input,
    prover_id: ProverId,
    sector_id: SectorId,
    key_path: &std::path::Path,
    key: &VerifyingKey<Bls12>,
    proof: &[u8],
) -> EpilogueError {
    let invalid = |partitions: Vec<usize>, reason: String| EpilogueError::InvalidProof {
        job: job.to_string(),
        partitions,
        reason,
    };
    if c1
        .proof_type()
        .feature_enabled(ApiFeature::NonInteractivePoRep)
    {
        return invalid(
            Vec::new(),
            "verify_seal rejects the NonInteractivePoRep aggregate".to_string(),
        );
    }
    let Some(partition_proofs) = split_partition_proofs(proof) else {
        return invalid(
            Vec::new(),
            format!(
                "{} bytes are not a whole number of 192-byte partition proofs",
                proof.len()
            ),
        );
    };
    if partition_proofs.len() != c1.partitions() {
        return invalid(
            Vec::new(),
            format!(
                "{} partition proofs, but {} has {}",
                partition_proofs.len(),
                proof_type_name(c1.proof_type()),
                c1.partitions()
            ),
        );
    }
    let inputs = match with_tree_shape(
        c1.sector_size(),
        SealInputs {
            c1,
            prover_id,
            sector_id,
        },
    ) {
        Some(Ok(inputs)) => inputs,
        Some(Err(err)) => {
            return invalid(
                Vec::new(),
                format!("verify_seal rejects it, and the public inputs to tell which partition could not be derived: {err:#}"),
            )
        }
        None => return invalid(Vec::new(), "unsupported sector size".to_string()),
    };

    let prepared = prepare_verifying_key(key);
    let mut bad = Vec::new();
    let mut reasons = Vec::new();
    for (partition, (proof, inputs)) in partition_proofs.iter().zip(&inputs).enumerate() {
        match proof.to_groth16() {
            Err(err) => {
                bad.push(partition);
                reasons.push(format!("partition {partition}: malformed points: {err}"));
            }
            Ok(proof) => match groth16::verify_proof(&prepared, &proof, inputs) {
                Ok(true) => {}
                Ok(false) => {
                    bad.push(partition);
                    reasons.push(format!(
                        "partition {partition}: the Groth16 proof fails against {} and its public inputs",
                        key_path.display()
                    ));
                }
                Err(err) => {
                    bad.push(partition);
                    reasons.push(format!(
                        "partition {partition}: Groth16 verification error: {err}"
                    ));
                }
            },
        }
    }
    if bad.is_empty() {
        return invalid(
            Vec::new(),
            "verify_seal rejects the proof although each partition's Groth16 proof verifies"
                .to_string(),
        );
    }
    invalid(bad, reasons.join("; "))
}

/// The verifier's public inputs per partition (`filecoin_proofs::get_seal_inputs`).
struct SealInputs<'c> {
    c1: &'c C1Input,
    prover_id: ProverId,
    sector_id: SectorId,
}

impl ShapeVisitor for SealInputs<'_> {
    type Output = anyhow::Result<Vec<Vec<Fr>>>;
    fn visit<Tree: 'static + MerkleTreeTrait>(self) -> Self::Output {
        filecoin_proofs::get_seal_inputs::<Tree>(
            &self.c1.porep_config(),
            self.c1.comm_r(),
            self.c1.comm_d(),
            self.prover_id,
            self.sector_id,
            self.c1.ticket(),
            self.c1.seed(),
        )
    }
}
