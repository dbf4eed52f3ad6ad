//! The arena header (first page of the arena file) and the layout hash.
//!
//! The hash covers every byte position another process relies on: the `#[repr(C)]` structs
//! shared through the file, the state encoding and the region offsets computed for the
//! arena's shape. Two builds that would disagree about any of them disagree about the hash,
//! and `Arena::attach` refuses the file instead of reading garbage.

use std::mem::{align_of, offset_of, size_of};
use std::sync::atomic::AtomicU64;

use crate::job::JobRecord;
use crate::shape::{PartitionShape, Region, SlotLayout};
use crate::slot::SlotHeader;
use crate::slot_state::SlotState;

/// "CUZKARNA" little-endian: what a cuzk arena file starts with.
pub const ARENA_MAGIC: u64 = u64::from_le_bytes(*b"CUZKARNA");
/// Bumped when the meaning of the file changes in a way the hash cannot see.
pub const FORMAT_VERSION: u32 = 1;
/// The header page; slots start after it.
pub const HEADER_BYTES: u64 = 4096;

#[repr(C)]
#[derive(Debug)]
pub struct ArenaHeader {
    pub magic: u64,
    pub format_version: u32,
    pub slot_count: u32,
    pub layout_hash: u64,
    /// Length of the file the creator wrote; attach refuses a shorter file.
    pub total_len: u64,
    pub shape: PartitionShape,
    /// Bytes from one slot header to the next (header page + data area).
    pub slot_stride: u64,
    pub slots_offset: u64,
    pub jobs_offset: u64,
    pub job_capacity: u32,
    pub creator_pid: u32,
    /// Bytes reserved for each job's C1 blob.
    pub job_blob_capacity: u64,
    pub job_blobs_offset: u64,
    pub created_unix_ns: u64,
    /// Bytes copied out of slots. The data path has no copy API, so this stays 0 unless a
    /// diagnostic copy (`SlotClaim::copy_region_out`) ran; tests assert it.
    pub bytes_copied: AtomicU64,
    /// Source of job ids; ids are never reused within an arena's life.
    pub next_job_id: AtomicU64,
}

const _: () = assert!(size_of::<ArenaHeader>() as u64 <= HEADER_BYTES);

/// Geometry of an arena, everything that the hash and the offsets derive from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArenaGeometry {
    pub shape: PartitionShape,
    pub slot_count: u32,
    pub job_capacity: u32,
    pub job_blob_capacity: u64,
}

/// FNV-1a, 64 bit: stable across builds and platforms, unlike `DefaultHasher`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }
}

/// Hash of the compiled shared structs plus the region layout of `geometry`.
pub fn layout_hash(geometry: &ArenaGeometry, slots: &SlotLayout) -> u64 {
    let mut h = Fnv::new();
    h.u64(u64::from(FORMAT_VERSION));
    for (size, align) in [
        (size_of::<ArenaHeader>(), align_of::<ArenaHeader>()),
        (size_of::<SlotHeader>(), align_of::<SlotHeader>()),
        (size_of::<JobRecord>(), align_of::<JobRecord>()),
        (size_of::<crate::descriptor::SlotDescriptor>(), 0),
    ] {
        h.u64(size as u64).u64(align as u64);
    }
    for off in [
        offset_of!(ArenaHeader, layout_hash),
        offset_of!(ArenaHeader, total_len),
        offset_of!(ArenaHeader, bytes_copied),
        offset_of!(ArenaHeader, next_job_id),
        offset_of!(SlotHeader, word),
        offset_of!(SlotHeader, job_id),
        offset_of!(SlotHeader, entered_mono_ns),
        offset_of!(JobRecord, word),
        offset_of!(JobRecord, partitions_done),
        offset_of!(JobRecord, partition_blobs),
        offset_of!(JobRecord, partition_slot),
        offset_of!(JobRecord, lost_attempts),
        offset_of!(JobRecord, finisher),
        offset_of!(JobRecord, proofs),
        offset_of!(JobRecord, reason),
    ] {
        h.u64(off as u64);
    }
    for s in SlotState::ALL {
        h.u64(s as u64);
    }
    let g = geometry;
    h.u64(g.shape.num_constraints)
        .u64(u64::from(g.shape.domain_log2))
        .u64(g.shape.num_inputs)
        .u64(g.shape.num_aux)
        .u64(u64::from(g.shape.evals_by_prover))
        .u64(u64::from(g.slot_count))
        .u64(u64::from(g.job_capacity))
        .u64(g.job_blob_capacity);
    for r in Region::ALL {
        let s = slots.span(r);
        h.u64(r as u64).u64(s.offset).u64(s.len);
    }
    h.u64(slots.data_len());
    h.0
}
