//! cuzk-shm-layout: the shared-memory contract between the cuzk stage processes.
//!
//! Synthesis writes a partition's a, b, c and assignment once into a [`PartitionSlot`]
//! region of the [`Arena`]; host-prep, the GPU process and the epilogue read them in place.
//! Ownership moves by one compare-and-swap on the slot's state word ([`SlotState`]); the
//! control plane ([`ControlPlane`], iceoryx2) only carries small [`SlotDescriptor`]s and
//! wake-ups. See `docs/shm-layout.md` for the layout, the state table and recovery rules.
//!
//! [`PartitionSlot`]: slot::SlotHeader

#![deny(unsafe_op_in_unsafe_fn)]

pub mod arena;
pub mod clock;
pub mod control;
pub mod descriptor;
pub mod error;
pub mod header;
pub mod job;
pub mod recovery;
pub mod shape;
pub mod slot;
pub mod slot_state;
pub mod srs;

pub use arena::{Arena, ArenaConfig};
pub use control::{
    iceoryx_config, reap_dead_nodes, ControlPlane, Handoff, StageReceiver, StageSender,
};
pub use descriptor::SlotDescriptor;
pub use error::ShmError;
pub use job::{JobView, MAX_PARTITIONS};
pub use recovery::RecoveryReport;
pub use shape::{PartitionShape, Region, SlotLayout};
pub use slot::{SlotClaim, SlotHeader};
pub use slot_state::{SlotState, SlotWord, Stage};
pub use srs::{SrsKey, SrsSegment};
