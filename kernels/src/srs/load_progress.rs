//! Progress of a parameter file's decode into shared memory. With the full point check it
//! takes minutes even for a test size (~8 min at 2 KiB on 2 cores) and far longer at 32
//! GiB, inside whichever stage process loads the file first, under the supervisor and
//! systemd: so a line every half minute (`crate::progress`) with how far it is, its rate
//! and what is left.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::progress::Heartbeat;

/// Points decoded so far, added to by the decoding threads a block at a time.
#[derive(Default)]
pub struct PointsDone(AtomicU64);

impl PointsDone {
    pub fn add(&self, n: usize) {
        self.0.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Runs `load` while a heartbeat hands `line` a progress line every `every` (none for a
/// load shorter than that): `what: 1.20 M of 4.19 M points (29 %), 8.1 k points/s, ~369 s left`.
pub fn report_while<R>(
    what: String,
    total: u64,
    every: Duration,
    mut line: impl FnMut(String) + Send + 'static,
    load: impl FnOnce(&PointsDone) -> R,
) -> R {
    let done = Arc::new(PointsDone::default());
    let _beat = {
        let done = Arc::clone(&done);
        Heartbeat::start(every, move |elapsed| {
            line(progress_line(&what, done.get(), total, elapsed))
        })
    };
    load(&done)
}

/// The rate so far stands for the rest (the points of one vector cost the same; G2's cost
/// more, so the estimate is a little short while G1's are decoded).
pub fn progress_line(what: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
    let left = if done == 0 {
        "time left not known yet".to_string()
    } else {
        format!("~{:.0} s left", total.saturating_sub(done) as f64 / rate)
    };
    format!(
        "{what}: {} of {} points ({:.0} %), {} points/s, {left}",
        count(done as f64),
        count(total as f64),
        100.0 * done as f64 / total.max(1) as f64,
        count(rate)
    )
}

/// 1234 → "1.2 k", 4194304 → "4.19 M".
fn count(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.2} G", n / 1e9),
        n if n >= 1e6 => format!("{:.2} M", n / 1e6),
        n if n >= 1e3 => format!("{:.1} k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_line_tells_how_far_the_rate_and_what_is_left() {
        let l = progress_line("p.params", 1_200_000, 4_194_304, Duration::from_secs(148));
        assert_eq!(
            l,
            "p.params: 1.20 M of 4.19 M points (29 %), 8.1 k points/s, ~369 s left"
        );
        assert_eq!(
            progress_line("p", 0, 10, Duration::from_secs(30)),
            "p: 0 of 10 points (0 %), 0 points/s, time left not known yet"
        );
    }

    /// Lines while the load runs, none after it returned, and the load's result passed on.
    #[test]
    fn lines_come_while_the_load_runs_and_stop_with_it() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let r = report_while(
            "x".into(),
            100,
            Duration::from_millis(20),
            move |l| sink.lock().unwrap().push(l),
            |done| {
                // Until three lines came (at most 10 s): a loaded CI machine may hold the
                // reporting thread back for tens of milliseconds.
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                while lines.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
                    done.add(1);
                    std::thread::sleep(Duration::from_millis(15));
                }
                7
            },
        );
        assert_eq!(r, 7);
        let seen = lines.lock().unwrap().len();
        assert!(seen >= 3, "{:?}", lines.lock().unwrap());
        assert!(lines.lock().unwrap()[0].starts_with("x: "));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(lines.lock().unwrap().len(), seen);
        // A short load: no line at all.
        let quiet = Arc::new(Mutex::new(0));
        let count = Arc::clone(&quiet);
        report_while(
            "y".into(),
            1,
            Duration::from_secs(30),
            move |_| *count.lock().unwrap() += 1,
            |d| d.add(1),
        );
        assert_eq!(*quiet.lock().unwrap(), 0);
    }
}
