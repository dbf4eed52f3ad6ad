//! `cuzk params generate`: random Groth16 parameters for a test sector size, written into
//! the parameter cache under the names filecoin-proofs looks for.
//!
//! This does what the paramcache tool of rust-fil-proofs does: storage-proofs-core
//! `CacheableParameters::get_param_metadata`, `get_groth_params` and `get_verifying_key` on
//! the blank `StackedCompound` circuit with an rng, which runs bellperson's
//! `generate_random_parameters` and writes `v28-<cache id>.{meta,params,vk}`. The files land
//! in `FIL_PROOFS_PARAMETER_CACHE`, which `main` sets before any filecoin code runs.
//!
//! For a NonInteractivePoRep type it also makes a random inner-product SRS (storage-proofs-core
//! `get_inner_product` with an rng: bellperson's `setup_fake_srs`), which SnarkPack needs to
//! aggregate and verify that type's proofs; production provers fetch the real one instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cuzk_c1::proof_type::{
    format_sector_size, interactive_proof_type, is_production_sector_size, parse_sector_size,
    proof_type_by_name, proof_type_name, RegisteredSealProof,
};
use cuzk_epilogue::{aggregation_srs_path, check_aggregation_srs};
use filecoin_proofs::{constants::DefaultPieceHasher, parameters::public_params, with_shape};
use filecoin_proofs::{MerkleTreeTrait, PoRepConfig};
use filecoin_proofs_api::ApiFeature;
use rand::rngs::OsRng;
use storage_proofs_core::{compound_proof::CompoundProof, parameter_cache::CacheableParameters};
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

use crate::progress;

#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// Sector size: 2KiB, 8MiB, 512MiB (32GiB and 64GiB need --allow-large).
    #[arg(long)]
    pub sector_size: String,
    /// Registered proof type to generate for; defaults to the size's interactive V1_1 type.
    /// All variants of one sector size share one circuit, hence one set of files.
    #[arg(long)]
    pub proof_type: Option<String>,
    /// Parameter cache directory (sets FIL_PROOFS_PARAMETER_CACHE).
    #[arg(long)]
    pub param_cache: Option<PathBuf>,
    /// Allow 32GiB and 64GiB: random parameters for them are tens of GB and prove nothing
    /// a production verifier accepts.
    #[arg(long)]
    pub allow_large: bool,
}

/// The three cache files of one circuit.
#[derive(Debug)]
pub struct ParamFiles {
    pub meta: PathBuf,
    pub params: PathBuf,
    pub vk: PathBuf,
}

/// Wall time measured for `generate_random_parameters` on the 2-core development machine
/// (docs/params.md); shown so that an operator knows what the spinner is waiting for.
fn expected_duration(sector_size: u64) -> Option<Duration> {
    match sector_size {
        2048 => Some(Duration::from_secs(9 * 60 + 14)),
        0x80_0000 => Some(Duration::from_secs(16 * 60 + 43)),
        0x2000_0000 => Some(Duration::from_secs(16 * 60 + 40)),
        _ => None,
    }
}

pub fn run(args: &GenerateArgs) -> Result<()> {
    let proof = select_proof_type(args)?;
    let sector_size = u64::from(proof.sector_size());
    let config = proof.as_v1_config();
    let files = param_files(&config)?;
    let name = proof_type_name(proof);

    if files.params.exists() && files.vk.exists() && files.meta.exists() {
        eprintln!("parameters for {name} already present:");
        print_files(&files)?;
        return aggregation_srs(proof, &config);
    }
    // An interrupted generation leaves a partial .params that filecoin-proofs would then
    // refuse to read without regenerating; say so instead of failing later in a prover.
    if files.params.exists() && !files.vk.exists() {
        bail!(
            "{} exists but its verifying key {} does not: probably left by an interrupted \
             generation; delete it and run again",
            files.params.display(),
            files.vk.display()
        );
    }

    let expected_2_cores = expected_duration(sector_size);
    let expected = expected_2_cores
        .map(|d| format!("about {} on 2 cores", progress::minutes_seconds(d)))
        .unwrap_or_else(|| "hours".to_string());
    let spinner = progress::spinner(
        format!(
            "generating random Groth16 parameters for {name} ({}; expect {expected}) into {}",
            format_sector_size(sector_size),
            files.params.parent().unwrap_or(Path::new(".")).display()
        ),
        expected_2_cores,
    );
    let started = Instant::now();
    let result = generate(&config);
    spinner.finish_and_clear();
    result.with_context(|| format!("generating parameters for {name}"))?;

    eprintln!(
        "generated parameters for {name} in {}:",
        progress::minutes_seconds(started.elapsed())
    );
    print_files(&files)?;
    aggregation_srs(proof, &config)
}

