//! C1 files this machine cannot admit now (the parameter file, verifying key or
//! aggregation SRS of its configured sector size missing or unreadable: admission's
//! `Refusal::Machine`). They wait in incoming/ rather than go to failed/: a parameter cache
//! away for a moment (fetched again, a mount late) would otherwise send the whole queue
//! there, to be resubmitted by hand. While any wait, the status says so (`TROUBLE:`).
//!
//! Checking a file parses it (about a second at 32 GiB), so a waiting file is checked
//! again only when the file it lacks has changed (appeared, been replaced or had its
//! permissions mended) and then stayed as it is for [`SETTLE`] (a parameter file being
//! downloaded in place changes all the while), when the waiting file itself changes, or
//! every [`RECHECK_EVERY`] in case something else was wrong; at most one a round, in its
//! place in the queue, so the files that do not wait go on being proved meanwhile.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a waiting file waits for its lacking file to change before it is checked
/// again anyway.
pub const RECHECK_EVERY: Duration = Duration::from_secs(600);

/// How long a changed file it lacks must stay unchanged before a waiting file is checked.
pub const SETTLE: Duration = Duration::from_secs(10);

/// What says a file changed: absent, or its length, inode, modification and change times
/// (the change time moves with chmod and chown too, and with a rewrite that keeps mtime).
pub type Stamp = Option<(u64, u64, i64, i64, i64, i64)>;

/// `path`'s [`Stamp`] now (links followed: a parameter cache of links is common).
pub fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.len(),
        m.ino(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

struct Wait {
    reason: String,
    /// The file it lacks, and how it was just before the check that found it lacking.
    watch: PathBuf,
    seen: Stamp,
    /// How the waiting file itself was when its wait began.
    own: Stamp,
    /// The lacking file's stamp since it last changed, and when: checked once it settles.
    changed: Option<(Stamp, Instant)>,
    recheck_at: Instant,
}

#[derive(Default)]
pub struct Waiting {
    /// Each waiting file, by its path in incoming/.
    files: BTreeMap<PathBuf, Wait>,
}

impl Waiting {
    /// `file` went back to incoming/ for `reason`, lacking `watch`, which was as `seen`
    /// says just before the check; logged when it starts waiting or its reason changes.
    pub fn rest(&mut self, file: PathBuf, reason: String, watch: PathBuf, seen: Stamp) {
        self.rest_at(file, reason, watch, seen, Instant::now());
    }

    fn rest_at(
        &mut self,
        file: PathBuf,
        reason: String,
        watch: PathBuf,
        seen: Stamp,
        now: Instant,
    ) {
        if self.files.get(&file).is_none_or(|w| w.reason != reason) {
            eprintln!(
                "cuzk: {} waits in incoming/ until {} changes: {reason}",
                name(&file),
                watch.display()
            );
        }
        let wait = Wait {
            reason,
            watch,
            seen,
            own: stamp(&file),
            changed: None,
            recheck_at: now + RECHECK_EVERY,
        };
        self.files.insert(file, wait);
    }

    pub fn is_waiting(&self, file: &Path) -> bool {
        self.files.contains_key(file)
    }

    /// The first of `incoming` (queue order) that waits and is due to be checked again
    /// (see the module's note).
    pub fn next_due<'a>(&mut self, incoming: &'a [PathBuf]) -> Option<&'a PathBuf> {
        self.next_due_at(incoming, Instant::now())
    }

    fn next_due_at<'a>(&mut self, incoming: &'a [PathBuf], now: Instant) -> Option<&'a PathBuf> {
        if self.files.is_empty() {
            return None;
        }
        // Files waiting on the same file (a queue behind one missing key) stat it once.
        let mut stamps: HashMap<PathBuf, Stamp> = HashMap::new();
        incoming.iter().find(|f| {
            let Some(w) = self.files.get_mut(*f) else {
                return false;
            };
            let current = *stamps
                .entry(w.watch.clone())
                .or_insert_with(|| stamp(&w.watch));
            let settled = match (current == w.seen, w.changed) {
                (true, _) => {
                    w.changed = None;
                    false
                }
                (false, Some((was, since))) if was == current => now >= since + SETTLE,
                (false, _) => {
                    w.changed = Some((current, now));
                    false
                }
            };
            settled || now >= w.recheck_at || stamp(f) != w.own
        })
    }

    /// `file` was admitted, refused for its own fault, or is gone.
    pub fn forget(&mut self, file: &Path) {
        self.files.remove(file);
    }

    /// Forgets the files not in `incoming` (the latest complete scan): an operator took
    /// them away.
    pub fn forget_all_but(&mut self, incoming: &[PathBuf]) {
        if self.files.is_empty() {
            return;
        }
        let present: HashSet<&PathBuf> = incoming.iter().collect();
        self.files.retain(|f, _| present.contains(f));
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// The trouble to report while files wait: how many, and the first one's reason.
    pub fn trouble(&self) -> Option<anyhow::Error> {
        let (first, wait) = self.files.iter().next()?;
        Some(anyhow::anyhow!(
            "{} file(s) wait in incoming/ for what this machine lacks; {}: {}",
            self.files.len(),
            name(first),
            wait.reason
        ))
    }
}

fn name(file: &Path) -> String {
    file.file_name()
        .unwrap_or(file.as_os_str())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_file_is_due_once_what_it_lacks_has_changed_and_settled() {
        let dir = tempfile::tempdir().unwrap();
        let vk = dir.path().join("x.vk");
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(&a, b"{}").unwrap();
        let queue = [a.clone(), b.clone()];
        let mut w = Waiting::default();
        assert!(w.trouble().is_none());
        let now = Instant::now();
        w.rest_at(
            a.clone(),
            "x.vk: not found".into(),
            vk.clone(),
            stamp(&vk),
            now,
        );
        assert!(w.is_waiting(&a) && !w.is_waiting(&b));
        assert_eq!(w.next_due_at(&queue, now), None, "nothing changed");
        assert_eq!(w.next_due_at(&queue, now + RECHECK_EVERY), Some(&a));
        let said = w.trouble().unwrap().to_string();
        assert!(said.contains("1 file(s) wait") && said.contains("a.json: x.vk: not found"));

        // The key appears, and is still being written: due only once it stays put.
        std::fs::write(&vk, b"ke").unwrap();
        assert_eq!(w.next_due_at(&queue, now), None, "just changed");
        std::fs::write(&vk, b"key").unwrap();
        let later = now + SETTLE / 2;
        assert_eq!(w.next_due_at(&queue, later), None, "changed again");
        assert_eq!(
            w.next_due_at(&queue, later + SETTLE / 2),
            None,
            "not settled yet"
        );
        assert_eq!(w.next_due_at(&queue, later + SETTLE), Some(&a), "settled");

        // The waiting file itself replaced (an operator's new copy): due at once.
        w.rest_at(
            a.clone(),
            "x.vk: damaged".into(),
            vk.clone(),
            stamp(&vk),
            now,
        );
        assert_eq!(w.next_due_at(&queue, now), None);
        std::fs::remove_file(&a).unwrap();
        std::fs::write(&a, b"{ }").unwrap();
        assert_eq!(w.next_due_at(&queue, now), Some(&a));

        w.forget_all_but(std::slice::from_ref(&b));
        assert_eq!(w.len(), 0, "taken away by an operator");
        w.rest_at(a.clone(), "x".into(), vk, None, now);
        w.forget(&a);
        assert!(w.trouble().is_none());
    }
}
