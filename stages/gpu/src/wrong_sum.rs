//! A test hook (tests/pipeline): with `CUZK_TEST_WRONG_SUM` set to `JOB:PARTITION`, the gpu
//! stage stores twice the H sum it computed for that partition of the job named JOB (its
//! drop-directory file name), as a device that computed a wrong result would. Nothing in
//! the stage can tell; the epilogue's `verify_seal` must refuse the job's proof and name
//! the partition, which is what the pipeline test checks where no device errs on demand.

use cuzk_shm_layout::{Region, SlotClaim};
use cuzk_stage_common::slot_view::{read_g1, write_g1, MsmResult};

/// Doubles the stored H sum when the hook names this job and partition; true if it did.
pub fn corrupt_if_asked(job_name: &str, claim: &mut SlotClaim<'_>) -> bool {
    // Read once: the hook costs a partition nothing when it is off.
    static TARGET: std::sync::OnceLock<Option<(String, u32)>> = std::sync::OnceLock::new();
    let target = TARGET.get_or_init(|| {
        let value = std::env::var("CUZK_TEST_WRONG_SUM").ok()?;
        let (job, partition) = value.rsplit_once(':')?;
        Some((job.to_string(), partition.parse().ok()?))
    });
    let Some((job, partition)) = target else {
        return false;
    };
    if job != job_name || *partition != claim.partition() {
        return false;
    }
    let results = claim.region_mut(Region::MsmResults);
    let h = read_g1(results, MsmResult::H);
    write_g1(results, MsmResult::H, &(h + h));
    true
}
