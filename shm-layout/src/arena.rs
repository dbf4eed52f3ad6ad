//! The arena: one file-backed shared mapping holding the header, N partition slots, the job
//! table and the job blobs. Created once (by the supervisor), attached by every stage.
//!
//! ```text
//! 0            header page (ArenaHeader)
//! 4096         slot 0: header page (SlotHeader) | data area (regions, see SlotLayout)
//! +stride      slot 1 ...
//! jobs_offset  JobRecord x job_capacity
//! blobs        job blob window x job_capacity (job_blob_capacity bytes each)
//! ```

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use memmap2::{MmapOptions, MmapRaw};

use crate::clock::unix_ns;
use crate::error::ShmError;
use crate::header::{
    layout_hash, ArenaGeometry, ArenaHeader, ARENA_MAGIC, FORMAT_VERSION, HEADER_BYTES,
};
use crate::job::JobRecord;
use crate::shape::{align_up, PartitionShape, Region, SlotLayout, REGION_ALIGN};
use crate::slot::{SlotClaim, SlotHeader};
use crate::slot_state::{SlotState, SlotWord, Stage};

/// Bytes of the page in front of each slot's data area that holds its [`SlotHeader`].
pub const SLOT_HEADER_BYTES: u64 = 4096;
const _: () = assert!(std::mem::size_of::<SlotHeader>() as u64 <= SLOT_HEADER_BYTES);

/// What to create. `dir` may be a hugetlbfs mount: the file length is then rounded up to
/// the huge page size.
#[derive(Debug, Clone)]
pub struct ArenaConfig {
    pub dir: PathBuf,
    pub name: String,
    pub shape: PartitionShape,
    pub slot_count: u32,
    pub job_capacity: u32,
    /// Bytes reserved per job for its encoded C1 (job blob + partition blobs).
    pub job_blob_capacity: u64,
}

impl ArenaConfig {
    pub fn new(name: &str, shape: PartitionShape, slot_count: u32) -> Self {
        Self {
            dir: PathBuf::from("/dev/shm"),
            name: name.to_owned(),
            shape,
            slot_count,
            job_capacity: 16,
            job_blob_capacity: 1 << 20,
        }
    }

    pub fn path(&self) -> PathBuf {
        arena_path(&self.dir, &self.name)
    }

    fn geometry(&self) -> ArenaGeometry {
        ArenaGeometry {
            shape: self.shape,
            slot_count: self.slot_count,
            job_capacity: self.job_capacity,
            job_blob_capacity: self.job_blob_capacity,
        }
    }
}

pub fn arena_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("cuzk-{name}.arena"))
}

/// Byte offsets derived from the geometry; identical in every process of one build.
#[derive(Debug, Clone)]
struct Offsets {
    slot_stride: u64,
    jobs_offset: u64,
    job_blobs_offset: u64,
    job_blob_stride: u64,
    total_len: u64,
}

/// `slot_data_len` is `SlotLayout::data_len` of `g.shape`.
fn offsets(g: &ArenaGeometry, slot_data_len: u64, page: u64) -> Result<Offsets, ShmError> {
    let overflow = || ShmError::LayoutOverflow { shape: g.shape };
    // Every sum is checked: `attach` computes these from a header read from a file.
    let slot_stride = SLOT_HEADER_BYTES
        .checked_add(slot_data_len)
        .ok_or_else(overflow)?;
    let jobs_offset = slot_stride
        .checked_mul(u64::from(g.slot_count))
        .and_then(|s| s.checked_add(HEADER_BYTES))
        .ok_or_else(overflow)?;
    let job_table = std::mem::size_of::<JobRecord>() as u64 * u64::from(g.job_capacity);
    let job_blobs_offset = jobs_offset
        .checked_add(job_table)
        .and_then(|t| align_up(t, REGION_ALIGN))
        .ok_or_else(overflow)?;
    let job_blob_stride = align_up(g.job_blob_capacity, REGION_ALIGN).ok_or_else(overflow)?;
    let total_len = job_blob_stride
        .checked_mul(u64::from(g.job_capacity))
        .and_then(|b| b.checked_add(job_blobs_offset))
        .and_then(|t| align_up(t, page))
        .ok_or_else(overflow)?;
    Ok(Offsets {
        slot_stride,
        jobs_offset,
        job_blobs_offset,
        job_blob_stride,
        total_len,
    })
}

