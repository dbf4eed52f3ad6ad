//! Job records: which C1, how many partitions, which are done. One table in the arena, so
//! every process sees one truth; each job's encoded C1 sits in its own blob window, with a
//! byte range per partition so a synthesis process reads only the partition it works on.
//!
//! The table is generic over bytes: the C1 types live in the stage crates. `publish_job`
//! encodes any serde value with bincode 2 straight into shared memory.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use bincode::enc::write::SizeWriter;
use serde::{de::DeserializeOwned, Serialize};

use crate::arena::Arena;
use crate::clock::unix_ns;
use crate::error::ShmError;
pub use crate::job_words::DoneBits;
use crate::job_words::{load_text, store_text};

/// Most partitions one job may have: NonInteractivePoRep at 32/64 GiB has 126 (an
/// interactive PoRep at most 10). One done bit each, in [`DONE_WORDS`] words.
pub const MAX_PARTITIONS: usize = 128;
/// Words of `JobRecord::partitions_done`.
pub(crate) const DONE_WORDS: usize = MAX_PARTITIONS / 64;
const _: () = assert!(MAX_PARTITIONS.is_multiple_of(64));
/// Bytes of `JobRecord::name`: room for the longest C1 name the drop directory admits
/// (`cuzk_dropdir::MAX_C1_NAME_BYTES`, 200; the supervisor asserts it), so that a job's
/// name, and the done/ paths made from it, are the file's whole name.
pub const NAME_BYTES: usize = 256;
const NAME_WORDS: usize = NAME_BYTES / 8;

#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Free = 0,
    /// Its writer (owner pid in the word) is filling the record and blobs.
    Writing = 1,
    /// Readable; partitions are being proved.
    Active = 2,
}

/// Byte range inside the job's blob window.
#[repr(C)]
#[derive(Debug)]
pub struct BlobRange {
    pub offset: AtomicU64,
    pub len: AtomicU64,
}

#[repr(C, align(64))]
#[derive(Debug)]
pub struct JobRecord {
    /// `owner_pid:24 << 8 | JobState`, changed by CAS.
    pub word: AtomicU64,
    pub job_id: AtomicU64,
    pub num_partitions: AtomicU32,
    /// [`JOB_FAILED`] once any stage gave up on the job (reason in `reason`).
    pub flags: AtomicU32,
    /// Bit p % 64 of word p / 64 set once partition p's proof is in; set by fetch_or, so
    /// exactly once.
    pub partitions_done: [AtomicU64; DONE_WORDS],
    pub created_unix_ns: AtomicU64,
    pub job_blob: BlobRange,
    pub partition_blobs: [BlobRange; MAX_PARTITIONS],
    /// The job's name (e.g. the C1 file name), UTF-8, zero padded, truncated to
    /// [`NAME_BYTES`].
    pub name: [AtomicU64; NAME_WORDS],
    /// Per partition: 0 while nobody synthesizes it, else 1 + the slot a synthesis process
    /// took it into (CAS from 0). Recovery of that slot clears it, so the partition is
    /// taken again: a partition is never lost between a job and a slot.
    pub partition_slot: [AtomicU32; MAX_PARTITIONS],
    /// Per partition: how many times a stage process lost its work on it (died holding
    /// it, or had a CUDA error on it: stages/gpu/src/device_error.rs). Kept here, not in the process, so that a
    /// partition that kills every process taking it fails its job after
    /// [`LOST_ATTEMPTS_BEFORE_FAILING`] instead of crash-looping a stage forever.
    pub lost_attempts: [AtomicU8; MAX_PARTITIONS],
    /// Pid of the epilogue that assembles and writes the whole job (0: nobody yet); taken by
    /// CAS, taken over only from a dead pid.
    pub finisher: AtomicU32,
    /// How many finishers died holding the job's finish (assembling, verifying, writing
    /// its proof): the finisher's partition is done, so its death is no lost attempt at a
    /// partition, and without this count a finish that kills every epilogue taking it (an
    /// OOM in the aggregation) would go round for ever. Counted by recovery
    /// (`JobView::note_lost_finish`).
    pub lost_finishes: AtomicU32,
    /// Each partition's 192-byte Groth16 proof, written by the epilogue before it marks the
    /// partition done.
    pub proofs: [[AtomicU64; PROOF_WORDS]; MAX_PARTITIONS],
    /// Why the job failed (UTF-8, zero padded, truncated to 2 KiB: a stage's reason carries
    /// the C1 and parameter paths and the cause, and a few hundred bytes cut the cause off).
    pub reason: [AtomicU64; REASON_WORDS],
}

