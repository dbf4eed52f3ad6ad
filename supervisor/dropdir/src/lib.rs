//! The drop directory: how C1 files come in and proofs go out.
//!
//! ```text
//! <data_dir>/incoming/  writers put name.json here (write elsewhere or under a dot name, then rename in)
//! <data_dir>/working/   claimed by an atomic rename: one supervisor, one job
//! <data_dir>/done/      name.proof (proof bytes) and name.json (result with timings)
//! <data_dir>/failed/    name.json (the input) and name.reason (time and reason)
//! ```
//!
//! The file name without `.json` (the *stem*) is the job's name: a job of a name already in
//! `working/` or proved in `done/` is not proved again (it goes to `failed/`).
//!
//! Crash safety: outputs are written to a hidden temp name, fsynced and renamed; the proof is
//! renamed last, so "`done/name.proof` exists" means the job is complete, and only after that
//! is the input removed from `working/`. At start, [`DropDir::requeue_working`] puts every
//! input left in `working/` back into `incoming/`, except those whose proof exists. A crash
//! at any moment therefore loses no input and writes no proof twice.
//!
//! One supervisor per data directory: `requeue_working` at start takes back everything in
//! `working/`, including what another live supervisor would be proving.

mod claim;
mod durable;
mod error;
mod retire;
mod scan;
mod time;

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

pub use claim::RequeueReport;
pub use error::DropDirError;
pub use scan::MAX_C1_NAME_BYTES;

/// The four directories of a data directory. Build with [`DropDir::open`] (or
/// [`DropDir::at`], which creates nothing).
#[derive(Debug)]
pub struct DropDir {
    pub incoming: PathBuf,
    pub working: PathBuf,
    pub done: PathBuf,
    pub failed: PathBuf,
    /// Names in `incoming/` already warned about, so that each is reported once (pruned to
    /// the names still present at each scan, so the set does not grow with traffic).
    warned: HashSet<OsString>,
}

impl DropDir {
    /// The drop directory under `data_dir` as it is, creating nothing: for a process that
    /// only writes into one of its directories (the epilogue into `done/`), which must not
    /// depend on the others being there or writable.
    pub fn at(data_dir: &Path) -> DropDir {
        DropDir {
            incoming: data_dir.join("incoming"),
            working: data_dir.join("working"),
            done: data_dir.join("done"),
            failed: data_dir.join("failed"),
            warned: HashSet::new(),
        }
    }

    /// The drop directory under `data_dir`, creating the four directories (mode 0750, less
    /// the umask) when missing. Existing directories keep their mode.
    pub fn open(data_dir: &Path) -> Result<DropDir, DropDirError> {
        let dir = DropDir::at(data_dir);
        for path in [&dir.incoming, &dir.working, &dir.done, &dir.failed] {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o750)
                .create(path)
                .map_err(DropDirError::io("create directory", path))?;
        }
        Ok(dir)
    }

    /// Paths of a job's outputs: `done/<stem>.proof` and `done/<stem>.json`, where the stem
    /// is the input's file name without `.json` (the whole name when it has no `.json`).
    pub fn done_paths(&self, working_file: &Path) -> (PathBuf, PathBuf) {
        let name = working_file.file_name().unwrap_or_default();
        let stem = c1_stem(name).unwrap_or(name);
        (
            self.done.join(with_extension(stem, "proof")),
            self.done.join(with_extension(stem, "json")),
        )
    }

    /// Whether the job of `input` (in any directory) is proved: its `done/<stem>.proof` is
    /// a file. Anything else of that name (a directory) is not a proof, and taking it for
    /// one would retire the input with no proof written.
    pub fn is_proved(&self, input: &Path) -> bool {
        durable::is_regular_file(&self.done_paths(input).0)
    }
}

/// `name` without its `.json` suffix, when it is a C1 file name (`<non-empty>.json`).
pub(crate) fn c1_stem(name: &OsStr) -> Option<&OsStr> {
    // `Path` splits at the last dot and treats a leading dot as part of the stem, so
    // ".json" has no extension and is not a C1 name.
    let path = Path::new(name);
    (path.extension()? == "json").then(|| path.file_stem())?
}

/// The stem of `path`'s file name, or `NotC1Name`.
pub(crate) fn c1_stem_of(path: &Path) -> Result<&OsStr, DropDirError> {
    path.file_name()
        .and_then(c1_stem)
        .ok_or_else(|| DropDirError::NotC1Name {
            path: path.to_path_buf(),
        })
}

pub(crate) fn with_extension(stem: &OsStr, extension: &str) -> OsString {
    let mut name = stem.to_os_string();
    name.push(".");
    name.push(extension);
    name
}