/// Huge page size when `dir` is a hugetlbfs mount (file lengths must be multiples of it).
pub(crate) fn page_size_of(dir: &Path) -> u64 {
    use nix::sys::statfs::{statfs, HUGETLBFS_MAGIC};
    match statfs(dir) {
        Ok(s) if s.filesystem_type() == HUGETLBFS_MAGIC => (s.block_size() as u64).max(4096),
        _ => 4096,
    }
}

/// A mapped arena. Cheap to share by reference between threads of one process.
#[derive(Debug)]
pub struct Arena {
    path: PathBuf,
    map: MmapRaw,
    layout: SlotLayout,
    offsets: Offsets,
    slot_count: u32,
    job_capacity: u32,
    /// Where this process starts scanning for claimable slots, so competing consumers do not
    /// all fight over slot 0.
    scan_cursor: AtomicU32,
}

impl Arena {
    /// Creates the arena file (mode 0600, must not exist) and maps it. The file appears under
    /// its final name only once the header is complete, so an attacher never sees half of it.
    pub fn create(cfg: &ArenaConfig) -> Result<Arena, ShmError> {
        let path = cfg.path();
        let geometry = cfg.geometry();
        let layout = SlotLayout::new(&cfg.shape)?;
        let offsets = offsets(&geometry, layout.data_len(), page_size_of(&cfg.dir))?;
        let tmp = cfg.dir.join(format!(
            ".cuzk-{}.arena.{}.tmp",
            cfg.name,
            std::process::id()
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| ShmError::io(&tmp, "create arena file", e))?;
        let result = (|| {
            // Sparse on tmpfs: pages cost memory only once a stage writes them.
            file.set_len(offsets.total_len)
                .map_err(|e| ShmError::io(&tmp, "size arena file", e))?;
            let map = map_file(&file, &tmp, offsets.total_len)?;
            let header = ArenaHeader {
                magic: ARENA_MAGIC,
                format_version: FORMAT_VERSION,
                slot_count: cfg.slot_count,
                layout_hash: layout_hash(&geometry, &layout),
                total_len: offsets.total_len,
                shape: cfg.shape,
                slot_stride: offsets.slot_stride,
                slots_offset: HEADER_BYTES,
                jobs_offset: offsets.jobs_offset,
                job_capacity: cfg.job_capacity,
                creator_pid: std::process::id(),
                job_blob_capacity: cfg.job_blob_capacity,
                job_blobs_offset: offsets.job_blobs_offset,
                created_unix_ns: unix_ns(),
                bytes_copied: 0.into(),
                next_job_id: 1.into(),
            };
            // SAFETY: the mapping is at least HEADER_BYTES long, page aligned, and nobody
            // else can see the file yet (it still has its private temporary name).
            unsafe { map.as_mut_ptr().cast::<ArenaHeader>().write(header) };
            // Slot and job words start as zero bytes == Free / generation 0: nothing to write.
            std::fs::hard_link(&tmp, &path)
                .map_err(|e| ShmError::io(&path, "publish arena file (exists already?)", e))?;
            Ok(map)
        })();
        let _ = std::fs::remove_file(&tmp);
        Ok(Arena {
            path,
            map: result?,
            layout,
            offsets,
            slot_count: cfg.slot_count,
            job_capacity: cfg.job_capacity,
            scan_cursor: AtomicU32::new(std::process::id()),
        })
    }

    /// Maps an existing arena after checking that this build agrees with its layout.
    pub fn attach(path: &Path) -> Result<Arena, ShmError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| ShmError::io(path, "open arena file", e))?;
        let actual = file
            .metadata()
            .map_err(|e| ShmError::io(path, "stat arena file", e))?
            .len();
        let truncated = |expected| ShmError::Truncated {
            path: path.to_owned(),
            expected,
            actual,
        };
        if actual < HEADER_BYTES {
            return Err(truncated(HEADER_BYTES));
        }
        let map = map_file(&file, path, actual)?;
        // SAFETY: the mapping holds at least HEADER_BYTES (checked above); the creator wrote
        // the header before publishing the file and never changes its plain fields.
        let h = unsafe { &*map.as_ptr().cast::<ArenaHeader>() };
        if h.magic != ARENA_MAGIC {
            return Err(ShmError::BadMagic {
                path: path.to_owned(),
                found: h.magic,
            });
        }
        if h.format_version != FORMAT_VERSION {
            return Err(ShmError::VersionMismatch {
                path: path.to_owned(),
                found: h.format_version,
                expected: FORMAT_VERSION,
            });
        }
        let geometry = ArenaGeometry {
            shape: h.shape,
            slot_count: h.slot_count,
            job_capacity: h.job_capacity,
            job_blob_capacity: h.job_blob_capacity,
        };
        let layout = SlotLayout::new(&h.shape)?;
        let expected = layout_hash(&geometry, &layout);
        if h.layout_hash != expected {
            return Err(ShmError::LayoutMismatch {
                path: path.to_owned(),
                found: h.layout_hash,
                expected,
            });
        }
        let offsets = offsets(&geometry, layout.data_len(), 4096)?;
        // Huge-page rounding may make the file longer than the 4 KiB-rounded sum, never shorter.
        if actual < h.total_len || h.total_len < offsets.total_len {
            return Err(truncated(h.total_len.max(offsets.total_len)));
        }
        Ok(Arena {
            path: path.to_owned(),
            map,
            layout,
            offsets,
            slot_count: h.slot_count,
            job_capacity: h.job_capacity,
            scan_cursor: AtomicU32::new(std::process::id()),
        })
    }

    /// Unlinks the arena file. Mappings stay valid until every process drops its `Arena`.
    pub fn remove(&self) -> Result<(), ShmError> {
        std::fs::remove_file(&self.path).map_err(|e| ShmError::io(&self.path, "remove arena", e))
    }

    /// Start and length of this process's mapping of the whole arena, for registering it
    /// with a device (page-locking); valid while this `Arena` lives.
    pub fn mapping(&self) -> (*mut u8, usize) {
        (self.map.as_mut_ptr(), self.map.len())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn slot_count(&self) -> u32 {
        self.slot_count
    }

    pub fn layout(&self) -> &SlotLayout {
        &self.layout
    }

    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    pub fn header(&self) -> &ArenaHeader {
        // SAFETY: validated at create/attach; lives as long as the mapping (&self).
        unsafe { &*self.map.as_ptr().cast::<ArenaHeader>() }
    }

    /// Bytes copied out of slots so far, by any process (0 on a zero-copy data path).
    pub fn bytes_copied(&self) -> u64 {
        self.header().bytes_copied.load(Ordering::Relaxed)
    }

    pub fn slot_header(&self, slot: u32) -> &SlotHeader {
        assert!(slot < self.slot_count, "slot {slot} of {}", self.slot_count);
        let off = HEADER_BYTES + u64::from(slot) * self.offsets.slot_stride;
        // SAFETY: in bounds (slot < slot_count, total_len covers all slots), 4096-aligned,
        // and SlotHeader is all atomics, so shared access from many processes is sound.
        unsafe { &*self.map.as_ptr().add(off as usize).cast::<SlotHeader>() }
    }

    /// Current word of a slot (a snapshot: it may change right after).
    pub fn slot_word(&self, slot: u32) -> SlotWord {
        self.slot_header(slot).load()
    }

    /// Offset of a slot region from the start of the mapping (the same in every process).
    pub fn region_offset(&self, slot: u32, region: Region) -> u64 {
        HEADER_BYTES
            + u64::from(slot) * self.offsets.slot_stride
            + SLOT_HEADER_BYTES
            + self.layout.span(region).offset
    }

    pub(crate) fn region_raw(&self, slot: u32, region: Region) -> (*mut u8, usize) {
        assert!(slot < self.slot_count);
        let off = self.region_offset(slot, region);
        let len = self.layout.span(region).len;
        assert!(off + len <= self.map.len() as u64);
        // SAFETY: `off + len` is inside the mapping (asserted just above).
        (
            unsafe { self.map.as_mut_ptr().add(off as usize) },
            len as usize,
        )
    }

    pub(crate) fn job_record(&self, index: u32) -> &JobRecord {
        assert!(index < self.job_capacity);
        let off =
            self.offsets.jobs_offset + u64::from(index) * std::mem::size_of::<JobRecord>() as u64;
        // SAFETY: in bounds; JobRecord is all atomics and 64-byte aligned (jobs_offset is a
        // multiple of 4096, the record size a multiple of 64).
        unsafe { &*self.map.as_ptr().add(off as usize).cast::<JobRecord>() }
    }

    pub fn job_capacity(&self) -> u32 {
        self.job_capacity
    }

    /// Pointer and length of job `index`'s blob window.
    pub(crate) fn job_blob_raw(&self, index: u32) -> (*mut u8, usize) {
        assert!(index < self.job_capacity);
        let off = self.offsets.job_blobs_offset + u64::from(index) * self.offsets.job_blob_stride;
        let len = self.header().job_blob_capacity;
        assert!(off + len <= self.map.len() as u64);
        // SAFETY: in bounds (asserted).
        (
            unsafe { self.map.as_mut_ptr().add(off as usize) },
            len as usize,
        )
    }

    /// Claims `slot` from `from` (a completed state) with one CAS, if it is still at
    /// `generation` (any generation when `None`). Exactly one of many racing callers wins.
    pub fn try_claim(
        &self,
        slot: u32,
        from: SlotState,
        generation: Option<u32>,
    ) -> Result<SlotClaim<'_>, ShmError> {
        if slot >= self.slot_count {
            return Err(ShmError::NoSuchSlot {
                slot,
                count: self.slot_count,
            });
        }
        let busy = from
            .claimed()
            .ok_or(ShmError::NotClaimable { state: from })?;
        let header = self.slot_header(slot);
        let current = header.load();
        let race = |found: SlotWord| ShmError::SlotRace {
            slot,
            expected: from,
            generation: generation.unwrap_or(current.generation),
            found: found.state,
            found_generation: found.generation,
        };
        if current.state != from || generation.is_some_and(|g| g != current.generation) {
            return Err(race(current));
        }
        let owned = current.next(busy, std::process::id());
        header.transition(current, owned).map_err(race)?;
        Ok(SlotClaim::new(self, slot, owned))
    }

    /// Claims any slot ready for `stage`, scanning from a per-process cursor.
    pub fn claim_any(&self, stage: Stage) -> Option<SlotClaim<'_>> {
        let start = self.scan_cursor.fetch_add(1, Ordering::Relaxed);
        (0..self.slot_count)
            .map(|i| (start.wrapping_add(i)) % self.slot_count)
            .find_map(|slot| self.try_claim(slot, stage.ready_state(), None).ok())
    }

    /// How many slots are in each state right now (index = `SlotState as usize`).
    pub fn census(&self) -> [u32; 8] {
        let mut counts = [0; 8];
        for slot in 0..self.slot_count {
            counts[self.slot_word(slot).state as usize] += 1;
        }
        counts
    }
}

