//! A C1's replica id against the ids it will be verified with, before minutes of proving.
//!
//! verify_seal recomputes the replica id from the prover id, sector number, ticket, comm_d
//! and the proof type's porep id (`generate_replica_id`, SHA-256 into a field element)
//! and proves against that. A C1 whose stored `replica_id` differs (a changed ticket,
//! comm_d or sector number, a wrong `miner_id` setting, a V1 output relabelled V1_1) is
//! proved in full and then rejected with only "the proof does not verify". Computed here
//! by upstream's own function it costs one hash, and the reason says what disagrees.

use anyhow::{bail, Result};
use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::{with_tree_shape, C1Input, ShapeVisitor};
use filecoin_proofs::MerkleTreeTrait;
use storage_proofs_porep::stacked::generate_replica_id;

/// Fails when `c1`'s replica id is not the one its prover id, sector number, ticket, comm_d
/// and proof type give (which is what verification will use).
pub fn check_replica_id(c1: &C1Input) -> Result<()> {
    struct Check<'a>(&'a C1Input);
    impl ShapeVisitor for Check<'_> {
        type Output = Result<bool>;
        fn visit<Tree: 'static + MerkleTreeTrait>(self) -> Result<bool> {
            let c1 = self.0;
            let expected = generate_replica_id::<Tree::Hasher, _>(
                &c1.prover_id()?,
                c1.sector_id()?.into(),
                &c1.ticket(),
                c1.comm_d(),
                &c1.porep_config().porep_id,
            );
            Ok(expected == c1.replica_id::<Tree>())
        }
    }
    let Some(matches) = with_tree_shape(c1.sector_size(), Check(c1)) else {
        bail!("{}: no tree shape for its sector size", c1.file().display());
    };
    if !matches? {
        bail!(
            "{}: its replica_id is not the one miner {} and sector {} give with its ticket, comm_d and proof type {}: \
             the C1 was changed, or the MinerID (miner_id) or SectorNum is not the sector's; its proof could not verify",
            c1.file().display(),
            c1.miner_id().map_or("?".to_string(), |m| m.to_string()),
            c1.sector_id().map_or("?".to_string(), |s| u64::from(s).to_string()),
            proof_type_name(c1.proof_type()),
        );
    }
    Ok(())
}
