//! Shared by the epilogue's tests: partition proofs made by bellperson's own prover, the
//! oracle the epilogue's assembly and verification are checked against.

use bellperson::groth16::create_random_proof;
use cuzk_epilogue::PartitionProof;
use cuzk_synthesis::{CircuitsVisitor, PorepCircuits};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::MerkleTreeTrait;
use rand::rngs::OsRng;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

/// Every partition of a C1 proved with bellperson `create_random_proof` over the
/// parameters filecoin-proofs finds in `FIL_PROOFS_PARAMETER_CACHE`.
pub struct ProveWithBellperson;

impl CircuitsVisitor for ProveWithBellperson {
    type Output = Vec<PartitionProof>;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let params = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::groth_params::<OsRng>(None, circuits.vanilla_params())
        .expect("2 KiB parameters in the test cache");
        (0..circuits.partitions())
            .map(|k| {
                let partition = circuits.partition(k).unwrap();
                let proof = create_random_proof(partition.circuit, &params, &mut OsRng).unwrap();
                PartitionProof::from_groth16(&proof)
            })
            .collect()
    }
}
