//! Progress of a long start-time step (H's bases put in Lagrange form: minutes at 32 GiB)
//! in the gpu process's log: it runs under the supervisor and systemd, so a line every half
//! minute with how far it is, its rate and what is left, rather than a bar.

use std::time::{Duration, Instant};

/// How often a step that is still running gets a line (the project's one interval).
pub use crate::progress::LOG_EVERY;

/// A step of `total` equal units, logged as `what`.
pub struct StepLog {
    what: String,
    total: u32,
    every: Duration,
    started: Instant,
    last_line: Instant,
}

impl StepLog {
    pub fn new(what: impl Into<String>, total: u32, every: Duration) -> StepLog {
        let now = Instant::now();
        StepLog {
            what: what.into(),
            total,
            every,
            started: now,
            last_line: now,
        }
    }

    /// `done` units of `total` finished: prints a line when one is due.
    pub fn done(&mut self, done: u32) {
        if self.last_line.elapsed() >= self.every && done < self.total {
            eprintln!(
                "cuzk-kernels: {}",
                line(&self.what, done, self.total, self.started.elapsed())
            );
            self.last_line = Instant::now();
        }
    }
}

/// "<what>: 7 of 58 steps, 4.1 s a step, ~209 s left" (seconds, as the other progress
/// lines of the project print what is left): the rate so far stands for the rest (the
/// steps are of equal cost).
pub fn line(what: &str, done: u32, total: u32, elapsed: Duration) -> String {
    let per = elapsed.as_secs_f64() / done.max(1) as f64;
    let left = per * total.saturating_sub(done) as f64;
    format!("{what}: {done} of {total} steps, {per:.1} s a step, ~{left:.0} s left")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate so far times the steps left.
    #[test]
    fn a_line_tells_what_is_left_at_the_rate_so_far() {
        let l = line("LC", 7, 58, Duration::from_millis(28_700));
        assert_eq!(l, "LC: 7 of 58 steps, 4.1 s a step, ~209 s left");
        let l = line("LD'", 50, 58, Duration::from_secs(100));
        assert_eq!(l, "LD': 50 of 58 steps, 2.0 s a step, ~16 s left");
        // Nothing done yet: no division by zero, the elapsed time stands for one step.
        assert_eq!(
            line("x", 0, 2, Duration::from_secs(3)),
            "x: 0 of 2 steps, 3.0 s a step, ~6 s left"
        );
    }
}
