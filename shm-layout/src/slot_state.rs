//! The slot state machine and its packed atomic word.
//!
//! State, owner pid and generation live in ONE `u64`, so a single compare-and-swap moves
//! all three: a claim can never be half-done (state taken, owner not yet written), which is
//! what lets recovery trust the owner pid it reads.

/// Where a slot is in the pipeline. Even values are "completed" (a stage may claim the slot),
/// odd values are "busy" (one process owns the slot and is working on it).
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotState {
    Free = 0,
    Synthesizing = 1,
    Synthesized = 2,
    Prepping = 3,
    Prepped = 4,
    Proving = 5,
    Proved = 6,
    Finishing = 7,
}

impl SlotState {
    pub const ALL: [SlotState; 8] = [
        SlotState::Free,
        SlotState::Synthesizing,
        SlotState::Synthesized,
        SlotState::Prepping,
        SlotState::Prepped,
        SlotState::Proving,
        SlotState::Proved,
        SlotState::Finishing,
    ];

    pub fn from_u8(v: u8) -> Option<Self> {
        Self::ALL.get(v as usize).copied()
    }

    /// Busy states have exactly one owner process.
    pub fn is_busy(self) -> bool {
        (self as u8) & 1 == 1
    }

    /// The busy state a claim moves a completed state into (`Free` → `Synthesizing`, ...).
    pub fn claimed(self) -> Option<SlotState> {
        (!self.is_busy()).then(|| Self::ALL[self as usize + 1])
    }

    /// The completed state the owner of a busy state publishes (`Finishing` → `Free`).
    pub fn completed(self) -> Option<SlotState> {
        self.is_busy().then(|| Self::ALL[(self as usize + 1) % 8])
    }

    /// The completed state a busy slot returns to when its work is abandoned or its owner dies.
    pub fn last_completed(self) -> SlotState {
        if self.is_busy() {
            Self::ALL[self as usize - 1]
        } else {
            self
        }
    }
}

/// The process kinds of the pipeline and the completed state each one claims from.
/// Serialized by [`Stage::name`] (the timeline's `stage` field, reports).
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Synthesis = 0,
    HostPrep = 1,
    Gpu = 2,
    Epilogue = 3,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::Synthesis,
        Stage::HostPrep,
        Stage::Gpu,
        Stage::Epilogue,
    ];

    /// The state a slot must be in for this stage to claim it.
    pub fn ready_state(self) -> SlotState {
        SlotState::ALL[2 * self as usize]
    }

    /// The state a slot is in while this stage owns it.
    pub fn busy_state(self) -> SlotState {
        SlotState::ALL[2 * self as usize + 1]
    }

    /// The stage that claims slots in `state`, if `state` is a completed state.
    pub fn claiming(state: SlotState) -> Option<Stage> {
        (!state.is_busy()).then(|| Self::ALL[state as usize / 2])
    }

    pub fn name(self) -> &'static str {
        match self {
            Stage::Synthesis => "synthesis",
            Stage::HostPrep => "host-prep",
            Stage::Gpu => "gpu",
            Stage::Epilogue => "epilogue",
        }
    }

    /// The stage named `name` (as [`Stage::name`] writes it).
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Linux keeps pids below 2^22 (`PID_MAX_LIMIT`); 24 bits leave room.
const PID_BITS: u32 = 24;
const PID_MASK: u64 = (1 << PID_BITS) - 1;

/// `generation:32 | owner_pid:24 | state:8`, the content of a slot's state word.
///
/// The generation grows by one on every transition, so `(state, generation)` names one
/// moment of a slot's life: a descriptor carrying an older generation is stale, and a claim
/// CAS made from it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotWord {
    pub state: SlotState,
    /// Owner while busy, 0 when completed.
    pub owner_pid: u32,
    pub generation: u32,
}

impl SlotWord {
    pub const INITIAL: SlotWord = SlotWord {
        state: SlotState::Free,
        owner_pid: 0,
        generation: 0,
    };

    pub fn pack(self) -> u64 {
        debug_assert!(u64::from(self.owner_pid) <= PID_MASK);
        (u64::from(self.generation) << 32)
            | ((u64::from(self.owner_pid) & PID_MASK) << 8)
            | self.state as u64
    }

    /// `None` when the state byte is not a state: the arena is corrupt.
    pub fn unpack(v: u64) -> Option<SlotWord> {
        Some(SlotWord {
            state: SlotState::from_u8(v as u8)?,
            owner_pid: ((v >> 8) & PID_MASK) as u32,
            generation: (v >> 32) as u32,
        })
    }

    /// The word after a transition to `state`, owned by `owner_pid` (0 for completed states).
    pub fn next(self, state: SlotState, owner_pid: u32) -> SlotWord {
        SlotWord {
            state,
            owner_pid,
            generation: self.generation.wrapping_add(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_closes() {
        let mut s = SlotState::Free;
        let mut seen = vec![];
        for _ in 0..4 {
            let busy = s.claimed().unwrap();
            assert_eq!(busy.last_completed(), s);
            assert!(busy.claimed().is_none() && s.completed().is_none());
            seen.push(Stage::claiming(s).unwrap());
            s = busy.completed().unwrap();
        }
        assert_eq!(s, SlotState::Free);
        assert_eq!(seen, Stage::ALL);
        for st in Stage::ALL {
            assert_eq!(st.ready_state().claimed(), Some(st.busy_state()));
        }
    }

    #[test]
    fn word_round_trips() {
        let w = SlotWord {
            state: SlotState::Proving,
            owner_pid: 4_194_303,
            generation: u32::MAX,
        };
        assert_eq!(SlotWord::unpack(w.pack()), Some(w));
        assert_eq!(SlotWord::unpack(9), None);
        assert_eq!(w.next(SlotState::Proved, 0).generation, 0);
    }
}
