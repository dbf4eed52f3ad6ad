//! The PoRep partition circuits of one C1, built the way filecoin-proofs 19.1
//! `seal_commit_phase2_circuit_proofs` builds them before handing them to bellperson.

use blstrs::Scalar as Fr;
use cuzk_c1::proof_type::proof_type_name;
use cuzk_c1::C1Input;
use filecoin_hashers::Domain;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{as_safe_commitment, DefaultPieceDomain, MerkleTreeTrait, VanillaSealProof};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::Hasher;
use storage_proofs_porep::stacked::{self, StackedCircuit, StackedCompound, StackedDrg};

use crate::error::SynthesisError;
use crate::panics::caught;

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
type Scheme<'a, Tree> = StackedDrg<'a, Tree, DefaultPieceHasher>;

/// The stacked-DRG PoRep circuit of one partition.
pub type PorepCircuit<Tree> = StackedCircuit<Tree, DefaultPieceHasher>;

/// The public inputs of the stacked-DRG proof scheme (replica id, comm_d, comm_r, seed).
pub type PorepPublicInputs<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    <DefaultPieceHasher as Hasher>::Domain,
>;

/// One partition's circuit with the Groth16 public inputs its proof is verified against.
pub struct PartitionCircuit<Tree: 'static + MerkleTreeTrait> {
    pub partition: usize,
    pub circuit: PorepCircuit<Tree>,
    /// The inputs after the constant ONE, in allocation order.
    pub public_inputs: Vec<Fr>,
}

/// Everything shared by the partitions of one C1: the public parameters, the public inputs
/// and the vanilla proofs (borrowed from the C1). Building a partition's circuit copies only
/// that partition's vanilla proofs.
pub struct PorepCircuits<'c, Tree: 'static + MerkleTreeTrait> {
    c1: &'c C1Input,
    vanilla_params: stacked::PublicParams<Tree>,
    public_inputs: PorepPublicInputs<Tree>,
    vanilla_proofs: &'c [Vec<VanillaSealProof<Tree>>],
}

