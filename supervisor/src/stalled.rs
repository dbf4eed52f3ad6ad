//! Slots a live stage process has held in one state for too long. A process that hangs (a
//! CUDA call that never returns, a deadlock) keeps its slots: recovery acts only on dead
//! owners, and the work behind the slot stops with no error anywhere. Said in the log once
//! per hold and in `cuzk status` while it lasts; not acted on, because a long hold can be
//! right (an epilogue waiting for done/ to take a verified proof logs why itself). Killing
//! the process (`kill -9 PID`) gives its slots back for a retry, counted against their
//! partitions.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use cuzk_shm_layout::{Arena, SlotState, Stage};

/// A hold this long in one busy state is reported: far above any state's normal time (a
/// 32 GiB partition's synthesis takes minutes, its GPU work seconds; a gpu process's first
/// partition, which makes H's Lagrange bases in the folded form, ~7 min on an H100).
pub const STALLED_AFTER: Duration = Duration::from_secs(30 * 60);

/// One slot held too long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stalled {
    pub slot: u32,
    pub state: SlotState,
    pub pid: u32,
    pub job_id: u64,
    pub partition: u32,
    pub held: Duration,
}

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The stage is the one that claims the state this one falls back to.
        let stage = Stage::claiming(self.state.last_completed()).map_or("stage", Stage::name);
        write!(
            f,
            "slot {} ({:?}, job {} partition {}) held by the {stage} process pid {} for {} min",
            self.slot,
            self.state,
            self.job_id,
            self.partition,
            self.pid,
            self.held.as_secs() / 60
        )
    }
}

/// The holds seen past the limit, by (slot, generation): a new claim of the slot is a new
/// hold.
#[derive(Default)]
pub struct StallWatch {
    told: BTreeSet<(u32, u32)>,
    /// Seen past the limit once, not yet told: a hold is told at its second sighting, since
    /// a claim stores its state's time just after its CAS, and a look between the two reads
    /// the time of the slot's previous hold in that state.
    seen: BTreeSet<(u32, u32)>,
}

impl StallWatch {
    /// The slots held in one busy state for `after` or more at `now_ns` (`monotonic_ns`); logs
    /// each hold the first time it is seen.
    pub fn check(&mut self, arena: &Arena, now_ns: u64, after: Duration) -> Vec<Stalled> {
        let mut stalled = Vec::new();
        let mut holds = BTreeSet::new();
        for slot in 0..arena.slot_count() {
            let header = arena.slot_header(slot);
            let word = header.load();
            if !word.state.is_busy() {
                continue;
            }
            let entered = header.entered_mono_ns[word.state as usize].load(Ordering::Relaxed);
            let held = Duration::from_nanos(now_ns.saturating_sub(entered));
            if held < after {
                continue;
            }
            let s = Stalled {
                slot,
                state: word.state,
                pid: word.owner_pid,
                job_id: header.job_id.load(Ordering::Relaxed),
                partition: header.partition.load(Ordering::Relaxed),
                held,
            };
            let hold = (slot, word.generation);
            holds.insert(hold);
            if !self.seen.contains(&hold) {
                continue;
            }
            if !self.told.contains(&hold) {
                eprintln!(
                    "cuzk: {s}: it may be hung (its log says what it waits for); `kill -9 {}` gives the slot back for a retry, counted against the partition",
                    s.pid
                );
                self.told.insert(hold);
            }
            stalled.push(s);
        }
        // Holds that ended are forgotten: both sets stay as small as the slots.
        self.told.retain(|h| holds.contains(h));
        self.seen = holds;
        stalled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuzk_shm_layout::{ArenaConfig, PartitionShape};

    #[test]
    fn a_hold_past_the_limit_is_reported_until_it_ends() {
        let name = format!("stalled-{}", std::process::id());
        let arena =
            Arena::create(&ArenaConfig::new(&name, PartitionShape::new(64, 2, 64), 2)).unwrap();
        let mut watch = StallWatch::default();
        let claim = arena.try_claim(1, SlotState::Free, None).unwrap();
        let entered = arena.slot_header(1).entered_mono_ns[SlotState::Synthesizing as usize]
            .load(Ordering::Relaxed);
        let minute = Duration::from_secs(60);
        let at = |d: Duration| entered + d.as_nanos() as u64;
        assert!(watch.check(&arena, at(minute), 2 * minute).is_empty());
        // Past the limit: told at the second look, not the first.
        assert!(watch.check(&arena, at(3 * minute), 2 * minute).is_empty());
        let stalled = watch.check(&arena, at(3 * minute), 2 * minute);
        assert_eq!(stalled.len(), 1, "{stalled:?}");
        assert_eq!(
            (stalled[0].slot, stalled[0].state, stalled[0].pid),
            (1, SlotState::Synthesizing, std::process::id())
        );
        let line = stalled[0].to_string();
        assert!(
            line.contains("synthesis process") && line.contains("for 3 min"),
            "{line}"
        );
        assert_eq!(watch.told.len(), 1);
        claim.abandon().unwrap();
        assert!(watch.check(&arena, at(10 * minute), 2 * minute).is_empty());
        assert!(
            watch.told.is_empty() && watch.seen.is_empty(),
            "the ended hold is forgotten"
        );
        arena.remove().unwrap();
    }
}
