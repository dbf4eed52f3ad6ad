//! `C1Input`: one parsed C1 file and the typed views synthesis and verification need.

use std::any::Any;
use std::path::{Path, PathBuf};

use filecoin_proofs::{
    Commitment, MerkleTreeTrait, PoRepConfig, ProverId, Ticket, VanillaSealProof,
};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof as VanillaProofsBySize};
use filecoin_proofs_api::SectorId;
use storage_proofs_core::merkle::Hasher;

use crate::error::C1Error;
use crate::open::{read_c1_bytes, Links};
use crate::parse::{decode, C1Format};
use crate::proof_type::{format_sector_size, proof_type_name, RegisteredSealProof};
use crate::prover_id::prover_id_from_miner_id;

/// Prover identity given on the command line, for C1 files that do not carry it (a bare
/// SealCommitPhase1Output carries neither; a lotus envelope has no MinerID).
#[derive(Debug, Clone, Copy, Default)]
pub struct GivenIds {
    pub miner_id: Option<u64>,
    pub sector_num: Option<u64>,
}

/// A C1 file, parsed and checked for internal consistency.
#[derive(Debug)]
pub struct C1Input {
    file: PathBuf,
    format: C1Format,
    proof_type: RegisteredSealProof,
    output: SealCommitPhase1Output,
    miner_id: Option<u64>,
    sector_num: Option<u64>,
}

impl C1Input {
    /// Reads (a regular file of at most [`crate::open::MAX_C1_BYTES`]; a link is followed)
    /// and checks `file`, a path an operator named. The prover id and sector number are settled here from the
    /// envelope and `given`, but a missing one is reported only when asked for
    /// ([`C1Input::prover_id`], [`C1Input::sector_id`]): synthesis needs neither.
    pub fn read(file: &Path, given: GivenIds) -> Result<Self, C1Error> {
        let bytes = read_c1_bytes(file, Links::Follow)?;
        Self::from_bytes(file, &bytes, given)
    }

    /// [`C1Input::read`] for a drop-directory file, which other programs write: a link is
    /// refused, not followed (`crate::open`).
    pub fn read_dropped(file: &Path, given: GivenIds) -> Result<Self, C1Error> {
        let bytes = read_c1_bytes(file, Links::Refuse)?;
        Self::from_bytes(file, &bytes, given)
    }

    /// Parses C1 bytes; `file` names them in errors.
    pub fn from_bytes(file: &Path, bytes: &[u8], given: GivenIds) -> Result<Self, C1Error> {
        let decoded = decode(file, bytes)?;
        let input = C1Input {
            file: file.to_path_buf(),
            format: decoded.format,
            proof_type: decoded.proof_type,
            miner_id: settle(file, "MinerID", decoded.miner_id, given.miner_id)?,
            sector_num: settle(file, "SectorNum", decoded.sector_num, given.sector_num)?,
            output: decoded.output,
        };
        input.check_vanilla_proofs()?;
        Ok(input)
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    pub fn format(&self) -> C1Format {
        self.format
    }

    pub fn proof_type(&self) -> RegisteredSealProof {
        self.proof_type
    }

    pub fn sector_size(&self) -> u64 {
        u64::from(self.proof_type.sector_size())
    }

    /// The filecoin-proofs configuration for this proof type, as filecoin-proofs-api's
    /// `seal_commit_phase2` derives it.
    pub fn porep_config(&self) -> PoRepConfig {
        self.proof_type.as_v1_config()
    }

    pub fn partitions(&self) -> usize {
        usize::from(self.proof_type.partitions())
    }

    pub fn comm_r(&self) -> Commitment {
        self.output.comm_r
    }

    pub fn comm_d(&self) -> Commitment {
        self.output.comm_d
    }

    pub fn seed(&self) -> Ticket {
        self.output.seed
    }

    pub fn ticket(&self) -> Ticket {
        self.output.ticket
    }

    /// The replica id in the tree's hasher domain (the api stores it in the default tree
    /// hasher's domain; every shape uses the same field element).
    pub fn replica_id<Tree: MerkleTreeTrait>(&self) -> <Tree::Hasher as Hasher>::Domain {
        let replica_id: blstrs::Scalar = self.output.replica_id.into();
        replica_id.into()
    }

    pub fn miner_id(&self) -> Option<u64> {
        self.miner_id
    }

    /// `miner_id` where the file carries none (a service's configured default); the file's
    /// own wins.
    pub fn or_miner_id(mut self, miner_id: Option<u64>) -> Self {
        self.miner_id = self.miner_id.or(miner_id);
        self
    }

    pub fn prover_id(&self) -> Result<ProverId, C1Error> {
        match self.miner_id {
            Some(miner_id) => Ok(prover_id_from_miner_id(miner_id)),
            None => Err(C1Error::MissingProverId {
                file: self.file.clone(),
                why: self.missing_why("MinerID"),
            }),
        }
    }

    pub fn sector_id(&self) -> Result<SectorId, C1Error> {
        match self.sector_num {
            Some(sector_num) => Ok(SectorId::from(sector_num)),
            None => Err(C1Error::MissingSectorNumber {
                file: self.file.clone(),
                why: self.missing_why("SectorNum"),
            }),
        }
    }

    /// The vanilla proofs, one `Vec` of challenge proofs per partition, typed for `Tree`
    /// (the shape of this sector size). Borrowed: a 32 GiB C1 holds hundreds of MB of them.
    pub fn vanilla_proofs<Tree: 'static + MerkleTreeTrait>(
        &self,
    ) -> Result<&[Vec<VanillaSealProof<Tree>>], C1Error> {
        let (by_size, found) = self.vanilla_proofs_any();
        by_size
            .downcast_ref::<Vec<Vec<VanillaSealProof<Tree>>>>()
            .map(Vec::as_slice)
            .ok_or_else(|| C1Error::VanillaShapeMismatch {
                file: self.file.clone(),
                found: format!(
                    "{found} proofs, typed for {}",
                    std::any::type_name::<Tree>()
                ),
                proof_type: proof_type_name(self.proof_type),
            })
    }

