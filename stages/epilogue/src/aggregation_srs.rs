//! The inner-product SRS a NonInteractivePoRep proof needs: filecoin-proofs aggregates its
//! partition proofs with SnarkPack (v2) and verifies the aggregate with the same file, so
//! a job of that type can be neither finished nor checked without it. It is looked at
//! before any proving, so a missing, truncated or too small file costs no proving time.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use cuzk_c1::proof_type::{is_production_sector_size, proof_type_name};
use cuzk_c1::RegisteredSealProof;
use filecoin_proofs_api::ApiFeature;
use storage_proofs_core::parameter_cache::parameter_cache_srs_key_path;

use crate::error::EpilogueError;

/// The SRS file in the parameter cache (`FIL_PROOFS_PARAMETER_CACHE`). One file serves
/// every sector size and proof count: filecoin-proofs names it by neither.
pub fn aggregation_srs_path() -> PathBuf {
    parameter_cache_srs_key_path("", 0)
}

/// Points of each vector that filecoin-proofs reads from the file ((2 << 14) + 1,
/// storage-proofs-core `read_cached_srs_key`); the production file holds (2 << 19) + 1. A
/// file with fewer was made for tests (`cuzk params generate`: 256), and a production
/// proof aggregated with it would be refused on chain though it verifies here.
const PRODUCTION_SRS_POINTS: u64 = (2 << 14) + 1;

/// Bytes of a point as the file stores it (compressed G1, G2).
const G1_BYTES: u64 = 48;
const G2_BYTES: u64 = 96;

/// `Ok(Some(path))` when `proof_type` aggregates and its SRS file is whole and large
/// enough, `Ok(None)` when it does not aggregate, an error naming the file otherwise.
pub fn check_aggregation_srs(
    proof_type: RegisteredSealProof,
) -> Result<Option<PathBuf>, EpilogueError> {
    if !proof_type.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Ok(None);
    }
    let path = aggregation_srs_path();
    let bad = |reason: String| EpilogueError::BadAggregationSrs {
        path: path.clone(),
        proof_type: proof_type_name(proof_type),
        reason,
    };
    if !path.is_file() {
        return Err(EpilogueError::MissingAggregationSrs {
            path,
            proof_type: proof_type_name(proof_type),
        });
    }
    let points = srs_points(&path).map_err(bad)?;
    // SnarkPack pads the partition proofs to a power of two and needs twice as many powers.
    let partitions = proof_type.as_v1_config().partitions.0 as u64;
    let needed = 2 * partitions.next_power_of_two();
    if points < needed {
        return Err(bad(format!(
            "{points} points a vector, {needed} needed to aggregate {partitions} partitions"
        )));
    }
    let sector_size = u64::from(proof_type.sector_size());
    if is_production_sector_size(sector_size) && points < PRODUCTION_SRS_POINTS {
        return Err(bad(format!(
            "{points} points a vector: a test SRS (the production one holds {}); its aggregates would verify here and be refused on chain",
            (2u64 << 19) + 1
        )));
    }
    Ok(Some(path))
}

/// The smallest vector length of the file's four (G1 α and β powers, G2 α and β powers,
/// each a big-endian u32 count and its compressed points, bellperson's `GenericSRS::write`),
/// checked against the file's length so a truncated file is an error, not a failed
/// aggregation after every partition is proved.
fn srs_points(path: &Path) -> Result<u64, String> {
    let mut file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot stat: {e}"))?
        .len();
    let mut offset = 0u64;
    let mut smallest = u64::MAX;
    for point_bytes in [G1_BYTES, G1_BYTES, G2_BYTES, G2_BYTES] {
        let mut count = [0u8; 4];
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut count))
            .map_err(|_| format!("truncated: {len} bytes end inside a vector's length"))?;
        let count = u64::from(u32::from_be_bytes(count));
        offset += 4 + count * point_bytes;
        smallest = smallest.min(count);
    }
    if offset != len {
        return Err(format!(
            "{len} bytes where its vector lengths make {offset} (truncated or not an SRS)"
        ));
    }
    Ok(smallest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn srs_file(counts: [u32; 4], cut: u64) -> tempfile::NamedTempFile {
        let mut bytes = Vec::new();
        for (count, point) in counts.iter().zip([G1_BYTES, G1_BYTES, G2_BYTES, G2_BYTES]) {
            bytes.extend_from_slice(&count.to_be_bytes());
            bytes.resize(bytes.len() + (u64::from(*count) * point) as usize, 0);
        }
        bytes.truncate(bytes.len() - cut as usize);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &bytes).unwrap();
        file
    }

    #[test]
    fn whole_files_give_their_smallest_vector_and_truncated_ones_an_error() {
        assert_eq!(
            srs_points(srs_file([256, 256, 256, 256], 0).path()),
            Ok(256)
        );
        assert_eq!(
            srs_points(srs_file([300, 256, 270, 280], 0).path()),
            Ok(256)
        );
        let cut = srs_points(srs_file([256, 256, 256, 256], 1).path()).unwrap_err();
        assert!(cut.contains("truncated or not an SRS"), "{cut}");
        let short = srs_file([256, 256, 256, 256], 0);
        std::fs::write(short.path(), [0u8, 0, 1]).unwrap();
        assert!(srs_points(short.path()).unwrap_err().contains("truncated"));
    }
}
