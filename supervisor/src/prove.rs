//! `cuzk prove`: a C1 file in, a verified proof out. C1 → each partition's circuit, one at a
//! time → Groth16 → epilogue (assemble, verify_seal, atomic write).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cuzk_c1::C1Input;
use cuzk_epilogue::{check_aggregation_srs, finish_job, load_verifying_key, PartitionProof};
use cuzk_synthesis::{with_porep_circuits, CircuitsVisitor, PorepCircuits};
use filecoin_proofs::MerkleTreeTrait;

use crate::ids::C1Args;
use crate::partition_prover::PartitionProver;

#[derive(Debug, clap::Args)]
pub struct ProveArgs {
    #[command(flatten)]
    pub c1: C1Args,
    /// Where to write the proof; its JSON result goes beside it as `<out>.json`.
    #[arg(long)]
    pub out: PathBuf,
    /// Skip the subgroup check of every parameter point (still checked to be on the curve).
    /// Without it a file is checked fully the first time it is used, and a marker beside it
    /// (`<file>.cuzk-checked`) lets later runs skip the check while the file is unchanged.
    #[arg(long)]
    pub trust_params: bool,
}

pub fn run(args: &ProveArgs) -> Result<()> {
    let job = args.c1.job_name();
    let started = Instant::now();
    let c1 = C1Input::read(&args.c1.c1, args.c1.given_ids())?;
    // Everything the epilogue needs is checked before minutes of proving.
    c1.prover_id()?;
    c1.sector_id()?;
    crate::replica_check::check_replica_id(&c1)?;
    load_verifying_key(c1.proof_type())?;
    check_aggregation_srs(c1.proof_type())?;
    let mut timings = BTreeMap::from([("read_c1".to_string(), started.elapsed())]);

    let partitions = with_porep_circuits(
        &c1,
        ProveEachPartition {
            timings: &mut timings,
            trust_params: args.trust_params,
        },
    )??;
    let finished = finish_job(&job, &c1, &partitions, timings, &args.out)?;
    println!(
        "proof {} ({} bytes), result {}",
        finished.proof_path.display(),
        finished.proof.len(),
        finished.result_path.display()
    );
    Ok(())
}

/// Builds and proves the partitions in order, one circuit alive at a time.
struct ProveEachPartition<'t> {
    timings: &'t mut BTreeMap<String, Duration>,
    trust_params: bool,
}

impl CircuitsVisitor for ProveEachPartition<'_> {
    type Output = Result<Vec<PartitionProof>>;

    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output {
        let started = Instant::now();
        let mut prover = PartitionProver::load(&circuits, self.trust_params)?;
        self.timings
            .insert("load_params".to_string(), started.elapsed());

        let mut proofs = Vec::with_capacity(circuits.partitions());
        for k in 0..circuits.partitions() {
            proofs.push(
                prover
                    .prove_partition(&circuits, k, self.timings)
                    .with_context(|| format!("{}", circuits.c1().file().display()))?,
            );
        }
        Ok(proofs)
    }
}