/// Proofs a random inner-product SRS can aggregate: 128, the power of two above the most
/// partitions a proof type has (126, NonInteractivePoRep at 32/64 GiB). Its making takes
/// under a second (4 x 256 powers of one point). Too small for production sizes on
/// purpose: `check_aggregation_srs` refuses it there.
const AGGREGATION_SRS_PROOFS: usize = 128;

/// For a NonInteractivePoRep type: makes the random inner-product SRS unless one is there
/// (a present file, random or real, is never replaced).
fn aggregation_srs(proof: RegisteredSealProof, config: &PoRepConfig) -> Result<()> {
    if !proof.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Ok(());
    }
    let path = aggregation_srs_path();
    if !path.exists() {
        eprintln!(
            "making a random inner-product SRS for {AGGREGATION_SRS_PROOFS} proofs (SnarkPack, {})",
            proof_type_name(proof)
        );
        with_shape!(u64::from(config.sector_size), srs_for_shape, config)
            .with_context(|| format!("{}: making the inner-product SRS", path.display()))?;
    }
    // A file left by an interrupted making, or one too small for this type, is named
    // here rather than after a job's partitions are proved.
    check_aggregation_srs(proof)?;
    let bytes = std::fs::metadata(&path)
        .with_context(|| format!("{} was not written", path.display()))?
        .len();
    println!("{}\t{bytes}", path.display());
    Ok(())
}

fn srs_for_shape<Tree: 'static + MerkleTreeTrait>(config: &PoRepConfig) -> Result<()> {
    type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
    let public_params = public_params::<Tree>(config)?;
    let blank_circuit = <Compound<Tree> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&public_params);
    Compound::<Tree>::get_inner_product(
        Some(&mut OsRng),
        blank_circuit,
        &public_params,
        AGGREGATION_SRS_PROOFS,
    )?;
    Ok(())
}

fn select_proof_type(args: &GenerateArgs) -> Result<RegisteredSealProof> {
    let Some(sector_size) = parse_sector_size(&args.sector_size) else {
        bail!(
            "unsupported sector size {:?}: use 2KiB, 8MiB, 512MiB, 32GiB or 64GiB",
            args.sector_size
        );
    };
    if is_production_sector_size(sector_size) && !args.allow_large {
        bail!(
            "refusing to generate random parameters for {}: they are tens of GB, take hours \
             and no production verifier accepts their proofs; pass --allow-large to insist",
            format_sector_size(sector_size)
        );
    }
    proof_type_of_size(sector_size, args.proof_type.as_deref())
}

/// The proof type an operator named (`--proof-type`), which must be of `sector_size`, or
/// by default the size's interactive V1_1 type.
pub fn proof_type_of_size(sector_size: u64, name: Option<&str>) -> Result<RegisteredSealProof> {
    let proof = match name {
        Some(name) => {
            proof_type_by_name(name).with_context(|| format!("unknown proof type {name:?}"))?
        }
        None => interactive_proof_type(sector_size).with_context(|| {
            format!(
                "no interactive proof type for {}",
                format_sector_size(sector_size)
            )
        })?,
    };
    if u64::from(proof.sector_size()) != sector_size {
        bail!(
            "proof type {} is for {}, not {}",
            proof_type_name(proof),
            format_sector_size(u64::from(proof.sector_size())),
            format_sector_size(sector_size)
        );
    }
    Ok(proof)
}

/// The interactive proof type of a sector size and its parameter files in the cache.
pub fn files_for_sector_size(sector_size: u64) -> Result<(RegisteredSealProof, ParamFiles)> {
    let proof = interactive_proof_type(sector_size)
        .with_context(|| format!("no PoRep proof type for sector size {sector_size}"))?;
    Ok((proof, param_files(&proof.as_v1_config())?))
}

