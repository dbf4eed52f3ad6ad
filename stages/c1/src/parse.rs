//! Decoding a C1 file's bytes: which of the two forms it is, and the SealCommitPhase1Output
//! inside.
//!
//! The form is told by content: a lotus/Curio envelope has a `"Phase1Out"` (base64 of the
//! SealCommitPhase1Output JSON); a bare filecoin-proofs-api SealCommitPhase1Output has a
//! `"registered_proof"`. A first pass reads only those few small fields (everything else,
//! notably the vanilla proofs, is skipped unparsed), so an unsupported proof type is named
//! as such instead of surfacing as a serde "unknown variant".

use std::path::Path;

use base64::Engine;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::{C1Error, C1Part};
use crate::proof_type::{proof_type_by_name, proof_type_name, RegisteredSealProof};

/// The two forms a C1 file comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum C1Format {
    /// `{"SectorNum", "Phase1Out", "SectorSize", optional "MinerID"}` as lotus-bench and Curio
    /// write it.
    Envelope,
    /// The filecoin-proofs-api `SealCommitPhase1Output` JSON itself.
    Bare,
}

/// The fields read in the first pass; the rest of the document is skipped.
#[derive(Debug, Deserialize)]
struct Probe {
    #[serde(rename = "Phase1Out")]
    phase1_out: Option<String>,
    #[serde(rename = "SectorNum")]
    sector_num: Option<u64>,
    #[serde(rename = "SectorSize")]
    sector_size: Option<u64>,
    #[serde(rename = "MinerID")]
    miner_id: Option<u64>,
    registered_proof: Option<String>,
}

/// A decoded C1 file, before the prover id and sector number are settled.
#[derive(Debug)]
pub struct DecodedC1 {
    pub format: C1Format,
    pub proof_type: RegisteredSealProof,
    pub output: SealCommitPhase1Output,
    pub sector_num: Option<u64>,
    pub miner_id: Option<u64>,
}

pub fn decode(file: &Path, bytes: &[u8]) -> Result<DecodedC1, C1Error> {
    // Only for naming the part in an error before the form is known.
    let outer_part = if contains(bytes, b"\"Phase1Out\"") {
        C1Part::Envelope
    } else {
        C1Part::Bare
    };
    let outer: Probe = from_json(file, outer_part, bytes)?;

    match outer.phase1_out {
        Some(phase1_out) => {
            let inner = base64::engine::general_purpose::STANDARD
                .decode(phase1_out.trim())
                .map_err(|source| C1Error::BadBase64 {
                    file: file.to_path_buf(),
                    source,
                })?;
            let inner_probe: Probe = from_json(file, C1Part::Phase1Out, &inner)?;
            let proof_type = proof_type_of(file, C1Part::Phase1Out, &inner_probe)?;
            if let Some(envelope) = outer.sector_size {
                let expected = u64::from(proof_type.sector_size());
                if envelope != expected {
                    return Err(C1Error::SectorSizeMismatch {
                        file: file.to_path_buf(),
                        envelope,
                        proof_type: proof_type_name(proof_type),
                        expected,
                    });
                }
            }
            Ok(DecodedC1 {
                format: C1Format::Envelope,
                proof_type,
                output: from_json(file, C1Part::Phase1Out, &inner)?,
                sector_num: outer.sector_num,
                miner_id: outer.miner_id,
            })
        }
        None if outer.registered_proof.is_some() => Ok(DecodedC1 {
            format: C1Format::Bare,
            proof_type: proof_type_of(file, C1Part::Bare, &outer)?,
            output: from_json(file, C1Part::Bare, bytes)?,
            sector_num: None,
            miner_id: None,
        }),
        None => Err(C1Error::NotC1 {
            file: file.to_path_buf(),
        }),
    }
}

fn proof_type_of(file: &Path, part: C1Part, probe: &Probe) -> Result<RegisteredSealProof, C1Error> {
    let Some(name) = &probe.registered_proof else {
        return Err(C1Error::MalformedJson {
            file: file.to_path_buf(),
            part,
            reason: "no \"registered_proof\" field".to_string(),
        });
    };
    proof_type_by_name(name).ok_or_else(|| C1Error::UnsupportedProofType {
        file: file.to_path_buf(),
        name: name.clone(),
    })
}

fn from_json<T: DeserializeOwned>(file: &Path, part: C1Part, bytes: &[u8]) -> Result<T, C1Error> {
    serde_json::from_slice(bytes).map_err(|err| {
        if err.is_eof() {
            C1Error::Truncated {
                file: file.to_path_buf(),
                part,
                line: err.line(),
                column: err.column(),
            }
        } else {
            C1Error::MalformedJson {
                file: file.to_path_buf(),
                part,
                reason: err.to_string(),
            }
        }
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}
