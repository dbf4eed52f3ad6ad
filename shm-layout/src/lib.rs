//! cuzk-shm-layout: the shared-memory contract between the cuzk stage processes.
//!
//! Synthesis writes a partition's a, b, c and assignment once into a [`PartitionSlot`]
//! region of the [`Arena`]; host-prep, the GPU process and the epilogue read them in place.
//! Ownership moves by one compare-and-swap on the slot's state word ([`SlotState`]); the
//! control plane ([`ControlPlane`], iceoryx2) only carries small [`SlotDescriptor`]s and
//! wake-ups. See `docs/shm-layout.md` for the layout, the state table and recovery rules.
//!
//! [`PartitionSlot`]: slot::SlotHeader
//!
//! # One slot through two stages
//!
//! In production each stage is its own process with its own `Arena::attach`; here one
//! process plays synthesis and host-prep to show the loop.
//!
//! ```
//! use std::time::Duration;
//! use cuzk_shm_layout::*;
//!
//! # fn main() -> Result<(), ShmError> {
//! let name = format!("doc-{}-{}", std::process::id(), clock::unix_ns()); // unique per run
//! let shape = PartitionShape::new(1000, 4, 900);
//! let arena = Arena::create(&ArenaConfig::new(&name, shape, 4))?; // the supervisor
//! let prefix = format!("cuzkdoc{}_", std::process::id()); // keeps instances apart
//! let control = ControlPlane::new(&name, &iceoryx_config(&prefix)?)?;
//!
//! // synthesis: wait for a free slot (backpressure), write in place, announce.
//! let free_slots = control.receiver(Stage::Synthesis)?;
//! let to_prep = control.sender(SlotState::Synthesized)?;
//! let prep_inbox = control.receiver(Stage::HostPrep)?; // subscribed before the announce
//! let mut slot = free_slots.claim_next(&arena, Duration::from_secs(1))?.unwrap().claim;
//! slot.set_partition(1, 0);
//! slot.region_mut(Region::EvalA)[..4].copy_from_slice(&[1, 2, 3, 4]);
//! to_prep.announce(slot.complete()?)?;
//!
//! // host-prep: claim by CAS, read the same bytes in place.
//! let handoff = prep_inbox.claim_next(&arena, Duration::from_secs(1))?.unwrap();
//! assert_eq!(&handoff.claim.region(Region::EvalA)[..4], &[1, 2, 3, 4]);
//! assert_eq!(handoff.claim.state(), SlotState::Prepping);
//! let next = handoff.claim.complete()?; // now Prepped, for the GPU stage
//! assert_eq!(next.stage(), Some(Stage::Gpu));
//! assert_eq!(arena.bytes_copied(), 0);
//! arena.remove()?;
//! # drop((free_slots, to_prep, prep_inbox, control));
//! # // iceoryx2 keeps one management segment per prefix; this prefix was the doc test's own.
//! # for e in std::fs::read_dir("/dev/shm").unwrap().flatten() {
//! #     if e.file_name().to_string_lossy().starts_with(&prefix) {
//! #         std::fs::remove_file(e.path()).unwrap();
//! #     }
//! # }
//! # Ok(())
//! # }
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

pub mod arena;
pub mod clock;
pub mod control;
pub mod descriptor;
pub mod error;
pub mod header;
pub mod job;
mod job_words;
pub mod recovery;
pub mod shape;
pub mod slot;
pub mod slot_state;
pub mod srs;
pub mod timeline;

pub use arena::{Arena, ArenaConfig};
pub use control::{
    iceoryx_config, reap_dead_nodes, ControlPlane, Handoff, StageReceiver, StageSender,
};
pub use descriptor::SlotDescriptor;
pub use error::ShmError;
pub use job::{DoneBits, JobView, MAX_PARTITIONS};
pub use recovery::RecoveryReport;
pub use shape::{PartitionMeta, PartitionShape, PrepHeader, Region, SlotLayout, PREP_HEADER_BYTES};
pub use slot::{SlotClaim, SlotHeader};
pub use slot_state::{SlotState, SlotWord, Stage};
pub use srs::{SrsKey, SrsSegment};
pub use timeline::{At, Timeline, TimelineEvent};