    /// A copy in filecoin-proofs' own typed form, as `seal_commit_phase2` takes it.
    pub fn to_phase1_output<Tree: 'static + MerkleTreeTrait>(
        &self,
    ) -> Result<filecoin_proofs::SealCommitPhase1Output<Tree>, C1Error> {
        Ok(filecoin_proofs::SealCommitPhase1Output {
            vanilla_proofs: self.vanilla_proofs::<Tree>()?.to_vec(),
            comm_r: self.comm_r(),
            comm_d: self.comm_d(),
            replica_id: self.replica_id::<Tree>(),
            seed: self.seed(),
            ticket: self.ticket(),
        })
    }

    /// The api's untyped form, as filecoin-proofs-api takes it.
    pub fn api_output(&self) -> &SealCommitPhase1Output {
        &self.output
    }

    fn vanilla_proofs_any(&self) -> (&dyn Any, String) {
        use VanillaProofsBySize::*;
        let (proofs, size): (&dyn Any, u64) = match &self.output.vanilla_proofs {
            StackedDrg2KiBV1(proofs) => (proofs, 2 << 10),
            StackedDrg8MiBV1(proofs) => (proofs, 8 << 20),
            StackedDrg512MiBV1(proofs) => (proofs, 512 << 20),
            StackedDrg32GiBV1(proofs) => (proofs, 32 << 30),
            StackedDrg64GiBV1(proofs) => (proofs, 64 << 30),
        };
        (proofs, format!("{} vanilla", format_sector_size(size)))
    }

    fn partition_count_in_file(&self) -> (u64, usize) {
        use VanillaProofsBySize::*;
        match &self.output.vanilla_proofs {
            StackedDrg2KiBV1(proofs) => (2 << 10, proofs.len()),
            StackedDrg8MiBV1(proofs) => (8 << 20, proofs.len()),
            StackedDrg512MiBV1(proofs) => (512 << 20, proofs.len()),
            StackedDrg32GiBV1(proofs) => (32 << 30, proofs.len()),
            StackedDrg64GiBV1(proofs) => (64 << 30, proofs.len()),
        }
    }

    fn check_vanilla_proofs(&self) -> Result<(), C1Error> {
        let (size, partitions) = self.partition_count_in_file();
        if size != self.sector_size() {
            return Err(C1Error::VanillaShapeMismatch {
                file: self.file.clone(),
                found: format!("{} vanilla proofs", format_sector_size(size)),
                proof_type: proof_type_name(self.proof_type),
            });
        }
        if partitions != self.partitions() {
            return Err(C1Error::PartitionCountMismatch {
                file: self.file.clone(),
                found: partitions,
                proof_type: proof_type_name(self.proof_type),
                expected: self.partitions(),
            });
        }
        Ok(())
    }

    fn missing_why(&self, field: &str) -> &'static str {
        match (self.format, field) {
            (C1Format::Bare, _) => "a bare SealCommitPhase1Output carries no prover identity",
            (C1Format::Envelope, "MinerID") => "the C1 envelope has no MinerID",
            (C1Format::Envelope, _) => "the C1 envelope has no SectorNum",
        }
    }
}

/// One value from the envelope and/or the command line: they must agree when both exist.
fn settle(
    file: &Path,
    field: &'static str,
    envelope: Option<u64>,
    given: Option<u64>,
) -> Result<Option<u64>, C1Error> {
    match (envelope, given) {
        (Some(envelope), Some(given)) if envelope != given => Err(C1Error::Conflict {
            file: file.to_path_buf(),
            field,
            envelope,
            given,
        }),
        (envelope, given) => Ok(envelope.or(given)),
    }
}
