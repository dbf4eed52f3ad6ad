//! The inner-product SRS a NonInteractivePoRep proof needs: filecoin-proofs aggregates its
//! partition proofs with SnarkPack (v2) and verifies the aggregate with the same file, so
//! a job of that type can be neither finished nor checked without it. It is looked for
//! before any proving, so a missing file costs no proving time.

use std::path::PathBuf;

use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::RegisteredSealProof;
use filecoin_proofs_api::ApiFeature;
use storage_proofs_core::parameter_cache::parameter_cache_srs_key_path;

use crate::error::EpilogueError;

/// The SRS file in the parameter cache (`FIL_PROOFS_PARAMETER_CACHE`). One file serves
/// every sector size and proof count: filecoin-proofs names it by neither.
pub fn aggregation_srs_path() -> PathBuf {
    parameter_cache_srs_key_path("", 0)
}

/// `Ok(Some(path))` when `proof_type` aggregates and its SRS file is there, `Ok(None)`
/// when it does not aggregate, an error naming the file when it is missing.
pub fn check_aggregation_srs(
    proof_type: RegisteredSealProof,
) -> Result<Option<PathBuf>, EpilogueError> {
    if !proof_type.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Ok(None);
    }
    let path = aggregation_srs_path();
    if !path.is_file() {
        return Err(EpilogueError::MissingAggregationSrs {
            path,
            proof_type: proof_type_name(proof_type),
        });
    }
    Ok(Some(path))
}
