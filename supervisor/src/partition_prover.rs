//! The Groth16 prover `cuzk prove` runs on each partition circuit.
//!
//! For now this is bellperson's CPU prover over the cached `.params` file: the reference
//! the project's own prover (`cuzk_kernels::groth16`) must match. Everything around it (C1,
//! circuits, epilogue) is the real pipeline; only `PartitionProver` changes when the
//! kernels prover is wired in.

use std::marker::PhantomData;

use anyhow::{Context, Result};
use bellperson::groth16::{create_random_proof, MappedParameters};
use blstrs::Bls12;
use cuzk_epilogue::PartitionProof;
use cuzk_synthesis::{PartitionCircuit, PorepCircuits};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::MerkleTreeTrait;
use rand::rngs::OsRng;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

pub struct PartitionProver<Tree: 'static + MerkleTreeTrait> {
    params: MappedParameters<Bls12>,
    tree: PhantomData<Tree>,
}

impl<Tree: 'static + MerkleTreeTrait> PartitionProver<Tree> {
    /// Maps the proof type's `.params` from the parameter cache (never generates them).
    pub fn load(circuits: &PorepCircuits<'_, Tree>) -> Result<Self> {
        let params = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::groth_params::<OsRng>(None, circuits.vanilla_params())
        .context("loading the Groth16 parameters")?;
        Ok(PartitionProver {
            params,
            tree: PhantomData,
        })
    }

    /// Synthesizes and proves one partition with fresh blinding factors.
    pub fn prove_partition(&self, partition: PartitionCircuit<Tree>) -> Result<PartitionProof> {
        let proof = create_random_proof(partition.circuit, &self.params, &mut OsRng).with_context(
            || format!("partition {}: Groth16 proving failed", partition.partition),
        )?;
        Ok(PartitionProof::from_groth16(&proof))
    }
}