/// Bytes of one partition's Groth16 proof (A 48, B 96, C 48, compressed).
pub const PROOF_BYTES: usize = 192;
const PROOF_WORDS: usize = PROOF_BYTES / 8;
const REASON_WORDS: usize = 256;
/// `JobRecord::flags` bit: the job failed; stages pass its slots through without work.
pub const JOB_FAILED: u32 = 1;
/// `JobRecord::flags` bit: the epilogue finishing the job stopped with its verified proof
/// unwritten (`done/` could not take it) and left its last slot to recovery on purpose.
/// Recovery then gives the slot back without counting a lost attempt: the redo only
/// writes the proof, and a full disk during a scale-down must not fail a proved job.
pub const JOB_LEFT_UNWRITTEN: u32 = 2;
/// `JobRecord::flags` bit: a mark found every partition done and claimed the completion
/// (`JobView::mark_partition_done` returns true to that one caller only).
pub const JOB_COMPLETION_CLAIMED: u32 = 4;

// Part of the layout hash too; spelled out so a change is a deliberate one.
const _: () = assert!(std::mem::size_of::<JobRecord>() == 29_696);

/// Lost attempts at one partition after which its job fails (`JobView::note_lost_attempt`):
/// a loss or two is an operator's kill or an unlucky OOM; four on the same partition
/// is the partition's own doing (data that crashes the code that reads it).
pub const LOST_ATTEMPTS_BEFORE_FAILING: u8 = 4;

pub(crate) fn job_word(state: JobState, pid: u32) -> u64 {
    (u64::from(pid) << 8) | state as u64
}

pub(crate) fn job_word_state(w: u64) -> (u8, u32) {
    (w as u8, (w >> 8) as u32)
}

const BINCODE: bincode::config::Configuration = bincode::config::standard();

/// One job in the table, as seen by any process.
#[derive(Debug, Clone, Copy)]
pub struct JobView<'a> {
    arena: &'a Arena,
    index: u32,
    job_id: u64,
}

