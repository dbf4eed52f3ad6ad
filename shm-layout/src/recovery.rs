//! Recovery for the supervisor: a process died holding slots (or a half-written job).
//!
//! Rule: every busy slot the dead pid owned goes back to the completed state it was claimed
//! from, with a new generation, by one CAS each. The work is then redone exactly once:
//! the returned descriptors are announced again, any descriptor still in flight for the old
//! generation is stale, and a late `complete` from the dead owner cannot happen.

use std::sync::atomic::Ordering;

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

use crate::arena::Arena;
use crate::descriptor::SlotDescriptor;
use crate::error::ShmError;
use crate::job::{job_word_state, JobState};
use crate::slot_state::Stage;

/// What recovery did.
#[derive(Debug, Default, Clone)]
pub struct RecoveryReport {
    /// Slots put back, each as the descriptor to announce so the redo starts promptly.
    pub returned: Vec<SlotDescriptor>,
    /// Job records the dead pid was still writing; freed (the job was never visible).
    pub jobs_released: u32,
}

/// Whether `pid` is gone: no such process, or a zombie nobody reaped yet.
pub fn pid_is_dead(pid: u32) -> bool {
    // A pid read from shared memory or a status file may be anything. No process has one
    // above i32::MAX (pid_max is at most 2^22), and cast to a negative pid_t, kill would ask
    // about a process group instead.
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    match kill(Pid::from_raw(raw), None) {
        Err(Errno::ESRCH) => true,
        Err(_) => false, // EPERM: exists, owned by someone else
        Ok(()) => std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.starts_with('Z')))
            .unwrap_or(false),
    }
}

impl Arena {
    /// Returns everything `pid` owned. Refuses while `pid` is alive: taking slots from a
    /// live owner would let two processes write one slot.
    pub fn recover_dead_owner(&self, pid: u32) -> Result<RecoveryReport, ShmError> {
        if pid == 0 || !pid_is_dead(pid) {
            return Err(ShmError::OwnerAlive { pid });
        }
        let mut report = RecoveryReport::default();
        // Jobs whose finish this pid held and left, verified but unwritten, on purpose
        // (`JobView::leave_unwritten`): their slot's redo only writes the proof, so it is
        // no lost attempt. Read before any slot is returned, while the finish is still
        // the dead pid's (an epilogue taking it over clears the mark, `take_finish`).
        let left_unwritten: Vec<u64> = self
            .active_jobs()
            .filter(|job| job.finisher() == pid && job.take_left_unwritten())
            .map(|job| job.job_id())
            .collect();
        // Jobs whose finish this pid held: read before any slot is returned, since an
        // epilogue claiming the returned slot takes the finish over from the dead pid.
        let finishing: Vec<u64> = self
            .active_jobs()
            .filter(|job| job.finisher() == pid)
            .map(|job| job.job_id())
            .collect();
        // Of the slots it held past synthesis, only the one it took first is its work when
        // it died: a process proves one partition at a time, and a slot held beyond that
        // (the gpu stage's next partition, taken ahead while the current one computes)
        // had no part in its death. Counted too, a partition that kept landing in the
        // slot taken ahead of one that crashes the device would fail a healthy job.
        let working_on = (0..self.slot_count())
            .filter(|&slot| {
                let w = self.slot_header(slot).load();
                w.state.is_busy() && w.owner_pid == pid
            })
            .min_by_key(|&slot| {
                let header = self.slot_header(slot);
                header.entered_mono_ns[header.load().state as usize].load(Ordering::Relaxed)
            });
        for slot in 0..self.slot_count() {
            let header = self.slot_header(slot);
            loop {
                let w = header.load();
                if !w.state.is_busy() || w.owner_pid != pid {
                    break;
                }
                let back = w.next(w.state.last_completed(), 0);
                let synthesizing = back.state == crate::slot_state::SlotState::Free;
                if synthesizing {
                    // It died synthesizing: whatever partition it took goes back to its
                    // job (it may have died before naming it in the slot header). Before
                    // the slot is freed, so that a partition another process takes into
                    // the freed slot is not released with it.
                    for job in self.active_jobs() {
                        for p in job.release_partitions_of_slot(slot) {
                            let _ = job.note_lost_attempt(
                                p,
                                &format!("a synthesis process (pid {pid}) died holding it"),
                            );
                        }
                    }
                }
                if header.transition(w, back).is_ok() {
                    if !synthesizing {
                        let (job_id, p) = (
                            header.job_id.load(Ordering::Relaxed),
                            header.partition.load(Ordering::Relaxed),
                        );
                        // A partition whose proof is in (an epilogue killed while it
                        // waited to write the job's proof) lost nothing: counted, a job
                        // with every proof in could fail on earlier CUDA errors.
                        let counted = !left_unwritten.contains(&job_id) && working_on == Some(slot);
                        let what = format!(
                            "a {} process (pid {pid}) died holding it",
                            Stage::claiming(back.state).map_or("stage", Stage::name)
                        );
                        let job = self.job(job_id).ok().filter(|_| counted);
                        let done = job.is_some_and(|j| j.is_partition_done(p).unwrap_or(false));
                        match job {
                            // Its partition is in: if it held the job's finish, the finish
                            // was lost (counted on its own, so that a finish that keeps
                            // killing its epilogue fails the job rather than cycling).
                            Some(job) if done && finishing.contains(&job_id) => {
                                job.note_lost_finish(&what);
                            }
                            Some(job) if !done => {
                                let _ = job.note_lost_attempt(p, &what);
                            }
                            _ => {}
                        }
                    }
                    report.returned.push(SlotDescriptor::new(
                        slot,
                        back,
                        header.job_id.load(Ordering::Relaxed),
                        header.partition.load(Ordering::Relaxed),
                    ));
                    break;
                }
            }
        }
        for job in self.active_jobs() {
            job.release_finisher(pid);
        }
        for index in 0..self.job_capacity() {
            let rec = self.job_record(index);
            let w = rec.word.load(Ordering::Acquire);
            if job_word_state(w) == (JobState::Writing as u8, pid)
                && rec
                    .word
                    .compare_exchange(w, 0, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            {
                report.jobs_released += 1;
            }
        }
        Ok(report)
    }

    /// Recovers every owner that is dead: for a supervisor that restarted and lost track
    /// of its children.
    pub fn recover_orphans(&self) -> RecoveryReport {
        let mut owners: Vec<u32> = (0..self.slot_count())
            .map(|s| self.slot_word(s))
            .filter(|w| w.state.is_busy())
            .map(|w| w.owner_pid)
            .collect();
        owners.sort_unstable();
        owners.dedup();
        let mut total = RecoveryReport::default();
        for pid in owners {
            if let Ok(r) = self.recover_dead_owner(pid) {
                total.returned.extend(r.returned);
                total.jobs_released += r.jobs_released;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::pid_is_dead;

    /// A pid no process can have is dead, not what kill(2) would find for it as a
    /// negative pid_t (u32::MAX is -1: "every process we may signal", so alive before).
    #[test]
    fn a_pid_beyond_pid_t_is_dead() {
        assert!(pid_is_dead(u32::MAX));
        assert!(pid_is_dead(u32::MAX - 1));
        assert!(pid_is_dead(i32::MAX as u32 + 1));
        assert!(!pid_is_dead(std::process::id()));
    }
}
