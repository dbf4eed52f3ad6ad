//! Slots whose job failed (or is gone) move on without work, so they reach the epilogue
//! and are freed; the supervisor retires a failed job once none of its slots is in flight.

use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{At, JobView, SlotClaim, StageSender};

use crate::StageRuntime;

/// The live job the slot's partition belongs to, or `None` after passing the slot on
/// (completing it to the next state and announcing it) because the job failed or is gone.
pub fn live_job<'a>(
    rt: &'a StageRuntime,
    claim: SlotClaim<'a>,
    next: &StageSender,
) -> anyhow::Result<Option<(JobView<'a>, SlotClaim<'a>)>> {
    let at = At::slot(claim.job_id(), claim.partition(), claim.slot());
    match rt.arena.job(claim.job_id()) {
        Ok(job) if !job.is_failed() => Ok(Some((job, claim))),
        _ => {
            let d = claim.complete()?;
            next.announce(d)?;
            rt.timeline.emit_full(
                names::SLOT_RETURNED,
                at,
                None,
                &[],
                Some("job failed or gone"),
            );
            Ok(None)
        }
    }
}

/// Milliseconds, for timeline steps.
pub fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A stage's named step durations in milliseconds, as the timeline's events carry them.
pub fn steps_ms<'a>(steps: &[(&'a str, std::time::Duration)]) -> Vec<(&'a str, f64)> {
    steps.iter().map(|(k, d)| (*k, ms(*d))).collect()
}
