//! Progress display for long single calls (parameter generation, sealing) that report
//! nothing while they run: a spinner with the elapsed time and what to expect.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Starts a spinner on stderr that ticks on its own thread until `finish` is called.
pub fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .expect("the spinner template is valid"),
    );
    if bar.is_hidden() {
        // Not a terminal (a log, a test): one line instead of the animation.
        eprintln!("{message} ...");
    }
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// Formats a duration as `9m 14s` for messages.
pub fn minutes_seconds(duration: Duration) -> String {
    let seconds = duration.as_secs();
    format!("{}m {:02}s", seconds / 60, seconds % 60)
}
