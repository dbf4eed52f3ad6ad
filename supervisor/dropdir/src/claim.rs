//! Taking jobs: the claim by rename, and giving back what a crash left in `working/`.

use std::io;
use std::path::{Path, PathBuf};

use crate::durable::{fsync_dir, is_regular_file, is_temp_name, rename_noreplace};
use crate::{c1_stem, c1_stem_of, DropDir, DropDirError};

/// What [`DropDir::requeue_working`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RequeueReport {
    /// Inputs moved back to `incoming/` (their new paths).
    pub requeued: Vec<PathBuf>,
    /// Inputs removed from `working/` because their proof is already in `done/` (a crash
    /// between writing the proof and retiring the input).
    pub dropped: Vec<PathBuf>,
    /// Inputs moved to `failed/` because a newer file of the same name is in `incoming/`.
    pub failed: Vec<PathBuf>,
    /// Temp files a crash left half-written in `done/` or `failed/`, removed.
    pub removed_temps: Vec<PathBuf>,
}

impl DropDir {
    /// Claims `incoming/x.json` by renaming it to `working/x.json`: atomic, so of two
    /// supervisors exactly one gets it; `Ok(None)` for the one that found it gone.
    ///
    /// A job whose name is already in `working/` or proved in `done/` is not taken: the input
    /// goes to `failed/` as `<name>.dup-<k>.json` with its reason (`duplicate_stem`), and the
    /// error is [`DropDirError::Duplicate`].
    ///
    /// The claim is not fsynced: after a crash the file is in `incoming/` or `working/`,
    /// and `requeue_working` treats both the same.
    pub fn claim(&self, incoming: &Path) -> Result<Option<PathBuf>, DropDirError> {
        let stem = c1_stem_of(incoming)?;
        let name = incoming.file_name().unwrap_or(stem);
        let target = self.working.join(name);
        match rename_noreplace(incoming, &target) {
            // Whether it was proved already is asked once the file is ours, not before:
            // an epilogue finishing an earlier job of this name writes its proof and then
            // removes its input from working/, so a copy dropped again could pass a check
            // before the rename just before the proof appears, and the rename just after
            // the input went. Proved again, it would be taken for done with the earlier
            // job's proof. After the rename, its proof is there if that input has gone.
            Ok(()) if self.is_proved(&target) => {
                let (proof, _) = self.done_paths(&target);
                let rejected = self.reject_duplicate(&target, &proof, "proved");
                if let Err(e) = &rejected {
                    if !matches!(e, DropDirError::Duplicate { .. }) {
                        // failed/ cannot take it now: back to incoming/ to be tried again,
                        // not left in working/, where the restart's requeue would take
                        // it, beside its name's proof, for a job already finished.
                        if let Err(back) = rename_noreplace(&target, incoming) {
                            // Left in working/ beside its name's proof, which the next
                            // start's requeue takes for a finished job's input and removes.
                            tracing::error!(
                                path = %target.display(),
                                "drop directory: a copy of a proved job's input could not go to failed/ ({e}) nor back to incoming/ ({back}); move it away by hand"
                            );
                        }
                    }
                }
                rejected
            }
            Ok(()) => Ok(Some(target)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                self.reject_duplicate(incoming, &target, "in progress")
            }
            Err(err) => Err(DropDirError::io("claim (rename to working/)", incoming)(
                err,
            )),
        }
    }

    fn reject_duplicate(
        &self,
        incoming: &Path,
        existing: &Path,
        state: &str,
    ) -> Result<Option<PathBuf>, DropDirError> {
        let stem = c1_stem_of(incoming)?;
        let reason = format!(
            "a job named {} is already {state}: {}; this copy of its input was not proved",
            stem.to_string_lossy(),
            existing.display()
        );
        match self.fail_under(incoming, &self.duplicate_stem(stem), &reason)? {
            Some(failed) => Err(DropDirError::Duplicate {
                input: incoming.to_path_buf(),
                existing: existing.to_path_buf(),
                failed,
            }),
            None => Ok(None),
        }
    }

