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

use crate::assemble::{split_partition_proofs, PartitionProof};
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
/// A NonInteractivePoRep aggregate cannot be split back into its partitions' proofs, so a
/// rejected one names none here; `verify_assembled_proof` can.
pub fn verify_proof_bytes(job: &str, c1: &C1Input, proof: &[u8]) -> Result<(), EpilogueError> {
    verify(job, c1, proof, None)
}

/// As `verify_proof_bytes`, for a proof assembled here from `partitions` (index = partition
/// number): when `verify_seal` rejects a NonInteractivePoRep aggregate, each of these is
/// checked alone to name the bad ones, as the partitions of an interactive proof are.
pub fn verify_assembled_proof(
    job: &str,
    c1: &C1Input,
    proof: &[u8],
    partitions: &[PartitionProof],
) -> Result<(), EpilogueError> {
    verify(job, c1, proof, Some(partitions))
}

fn verify(
    job: &str,
    c1: &C1Input,
    proof: &[u8],
    partitions: Option<&[PartitionProof]>,
) -> Result<(), EpilogueError> {
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
    let key = Key {
        path: &key_path,
        key: &key,
    };
    Err(diagnose(
        job, c1, prover_id, sector_id, key, proof, partitions,
    ))
}

/// The verifying key and the file it came from, for the diagnosis's messages.
struct Key<'k> {
    path: &'k std::path::Path,
    key: &'k VerifyingKey<Bls12>,
}

/// Tells which partitions make `verify_seal` reject a proof: those whose Groth16 proof
/// fails alone against the verifying key and the partition's public inputs. They come
/// from the proof bytes (an interactive proof is its partitions' proofs end to end) or,
/// for an aggregate, from `assembled_from`.
fn diagnose(
    job: &str,
    c1: &C1Input,
    prover_id: ProverId,
    sector_id: SectorId,
    key: Key<'_>,
    proof: &[u8],
    assembled_from: Option<&[PartitionProof]>,
) -> EpilogueError {
    let invalid = |partitions: Vec<usize>, reason: String| EpilogueError::InvalidProof {
        job: job.to_string(),
        partitions,
        reason,
    };
    let aggregated = c1
        .proof_type()
        .feature_enabled(ApiFeature::NonInteractivePoRep);
    let partition_proofs = match (aggregated, assembled_from) {
        (true, Some(partitions)) => partitions.to_vec(),
        (true, None) => {
            return invalid(
                Vec::new(),
                "verify_seal rejects the NonInteractivePoRep aggregate (an aggregate cannot be split back into partition proofs to tell which is bad)".to_string(),
            )
        }
        (false, _) => match split_partition_proofs(proof) {
            Some(partitions) => partitions,
            None => {
                return invalid(
                    Vec::new(),
                    format!(
                        "{} bytes are not a whole number of 192-byte partition proofs",
                        proof.len()
                    ),
                )
            }
        },
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

    let prepared = prepare_verifying_key(key.key);
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
                        key.path.display()
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
        let what = if aggregated {
            "the aggregate although each partition's Groth16 proof verifies (the aggregation or its inner-product SRS is at fault)"
        } else {
            "the proof although each partition's Groth16 proof verifies"
        };
        return invalid(Vec::new(), format!("verify_seal rejects {what}"));
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
