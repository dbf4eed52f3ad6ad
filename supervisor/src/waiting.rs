//! C1 files this machine cannot admit now (the parameter file, verifying key or
//! aggregation SRS of its configured sector size missing or unreadable: admission's
//! `Refusal::Machine`). They wait in incoming/ rather than go to failed/: a parameter cache
//! away for a moment (fetched again, a mount late) would otherwise send the whole queue
//! there, to be resubmitted by hand. While any wait, the status says so (`TROUBLE:`).
//!
//! Checking a file parses it (about a second at 32 GiB), so a waiting file is checked
//! again only when the file it lacks changes (appears, or is replaced), or every
//! [`RECHECK_EVERY`] in case something else was wrong, and at most one a round, after the
//! files that do not wait: those behind it in the queue go on being proved.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a waiting file waits for its lacking file to change before it is checked
/// again anyway.
pub const RECHECK_EVERY: Duration = Duration::from_secs(600);

/// What says a file changed: absent, or its length, inode and modification time.
type Stamp = Option<(u64, u64, i64, i64)>;

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.ino(), m.mtime(), m.mtime_nsec()))
}

struct Wait {
    reason: String,
    /// The file it lacks, and how it was when the wait began.
    watch: PathBuf,
    seen: Stamp,
    recheck_at: Instant,
}

#[derive(Default)]
pub struct Waiting {
    /// Each waiting file, by its path in incoming/.
    files: BTreeMap<PathBuf, Wait>,
}

impl Waiting {
    /// `file` went back to incoming/ for `reason`, lacking `watch`; logged when it starts
    /// waiting or its reason changes.
    pub fn rest(&mut self, file: PathBuf, reason: String, watch: PathBuf) {
        self.rest_at(file, reason, watch, Instant::now());
    }

    fn rest_at(&mut self, file: PathBuf, reason: String, watch: PathBuf, now: Instant) {
        if self.files.get(&file).is_none_or(|w| w.reason != reason) {
            eprintln!(
                "cuzk: {} waits in incoming/ until {} changes: {reason}",
                name(&file),
                watch.display()
            );
        }
        let seen = stamp(&watch);
        let wait = Wait {
            reason,
            watch,
            seen,
            recheck_at: now + RECHECK_EVERY,
        };
        self.files.insert(file, wait);
    }

    pub fn is_waiting(&self, file: &Path) -> bool {
        self.files.contains_key(file)
    }

    /// The first of `incoming` (queue order) that waits and is due to be checked again:
    /// what it lacks changed, or it has waited [`RECHECK_EVERY`].
    pub fn next_due<'a>(&self, incoming: &'a [PathBuf]) -> Option<&'a PathBuf> {
        self.next_due_at(incoming, Instant::now())
    }

    fn next_due_at<'a>(&self, incoming: &'a [PathBuf], now: Instant) -> Option<&'a PathBuf> {
        // Files waiting on the same file (a queue behind one missing key) stat it once.
        let mut stamps: HashMap<&Path, Stamp> = HashMap::new();
        incoming.iter().find(|f| {
            self.files.get(*f).is_some_and(|w| {
                let now_stamp = *stamps.entry(&w.watch).or_insert_with(|| stamp(&w.watch));
                now >= w.recheck_at || now_stamp != w.seen
            })
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
    fn a_waiting_file_is_due_when_what_it_lacks_changes_or_after_a_long_while() {
        let dir = tempfile::tempdir().unwrap();
        let vk = dir.path().join("x.vk");
        let mut w = Waiting::default();
        assert!(w.trouble().is_none());
        let a = PathBuf::from("/d/incoming/a.json");
        let b = PathBuf::from("/d/incoming/b.json");
        let queue = [a.clone(), b.clone()];
        let now = Instant::now();
        w.rest_at(a.clone(), "x.vk: not found".into(), vk.clone(), now);
        assert!(w.is_waiting(&a) && !w.is_waiting(&b));
        assert_eq!(w.next_due_at(&queue, now), None, "nothing changed");
        assert_eq!(w.next_due_at(&queue, now + RECHECK_EVERY), Some(&a));
        std::fs::write(&vk, b"key").unwrap();
        assert_eq!(w.next_due_at(&queue, now), Some(&a), "the key appeared");
        let said = w.trouble().unwrap().to_string();
        assert!(said.contains("1 file(s) wait") && said.contains("a.json: x.vk: not found"));

        w.forget_all_but(std::slice::from_ref(&b));
        assert_eq!(w.len(), 0, "taken away by an operator");
        w.rest_at(a.clone(), "x.vk: damaged".into(), vk, now);
        assert_eq!(
            w.next_due_at(&queue, now),
            None,
            "as it was when the wait began"
        );
        w.forget(&a);
        assert!(w.trouble().is_none());
    }
}
