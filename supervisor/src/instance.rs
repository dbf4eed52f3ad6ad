//! One `cuzk run` instance: its lock on the data directory, and the names of what it
//! creates in shared memory (arena, iceoryx2 resources, SRS segments), derived from the
//! data directory so `cuzk status` finds them and a restart replaces them.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use cuzk_kernels::srs::Srs;
use cuzk_shm_layout::PartitionShape;
use nix::fcntl::{Flock, FlockArg};

/// Names of one instance's shared resources.
#[derive(Debug, Clone)]
pub struct InstanceNames {
    /// Arena name: the arena file is `<arena_dir>/cuzk-<arena>.arena`.
    pub arena: String,
    /// Prefix of the instance's iceoryx2 resources.
    pub iox_prefix: String,
    pub status_file: PathBuf,
}

impl InstanceNames {
    pub fn for_data_dir(data_dir: &Path) -> Result<Self> {
        let canonical = data_dir
            .canonicalize()
            .with_context(|| format!("{}: data directory", data_dir.display()))?;
        // FNV-1a: stable across builds and runs, which `cuzk status` relies on.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in canonical.as_os_str().as_encoded_bytes() {
            h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
        let tag = format!("{:012x}", h & 0xffff_ffff_ffff);
        Ok(InstanceNames {
            arena: format!("run-{tag}"),
            iox_prefix: format!("cuzk{tag}_"),
            status_file: canonical.join("status.json"),
        })
    }

    pub fn arena_path(&self, arena_dir: &Path) -> PathBuf {
        cuzk_shm_layout::arena::arena_path(arena_dir, &self.arena)
    }
}

/// Exclusive hold on a data directory: two supervisors on one directory would share
/// arena names. Released when dropped or when the process dies.
pub struct InstanceLock {
    _lock: Flock<File>,
}

impl InstanceLock {
    pub fn take(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(".cuzk-run.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("{}: opening the instance lock", path.display()))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(InstanceLock { _lock: lock }),
            Err(_) => bail!(
                "{}: another `cuzk run` is serving this data directory",
                data_dir.display()
            ),
        }
    }
}

/// The slot shape for a parameter file: its domain (h has n − 1 points), its inputs (one
/// ic point each) and its aux variables (one l point each). Reads only the counts.
pub fn shape_of_params(params: &Path) -> Result<PartitionShape> {
    let layout = Srs::layout(params)?;
    let [h, l, ..] = layout.vectors.expect("a .params layout has its vectors");
    Ok(PartitionShape::new(
        h.count as u64 + 1,
        layout.ic.count as u64,
        l.count as u64,
    ))
}
