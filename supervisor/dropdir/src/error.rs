//! What can go wrong in the drop directory: every error names the path and the operation.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DropDirError {
    /// A file system call failed. The OS error is part of the message and deliberately
    /// not a `source`: printed with its chain (`{:#}`) it would say the OS error twice.
    #[error("{op} {}: {cause}", path.display())]
    Io {
        /// What was being done, as a verb phrase ("rename to working/", "fsync").
        op: &'static str,
        path: PathBuf,
        cause: io::Error,
    },
    /// The path given to `claim`, `finish` or `fail` is not a `<name>.json` file name.
    #[error("{}: not a C1 file name (expected <name>.json)", path.display())]
    NotC1Name { path: PathBuf },
    /// A job of the same name is in progress or already proved. The new input was moved to
    /// `failed/` with a reason file, so that it is neither lost nor proved into an existing
    /// result.
    #[error("{}: a job of this name already exists ({}); moved to {}", input.display(), existing.display(), failed.display())]
    Duplicate {
        input: PathBuf,
        existing: PathBuf,
        failed: PathBuf,
    },
}

impl DropDirError {
    /// Whether a directory stands where one job's file goes (`done/<name>.json`, its temp
    /// name): that job's own trouble, which no retry mends, unlike a full or read-only disk.
    pub fn is_directory_in_the_way(&self) -> bool {
        matches!(self, DropDirError::Io { cause, .. } if cause.kind() == io::ErrorKind::IsADirectory)
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |cause| DropDirError::Io { op, path, cause }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The supervisor prints these with their chain (anyhow's `{:#}`): the OS error shows once.
    #[test]
    fn an_io_error_names_op_path_and_cause_once() {
        let e = DropDirError::io("rename to working/", "/drop/incoming/a.json")(
            io::Error::from_raw_os_error(28),
        );
        let text = e.to_string();
        assert!(
            text.starts_with("rename to working/ /drop/incoming/a.json: No space left on device"),
            "{text}"
        );
        // A chain printer (anyhow's `{:#}`) appends every source: there is none to repeat.
        assert!(std::error::Error::source(&e).is_none());
    }
}
