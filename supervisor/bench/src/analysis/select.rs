//! Picking one batch's jobs out of a log that holds more (earlier batches, other writers).

use std::collections::HashSet;

use cuzk_shm_layout::timeline::{names, TimelineEvent};

/// The events of jobs whose name (from JOB_CLAIMED, or JOB_DONE / JOB_FAILED) contains
/// `pattern`, and the events about no job (process start and exit): those lie outside the
/// span, and they keep a process that did none of these jobs' work counted among its
/// stage's processes.
pub fn jobs_named(events: &[TimelineEvent], pattern: &str) -> Vec<TimelineEvent> {
    let ids: HashSet<u64> = events
        .iter()
        .filter(|e| {
            matches!(
                e.event.as_str(),
                names::JOB_CLAIMED | names::JOB_DONE | names::JOB_FAILED
            )
        })
        .filter(|e| e.job_name.as_deref().is_some_and(|n| n.contains(pattern)))
        .filter_map(|e| e.job)
        .collect();
    events
        .iter()
        .filter(|e| e.job.is_none_or(|j| ids.contains(&j)))
        .cloned()
        .collect()
}
