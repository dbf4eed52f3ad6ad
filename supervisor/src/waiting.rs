//! C1 files this machine cannot admit now (a parameter file, verifying key or aggregation
//! SRS missing or unreadable: admission's `Refusal::Machine`). They wait in incoming/ and
//! are tried again every [`RETRY_AFTER`], rather than going to failed/: a parameter cache
//! away for a moment (re-fetched, a mount late) would otherwise send the whole queue
//! there, to be resubmitted by hand. While any wait, the status says so (`TROUBLE:`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a waiting file rests before it is checked again (each check parses it).
pub const RETRY_AFTER: Duration = Duration::from_secs(30);

#[derive(Default)]
pub struct Waiting {
    /// Each waiting file's path in incoming/, when it may be tried again, and why it waits.
    files: BTreeMap<PathBuf, (Instant, String)>,
}

impl Waiting {
    /// `file` went back to incoming/ for `reason`; logged when it starts waiting or its
    /// reason changes.
    pub fn rest(&mut self, file: PathBuf, reason: String) {
        self.rest_at(file, reason, Instant::now());
    }

    fn rest_at(&mut self, file: PathBuf, reason: String, now: Instant) {
        if self.files.get(&file).is_none_or(|(_, was)| *was != reason) {
            eprintln!(
                "cuzk: {} waits in incoming/ (tried again every {} s): {reason}",
                name(&file),
                RETRY_AFTER.as_secs()
            );
        }
        self.files.insert(file, (now + RETRY_AFTER, reason));
    }

    /// Whether `file` waits and is not due to be tried again yet.
    pub fn is_resting(&self, file: &Path) -> bool {
        self.is_resting_at(file, Instant::now())
    }

    fn is_resting_at(&self, file: &Path, now: Instant) -> bool {
        self.files.get(file).is_some_and(|(at, _)| now < *at)
    }

    /// `file` was admitted, refused for its own fault, or is gone.
    pub fn forget(&mut self, file: &Path) {
        self.files.remove(file);
    }

    /// Forgets the files not in `incoming` (the latest complete scan): an operator took
    /// them away.
    pub fn forget_all_but(&mut self, incoming: &[PathBuf]) {
        self.files.retain(|f, _| incoming.contains(f));
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// The trouble to report while files wait: how many, and the first one's reason.
    pub fn trouble(&self) -> Option<anyhow::Error> {
        let (first, (_, reason)) = self.files.iter().next()?;
        Some(anyhow::anyhow!(
            "{} file(s) wait in incoming/ for what this machine lacks; {}: {reason}",
            self.files.len(),
            name(first)
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
    fn a_waiting_file_rests_then_is_tried_again_and_is_reported_meanwhile() {
        let mut w = Waiting::default();
        assert!(w.trouble().is_none());
        let a = PathBuf::from("/d/incoming/a.json");
        let now = Instant::now();
        w.rest_at(a.clone(), "x.vk: not found".into(), now);
        assert!(w.is_resting_at(&a, now + RETRY_AFTER / 2));
        assert!(!w.is_resting_at(&a, now + RETRY_AFTER));
        assert!(!w.is_resting_at(Path::new("/d/incoming/b.json"), now));
        let said = w.trouble().unwrap().to_string();
        assert!(said.contains("1 file(s) wait") && said.contains("a.json: x.vk: not found"));

        w.forget_all_but(&[PathBuf::from("/d/incoming/b.json")]);
        assert_eq!(w.len(), 0, "taken away by an operator");
        w.rest_at(a.clone(), "x.vk: not found".into(), now);
        w.forget(&a);
        assert!(w.trouble().is_none());
    }
}
