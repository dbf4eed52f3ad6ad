//! The supervisor's own recurring trouble: the drop directory failing (a full disk, a
//! directory replaced or unmounted) or a stage process that cannot be started. It is
//! logged when it begins, once a minute while it lasts and when it ends, and the
//! supervisor goes on serving the jobs in flight and trying again. Exiting instead would
//! end every stage and the work in the slots, and the restart would meet the same trouble.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often a trouble that lasts is logged again.
const REPEAT_EVERY: Duration = Duration::from_secs(60);
/// How often a failing step is tried again (see [`Trouble::due`]).
const RETRY_EVERY: Duration = Duration::from_secs(1);

struct Ongoing {
    since: Instant,
    logged: Instant,
    tried: Instant,
    /// Failed attempts so far; `None` for a state reported every round rather than a
    /// step retried (`Trouble::persists`), whose count would say nothing.
    attempts: Option<u64>,
    last: String,
}

/// The troubles going on now, by what failed ("writing failed/", "starting a stage").
#[derive(Default)]
pub struct Trouble {
    ongoing: BTreeMap<&'static str, Ongoing>,
}

impl Trouble {
    /// `what` failed again with `error`; logs it when it is new, changed, or a minute on.
    pub fn report(&mut self, what: &'static str, error: &anyhow::Error) {
        let now = Instant::now();
        let text = format!("{error:#}");
        match self.ongoing.get_mut(what) {
            None => {
                eprintln!(
                    "cuzk: {what} failed: {text}; the jobs in flight go on, and it is tried again"
                );
                self.ongoing.insert(
                    what,
                    Ongoing {
                        since: now,
                        logged: now,
                        tried: now,
                        attempts: Some(1),
                        last: text,
                    },
                );
            }
            Some(o) => {
                let attempts = o.attempts.map(|n| n + 1);
                o.attempts = attempts;
                o.tried = now;
                if o.last != text || now.duration_since(o.logged) >= REPEAT_EVERY {
                    let since = now.duration_since(o.since).as_secs_f64();
                    match attempts {
                        Some(n) => eprintln!(
                            "cuzk: {what} still failing ({n} attempts in {since:.0} s): {text}"
                        ),
                        None => eprintln!("cuzk: {what} still failing after {since:.0} s: {text}"),
                    }
                    o.logged = now;
                    o.last = text;
                }
            }
        }
    }

    /// `what` is still in trouble, as `error` says: a state looked at every round (files
    /// waiting, a stage crash-looping), not a step tried again, so no attempts are
    /// counted. Logged as `report` logs.
    pub fn persists(&mut self, what: &'static str, error: &anyhow::Error) {
        let new = !self.ongoing.contains_key(what);
        self.report(what, error);
        if let Some(o) = self.ongoing.get_mut(what).filter(|_| new) {
            o.attempts = None;
        }
    }

    /// Whether to try `what` now: always while it works, at most once a second while it
    /// fails (a full disk is not worth twenty failed writes a second).
    pub fn due(&self, what: &'static str) -> bool {
        self.due_at(what, Instant::now())
    }

    /// [`Trouble::due`] at `now` (tests pass their own clock).
    fn due_at(&self, what: &'static str, now: Instant) -> bool {
        self.ongoing
            .get(what)
            .is_none_or(|o| now.saturating_duration_since(o.tried) >= RETRY_EVERY)
    }

    /// `what` worked; logs the end of its trouble, if it had one.
    pub fn cleared(&mut self, what: &'static str) {
        if let Some(o) = self.ongoing.remove(what) {
            let since = o.since.elapsed().as_secs_f64();
            match o.attempts {
                Some(n) => {
                    eprintln!("cuzk: {what} works again after {since:.0} s ({n} failed attempts)")
                }
                None => eprintln!("cuzk: {what} works again after {since:.0} s"),
            }
        }
    }

    /// One line for systemd's status: what is failing now, if anything.
    pub fn summary(&self) -> Option<String> {
        (!self.ongoing.is_empty()).then(|| {
            let parts: Vec<String> = self
                .ongoing
                .iter()
                .map(|(what, o)| format!("{what} failing: {}", o.last))
                .collect();
            parts.join("; ")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trouble_is_ongoing_until_cleared_and_summarized_meanwhile() {
        let mut t = Trouble::default();
        assert!(t.summary().is_none());
        t.report(
            "writing failed/",
            &anyhow::anyhow!("No space left on device"),
        );
        t.report(
            "writing failed/",
            &anyhow::anyhow!("No space left on device"),
        );
        assert_eq!(
            t.summary().as_deref(),
            Some("writing failed/ failing: No space left on device")
        );
        assert_eq!(t.ongoing["writing failed/"].attempts, Some(2));
        let tried = t.ongoing["writing failed/"].tried;
        assert!(
            !t.due_at("writing failed/", tried + RETRY_EVERY / 2),
            "not again within the second"
        );
        assert!(t.due_at("writing failed/", tried + RETRY_EVERY));
        assert!(t.due("scanning incoming/"));
        t.cleared("writing failed/");
        assert!(t.summary().is_none());
    }

    #[test]
    fn a_state_that_persists_counts_no_attempts() {
        let mut t = Trouble::default();
        for _ in 0..3 {
            t.persists("admitting", &anyhow::anyhow!("1 file(s) wait"));
        }
        assert_eq!(t.ongoing["admitting"].attempts, None);
        assert_eq!(
            t.summary().as_deref(),
            Some("admitting failing: 1 file(s) wait")
        );
        t.cleared("admitting");
        assert!(t.summary().is_none());
    }
}
