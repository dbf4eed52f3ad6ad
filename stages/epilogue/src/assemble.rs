//! Partition proofs → the proof bytes `seal_commit_phase2` returns.
//!
//! filecoin-proofs writes a PoRep proof with `MultiProof::write`: the partitions' Groth16
//! proofs in partition order, each as bellperson `Proof::write` lays it out (A as a
//! compressed G1 point, 48 bytes; B compressed G2, 96 bytes; C compressed G1, 48 bytes),
//! concatenated with nothing between them. A NonInteractivePoRep proof is instead the
//! SnarkPack (v2) aggregate of those partition proofs.

use bellperson::groth16;
use blstrs::Bls12;
use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::C1Input;
use filecoin_proofs_api::seal::{aggregate_seal_commit_proofs, SealCommitPhase2Output};
use filecoin_proofs_api::{ApiFeature, RegisteredAggregationProof};

use crate::error::EpilogueError;

/// Bytes of one partition's Groth16 proof.
pub const PARTITION_PROOF_LEN: usize = 192;

/// One partition's Groth16 proof in bellperson's `Proof::write` layout.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PartitionProof(pub [u8; PARTITION_PROOF_LEN]);

impl PartitionProof {
    pub fn from_groth16(proof: &groth16::Proof<Bls12>) -> Self {
        let mut bytes = [0u8; PARTITION_PROOF_LEN];
        proof
            .write(&mut bytes[..])
            .expect("a Groth16 proof is exactly 192 bytes");
        PartitionProof(bytes)
    }

    /// Parses the three points, checking they are on the curve and in the subgroup.
    pub fn to_groth16(&self) -> std::io::Result<groth16::Proof<Bls12>> {
        groth16::Proof::read(&self.0[..])
    }
}

impl std::fmt::Debug for PartitionProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PartitionProof({:02x?}..)", &self.0[..8])
    }
}

/// Splits proof bytes in the `MultiProof` layout back into partition proofs.
pub fn split_partition_proofs(bytes: &[u8]) -> Option<Vec<PartitionProof>> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(PARTITION_PROOF_LEN) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(PARTITION_PROOF_LEN)
            .map(|chunk| PartitionProof(chunk.try_into().expect("exact chunk")))
            .collect(),
    )
}

/// Concatenates the partition proofs (index = partition number) into the bytes
/// `seal_commit_phase2` would return for this C1: checked for count and point validity, and
/// aggregated for NonInteractivePoRep.
pub fn assemble_proof(
    job: &str,
    c1: &C1Input,
    partitions: &[PartitionProof],
) -> Result<Vec<u8>, EpilogueError> {
    if partitions.len() != c1.partitions() {
        return Err(EpilogueError::PartitionCount {
            job: job.to_string(),
            found: partitions.len(),
            proof_type: proof_type_name(c1.proof_type()),
            expected: c1.partitions(),
        });
    }
    for (partition, proof) in partitions.iter().enumerate() {
        proof
            .to_groth16()
            .map_err(|err| EpilogueError::MalformedPartitionProof {
                job: job.to_string(),
                partition,
                reason: format!("not a valid Groth16 proof encoding: {err}"),
            })?;
    }
    let concatenated: Vec<u8> = partitions.iter().flat_map(|proof| proof.0).collect();

    if !c1
        .proof_type()
        .feature_enabled(ApiFeature::NonInteractivePoRep)
    {
        return Ok(concatenated);
    }
    // As filecoin-proofs' seal_commit_phase2 does for NI-PoRep: one proof, aggregated alone.
    aggregate_seal_commit_proofs(
        c1.proof_type(),
        RegisteredAggregationProof::SnarkPackV2,
        &[c1.comm_r()],
        &[c1.seed()],
        &[SealCommitPhase2Output {
            proof: concatenated,
        }],
    )
    .map_err(|err| EpilogueError::Aggregate {
        job: job.to_string(),
        reason: format!("{err:#}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proof_bytes_split_only_into_whole_partitions() {
        assert!(split_partition_proofs(&[]).is_none());
        assert!(split_partition_proofs(&[0; 191]).is_none());
        assert!(split_partition_proofs(&[0; 193]).is_none());
        let two = split_partition_proofs(&[7; 384]).unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(two[1].0, [7; 192]);
    }
}
