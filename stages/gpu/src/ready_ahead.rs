//! Readying the device for a job before its first partition comes: while the gpu process
//! waits for a slot, it records the job's R1CS (or C), maps its SRS and makes its prover
//! (buffers planned, bases uploaded) for the oldest live job. Otherwise that work waits for
//! the first prepped partition, after synthesis and host-prep: 2-3 s at 8 MiB, the R1CS
//! recording and a ~47 GB SRS upload at 32 GiB. The loop does it once per job and keeps
//! the prover an older job still needs (jobs are readied oldest first).

/// The job the device was last readied for.
#[derive(Default)]
pub struct ReadyAhead {
    readied: Option<u64>,
}

impl ReadyAhead {
    /// The job to ready the device for now, given the live jobs as (id, failed): the oldest
    /// that is not failed, unless it is the one readied last (tried once, whether or not
    /// that went well: a failure meets the job's first partition again, which fails it
    /// with the usual message and retries).
    pub fn job_to_ready(&mut self, live: impl Iterator<Item = (u64, bool)>) -> Option<u64> {
        let oldest = live
            .filter(|&(_, failed)| !failed)
            .map(|(id, _)| id)
            .min()?;
        if self.readied == Some(oldest) {
            return None;
        }
        self.readied = Some(oldest);
        Some(oldest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Oldest live job first, once each; a failed job is passed over; when the oldest is
    /// done the next one is readied.
    #[test]
    fn the_oldest_live_job_is_readied_once() {
        let mut r = ReadyAhead::default();
        assert_eq!(r.job_to_ready([].into_iter()), None, "no jobs");
        assert_eq!(
            r.job_to_ready([(7, false), (5, false)].into_iter()),
            Some(5)
        );
        assert_eq!(
            r.job_to_ready([(7, false), (5, false)].into_iter()),
            None,
            "readied already"
        );
        assert_eq!(
            r.job_to_ready([(9, false), (5, false), (7, false)].into_iter()),
            None,
            "a newer job does not take the device from the older one"
        );
        assert_eq!(
            r.job_to_ready([(9, false), (7, false)].into_iter()),
            Some(7)
        );
        assert_eq!(r.job_to_ready([(9, false), (8, true)].into_iter()), Some(9));
        assert_eq!(
            r.job_to_ready([(10, true)].into_iter()),
            None,
            "only failed jobs"
        );
    }
}
