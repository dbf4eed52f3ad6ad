//! `cuzk fixture seal`: seals a small sector with filecoin-proofs and writes its C1 in the
//! lotus/Curio envelope (with MinerID), for tests and benchmarks that need a real C1.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use base64::Engine;
use cuzk_c1::proof_type::{
    format_sector_size, is_production_sector_size, parse_sector_size, proof_type_name,
};
use cuzk_c1::prover_id_from_miner_id;
use cuzk_epilogue::write_atomically;
use filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2,
};
use filecoin_proofs_api::{SectorId, UnpaddedBytesAmount};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::params::proof_type_of_size;
use crate::progress;

#[derive(Debug, clap::Args)]
pub struct SealArgs {
    /// Sector size: 2KiB, 8MiB or 512MiB.
    #[arg(long)]
    pub sector_size: String,
    /// Directory to write the C1 envelope into.
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value_t = 1000)]
    pub miner_id: u64,
    #[arg(long, default_value_t = 1)]
    pub sector_num: u64,
    /// Seed of the piece data, ticket and interactive seed: the same seed gives the same C1.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Registered proof type to seal (e.g. StackedDrg2KiBV1_2_Feat_NonInteractivePoRep);
    /// defaults to the size's interactive V1_1 type.
    #[arg(long)]
    pub proof_type: Option<String>,
}

/// Where filecoin-proofs keeps the DRG parent cache unless told otherwise.
const DEFAULT_PARENT_CACHE: &str = "/var/tmp/filecoin-parents";

pub fn run(args: &SealArgs) -> Result<()> {
    let Some(sector_size) = parse_sector_size(&args.sector_size) else {
        bail!(
            "unsupported sector size {:?}: use 2KiB, 8MiB or 512MiB",
            args.sector_size
        );
    };
    if is_production_sector_size(sector_size) {
        bail!(
            "refusing to seal a {} sector for a fixture: it needs hundreds of GB and hours",
            format_sector_size(sector_size)
        );
    }
    let proof_type = proof_type_of_size(sector_size, args.proof_type.as_deref())?;
    fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create the output directory", args.out.display()))?;
    let work = tempfile::Builder::new()
        .prefix("cuzk-seal-")
        .tempdir()
        .context("creating a temporary sealing directory")?;

    let spinner = progress::spinner(
        format!(
            "sealing a {} sector ({}) for miner {} sector {}",
            format_sector_size(sector_size),
            proof_type_name(proof_type),
            args.miner_id,
            args.sector_num
        ),
        None,
    );
    let started = Instant::now();
    let c1_json = seal(args, proof_type, work.path());
    spinner.finish_and_clear();
    let c1_json = c1_json?;

    let envelope = serde_json::json!({
        "SectorNum": args.sector_num,
        "Phase1Out": base64::engine::general_purpose::STANDARD.encode(&c1_json),
        "SectorSize": sector_size,
        "MinerID": args.miner_id,
    });
    // A proof type asked for by name is in the file name too (the default is not, so the
    // interactive fixtures keep their names).
    let variant = match args.proof_type {
        Some(_) => format!("-{}", proof_type_name(proof_type)),
        None => String::new(),
    };
    let path = args.out.join(format!(
        "porep-{}{variant}-m{}-s{}-seed{}.c1.json",
        format_sector_size(sector_size),
        args.miner_id,
        args.sector_num,
        args.seed
    ));
    write_atomically(&path, envelope.to_string().as_bytes())?;
    eprintln!("sealed in {}", progress::minutes_seconds(started.elapsed()));
    println!("{}", path.display());
    Ok(())
}

/// Runs add_piece, pre-commit 1 and 2 and commit 1 in `work`; returns the C1 JSON.
fn seal(args: &SealArgs, proof_type: cuzk_c1::RegisteredSealProof, work: &Path) -> Result<Vec<u8>> {
    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let sector_size = u64::from(proof_type.sector_size());
    // Fr32 padding: 127 data bytes in every 128.
    let piece_size = UnpaddedBytesAmount(sector_size / 128 * 127);
    let mut piece = vec![0u8; piece_size.0 as usize];
    rng.fill_bytes(&mut piece);

    let cache = work.join("cache");
    let staged = work.join("staged");
    let sealed = work.join("sealed");
    fs::create_dir_all(&cache)?;
    File::create(&sealed)?;
    let mut staged_file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&staged)?;
    let (piece_info, _) = add_piece(proof_type, &piece[..], &mut staged_file, piece_size, &[])
        .context("add_piece")?;
    staged_file.flush()?;
    drop(staged_file);

    let prover_id = prover_id_from_miner_id(args.miner_id);
    let sector_id = SectorId::from(args.sector_num);
    let ticket = field_safe_bytes(&mut rng);
    let seed = field_safe_bytes(&mut rng);

    let pre_commit1 = seal_pre_commit_phase1(
        proof_type,
        &cache,
        &staged,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        std::slice::from_ref(&piece_info),
    )
    .context("seal_pre_commit_phase1")?;
    let pre_commit2 =
        seal_pre_commit_phase2(pre_commit1, &cache, &sealed).context("seal_pre_commit_phase2")?;
    let commit1 = seal_commit_phase1(
        &cache,
        &sealed,
        prover_id,
        sector_id,
        ticket,
        seed,
        pre_commit2,
        &[piece_info],
    )
    .context("seal_commit_phase1")?;
    serde_json::to_vec(&commit1).context("serializing the C1 output")
}

/// 32 random bytes that read as a BLS12-381 scalar (top two bits clear), as lotus's
/// tickets and seeds do after its own masking.
fn field_safe_bytes(rng: &mut impl Rng) -> [u8; 32] {
    let mut bytes: [u8; 32] = rng.gen();
    bytes[31] &= 0x3f;
    bytes
}

/// Points filecoin-proofs at the parent cache it must build for sealing, unless the
/// operator already did.
pub fn default_parent_cache() {
    if std::env::var_os("FIL_PROOFS_PARENT_CACHE").is_none() {
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", DEFAULT_PARENT_CACHE);
    }
}