impl<'c, Tree: 'static + MerkleTreeTrait> PorepCircuits<'c, Tree> {
    /// Checks the C1 as `seal_commit_phase2_circuit_proofs` does and sets up the public
    /// parameters for its proof type. `Tree` must be the shape of the C1's sector size.
    pub fn new(c1: &'c C1Input) -> Result<Self, SynthesisError> {
        let vanilla_proofs = c1.vanilla_proofs::<Tree>()?;
        let invalid = |reason: &str| SynthesisError::InvalidC1 {
            file: c1.file().to_path_buf(),
            reason: reason.to_string(),
        };
        if c1.comm_d() == [0; 32] {
            return Err(invalid("comm_d is all zero"));
        }
        if c1.comm_r() == [0; 32] {
            return Err(invalid("comm_r is all zero"));
        }
        if c1.seed() == [0; 32] {
            return Err(invalid("the PoRep challenge seed is all zero"));
        }
        if vanilla_proofs.is_empty() || vanilla_proofs.iter().any(Vec::is_empty) {
            return Err(invalid("a partition has no vanilla proofs"));
        }

        let comm_r = as_safe_commitment(&c1.comm_r(), "comm_r")
            .map_err(|err| invalid(&format!("comm_r: {err:#}")))?;
        let comm_d = <DefaultPieceDomain as Domain>::try_from_bytes(&c1.comm_d())
            .map_err(|err| invalid(&format!("comm_d: {err:#}")))?;
        let public_inputs = stacked::PublicInputs {
            replica_id: c1.replica_id::<Tree>(),
            tau: Some(stacked::Tau { comm_d, comm_r }),
            k: None,
            seed: Some(c1.seed()),
        };

        let setup_failed = |err: anyhow::Error| SynthesisError::Setup {
            file: c1.file().to_path_buf(),
            proof_type: proof_type_name(c1.proof_type()),
            reason: format!("{err:#}"),
        };
        let porep_config = c1.porep_config();
        let compound_setup = compound_proof::SetupParams {
            vanilla_params: setup_params(&porep_config).map_err(setup_failed)?,
            partitions: Some(usize::from(porep_config.partitions)),
            priority: false,
        };
        let compound_params =
            <Compound<Tree> as CompoundProof<Scheme<'_, Tree>, _>>::setup(&compound_setup)
                .map_err(setup_failed)?;

        Ok(PorepCircuits {
            c1,
            vanilla_params: compound_params.vanilla_params,
            public_inputs,
            vanilla_proofs,
        })
    }

    pub fn c1(&self) -> &'c C1Input {
        self.c1
    }

    /// The stacked-DRG public parameters (what the Groth16 parameters are generated for).
    pub fn vanilla_params(&self) -> &stacked::PublicParams<Tree> {
        &self.vanilla_params
    }

    /// The blank circuit of this proof type (no witness, no vanilla proofs): the constraint
    /// structure every partition shares, e.g. for recording C once (`R1csMatrix::record`).
    pub fn blank_circuit(&self) -> PorepCircuit<Tree> {
        <Compound<Tree> as CompoundProof<Scheme<'_, Tree>, _>>::blank_circuit(&self.vanilla_params)
    }

    pub fn partitions(&self) -> usize {
        self.vanilla_proofs.len()
    }

    /// Builds partition `partition`'s circuit (holding a copy of that partition's vanilla
    /// proofs, ready to synthesize) and its public inputs. Only this one partition: a 32 GiB
    /// partition's witness is ~16 GiB once synthesized.
    pub fn partition(&self, partition: usize) -> Result<PartitionCircuit<Tree>, SynthesisError> {
        let circuit = self.circuit(partition, self.vanilla_proofs_of(partition)?)?;
        Ok(PartitionCircuit {
            partition,
            circuit,
            public_inputs: self.public_inputs(partition)?,
        })
    }

    /// `StackedCompound::circuit` of partition `partition` with `proofs` (all its challenges'
    /// or a run of them). It panics on some malformed proofs (`labeling_proofs[0]`): caught,
    /// that is this partition's error (`crate::panics`).
    fn circuit(
        &self,
        partition: usize,
        proofs: &Vec<VanillaSealProof<Tree>>,
    ) -> Result<PorepCircuit<Tree>, SynthesisError> {
        let file = || self.c1.file().to_path_buf();
        caught(|| {
            <Compound<Tree> as CompoundProof<Scheme<'_, Tree>, _>>::circuit(
                &self.public_inputs,
                (), // StackedCircuit has no component private inputs.
                proofs,
                &self.vanilla_params,
                Some(partition),
            )
        })
        .map_err(|message| SynthesisError::Panicked {
            file: file(),
            partition,
            during: "building the circuit",
            message,
        })?
        .map_err(|err| SynthesisError::Circuit {
            file: file(),
            partition,
            reason: format!("{err:#}"),
        })
    }

    fn vanilla_proofs_of(
        &self,
        partition: usize,
    ) -> Result<&'c Vec<VanillaSealProof<Tree>>, SynthesisError> {
        self.vanilla_proofs
            .get(partition)
            .ok_or_else(|| SynthesisError::NoSuchPartition {
                file: self.c1.file().to_path_buf(),
                partition,
                partitions: self.partitions(),
            })
    }

    /// Challenges in partition `partition` (the blocks of its circuit, one per challenge).
    pub fn challenges(&self, partition: usize) -> usize {
        self.vanilla_proofs.get(partition).map_or(0, Vec::len)
    }

    /// The circuit of partition `partition` cut to challenges `run`: the same prefix
    /// (replica_id, comm_d, comm_r, comm_r_last, comm_c and comm_r = H(comm_c ‖ comm_r_last))
    /// followed by those challenges only, for synthesis a run of challenges per thread
    /// (`cuzk_kernels::witness::blocks`). Every challenge's vanilla proof must agree on
    /// comm_r_last and comm_c, as for the whole partition: each run takes them from its first.
    pub fn challenge_run(
        &self,
        partition: usize,
        run: std::ops::Range<usize>,
    ) -> Result<PorepCircuit<Tree>, SynthesisError> {
        let vanilla_proof = self.vanilla_proofs_of(partition)?;
        let circuit_failed = |reason: String| SynthesisError::Circuit {
            file: self.c1.file().to_path_buf(),
            partition,
            reason,
        };
        let first = vanilla_proof
            .first()
            .ok_or_else(|| circuit_failed("no vanilla proofs".into()))?;
        if !vanilla_proof
            .iter()
            .all(|p| p.comm_r_last() == first.comm_r_last())
        {
            return Err(circuit_failed("inconsistent comm_r_lasts".into()));
        }
        if !vanilla_proof.iter().all(|p| p.comm_c() == first.comm_c()) {
            return Err(circuit_failed("inconsistent comm_cs".into()));
        }
        // `circuit` takes the partition's Vec: these challenges as one (cloned twice, as
        // the whole partition's proofs are once; small next to synthesizing them).
        let proofs = vanilla_proof
            .get(run.clone())
            .map(<[_]>::to_vec)
            .ok_or_else(|| {
                circuit_failed(format!("challenges {run:?} of {}", vanilla_proof.len()))
            })?;
        self.circuit(partition, &proofs)
    }

    /// The prefix every partition circuit starts with, without any challenge and without
    /// values: what a [`BlockLayout`](cuzk_kernels::witness::BlockLayout) is measured from.
    pub fn prefix_circuit(&self) -> PorepPrefix<Tree> {
        PorepPrefix(std::marker::PhantomData)
    }

    /// The Groth16 public inputs of `partition`, from `StackedCompound::generate_public_inputs`
    /// (what the verifier derives on its side).
    pub fn public_inputs(&self, partition: usize) -> Result<Vec<Fr>, SynthesisError> {
        Compound::<Tree>::generate_public_inputs(
            &self.public_inputs,
            &self.vanilla_params,
            Some(partition),
        )
        .map_err(|err| SynthesisError::PublicInputs {
            file: self.c1.file().to_path_buf(),
            partition,
            reason: format!("{err:#}"),
        })
    }
}

/// The stacked-DRG circuit's prefix (replica_id, comm_d, comm_r as inputs; comm_r_last,
/// comm_c and comm_r = H(comm_c ‖ comm_r_last)) with no challenge and no values: the
/// circuit `StackedCircuit::synthesize` makes from an empty list of challenge proofs.
pub struct PorepPrefix<Tree>(std::marker::PhantomData<Tree>);

impl<Tree: 'static + MerkleTreeTrait> bellperson::Circuit<Fr> for PorepPrefix<Tree> {
    fn synthesize<CS: bellperson::ConstraintSystem<Fr>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellperson::SynthesisError> {
        PorepCircuit::<Tree>::synthesize(cs, None, None, None, None, None, Vec::new())
    }
}
