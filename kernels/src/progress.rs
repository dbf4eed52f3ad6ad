//! Progress lines for long work run under the supervisor and systemd, where a log shows no
//! animation: a line every half minute. One heartbeat thread for every such report (the
//! parameter file's decode here, the `cuzk` command's spinner in a log).

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often long work that is still running gets a line.
pub const LOG_EVERY: Duration = Duration::from_secs(30);

/// A thread that calls its tick with the time since it started, every `every`, until the
/// heartbeat is dropped (an early return or a panic ends it too).
pub struct Heartbeat {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    pub fn start(every: Duration, mut tick: impl FnMut(Duration) + Send + 'static) -> Heartbeat {
        let (stop, stopped) = mpsc::channel::<()>();
        let started = Instant::now();
        // It waits on the channel between ticks, so dropping the sender ends it at once.
        let thread = std::thread::spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                tick(started.elapsed());
            }
        });
        Heartbeat {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Ticks while held, with the time since the start; none once dropped.
    #[test]
    fn ticks_until_dropped() {
        let ticks = Arc::new(Mutex::new(Vec::new()));
        let beat = {
            let ticks = Arc::clone(&ticks);
            Heartbeat::start(Duration::from_millis(20), move |t| {
                ticks.lock().unwrap().push(t)
            })
        };
        // Polled rather than slept for: a loaded CI machine may hold the ticking thread
        // back for tens of milliseconds.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while ticks.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(beat);
        let seen = ticks.lock().unwrap().clone();
        assert!(seen.len() >= 3, "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(ticks.lock().unwrap().len(), seen.len());
    }
}
