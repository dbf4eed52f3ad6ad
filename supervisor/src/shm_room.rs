//! Room for the shared memory in the arena directory. The arena's slots and the decoded
//! parameters are sparse files there (tmpfs, normally /dev/shm, whose default size is half
//! of RAM): they take memory only as they are written, so a directory too small is found
//! at the first write past its room, as a SIGBUS in whichever stage writes. Each such
//! crash counts against a partition and the fourth fails its job: the machine's trouble
//! would be recorded as failed jobs, one after another. So the supervisor checks at start
//! that what it will write fits, and otherwise refuses to start, saying what to change.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// Something the run will write into the arena directory.
pub struct Need {
    pub what: String,
    pub bytes: u64,
}

/// Fails, naming every need and what takes the room now, when `needs` do not fit in `dir`'s
/// free space. hugetlbfs is not checked: its pages are reserved from the pool when a file
/// is mapped (the arena, already mapped here, is counted there as used though not yet
/// written), so running short is an error at that mapping, naming the file, not a
/// SIGBUS later. Nor is a file system that reports no size at all (tmpfs mounted with
/// `size=0`, which is unlimited, and ramfs): there is no limit to check against.
pub fn check_room(dir: &Path, needs: &[Need]) -> Result<()> {
    let kind = nix::sys::statfs::statfs(dir)
        .with_context(|| format!("{}: reading its file system", dir.display()))?;
    if kind.filesystem_type() == nix::sys::statfs::HUGETLBFS_MAGIC {
        return Ok(());
    }
    let fs = nix::sys::statvfs::statvfs(dir)
        .with_context(|| format!("{}: reading its free space", dir.display()))?;
    if fs.blocks() == 0 {
        return Ok(());
    }
    let free = fs.blocks_available() as u64 * fs.fragment_size() as u64;
    let needed: u64 = needs.iter().map(|n| n.bytes).sum();
    if needed <= free {
        return Ok(());
    }
    let size = |b: u64| match b as f64 {
        x if x >= 1e9 => format!("{:.1} GB", x / 1e9),
        x => format!("{:.0} MB", x / 1e6),
    };
    let wanted: Vec<String> = needs
        .iter()
        .filter(|n| n.bytes > 0)
        .map(|n| format!("{} for {}", size(n.bytes), n.what))
        .collect();
    bail!(
        "{}: {} free of {}, but this run needs {} there ({}); the stages \
         would crash (SIGBUS) when it runs out and fail their jobs. Enlarge it (for /dev/shm: \
         `mount -o remount,size=<N>G /dev/shm`), lower `slots`, or remove what is not in use \
         while no `cuzk run` is running{}",
        dir.display(),
        size(free),
        size(fs.blocks() as u64 * fs.fragment_size() as u64),
        size(needed),
        wanted.join(", "),
        segments_listed(dir)
    );
}

/// Decoded parameter segments in `dir` (possibly of parameter files since replaced), for
/// the refusal's message.
fn segments_listed(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("cuzk-srs-") && name.ends_with(".seg")
        })
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some(format!(
                "{} ({:.2} GB)",
                e.file_name().to_string_lossy(),
                (m.blocks() * 512) as f64 / 1e9
            ))
        })
        .collect();
    if found.is_empty() {
        return String::new();
    }
    found.sort();
    format!(
        " (decoded parameters there now, remade on first use if removed: {})",
        found.join(", ")
    )
}

/// The bytes of `path` not yet written, which a sparse file will still take.
pub fn unwritten_bytes(path: &Path) -> Result<u64> {
    let m = std::fs::metadata(path).with_context(|| format!("{}: stat", path.display()))?;
    Ok(m.len().saturating_sub(m.blocks() * 512))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_fits_starts_and_one_that_does_not_is_refused_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let need = |bytes| Need {
            what: "the arena (2 slots)".into(),
            bytes,
        };
        check_room(dir.path(), &[need(4096)]).unwrap();

        std::fs::write(
            dir.path().join("cuzk-srs-00000000000000ab.seg"),
            [1u8; 8192],
        )
        .unwrap();
        let err = check_room(dir.path(), &[need(u64::MAX / 4)])
            .unwrap_err()
            .to_string();
        for part in [
            "this run needs",
            "the arena (2 slots)",
            "lower `slots`",
            "cuzk-srs-00000000000000ab.seg",
        ] {
            assert!(err.contains(part), "{part:?} missing from: {err}");
        }
        assert!(err.starts_with(&dir.path().display().to_string()), "{err}");
    }

    #[test]
    fn a_sparse_file_counts_only_what_is_unwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(64 << 20).unwrap();
        let left = unwritten_bytes(&path).unwrap();
        assert!(left > 60 << 20 && left <= 64 << 20, "{left}");
    }
}