/// Whether the `.vk` is the `.params` file's own verifying key: bellperson writes a
/// parameter file's verifying key first, and the `.vk` file is that key alone. A `.vk` of
/// another parameter set (a fetch half redone, files of two releases) would have every
/// proof made with the `.params` rejected at verification, after all of its proving.
pub fn check_vk_matches_params(files: &ParamFiles) -> Result<()> {
    use std::io::Read;
    let vk =
        std::fs::read(&files.vk).with_context(|| format!("{}: reading", files.vk.display()))?;
    let mut head = Vec::with_capacity(vk.len());
    std::fs::File::open(&files.params)
        .with_context(|| format!("{}: opening", files.params.display()))?
        .take(vk.len() as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("{}: reading", files.params.display()))?;
    if head != vk {
        bail!(
            "{}: not the verifying key of {} (the parameter file does not begin with it): \
             every proof would fail verification; fetch both files of one release again",
            files.vk.display(),
            files.params.display()
        );
    }
    Ok(())
}

fn param_files(config: &PoRepConfig) -> Result<ParamFiles> {
    fn for_shape<Tree: 'static + MerkleTreeTrait>(config: &PoRepConfig) -> Result<ParamFiles> {
        Ok(ParamFiles {
            meta: config.get_cache_metadata_path::<Tree>()?,
            params: config.get_cache_params_path::<Tree>()?,
            vk: config.get_cache_verifying_key_path::<Tree>()?,
        })
    }
    with_shape!(u64::from(config.sector_size), for_shape, config)
}

fn generate(config: &PoRepConfig) -> Result<()> {
    with_shape!(u64::from(config.sector_size), generate_for_shape, config)
}

fn generate_for_shape<Tree: 'static + MerkleTreeTrait>(config: &PoRepConfig) -> Result<()> {
    type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
    let public_params = public_params::<Tree>(config)?;
    let blank_circuit = || {
        <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(
            &public_params,
        )
    };

    Compound::<Tree>::get_param_metadata(blank_circuit(), &public_params)?;
    Compound::<Tree>::get_groth_params(Some(&mut OsRng), blank_circuit(), &public_params)?;
    // Reads the verifying key out of the parameters just written and stores it alone.
    Compound::<Tree>::get_verifying_key(Some(&mut OsRng), blank_circuit(), &public_params)?;
    Ok(())
}

fn print_files(files: &ParamFiles) -> Result<()> {
    for path in [&files.meta, &files.params, &files.vk] {
        let bytes = std::fs::metadata(path)
            .with_context(|| format!("{} was not written", path.display()))?
            .len();
        println!("{}\t{bytes}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.vk` that begins the `.params` passes; one of another parameter set, or a
    /// parameter file shorter than it, is refused naming both files.
    #[test]
    fn a_vk_must_be_the_params_files_own() {
        let dir = tempfile::tempdir().unwrap();
        let files = ParamFiles {
            meta: dir.path().join("x.meta"),
            params: dir.path().join("x.params"),
            vk: dir.path().join("x.vk"),
        };
        std::fs::write(&files.params, b"verifying key, then the vectors").unwrap();
        std::fs::write(&files.vk, b"verifying key").unwrap();
        check_vk_matches_params(&files).unwrap();
        std::fs::write(&files.vk, b"another key!!").unwrap();
        let err = check_vk_matches_params(&files).unwrap_err().to_string();
        assert!(
            err.contains("x.vk: not the verifying key of") && err.contains("x.params"),
            "{err}"
        );
        std::fs::write(&files.params, b"verifying").unwrap();
        std::fs::write(&files.vk, b"verifying key").unwrap();
        assert!(
            check_vk_matches_params(&files).is_err(),
            "a parameter file shorter than its key"
        );
    }

    #[test]
    fn a_named_proof_type_must_be_of_the_size() {
        let two_kib = 2048;
        assert_eq!(
            proof_type_of_size(two_kib, None).unwrap(),
            RegisteredSealProof::StackedDrg2KiBV1_1
        );
        assert_eq!(
            proof_type_of_size(two_kib, Some("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"))
                .unwrap(),
            RegisteredSealProof::StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
        );
        let wrong =
            proof_type_of_size(8 << 20, Some("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"));
        assert_eq!(
            wrong.unwrap_err().to_string(),
            "proof type StackedDrg2KiBV1_2_Feat_NonInteractivePoRep is for 2KiB, not 8MiB"
        );
        let unknown = proof_type_of_size(two_kib, Some("StackedDrg2KiBV9"));
        assert!(unknown
            .unwrap_err()
            .to_string()
            .contains("unknown proof type"));
    }
}
