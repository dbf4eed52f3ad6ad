//! One partition slot: its header in shared memory and the claim that owns it.
//!
//! A [`SlotClaim`] is the only way to touch a slot's bytes. It exists while this process
//! holds the slot in a busy state, which the state word guarantees to no other process:
//! that exclusivity is what makes handing out `&mut [u8]` into shared memory sound.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::arena::Arena;
use crate::clock::monotonic_ns;
use crate::descriptor::SlotDescriptor;
use crate::error::ShmError;
use crate::shape::Region;
use crate::slot_state::{SlotState, SlotWord};

/// Header page of a slot. Everything is atomic because several processes read it at once.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct SlotHeader {
    /// Packed [`SlotWord`]: state, owner pid, generation. Changed only by CAS.
    pub word: AtomicU64,
    /// Job this slot's partition belongs to (written by synthesis while it owns the slot).
    pub job_id: AtomicU64,
    pub partition: AtomicU32,
    pub _pad: u32,
    /// When the slot last entered each state, indexed by `SlotState`: CLOCK_MONOTONIC ns
    /// (`clock::monotonic_ns`, one clock for every process of the host), not the wall
    /// clock, which NTP may step: a step forward would make every busy slot look hung for
    /// hours, one back would hide a real hang.
    pub entered_mono_ns: [AtomicU64; 8],
}

impl SlotHeader {
    pub fn load(&self) -> SlotWord {
        let v = self.word.load(Ordering::Acquire);
        // The word is only ever written from packed SlotWords; anything else means the
        // file was overwritten by something that is not cuzk.
        SlotWord::unpack(v).unwrap_or_else(|| panic!("corrupt slot word {v:#x}"))
    }

    /// One CAS from `from` to `to`. AcqRel: the new owner sees everything the previous
    /// owner wrote into the slot before it published its state.
    pub fn transition(&self, from: SlotWord, to: SlotWord) -> Result<(), SlotWord> {
        self.word
            .compare_exchange(from.pack(), to.pack(), Ordering::AcqRel, Ordering::Acquire)
            .map(|_| {
                self.entered_mono_ns[to.state as usize].store(monotonic_ns(), Ordering::Relaxed)
            })
            .map_err(|v| SlotWord::unpack(v).expect("corrupt slot word"))
    }
}

/// Exclusive ownership of one slot in a busy state, held by this process.
///
/// Dropping an unfinished claim abandons it: the slot goes back to the state it was
/// claimed from, with a new generation, so another process redoes the work. Dropped by a
/// panic's unwinding, it is left to recovery instead (see its `Drop`).
#[derive(Debug)]
pub struct SlotClaim<'a> {
    arena: &'a Arena,
    slot: u32,
    word: SlotWord,
    finished: bool,
}

impl<'a> SlotClaim<'a> {
    pub(crate) fn new(arena: &'a Arena, slot: u32, word: SlotWord) -> Self {
        Self {
            arena,
            slot,
            word,
            finished: false,
        }
    }

    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The busy state this claim holds.
    pub fn state(&self) -> SlotState {
        self.word.state
    }

    pub fn generation(&self) -> u32 {
        self.word.generation
    }

    fn header(&self) -> &SlotHeader {
        self.arena.slot_header(self.slot)
    }

    /// The capacity shape every slot of the arena is sized for.
    pub fn arena_shape(&self) -> crate::shape::PartitionShape {
        self.arena.header().shape
    }

    pub fn job_id(&self) -> u64 {
        self.header().job_id.load(Ordering::Relaxed)
    }

    pub fn partition(&self) -> u32 {
        self.header().partition.load(Ordering::Relaxed)
    }

    /// Records which job and partition the slot now carries (synthesis does this once).
    pub fn set_partition(&mut self, job_id: u64, partition: u32) {
        self.header().job_id.store(job_id, Ordering::Relaxed);
        self.header().partition.store(partition, Ordering::Relaxed);
    }

    /// Offset of `region` from the start of the arena mapping: the same number in every
    /// process, which is how tests show that readers read the bytes writers wrote.
    pub fn region_offset(&self, region: Region) -> u64 {
        self.arena.region_offset(self.slot, region)
    }