impl Arena {
    /// Publishes a job whose C1 is already split into opaque blobs.
    pub fn publish_job_bytes(
        &self,
        name: &str,
        job: &[u8],
        partitions: &[&[u8]],
    ) -> Result<JobView<'_>, ShmError> {
        self.publish_with(name, partitions.len(), |window, p| {
            let src = match p {
                None => job,
                Some(i) => partitions[i],
            };
            let capacity = window.len() as u64;
            let dst = window
                .get_mut(..src.len())
                .ok_or(ShmError::JobBlobTooLarge {
                    needed: src.len() as u64,
                    capacity,
                })?;
            dst.copy_from_slice(src);
            Ok(src.len())
        })
    }

    /// Publishes a job, encoding the job-level value and each partition's value with bincode
    /// straight into the job's blob window (no intermediate buffer).
    pub fn publish_job<J: Serialize, P: Serialize>(
        &self,
        name: &str,
        job: &J,
        partitions: &[P],
    ) -> Result<JobView<'_>, ShmError> {
        fn encode<T: Serialize>(v: &T, window: &mut [u8]) -> Result<usize, ShmError> {
            let codec = |e: bincode::error::EncodeError| ShmError::Codec {
                job_id: 0,
                message: e.to_string(),
            };
            let mut size = SizeWriter::default();
            bincode::serde::encode_into_writer(v, &mut size, BINCODE).map_err(codec)?;
            if size.bytes_written > window.len() {
                return Err(ShmError::JobBlobTooLarge {
                    needed: size.bytes_written as u64,
                    capacity: window.len() as u64,
                });
            }
            bincode::serde::encode_into_slice(v, window, BINCODE).map_err(codec)
        }
        self.publish_with(name, partitions.len(), |window, p| match p {
            None => encode(job, window),
            Some(i) => encode(&partitions[i], window),
        })
    }

    /// Claims a free record, lets `write(remaining_window, None | Some(partition))` fill the
    /// blobs one after another, then makes the job visible.
    fn publish_with(
        &self,
        name: &str,
        num_partitions: usize,
        mut write: impl FnMut(&mut [u8], Option<usize>) -> Result<usize, ShmError>,
    ) -> Result<JobView<'_>, ShmError> {
        let job_id = self.header().next_job_id.fetch_add(1, Ordering::Relaxed);
        if num_partitions > MAX_PARTITIONS {
            return Err(ShmError::TooManyPartitions {
                job_id,
                partitions: num_partitions,
                max: MAX_PARTITIONS,
            });
        }
        let pid = std::process::id();
        let writing = job_word(JobState::Writing, pid);
        let index = (0..self.job_capacity())
            .find(|&i| {
                self.job_record_reusable(i)
                    && self
                        .job_record(i)
                        .word
                        .compare_exchange(0, writing, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
            })
            .ok_or(ShmError::JobTableFull {
                capacity: self.job_capacity(),
            })?;
        let rec = self.job_record(index);
        let (ptr, len) = self.job_blob_raw(index);
        // SAFETY: the window is inside the mapping, and record `index` is ours (Writing with
        // our pid): no other process reads or writes this window until we publish Active.
        let window = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        let mut cursor = 0usize;
        let filled = (|| {
            for p in std::iter::once(None).chain((0..num_partitions).map(Some)) {
                let n = write(&mut window[cursor..], p).map_err(|e| match e {
                    ShmError::Codec { message, .. } => ShmError::Codec { job_id, message },
                    other => other,
                })?;
                let range = match p {
                    None => &rec.job_blob,
                    Some(i) => &rec.partition_blobs[i],
                };
                range.offset.store(cursor as u64, Ordering::Relaxed);
                range.len.store(n as u64, Ordering::Relaxed);
                cursor += n;
            }
            Ok::<(), ShmError>(())
        })();
        if let Err(e) = filled {
            rec.word.store(0, Ordering::Release);
            return Err(e);
        }
        rec.job_id.store(job_id, Ordering::Relaxed);
        rec.num_partitions
            .store(num_partitions as u32, Ordering::Relaxed);
        for w in &rec.partitions_done {
            w.store(0, Ordering::Relaxed);
        }
        rec.flags.store(0, Ordering::Relaxed);
        rec.finisher.store(0, Ordering::Relaxed);
        rec.lost_finishes.store(0, Ordering::Relaxed);
        for p in &rec.partition_slot {
            p.store(0, Ordering::Relaxed);
        }
        for p in &rec.lost_attempts {
            p.store(0, Ordering::Relaxed);
        }
        store_text(&rec.reason, "");
        rec.created_unix_ns.store(unix_ns(), Ordering::Relaxed);
        store_text(&rec.name, name);
        // Release: everything above becomes visible to whoever sees Active.
        rec.word
            .store(job_word(JobState::Active, 0), Ordering::Release);
        Ok(JobView {
            arena: self,
            index,
            job_id,
        })
    }

    /// Whether record `index` can take a new job: unused, and no slot still refers to the
    /// job it held last. A stage holding such a slot (an epilogue redoing a dead one's
    /// partition, say) reads and marks the job through the record's index: reused under
    /// it, the new job would be marked with the old job's partition proof.
    fn job_record_reusable(&self, index: u32) -> bool {
        let rec = self.job_record(index);
        if rec.word.load(Ordering::Acquire) != 0 {
            return false;
        }
        let last = rec.job_id.load(Ordering::Relaxed);
        // Free slots, and slots just claimed for synthesis, keep the id of the job they
        // held before until they name their new one: no stage works on a retired job there
        // (synthesis takes partitions of active jobs only).
        last == 0
            || !(0..self.slot_count()).any(|slot| {
                let header = self.slot_header(slot);
                let state = header.load().state;
                state != crate::SlotState::Free
                    && state != crate::SlotState::Synthesizing
                    && header.job_id.load(Ordering::Relaxed) == last
            })
    }

    /// Whether a job can be published now (`publish_job` would find a record).
    pub fn has_free_job_record(&self) -> bool {
        (0..self.job_capacity()).any(|i| self.job_record_reusable(i))
    }

    /// The active job with this id.
    pub fn job(&self, job_id: u64) -> Result<JobView<'_>, ShmError> {
        self.active_jobs()
            .find(|j| j.job_id == job_id)
            .ok_or(ShmError::NoSuchJob { job_id })
    }

    /// Every job that is published and not yet retired.
    pub fn active_jobs(&self) -> impl Iterator<Item = JobView<'_>> + '_ {
        (0..self.job_capacity()).filter_map(move |index| {
            let rec = self.job_record(index);
            let (state, _) = job_word_state(rec.word.load(Ordering::Acquire));
            (state == JobState::Active as u8).then(|| JobView {
                arena: self,
                index,
                job_id: rec.job_id.load(Ordering::Relaxed),
            })
        })
    }
}