fn map_file(file: &File, path: &Path, len: u64) -> Result<MmapRaw, ShmError> {
    let len_usize = usize::try_from(len).map_err(|_| ShmError::TooLarge {
        path: path.to_owned(),
        bytes: len,
    })?;
    MmapOptions::new()
        .len(len_usize)
        .map_raw(file)
        .map_err(|e| ShmError::io(path, "map arena file", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porep_32gib_arena_offsets_fit_u64_without_mapping() {
        let g = ArenaGeometry {
            shape: PartitionShape::porep_32gib(),
            slot_count: 4,
            job_capacity: 16,
            job_blob_capacity: 128 << 20,
        };
        let slots = SlotLayout::new(&g.shape).unwrap();
        let o = offsets(&g, slots.data_len(), 2 << 20).unwrap();
        assert_eq!(o.slot_stride, SLOT_HEADER_BYTES + slots.data_len());
        assert_eq!(o.jobs_offset, HEADER_BYTES + 4 * o.slot_stride);
        assert!(o.jobs_offset > 4 * 15_900_000_000);
        assert_eq!(o.job_blobs_offset % REGION_ALIGN, 0);
        assert_eq!(o.total_len % (2 << 20), 0, "huge-page multiple");
        assert!(o.total_len >= o.job_blobs_offset + 16 * (128 << 20));
    }

    /// `attach` reads the geometry from the file: sizes past u64 are an error, never a
    /// wrapped offset inside the mapping.
    #[test]
    fn geometries_past_u64_are_errors_not_wrapped_offsets() {
        let g = ArenaGeometry {
            shape: PartitionShape::porep_32gib(),
            slot_count: 1,
            job_capacity: 16,
            job_blob_capacity: 128 << 20,
        };
        let table = std::mem::size_of::<JobRecord>() as u64 * 16;
        let cases = [
            // the slot stride itself
            (g.clone(), u64::MAX - 8),
            // the job table's end
            (
                g.clone(),
                u64::MAX - HEADER_BYTES - SLOT_HEADER_BYTES - table / 2,
            ),
            // slots times their stride
            (
                ArenaGeometry {
                    slot_count: u32::MAX,
                    ..g.clone()
                },
                16 << 30,
            ),
            // the blob windows
            (
                ArenaGeometry {
                    job_blob_capacity: u64::MAX / 15,
                    ..g.clone()
                },
                16 << 30,
            ),
        ];
        for (g, data_len) in cases {
            assert!(
                matches!(
                    offsets(&g, data_len, 4096),
                    Err(ShmError::LayoutOverflow { .. })
                ),
                "{g:?}, slot data {data_len}"
            );
        }
        assert!(offsets(&g, 16 << 30, 4096).is_ok());
    }
}
