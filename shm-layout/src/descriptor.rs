//! The fixed-size message stages send each other over iceoryx2: which slot, at which
//! generation, is ready for which stage. Never bulk bytes.

use iceoryx2::prelude::ZeroCopySend;

use crate::clock::monotonic_ns;
use crate::slot_state::{SlotState, SlotWord, Stage};

/// "Slot `slot` reached `state` at `generation`." A receiver claims it with one CAS from
/// exactly that (state, generation); if the CAS fails the descriptor was stale or another
/// consumer won, and the receiver goes back to waiting.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ZeroCopySend)]
#[type_name("cuzk::SlotDescriptor")]
pub struct SlotDescriptor {
    pub slot: u32,
    pub generation: u32,
    pub job_id: u64,
    pub partition: u32,
    /// `SlotState as u8` of the completed state the slot is in.
    pub state: u8,
    pub _pad: [u8; 3],
    /// CLOCK_MONOTONIC when it was sent, for hand-off latency.
    pub sent_mono_ns: u64,
}

const _: () = assert!(std::mem::size_of::<SlotDescriptor>() == 32);

impl SlotDescriptor {
    pub fn new(slot: u32, word: SlotWord, job_id: u64, partition: u32) -> Self {
        Self {
            slot,
            generation: word.generation,
            job_id,
            partition,
            state: word.state as u8,
            _pad: [0; 3],
            sent_mono_ns: 0,
        }
    }

    pub fn state(&self) -> Option<SlotState> {
        SlotState::from_u8(self.state)
    }

    /// The stage this descriptor is addressed to.
    pub fn stage(&self) -> Option<Stage> {
        self.state().and_then(Stage::claiming)
    }

    pub(crate) fn stamped(mut self) -> Self {
        self.sent_mono_ns = monotonic_ns();
        self
    }
}
