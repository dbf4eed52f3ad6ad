//! The registered PoRep proof types cuzk proves, and sector sizes as operators write them.
//!
//! The accepted set is exactly what filecoin-proofs-api 19.1 `seal_commit_phase2` accepts:
//! every `RegisteredSealProof` (major version 1) of the five production-shaped sector sizes,
//! in its V1, V1_1, V1_1 SyntheticPoRep and V1_2 NonInteractivePoRep variants. The api maps
//! each one to a filecoin-proofs `PoRepConfig` with `as_v1_config`.

use filecoin_proofs::constants::{
    SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
    SECTOR_SIZE_8_MIB,
};
pub use filecoin_proofs_api::RegisteredSealProof;

/// Every proof type `seal_commit_phase2` accepts, in the api's own order.
pub const SUPPORTED_PROOF_TYPES: [RegisteredSealProof; 20] = {
    use RegisteredSealProof::*;
    [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ]
};

/// The sector sizes of the supported proof types, in bytes.
pub const SUPPORTED_SECTOR_SIZES: [u64; 5] = [
    SECTOR_SIZE_2_KIB,
    SECTOR_SIZE_8_MIB,
    SECTOR_SIZE_512_MIB,
    SECTOR_SIZE_32_GIB,
    SECTOR_SIZE_64_GIB,
];

/// Sizes whose random (test) parameters are too large to be of any use: a real deployment
/// downloads the production parameters instead.
pub fn is_production_sector_size(sector_size: u64) -> bool {
    sector_size >= SECTOR_SIZE_32_GIB
}

/// The proof type's name as it appears in a C1 file (`"StackedDrg2KiBV1_1"`).
pub fn proof_type_name(proof: RegisteredSealProof) -> String {
    format!("{proof:?}")
}

/// Looks a proof type up by the name a C1 file or an operator gives it.
pub fn proof_type_by_name(name: &str) -> Option<RegisteredSealProof> {
    SUPPORTED_PROOF_TYPES
        .into_iter()
        .find(|proof| proof_type_name(*proof) == name)
}

/// The interactive PoRep type (V1_1) of a sector size: what lotus and Curio seal today, and
/// what the fixtures hold.
pub fn interactive_proof_type(sector_size: u64) -> Option<RegisteredSealProof> {
    SUPPORTED_PROOF_TYPES.into_iter().find(|proof| {
        u64::from(proof.sector_size()) == sector_size && proof_type_name(*proof).ends_with("V1_1")
    })
}

/// Parses a sector size as `2KiB`, `8MiB`, `512MiB`, `32GiB`, `64GiB` or a plain byte count.
/// Returns `None` for anything that is not one of the supported sizes.
pub fn parse_sector_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let unit_start = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(unit_start);
    let multiplier = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return None,
    };
    let bytes = digits.parse::<u64>().ok()?.checked_mul(multiplier)?;
    SUPPORTED_SECTOR_SIZES.contains(&bytes).then_some(bytes)
}

/// Formats a sector size the way operators write it (`2KiB`, `32GiB`).
pub fn format_sector_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    UNITS
        .iter()
        .find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit))
        .map(|(unit, name)| format!("{}{name}", bytes / unit))
        .unwrap_or_else(|| format!("{bytes}B"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_name_round_trips() {
        for proof in SUPPORTED_PROOF_TYPES {
            assert_eq!(proof_type_by_name(&proof_type_name(proof)), Some(proof));
        }
        assert_eq!(proof_type_by_name("StackedDrg2KiBV2"), None);
        assert_eq!(proof_type_by_name("StackedWindowPoSt"), None);
    }

    #[test]
    fn sector_sizes_parse_in_operator_notation() {
        assert_eq!(parse_sector_size("2KiB"), Some(2048));
        assert_eq!(parse_sector_size("8mib"), Some(8 << 20));
        assert_eq!(parse_sector_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_sector_size("32GiB"), Some(32 << 30));
        assert_eq!(parse_sector_size("68719476736"), Some(64 << 30));
        assert_eq!(parse_sector_size("4KiB"), None, "not a supported size");
        assert_eq!(
            parse_sector_size("2KB"),
            None,
            "decimal units are not sector sizes"
        );
        assert_eq!(parse_sector_size("KiB"), None);
    }

    #[test]
    fn each_size_has_one_interactive_type() {
        for size in SUPPORTED_SECTOR_SIZES {
            let proof = interactive_proof_type(size).expect("a V1_1 type per size");
            assert_eq!(u64::from(proof.sector_size()), size);
            assert_eq!(proof.version(), filecoin_proofs_api::ApiVersion::V1_1_0);
        }
        assert_eq!(format_sector_size(2048), "2KiB");
        assert_eq!(format_sector_size(64 << 30), "64GiB");
    }
}