    /// Gives a claimed input back to `incoming/` (it cannot be admitted now for the
    /// machine's reasons, such as its parameters missing, and is tried again later).
    /// Returns its path there. A newer file of the same name in `incoming/` meanwhile
    /// wins: this one goes to `failed/` saying so, and the result is `None`.
    pub fn unclaim(&self, working: &Path) -> Result<Option<PathBuf>, DropDirError> {
        let newer = "given back to incoming/ to wait, but a newer file of the same name is there";
        Ok(self.back_to_incoming(working, newer)?.ok())
    }

    /// Moves `working` back to `incoming/` under its name: `Ok(Ok(path there))`, or, when
    /// a newer file of that name is there (it wins), `working` goes to `failed/` with
    /// `newer` as its reason: `Ok(Err(path in failed/))`. Shared by `unclaim` and the
    /// start-up requeue.
    fn back_to_incoming(
        &self,
        working: &Path,
        newer: &str,
    ) -> Result<Result<PathBuf, PathBuf>, DropDirError> {
        let back = self.incoming.join(working.file_name().unwrap_or_default());
        match rename_noreplace(working, &back) {
            Ok(()) => Ok(Ok(back)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                Ok(Err(self.fail(working, newer)?))
            }
            Err(err) => Err(DropDirError::io("move back to incoming/", working)(err)),
        }
    }

    /// At start, before any claim: every input in `working/` goes back to `incoming/`,
    /// except one whose proof is already in `done/`, which is removed (its job finished; a
    /// crash came between writing the proof and retiring the input). Half-written temp files
    /// in `done/` and `failed/` are removed. Entries of `working/` that are not C1 files are
    /// left alone with a warning.
    ///
    /// Only correct while no other supervisor is working on this data directory.
    pub fn requeue_working(&self) -> Result<RequeueReport, DropDirError> {
        let mut report = RequeueReport::default();
        for path in list(&self.working)? {
            let name = path.file_name().unwrap_or_default();
            if c1_stem(name).is_none() || !is_regular_file(&path) {
                tracing::warn!(path = %path.display(), "drop directory: working/ holds something that is not a C1 file; left alone");
                continue;
            }
            if self.is_proved(&path) {
                std::fs::remove_file(&path).map_err(DropDirError::io("remove", &path))?;
                report.dropped.push(path);
                continue;
            }
            let newer =
                "requeued after a restart, but a newer file of the same name is in incoming/";
            match self.back_to_incoming(&path, newer)? {
                Ok(back) => report.requeued.push(back),
                Err(failed) => report.failed.push(failed),
            }
        }
        for dir in [&self.done, &self.failed] {
            for path in list(dir)? {
                if !path.file_name().is_some_and(is_temp_name) {
                    continue;
                }
                // Only files a crash left; anything else of such a name is not ours, and a
                // temp that cannot be removed must not stop the start (systemd would
                // restart into the same error for ever): a warning, and on.
                match is_regular_file(&path).then(|| std::fs::remove_file(&path)) {
                    Some(Ok(())) => report.removed_temps.push(path),
                    Some(Err(err)) => {
                        tracing::warn!(path = %path.display(), "drop directory: a temp file a crash left could not be removed: {err}")
                    }
                    None => {
                        tracing::warn!(path = %path.display(), "drop directory: not a file, though named as our temp files are; left alone")
                    }
                }
            }
        }
        fsync_dir(&self.working)?;
        fsync_dir(&self.incoming)?;
        Ok(report)
    }
}

/// The entries of `dir`, sorted by name (for reports that read the same run to run).
fn list(dir: &Path) -> Result<Vec<PathBuf>, DropDirError> {
    let mut paths = std::fs::read_dir(dir)
        .and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(DropDirError::io("read directory", dir))?;
    paths.sort();
    Ok(paths)
}
