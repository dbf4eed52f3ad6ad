//! A pipeline simulator that writes the log a real run would: partitions pass synthesis,
//! host-prep, gpu and epilogue in order, each stage with its own process count and a fixed
//! duration, under a slot bound. Used to check that the analysis names the stage that
//! bounds throughput when one stage is deliberately short of processes.

use super::Log;

pub struct Pipeline {
    /// Duration of each stage in ms: [synthesis, host-prep, gpu, epilogue].
    pub durations_ms: [f64; 4],
    /// Processes per stage.
    pub processes: [usize; 4],
    pub slots: usize,
    pub jobs: u64,
    pub partitions: u32,
    /// Time between job claims (0: all jobs claimed at once).
    pub claim_every_ms: f64,
}

impl Pipeline {
    /// First come, first served: each partition, in job order, takes the earliest free slot
    /// and the earliest free process of each stage in turn.
    pub fn run(&self) -> Log {
        let mut log = Log::default();
        let mut free_at: Vec<Vec<f64>> = self.processes.iter().map(|&n| vec![0.0; n]).collect();
        let mut slot_free = vec![0.0f64; self.slots];
        let pid = |stage: usize, i: usize| 1000 * (stage as u32 + 1) + i as u32;
        for job in 0..self.jobs {
            let claimed = job as f64 * self.claim_every_ms;
            log.job(
                claimed,
                "JOB_CLAIMED",
                "supervisor",
                1,
                job,
                &format!("j{job}.json"),
            );
            let mut last_end = claimed;
            for partition in 0..self.partitions {
                let (slot, &slot_at) = slot_free
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.total_cmp(b.1))
                    .unwrap();
                let mut ready = claimed.max(slot_at);
                let mut t = [0.0; 8];
                let mut pids = [0; 4];
                for stage in 0..4 {
                    let (i, &free) = free_at[stage]
                        .iter()
                        .enumerate()
                        .min_by(|a, b| a.1.total_cmp(b.1))
                        .unwrap();
                    let start = ready.max(free);
                    let end = start + self.durations_ms[stage];
                    free_at[stage][i] = end;
                    t[2 * stage] = start;
                    t[2 * stage + 1] = end;
                    pids[stage] = pid(stage, i);
                    ready = end;
                }
                slot_free[slot] = ready;
                last_end = last_end.max(ready);
                log.partition(job, partition, slot as u32, t, pids);
            }
            log.job(
                last_end,
                "JOB_DONE",
                "epilogue",
                pid(3, 0),
                job,
                &format!("j{job}.json"),
            );
        }
        log
    }
}
