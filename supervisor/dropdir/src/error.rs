//! What can go wrong in the drop directory: every error names the path and the operation.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DropDirError {
    /// A file system call failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done, as a verb phrase ("rename to working/", "fsync").
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
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
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| DropDirError::Io { op, path, source }
    }
}