    /// The bytes of `region`, in place in shared memory.
    pub fn region(&self, region: Region) -> &[u8] {
        let (ptr, len) = self.arena.region_raw(self.slot, region);
        // SAFETY: `ptr..ptr+len` lies inside the live mapping (checked by Arena::region_raw)
        // and no other process writes this slot while we hold it in a busy state.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }

    /// The bytes of `region`, writable in place.
    pub fn region_mut(&mut self, region: Region) -> &mut [u8] {
        let (ptr, len) = self.arena.region_raw(self.slot, region);
        // SAFETY: as for `region`; `&mut self` makes the borrow unique within this process
        // and the busy state makes it unique across processes.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }

    /// Several distinct regions, writable at once (synthesis writes a, b, c, the
    /// assignment and the densities together). Panics if a region is named twice.
    pub fn regions_mut<const N: usize>(&mut self, regions: [Region; N]) -> [&mut [u8]; N] {
        for (i, r) in regions.iter().enumerate() {
            assert!(!regions[..i].contains(r), "region {r:?} requested twice");
        }
        regions.map(|r| {
            let (ptr, len) = self.arena.region_raw(self.slot, r);
            // SAFETY: as for `region_mut`; regions of one slot never overlap (SlotLayout lays
            // them out one after another) and each is named once (asserted above), so the
            // slices are disjoint.
            unsafe { std::slice::from_raw_parts_mut(ptr, len) }
        })
    }

    /// Diagnostics only (dumping a slot to a file): copies a region out and counts the bytes
    /// in the arena header. Stages never call this; the zero-copy tests assert the counter.
    pub fn copy_region_out(&self, region: Region) -> Vec<u8> {
        let bytes = self.region(region).to_vec();
        self.arena
            .header()
            .bytes_copied
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        bytes
    }

    /// Publishes the stage's work: busy → next completed state. The returned descriptor is
    /// what the stage announces to the next one. Fails if ownership was taken away
    /// (recovery decided we were dead); the work is then discarded.
    pub fn complete(mut self) -> Result<SlotDescriptor, ShmError> {
        self.finished = true;
        let next_state = self
            .word
            .state
            .completed()
            .expect("claims hold busy states");
        self.move_to(next_state)
    }

    /// Gives the slot back undone: busy → the state it was claimed from, new generation.
    pub fn abandon(mut self) -> Result<SlotDescriptor, ShmError> {
        self.finished = true;
        self.move_to(self.word.state.last_completed())
    }

    /// Keeps the slot busy under this process's pid, for a process about to exit with work
    /// it could not finish and must not give back while it lives: given back now, another
    /// process could claim it and find the job's duty still held by this live pid.
    /// Recovery gives the slot back once the process has exited.
    pub fn leave_to_recovery(mut self) {
        self.finished = true;
    }

    fn move_to(&self, state: SlotState) -> Result<SlotDescriptor, ShmError> {
        let to = self.word.next(state, 0);
        self.header()
            .transition(self.word, to)
            .map_err(|found| ShmError::SlotRace {
                slot: self.slot,
                expected: self.word.state,
                generation: self.word.generation,
                found: found.state,
                found_generation: found.generation,
            })?;
        Ok(SlotDescriptor::new(
            self.slot,
            to,
            self.job_id(),
            self.partition(),
        ))
    }
}

impl Drop for SlotClaim<'_> {
    fn drop(&mut self) {
        // A claim dropped by a panic unwinding out of the stage's loop is left to recovery,
        // as a crash would leave it: the process is about to exit, and recovery then gives
        // the slot back with a lost attempt counted against its partition. Given back here,
        // uncounted, a partition that panics its stage would be taken again by the
        // restarted process, and again, for ever instead of failing its job after four.
        // (No stage catches a panic above a claim: synthesis catches upstream panics
        // inside the partition's work, where the claim is only borrowed.)
        if !self.finished && !std::thread::panicking() {
            // Best effort: if recovery already took the slot there is nothing to give back.
            let _ = self.move_to(self.word.state.last_completed());
        }
    }
}
