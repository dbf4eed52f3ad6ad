//! File system steps that survive a crash: write-then-rename with fsyncs, and a rename that
//! never replaces an existing file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{renameat2, RenameFlags};

use crate::DropDirError;

/// The temporary name a file is written under before it is renamed to `name`: hidden (so
/// scans skip it) and ending in `.tmp` (so `requeue_working` can sweep what a crash left).
pub(crate) fn temp_name(name: &OsStr) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(".tmp");
    temp
}

/// Whether `path` is a regular file itself (a link, directory or FIFO of that name is not:
/// the drop directory never follows links).
pub(crate) fn is_regular_file(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_file())
}

/// Whether `name` is one of ours from [`temp_name`].
pub(crate) fn is_temp_name(name: &OsStr) -> bool {
    let bytes = name.as_encoded_bytes();
    bytes.starts_with(b".") && bytes.ends_with(b".tmp")
}

/// Writes `bytes` to `dir/.name.tmp`, fsyncs it and renames it to `dir/name`. The caller
/// fsyncs `dir` to make the rename itself durable.
pub(crate) fn write_then_rename(
    dir: &Path,
    name: &OsStr,
    bytes: &[u8],
) -> Result<PathBuf, DropDirError> {
    let temp = dir.join(temp_name(name));
    let target = dir.join(name);
    let mut file = File::create(&temp).map_err(DropDirError::io("create", &temp))?;
    file.write_all(bytes)
        .map_err(DropDirError::io("write", &temp))?;
    file.sync_all().map_err(DropDirError::io("fsync", &temp))?;
    drop(file);
    std::fs::rename(&temp, &target).map_err(DropDirError::io("rename into place", &target))?;
    Ok(target)
}

/// Makes the entries of `dir` (creations, renames, removals) durable.
pub(crate) fn fsync_dir(dir: &Path) -> Result<(), DropDirError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(DropDirError::io("fsync directory", dir))
}

/// Renames `from` to `to`, failing with `AlreadyExists` instead of replacing `to`, and with
/// `NotFound` when `from` is gone (checked first by the kernel: a lost claim race reads as
/// `NotFound`, not as a duplicate).
///
/// Uses `renameat2(RENAME_NOREPLACE)`, which is atomic. File systems without it (EINVAL:
/// some network file systems) fall back to a check and a plain rename, which two
/// supervisors on the same directory could race; keep the data directory on a local disk.
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (from_dir, from_name) = split(from)?;
    let (to_dir, to_name) = split(to)?;
    let from_dir = File::open(from_dir)?;
    let to_dir = File::open(to_dir)?;
    match renameat2(
        &from_dir,
        from_name,
        &to_dir,
        to_name,
        RenameFlags::RENAME_NOREPLACE,
    ) {
        Ok(()) => Ok(()),
        Err(Errno::EINVAL) => {
            if to.symlink_metadata().is_ok() {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            std::fs::rename(from, to)
        }
        Err(errno) => Err(io::Error::from(errno)),
    }
}

fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            Ok((dir, name))
        }
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file path",
        )),
    }
}
