//! The SRS segment: a parameter file's bytes, loaded once into a read-only shared file that
//! every process maps.
//!
//! Loading is serialized by `flock` on a lock file next to the segment: the first process
//! fills, a second one blocks on the lock and then finds the finished segment. The segment
//! appears under its final name only when complete (rename), so no reader ever maps half of
//! it, and a loader that dies mid-fill leaves only a temporary file and a released lock.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use memmap2::{Mmap, MmapMut, MmapOptions};
use nix::fcntl::{Flock, FlockArg};

use crate::error::ShmError;

const SRS_MAGIC: u64 = u64::from_le_bytes(*b"CUZKSRS1");
/// Header page; the data starts page aligned after it.
const SRS_HEADER_BYTES: usize = 4096;
const MAX_KEY_BYTES: usize = SRS_HEADER_BYTES - 24;

/// What identifies a parameter file's content: name, size and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrsKey(String);

impl SrsKey {
    pub fn new(key: impl Into<String>) -> Self {
        let mut k: String = key.into();
        k.truncate(MAX_KEY_BYTES);
        SrsKey(k)
    }

    /// `name:size:mtime_ns` of a parameter file.
    pub fn of_file(path: &Path) -> Result<Self, ShmError> {
        let m =
            std::fs::metadata(path).map_err(|e| ShmError::io(path, "stat parameter file", e))?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let mtime_ns = m.mtime() as i128 * 1_000_000_000 + i128::from(m.mtime_nsec());
        Ok(Self::new(format!("{name}:{}:{mtime_ns}", m.len())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// File-name-safe digest of the key (FNV-1a).
    fn digest(&self) -> u64 {
        self.0.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }
}

/// A mapped, read-only SRS segment.
#[derive(Debug)]
pub struct SrsSegment {
    path: PathBuf,
    map: Mmap,
    len: usize,
}

impl SrsSegment {
    pub fn segment_path(dir: &Path, key: &SrsKey) -> PathBuf {
        dir.join(format!("cuzk-srs-{:016x}.seg", key.digest()))
    }

    /// The bytes a segment of `len` data bytes takes in `dir` (its header page, rounded
    /// to the file system's page: 2 MiB on hugetlbfs).
    pub fn bytes_in(dir: &Path, len: usize) -> u64 {
        let total = (SRS_HEADER_BYTES + len) as u64;
        let page = crate::arena::page_size_of(dir);
        crate::shape::align_up(total, page).unwrap_or(total)
    }

    fn lock_path(dir: &Path, key: &SrsKey) -> PathBuf {
        dir.join(format!("cuzk-srs-{:016x}.lock", key.digest()))
    }

    /// Maps the segment for `key`, loading it first if nobody has: `fill` gets the
    /// `len`-byte data area to write. Returns the segment and whether this call filled it.
    pub fn open_or_load(
        dir: &Path,
        key: &SrsKey,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<(), String>,
    ) -> Result<(SrsSegment, bool), ShmError> {
        let path = Self::segment_path(dir, key);
        let lock_path = Self::lock_path(dir, key);
        let lock_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| ShmError::io(&lock_path, "open SRS lock", e))?;
        // Blocks while another process loads; released when `_lock` drops (or it dies).
        let _lock = Flock::lock(lock_file, FlockArg::LockExclusive)
            .map_err(|(_, e)| ShmError::io(&lock_path, "lock SRS", e.into()))?;
        if path.exists() {
            return Ok((Self::map_existing(&path, key)?, false));
        }
        let seg_name = path.file_name().unwrap().to_string_lossy().into_owned();
        // We hold the lock, so any temporary segment is from a loader that died mid-fill:
        // remove it now, or a killed 47 GB load would sit in /dev/shm for good.
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&format!(".{seg_name}.")) && n.ends_with(".tmp") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let tmp = dir.join(format!(".{seg_name}.{}.tmp", std::process::id()));
        let result = Self::fill_new(&tmp, key, len, fill).and_then(|()| {
            std::fs::rename(&tmp, &path).map_err(|e| ShmError::io(&path, "publish SRS segment", e))
        });
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result?;
        Ok((Self::map_existing(&path, key)?, true))
    }

    fn fill_new(
        tmp: &Path,
        key: &SrsKey,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<(), String>,
    ) -> Result<(), ShmError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(tmp)
            .map_err(|e| ShmError::io(tmp, "create SRS segment", e))?;
        let file_len = Self::bytes_in(tmp.parent().unwrap_or(Path::new(".")), len);
        file.set_len(file_len)
            .map_err(|e| ShmError::io(tmp, "size SRS segment", e))?;
        // SAFETY: a fresh file under a private name: nobody else maps or truncates it.
        let mut map = unsafe { MmapMut::map_mut(&file) }
            .map_err(|e| ShmError::io(tmp, "map SRS segment", e))?;
        fill(&mut map[SRS_HEADER_BYTES..SRS_HEADER_BYTES + len]).map_err(|message| {
            ShmError::SrsFill {
                path: tmp.to_owned(),
                message,
            }
        })?;
        let k = key.as_str().as_bytes();
        map[8..16].copy_from_slice(&(len as u64).to_le_bytes());
        map[16..24].copy_from_slice(&(k.len() as u64).to_le_bytes());
        map[24..24 + k.len()].copy_from_slice(k);
        // Magic last: a header with magic is a complete header.
        map[..8].copy_from_slice(&SRS_MAGIC.to_le_bytes());
        map.flush()
            .map_err(|e| ShmError::io(tmp, "flush SRS segment", e))
    }

    fn map_existing(path: &Path, key: &SrsKey) -> Result<SrsSegment, ShmError> {
        let file = File::open(path).map_err(|e| ShmError::io(path, "open SRS segment", e))?;
        // SAFETY: segments are never written after they are renamed into place.
        let map = unsafe { MmapOptions::new().map(&file) }
            .map_err(|e| ShmError::io(path, "map SRS segment", e))?;
        let word = |i: usize| {
            map.get(i * 8..i * 8 + 8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))
        };
        let (len, key_len) = (word(1) as usize, word(2) as usize);
        let truncated = || ShmError::Truncated {
            path: path.to_owned(),
            expected: (SRS_HEADER_BYTES + len) as u64,
            actual: map.len() as u64,
        };
        if word(0) != SRS_MAGIC || key_len > MAX_KEY_BYTES {
            return Err(ShmError::BadMagic {
                path: path.to_owned(),
                found: word(0),
            });
        }
        if map.len() < SRS_HEADER_BYTES + len {
            return Err(truncated());
        }
        let found = String::from_utf8_lossy(&map[24..24 + key_len]).into_owned();
        if found != key.as_str() {
            return Err(ShmError::SrsKeyMismatch {
                path: path.to_owned(),
                found,
                expected: key.as_str().to_owned(),
            });
        }
        Ok(SrsSegment {
            path: path.to_owned(),
            map,
            len,
        })
    }

    /// The parameter bytes, shared read-only with every other process.
    pub fn bytes(&self) -> &[u8] {
        &self.map[SRS_HEADER_BYTES..SRS_HEADER_BYTES + self.len]
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the segment and its lock file (mappings stay valid until dropped).
    pub fn remove(dir: &Path, key: &SrsKey) -> Result<(), ShmError> {
        for p in [Self::segment_path(dir, key), Self::lock_path(dir, key)] {
            match std::fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(ShmError::io(&p, "remove SRS file", e))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
