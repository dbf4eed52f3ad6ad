//! Progress of a long start-time step (H's bases put in Lagrange form: minutes at 32 GiB)
//! in the gpu process's log: it runs under the supervisor and systemd, so a line every half
//! minute with how far it is, its rate and what is left, rather than a bar.

use std::time::{Duration, Instant};

/// How often a step that is still running gets a line (the project's one interval).
pub use crate::progress::LOG_EVERY;

/// A piece of work in steps of known relative cost (`weights`, one a step, in any unit),
/// logged as `what`.
pub struct StepLog {
    what: String,
    weights: Vec<f64>,
    every: Duration,
    started: Instant,
    last_line: Instant,
}

impl StepLog {
    pub fn new(what: impl Into<String>, weights: Vec<f64>, every: Duration) -> StepLog {
        let now = Instant::now();
        StepLog {
            what: what.into(),
            weights,
            every,
            started: now,
            last_line: now,
        }
    }

    /// The steps start now: what the time before went to (preparation that is not a step
    /// and does not come again) is left out of the rate that reckons what is left.
    pub fn start_clock(&mut self) {
        self.started = Instant::now();
        self.last_line = self.started;
    }

    /// The first `done` steps are finished: prints a line when one is due.
    pub fn done(&mut self, done: usize) {
        if self.last_line.elapsed() >= self.every && done < self.weights.len() {
            eprintln!(
                "cuzk-kernels: {}",
                line(&self.what, done, &self.weights, self.started.elapsed())
            );
            self.last_line = Instant::now();
        }
    }
}

/// "<what>: 7 of 56 steps, 4.1 s a step, ~209 s left" (seconds, as the other progress
/// lines of the project print what is left): the mean step so far, and what is left at the
/// time a unit of cost has taken so far. The steps need not cost the same (the Lagrange
/// transform's first levels cost more than its others), so what is left is reckoned by
/// cost, not by the count of steps.
pub fn line(what: &str, done: usize, weights: &[f64], elapsed: Duration) -> String {
    let total = weights.len();
    let done = done.min(total);
    let secs = elapsed.as_secs_f64();
    let per = secs / done.max(1) as f64;
    let (before, after) = weights.split_at(done);
    // Nothing done yet: the elapsed time stands for the first step's cost.
    let cost_done = if done == 0 {
        weights.first().copied().unwrap_or(0.0)
    } else {
        before.iter().fold(0.0, |a, w| a + w)
    };
    // A fold from +0, not sum(): an empty f64 sum is −0 and would print "~-0 s left".
    let cost_left = after.iter().fold(0.0, |a, w| a + w);
    let left = if cost_done > 0.0 {
        secs / cost_done * cost_left
    } else {
        0.0
    };
    format!("{what}: {done} of {total} steps, {per:.1} s a step, ~{left:.0} s left")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps of one cost: the rate so far times the steps left.
    #[test]
    fn a_line_tells_what_is_left_at_the_rate_so_far() {
        let l = line("LC", 7, &[1.0; 58], Duration::from_millis(28_700));
        assert_eq!(l, "LC: 7 of 58 steps, 4.1 s a step, ~209 s left");
        let l = line("LD'", 50, &[1.0; 58], Duration::from_secs(100));
        assert_eq!(l, "LD': 50 of 58 steps, 2.0 s a step, ~16 s left");
        // Nothing done yet: no division by zero, the elapsed time stands for one step.
        assert_eq!(
            line("x", 0, &[1.0; 2], Duration::from_secs(3)),
            "x: 0 of 2 steps, 3.0 s a step, ~6 s left"
        );
    }

    /// Steps of different costs: what is left is the time a unit of cost took so far times
    /// the cost left, not the mean step times the steps left.
    #[test]
    fn what_is_left_is_reckoned_by_cost() {
        // Two steps of cost 2 done in 8 s (2 s a unit), three of cost 1 left: 6 s.
        let w = [2.0, 2.0, 1.0, 1.0, 1.0];
        assert_eq!(
            line("t", 2, &w, Duration::from_secs(8)),
            "t: 2 of 5 steps, 4.0 s a step, ~6 s left"
        );
        // Nothing done after 4 s: that stands for the first step's 2 units, and all 7 are left.
        assert_eq!(
            line("t", 0, &w, Duration::from_secs(4)),
            "t: 0 of 5 steps, 4.0 s a step, ~14 s left"
        );
        // All done, or no steps at all: nothing left.
        assert_eq!(
            line("t", 5, &w, Duration::from_secs(9)),
            "t: 5 of 5 steps, 1.8 s a step, ~0 s left"
        );
        assert_eq!(
            line("t", 0, &[], Duration::from_secs(1)),
            "t: 0 of 0 steps, 1.0 s a step, ~0 s left"
        );
    }
}
