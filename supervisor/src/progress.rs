//! Progress display for long single calls (parameter generation, sealing) that report
//! nothing while they run: a spinner with the elapsed time and what to expect on a terminal;
//! in a log (CI, the journal) a line every half minute with the elapsed time and, where the
//! duration is known, what is left, since a log shows no animation.

use std::io::Write;
use std::time::Duration;

use cuzk_kernels::progress::{Heartbeat, LOG_EVERY};
use indicatif::{ProgressBar, ProgressStyle};

/// A running spinner (terminal) or log heartbeat (not a terminal); `finish_and_clear` ends it.
pub struct Spinner {
    bar: ProgressBar,
    heartbeat: Option<Heartbeat>,
}

/// Starts a spinner on stderr that ticks on its own thread until `finish_and_clear`.
/// `expected`: how long the call usually takes on the reference machine, if known.
pub fn spinner(message: String, expected: Option<Duration>) -> Spinner {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .expect("the spinner template is valid"),
    );
    let heartbeat = if bar.is_hidden() {
        // Not a terminal: one line now, then periodic lines instead of the animation.
        eprintln!("{message} ...");
        Some(heartbeat(
            message.clone(),
            expected,
            LOG_EVERY,
            Box::new(std::io::stderr()),
        ))
    } else {
        None
    };
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(250));
    Spinner { bar, heartbeat }
}

impl Spinner {
    pub fn finish_and_clear(mut self) {
        self.stop();
        self.bar.finish_and_clear();
    }

    fn stop(&mut self) {
        // Dropping the heartbeat ends its thread at once.
        self.heartbeat.take();
    }
}

impl Drop for Spinner {
    /// An early return (an error) ends the heartbeat too.
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes `heartbeat_line` to `out` every `interval` until dropped.
fn heartbeat(
    message: String,
    expected: Option<Duration>,
    interval: Duration,
    mut out: Box<dyn Write + Send>,
) -> Heartbeat {
    Heartbeat::start(interval, move |elapsed| {
        let _ = writeln!(out, "{}", heartbeat_line(&message, elapsed, expected));
    })
}

/// `generating ...: 2m 30s elapsed, about 6m 44s left of the 9m 14s expected`.
fn heartbeat_line(message: &str, elapsed: Duration, expected: Option<Duration>) -> String {
    let spent = minutes_seconds(elapsed);
    match expected {
        Some(e) if elapsed < e => format!(
            "{message}: {spent} elapsed, about {} left of the {} expected",
            minutes_seconds(e - elapsed),
            minutes_seconds(e)
        ),
        Some(e) => format!(
            "{message}: {spent} elapsed, past the {} expected (a slower or busier machine)",
            minutes_seconds(e)
        ),
        None => format!("{message}: {spent} elapsed"),
    }
}

/// Formats a duration as `9m 14s` for messages.
pub fn minutes_seconds(duration: Duration) -> String {
    let seconds = duration.as_secs();
    format!("{}m {:02}s", seconds / 60, seconds % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_say_elapsed_and_what_is_left() {
        let s = |x| Duration::from_secs(x);
        assert_eq!(
            heartbeat_line("generating", s(150), Some(s(554))),
            "generating: 2m 30s elapsed, about 6m 44s left of the 9m 14s expected"
        );
        assert_eq!(
            heartbeat_line("generating", s(600), Some(s(554))),
            "generating: 10m 00s elapsed, past the 9m 14s expected (a slower or busier machine)"
        );
        assert_eq!(
            heartbeat_line("sealing", s(61), None),
            "sealing: 1m 01s elapsed"
        );
    }

    #[test]
    fn heartbeat_writes_periodically_and_stops_when_told() {
        let out = Captured::default();
        let beat = heartbeat(
            "work".into(),
            None,
            Duration::from_millis(20),
            Box::new(out.clone()),
        );
        // Polled rather than slept for: a loaded CI machine may hold the writing thread
        // back for tens of milliseconds.
        let lines = || {
            out.0
                .lock()
                .unwrap()
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while lines() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(beat);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert!(text.lines().count() >= 2, "at 20 ms: {text:?}");
        assert!(text.lines().all(|l| l.starts_with("work: 0m ")), "{text:?}");
        // Stopped: nothing more is written.
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(out.0.lock().unwrap().len(), text.len());
    }
}