impl<'a> JobView<'a> {
    fn rec(&self) -> &'a JobRecord {
        self.arena.job_record(self.index)
    }

    pub fn job_id(&self) -> u64 {
        self.job_id
    }

    /// Whether the record this view reads is still its job's, active: a view outlives
    /// nothing it is not told of, and between listing the jobs and acting on one, a job
    /// could be retired and its record given to the next.
    pub fn is_current(&self) -> bool {
        let rec = self.rec();
        let (state, _) = job_word_state(rec.word.load(Ordering::Acquire));
        state == JobState::Active as u8 && rec.job_id.load(Ordering::Acquire) == self.job_id
    }

    pub fn num_partitions(&self) -> u32 {
        self.rec().num_partitions.load(Ordering::Relaxed)
    }

    pub fn name(&self) -> String {
        load_text(&self.rec().name)
    }

    pub fn created_unix_ns(&self) -> u64 {
        self.rec().created_unix_ns.load(Ordering::Relaxed)
    }

    /// Takes the first partition nobody has taken, for synthesis into `slot`.
    pub fn take_partition(&self, slot: u32) -> Option<u32> {
        if self.is_failed() {
            return None;
        }
        let done = self.done_bits();
        (0..self.num_partitions()).find(|&p| {
            !done.has(p)
                && self.rec().partition_slot[p as usize]
                    .compare_exchange(0, slot + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
        })
    }

    /// Whether some partition is still waiting for synthesis.
    pub fn has_untaken_partition(&self) -> bool {
        let done = self.done_bits();
        !self.is_failed()
            && (0..self.num_partitions()).any(|p| {
                !done.has(p) && self.rec().partition_slot[p as usize].load(Ordering::Acquire) == 0
            })
    }

    /// Gives back the unfinished partitions taken into `slot` (its synthesis failed or its
    /// owner died), so they are taken again. Returns them.
    pub fn release_partitions_of_slot(&self, slot: u32) -> Vec<u32> {
        let done = self.done_bits();
        (0..self.num_partitions())
            .filter(|&p| {
                !done.has(p)
                    && self.rec().partition_slot[p as usize]
                        .compare_exchange(slot + 1, 0, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
            })
            .collect()
    }

    /// Stores partition `p`'s proof (before `mark_partition_done`, which publishes it).
    pub fn set_partition_proof(
        &self,
        partition: u32,
        proof: &[u8; PROOF_BYTES],
    ) -> Result<(), ShmError> {
        self.check_partition(partition)?;
        for (w, chunk) in self.rec().proofs[partition as usize]
            .iter()
            .zip(proof.chunks(8))
        {
            w.store(
                u64::from_le_bytes(chunk.try_into().unwrap()),
                Ordering::Relaxed,
            );
        }
        Ok(())
    }

    /// Partition `p`'s proof; meaningful once its done bit is set (Acquire on its word).
    pub fn partition_proof(&self, partition: u32) -> Result<[u8; PROOF_BYTES], ShmError> {
        self.check_partition(partition)?;
        let mut out = [0u8; PROOF_BYTES];
        for (chunk, w) in out
            .chunks_mut(8)
            .zip(&self.rec().proofs[partition as usize])
        {
            chunk.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        Ok(out)
    }

    /// Becomes the process that writes the whole job out. Succeeds for one live process
    /// at a time; a dead finisher's duty passes to the next caller.
    pub fn take_finish(&self) -> bool {
        let me = std::process::id();
        let cell = &self.rec().finisher;
        loop {
            let holder = cell.load(Ordering::Acquire);
            if holder == me {
                return true;
            }
            if holder != 0 && !crate::recovery::pid_is_dead(holder) {
                return false;
            }
            if cell
                .compare_exchange(holder, me, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                if holder != 0 {
                    // Taken over from a dead finisher before its recovery: its mark of a
                    // proof left unwritten is not this process's (recovery of the dead
                    // one then counts its slot as usual).
                    self.take_left_unwritten();
                }
                return true;
            }
        }
    }

    /// The pid holding the job's finish (0: nobody).
    pub fn finisher(&self) -> u32 {
        self.rec().finisher.load(Ordering::Acquire)
    }

    /// Frees the finish duty `pid` held (recovery of a dead `pid`), so that the epilogue
    /// redoing the job's last slot takes it even if the kernel has given the pid to a new
    /// process by then (`take_finish` refuses a live holder).
    pub(crate) fn release_finisher(&self, pid: u32) {
        let _ = self
            .rec()
            .finisher
            .compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Relaxed);
    }

    /// Says that this process, the job's finisher, is stopping with the job's verified
    /// proof unwritten and leaves its last slot to recovery ([`JOB_LEFT_UNWRITTEN`]).
    pub fn leave_unwritten(&self) {
        self.rec()
            .flags
            .fetch_or(JOB_LEFT_UNWRITTEN, Ordering::AcqRel);
    }

    /// Whether [`JOB_LEFT_UNWRITTEN`] is set (a finisher stopped and left the verified proof
    /// to the next epilogue, and nobody has taken the finish over or recovered it yet).
    pub fn is_left_unwritten(&self) -> bool {
        self.rec().flags.load(Ordering::Acquire) & JOB_LEFT_UNWRITTEN != 0
    }

    /// Clears [`JOB_LEFT_UNWRITTEN`], saying whether it was set: recovery consumes it
    /// once, so a later death holding the job counts as usual.
    pub(crate) fn take_left_unwritten(&self) -> bool {
        self.rec()
            .flags
            .fetch_and(!JOB_LEFT_UNWRITTEN, Ordering::AcqRel)
            & JOB_LEFT_UNWRITTEN
            != 0
    }

    /// How many attempts at `partition` were lost so far (`note_lost_attempt`).
    pub fn lost_attempts(&self, partition: u32) -> Result<u8, ShmError> {
        self.check_partition(partition)?;
        Ok(self.rec().lost_attempts[partition as usize].load(Ordering::Acquire))
    }

    /// Marks the job failed; the first reason is kept.
    pub fn mark_failed(&self, reason: &str) {
        if self.rec().flags.fetch_or(JOB_FAILED, Ordering::AcqRel) & JOB_FAILED == 0 {
            store_text(&self.rec().reason, reason);
        }
    }

    pub fn is_failed(&self) -> bool {
        self.rec().flags.load(Ordering::Acquire) & JOB_FAILED != 0
    }

    pub fn failure_reason(&self) -> String {
        load_text(&self.rec().reason)
    }

    fn blob(&self, range: &BlobRange) -> &'a [u8] {
        let (ptr, len) = self.arena.job_blob_raw(self.index);
        let off = range.offset.load(Ordering::Relaxed) as usize;
        let n = range.len.load(Ordering::Relaxed) as usize;
        assert!(
            off + n <= len,
            "job {} blob range out of its window",
            self.job_id
        );
        // SAFETY: inside the job's window (asserted); an Active job's blobs are never written.
        unsafe { std::slice::from_raw_parts(ptr.add(off), n) }
    }

    /// The job-level blob, in place.
    pub fn job_blob(&self) -> &'a [u8] {
        self.blob(&self.rec().job_blob)
    }

    /// One partition's blob, in place.
    pub fn partition_blob(&self, partition: u32) -> Result<&'a [u8], ShmError> {
        self.check_partition(partition)?;
        Ok(self.blob(&self.rec().partition_blobs[partition as usize]))
    }

    pub fn decode_job<J: DeserializeOwned>(&self) -> Result<J, ShmError> {
        self.decode(self.job_blob())
    }

    pub fn decode_partition<P: DeserializeOwned>(&self, partition: u32) -> Result<P, ShmError> {
        self.decode(self.partition_blob(partition)?)
    }

    fn decode<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, ShmError> {
        bincode::serde::decode_from_slice(bytes, BINCODE)
            .map(|(v, _)| v)
            .map_err(|e| ShmError::Codec {
                job_id: self.job_id,
                message: e.to_string(),
            })
    }

    fn check_partition(&self, partition: u32) -> Result<(), ShmError> {
        let partitions = self.num_partitions();
        if partition >= partitions {
            return Err(ShmError::NoSuchPartition {
                job_id: self.job_id,
                partition,
                partitions,
            });
        }
        Ok(())
    }

    /// Marks one partition done. Returns whether this call completed the job: true for
    /// exactly one caller, the first to see every bit set. A second mark of the same
    /// partition is an error: each partition is proved once.
    ///
    /// Completion is decided from the bits alone, so a mark that dies half-way leaves no
    /// job that can never complete: a redo of its slot finds its bit set and the job
    /// complete (`is_complete`), however far the dead mark got.
    pub fn mark_partition_done(&self, partition: u32) -> Result<bool, ShmError> {
        self.set_done_bit(partition)?;
        Ok(self.claim_completion())
    }

    fn set_done_bit(&self, partition: u32) -> Result<(), ShmError> {
        self.check_partition(partition)?;
        let (word, bit) = DoneBits::place(partition);
        // SeqCst here and in `claim_completion`'s loads: of two last marks in different
        // words, the later of the two fetch_ors in the single SeqCst order is followed by
        // loads that see the other's bit, so at least one caller sees every bit set.
        // (Release/Acquire alone would let both read the other word before its bit.)
        let before = self.rec().partitions_done[word].fetch_or(bit, Ordering::SeqCst);
        if before & bit != 0 {
            return Err(ShmError::PartitionAlreadyDone {
                job_id: self.job_id,
                partition,
            });
        }
        Ok(())
    }

    /// True for the one caller that finds every partition done and sets
    /// [`JOB_COMPLETION_CLAIMED`]. Its SeqCst loads acquire every partition's proof.
    fn claim_completion(&self) -> bool {
        let done = DoneBits(
            self.rec()
                .partitions_done
                .each_ref()
                .map(|w| w.load(Ordering::SeqCst)),
        );
        if done.count() != self.num_partitions() {
            return false;
        }
        let before = self
            .rec()
            .flags
            .fetch_or(JOB_COMPLETION_CLAIMED, Ordering::AcqRel);
        before & JOB_COMPLETION_CLAIMED == 0
    }

    /// Counts a lost attempt at `partition` (`what` lost it, e.g. "a gpu process died
    /// holding it"); the [`LOST_ATTEMPTS_BEFORE_FAILING`]-th fails the job with a reason
    /// naming the partition and the cause. Returns the count so far.
    pub fn note_lost_attempt(&self, partition: u32, what: &str) -> Result<u8, ShmError> {
        self.check_partition(partition)?;
        let n = self.rec().lost_attempts[partition as usize]
            .fetch_add(1, Ordering::AcqRel)
            .saturating_add(1);
        if n >= LOST_ATTEMPTS_BEFORE_FAILING {
            self.mark_failed(&format!(
                "partition {partition}: lost {n} times, the last time because {what}; not tried again"
            ));
        }
        Ok(n)
    }

    /// Counts a finish lost with its finisher (`what` lost it: "an epilogue process (pid
    /// N) died holding it"); the [`LOST_ATTEMPTS_BEFORE_FAILING`]-th fails the job.
    /// Returns the count so far.
    pub fn note_lost_finish(&self, what: &str) -> u32 {
        let n = self
            .rec()
            .lost_finishes
            .fetch_add(1, Ordering::AcqRel)
            .saturating_add(1);
        if n >= u32::from(LOST_ATTEMPTS_BEFORE_FAILING) {
            self.mark_failed(&format!(
                "its finish (assembling, verifying and writing the proof) was lost {n} times, \
                 the last time because {what}; not tried again"
            ));
        }
        n
    }

    /// How many finishes of the job were lost so far (`note_lost_finish`).
    pub fn lost_finishes(&self) -> u32 {
        self.rec().lost_finishes.load(Ordering::Acquire)
    }

    /// Whether partition `partition`'s proof is in (its done bit set; Acquire).
    pub fn is_partition_done(&self, partition: u32) -> Result<bool, ShmError> {
        self.check_partition(partition)?;
        Ok(self.done_bits().has(partition))
    }

    /// The done bits as they are now (Acquire: a set bit's proof is readable).
    pub fn done_bits(&self) -> DoneBits {
        DoneBits(
            self.rec()
                .partitions_done
                .each_ref()
                .map(|w| w.load(Ordering::Acquire)),
        )
    }

    /// How many partitions' proofs are in.
    pub fn done_count(&self) -> u32 {
        self.done_bits().count()
    }

    /// Whether every partition's proof is in (its bits; what a redo after a crash asks).
    pub fn is_complete(&self) -> bool {
        self.done_count() == self.num_partitions()
    }

    /// Frees the record once the proof is written (or the job failed). A slot may still
    /// refer to the job (a redo after a crash); the record takes no new job until none
    /// does (`job_record_reusable`).
    pub fn retire(self) {
        self.rec().word.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ArenaConfig, PartitionShape};

    fn arena(what: &str) -> Arena {
        let name = format!("job-{what}-{}-{}", std::process::id(), unix_ns());
        Arena::create(&ArenaConfig::new(&name, PartitionShape::new(64, 2, 64), 1)).unwrap()
    }

    /// The interleavings a test of threads cannot force, step by step: two last marks in
    /// different words both set their bits before either looks; a mark that dies between
    /// its bit and its claim.
    #[test]
    fn completion_comes_from_the_bits_once_whatever_the_interleaving() {
        let arena = arena("complete");
        let job = arena
            .publish_job_bytes("ni.json", b"", &[&[][..]; 126])
            .unwrap();
        for p in (0..126).filter(|p| ![63, 125].contains(p)) {
            assert!(!job.mark_partition_done(p).unwrap());
        }
        // Both bits in, then both claims: exactly one completes the job.
        job.set_done_bit(63).unwrap();
        job.set_done_bit(125).unwrap();
        assert_eq!(
            [job.claim_completion(), job.claim_completion()],
            [true, false]
        );
        job.retire();

        // The last mark dies after its bit, before its claim: the job is complete for the
        // redo of its slot (`is_complete`), and a late claim still succeeds once.
        let job = arena
            .publish_job_bytes("ni.json", b"", &[&[][..]; 126])
            .unwrap();
        for p in 0..125 {
            assert!(!job.mark_partition_done(p).unwrap());
        }
        job.set_done_bit(125).unwrap();
        assert!(job.is_partition_done(125).unwrap() && job.is_complete());
        assert_eq!(job.done_count(), 126);
        assert!(job.claim_completion());
        assert!(!job.claim_completion());
        job.retire();
        arena.remove().unwrap();
    }

    /// A stage's reason names the C1 and parameter paths before its cause: a realistic one
    /// (~520 bytes) is kept whole; one past the record's room is cut at a character
    /// boundary, never mid-character.
    #[test]
    fn a_failure_reason_is_kept_whole_up_to_its_room() {
        let arena = arena("reason");
        let c1 = format!("/var/lib/cuzk/working/{}.json", "s-t01234-5678".repeat(8));
        let vk = format!(
            "/var/tmp/filecoin-proof-parameters/{}.vk",
            "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0".repeat(2)
        );
        let reason = format!(
            "partition 0: {c1}: partition 0: synthesis: {c1}: partition 0: verify against {vk}: the cause at the end"
        );
        assert!(reason.len() > 500, "{}", reason.len());
        let job = arena
            .publish_job_bytes("a.json", b"", &[&[][..]; 1])
            .unwrap();
        job.mark_failed(&reason);
        assert_eq!(job.failure_reason(), reason);
        job.retire();

        // One ASCII byte, then two-byte characters past the room: the room's last byte
        // would split a character, so one byte less is kept.
        let long = format!("x{}", "é".repeat(REASON_WORDS * 8));
        let job = arena
            .publish_job_bytes("b.json", b"", &[&[][..]; 1])
            .unwrap();
        job.mark_failed(&long);
        let kept = job.failure_reason();
        assert_eq!(kept.len(), REASON_WORDS * 8 - 1);
        assert!(long.starts_with(&kept));
        job.retire();
        arena.remove().unwrap();
    }
}
