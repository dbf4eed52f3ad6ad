//! Which parameter file proves a C1's partitions.

use std::path::PathBuf;

use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::{parameter_cache_params_path, CacheableParameters};
use storage_proofs_porep::stacked::{StackedCircuit, StackedCompound};

use crate::PorepCircuits;

/// The `.params` file filecoin-proofs maps for these circuits, in the parameter cache
/// (`FIL_PROOFS_PARAMETER_CACHE`): `v28-<cache id>.params`.
pub fn params_path<Tree: 'static + MerkleTreeTrait>(circuits: &PorepCircuits<'_, Tree>) -> PathBuf {
    let id = <StackedCompound<Tree, DefaultPieceHasher> as CacheableParameters<
        StackedCircuit<Tree, DefaultPieceHasher>,
        _,
    >>::cache_identifier(circuits.vanilla_params());
    parameter_cache_params_path(&id)
}
