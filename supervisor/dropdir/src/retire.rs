//! Ending a job: its outputs into `done/`, or its input into `failed/`.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::durable::{fsync_dir, temp_name, write_then_rename};
use crate::time::rfc3339_utc;
use crate::{c1_stem_of, with_extension, DropDir, DropDirError};

impl DropDir {
    /// Writes the job's outputs and retires its input, in crash order:
    /// 1. `done/<stem>.json` (result) via a temp name, fsync, rename, fsync `done/`;
    /// 2. `done/<stem>.proof` the same way, last, so that "proof exists" means complete;
    /// 3. removes the input from `working/` and fsyncs `working/`.
    ///
    /// A crash before 2 leaves the input in `working/` (proved again after requeue; a
    /// result file without a proof is overwritten); a crash after 2 leaves a proof, and
    /// `requeue_working` drops the input. Then a `failed/<stem>.reason` of this name is
    /// removed: it is an earlier attempt's (the input resubmitted after a failure, or a
    /// crash between a reason and its move), and beside a proof it would say the job
    /// failed. Returns (proof path, result path). Safe to call again after an error (the
    /// epilogue retries it while the disk is full): every step overwrites or tolerates
    /// what an earlier attempt did.
    pub fn finish(
        &self,
        working_file: &Path,
        proof: &[u8],
        result_json: &[u8],
    ) -> Result<(PathBuf, PathBuf), DropDirError> {
        let stem = c1_stem_of(working_file)?;
        // A directory where either output or its temp file goes fails the job before
        // anything is written, so that a failed job leaves no result in done/.
        for name in [with_extension(stem, "json"), with_extension(stem, "proof")] {
            for path in [self.done.join(&name), self.done.join(temp_name(&name))] {
                if path.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                    let cause = io::Error::from(io::ErrorKind::IsADirectory);
                    return Err(DropDirError::io("write", path)(cause));
                }
            }
        }
        let result_path =
            write_then_rename(&self.done, &with_extension(stem, "json"), result_json)?;
        fsync_dir(&self.done)?;
        let proof_path = write_then_rename(&self.done, &with_extension(stem, "proof"), proof)?;
        self.retire_proved_input(working_file)?;
        Ok((proof_path, result_path))
    }

    /// Retires the input of a job whose proof is in `done/` (written by this finish, or by
    /// one that died before its input was removed): fsyncs `done/` first, so the proof
    /// is durable before the input goes, removes the input and fsyncs its directory, and
    /// removes an earlier failure's `failed/<stem>.reason` (best effort). An input already
    /// gone is no error: a retry after a later step failed.
    pub fn retire_proved_input(&self, working_file: &Path) -> Result<(), DropDirError> {
        let stem = c1_stem_of(working_file)?;
        fsync_dir(&self.done)?;
        match std::fs::remove_file(working_file) {
            Ok(()) => fsync_dir(parent(working_file))?,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(DropDirError::io("remove", working_file)(err)),
        }
        // Best effort: the proof is written and the input retired, so the job is done;
        // failed/ being unwritable (or gone) must not make its finish fail and retry.
        let stale = self.failed.join(with_extension(stem, "reason"));
        let removed = match std::fs::remove_file(&stale) {
            Ok(()) => fsync_dir(&self.failed).map_err(|e| e.to_string()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err.to_string()),
        };
        if let Err(err) = removed {
            tracing::warn!(
                "{}: an earlier failure's reason could not be removed: {err}",
                stale.display()
            );
        }
        Ok(())
    }

    /// Moves the input to `failed/<name>`, after writing `failed/<stem>.reason` (UTC time and
    /// reason, one per line) durably, and fsyncs both directories. An earlier failed input
    /// of the same name is replaced. Works on a path in any of the directories.
    ///
    /// A `done/<stem>.json` without its `.proof` (a finish that died between the two, then
    /// failed on its redo) is removed too, best effort: beside the reason it would read as
    /// the job's result.
    pub fn fail(&self, input: &Path, reason: &str) -> Result<PathBuf, DropDirError> {
        let failed = self.fail_if_present(input, reason)?.ok_or_else(|| {
            DropDirError::io("move to failed/", input)(io::ErrorKind::NotFound.into())
        })?;
        let (proof, result) = self.done_paths(input);
        if !proof.exists() && std::fs::remove_file(&result).is_ok() {
            let _ = fsync_dir(&self.done);
        }
        Ok(failed)
    }

    /// [`DropDir::fail`], with `Ok(None)` when the input vanished (another supervisor took it).
    pub(crate) fn fail_if_present(
        &self,
        input: &Path,
        reason: &str,
    ) -> Result<Option<PathBuf>, DropDirError> {
        let stem = c1_stem_of(input)?.to_os_string();
        self.fail_under(input, &stem, reason)
    }

    /// Moves the input to `failed/<stem>.json` with its reason in `failed/<stem>.reason`
    /// (`stem` may differ from the input's: a rejected duplicate's); `Ok(None)` when the
    /// input vanished.
    pub(crate) fn fail_under(
        &self,
        input: &Path,
        stem: &OsStr,
        reason: &str,
    ) -> Result<Option<PathBuf>, DropDirError> {
        let text = format!(
            "time: {}\nreason: {reason}\n",
            rfc3339_utc(SystemTime::now())
        );
        write_then_rename(
            &self.failed,
            &with_extension(stem, "reason"),
            text.as_bytes(),
        )?;
        let target = self.failed.join(with_extension(stem, "json"));
        if let Err(err) = std::fs::rename(input, &target) {
            // No reason without its input: left, it would stand for a failure that did not
            // happen, and a duplicate's next try would pick the next free number, leaving
            // one more such file a try.
            let _ = std::fs::remove_file(self.failed.join(with_extension(stem, "reason")));
            return match err.kind() {
                io::ErrorKind::NotFound => Ok(None),
                _ => Err(DropDirError::io("move to failed/", input)(err)),
            };
        }
        fsync_dir(&self.failed)?;
        fsync_dir(parent(input))?;
        Ok(Some(target))
    }
}

impl DropDir {
    /// The stem a rejected duplicate of `stem` goes to `failed/` under: `<stem>.dup-<k>`,
    /// the first k from 1 whose `.json` and `.reason` are both free there. Under the job's
    /// own name its reason would say that the job in progress, or proved, had failed.
    pub(crate) fn duplicate_stem(&self, stem: &OsStr) -> OsString {
        (1u32..)
            .map(|k| {
                let mut dup = stem.to_os_string();
                dup.push(format!(".dup-{k}"));
                dup
            })
            .find(|dup| {
                !self.failed.join(with_extension(dup, "json")).exists()
                    && !self.failed.join(with_extension(dup, "reason")).exists()
            })
            .expect("a free number below 2^32")
    }
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}
