//! Remembering that a parameter file passed the full point check, so that check (minutes
//! for a test size, far longer for 32 GiB) runs once per file rather than once per proof.
//!
//! After a full check succeeds, `<file>.cuzk-checked` records the file's length, inode and
//! modification time. A later load whose file still matches all three skips the subgroup
//! checks (points are still checked to be on the curve). Replacing or rewriting the file
//! changes them, so the next load checks it again. A cache directory the prover may not
//! write to just means the check is repeated.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use cuzk_kernels::srs::Validation;
use serde::{Deserialize, Serialize};

/// What says a parameter file is still the one seen before: replacing or rewriting it
/// changes one of these. Written as the marker's contents.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone)]
pub struct FileIdentity {
    len: u64,
    inode: u64,
    mtime_ns: i128,
}

fn marker_path(params: &Path) -> PathBuf {
    let mut name = params.as_os_str().to_owned();
    name.push(".cuzk-checked");
    PathBuf::from(name)
}

/// `params`' identity now (`None` if it cannot be read).
pub fn identity(params: &Path) -> Option<FileIdentity> {
    let m = std::fs::metadata(params).ok()?;
    Some(FileIdentity {
        len: m.len(),
        inode: m.ino(),
        mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
    })
}

/// The validation a load of `params` needs: `Trusted` if the operator said so or the file
/// already passed a full check unchanged; `Full` otherwise.
pub fn validation_for(params: &Path, trust_flag: bool) -> Validation {
    if trust_flag {
        return Validation::Trusted;
    }
    let recorded = std::fs::read(marker_path(params))
        .ok()
        .and_then(|b| serde_json::from_slice::<FileIdentity>(&b).ok());
    match (recorded, identity(params)) {
        (Some(r), Some(now)) if r == now => Validation::Trusted,
        _ => Validation::Full,
    }
}

/// Records that `params` passed a full check (best effort: failure only means the next
/// load checks again).
pub fn record_checked(params: &Path) {
    if let Some(id) = identity(params) {
        let written = serde_json::to_vec(&id).map(|b| std::fs::write(marker_path(params), b));
        if !matches!(written, Ok(Ok(()))) {
            eprintln!(
                "note: could not record that {} passed its point checks; the next load checks again",
                params.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_is_honoured_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.params");
        std::fs::write(&p, b"abc").unwrap();
        assert_eq!(validation_for(&p, false), Validation::Full);
        assert_eq!(validation_for(&p, true), Validation::Trusted);
        record_checked(&p);
        assert_eq!(validation_for(&p, false), Validation::Trusted);
        // A replaced file (new inode, length) is checked again.
        let q = dir.path().join("y.params");
        std::fs::write(&q, b"abcd").unwrap();
        std::fs::rename(&q, &p).unwrap();
        assert_eq!(validation_for(&p, false), Validation::Full);
    }
}
