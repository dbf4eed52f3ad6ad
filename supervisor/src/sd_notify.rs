//! Telling systemd how the supervisor is doing (the sd_notify(3) protocol): one datagram
//! of `KEY=value` lines to the unix socket named by `$NOTIFY_SOCKET`. Without that variable
//! (not started by systemd, or not `Type=notify`) every call does nothing.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::mpsc;
use std::time::Duration;

/// Start-up is complete (the unit becomes active; `systemctl start` returns).
pub fn notify_ready() -> io::Result<()> {
    notify("READY=1")
}

/// One line shown by `systemctl status` (newlines become spaces).
pub fn notify_status(status: &str) -> io::Result<()> {
    notify(&format!("STATUS={}", status.replace('\n', " ")))
}

/// Draining has begun (sent on SIGTERM, before the children finish).
pub fn notify_stopping() -> io::Result<()> {
    notify("STOPPING=1")
}

/// Still alive, for `WatchdogSec=`; send at least every [`watchdog_interval`] / 2.
pub fn notify_watchdog() -> io::Result<()> {
    notify("WATCHDOG=1")
}

/// The watchdog period systemd expects (`WatchdogSec=`), when it is set for this process.
pub fn watchdog_interval() -> Option<Duration> {
    let pid_matches = match std::env::var("WATCHDOG_PID") {
        Ok(pid) => pid.trim() == std::process::id().to_string(),
        Err(_) => true,
    };
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.trim().parse().ok()?;
    (pid_matches && usec > 0).then(|| Duration::from_micros(usec))
}

/// Runs `work` (a long step before start-up is complete: generating test parameters takes
/// ~9 min at 2 KiB), telling systemd every `every` that start-up needs `3 × every` more
/// (`EXTEND_TIMEOUT_USEC`), so the unit's start timeout (90 s by default) does not kill it
/// half done. Without `$NOTIFY_SOCKET` it only runs `work`.
pub fn extending_start<T>(every: Duration, work: impl FnOnce() -> T) -> T {
    match std::env::var_os("NOTIFY_SOCKET") {
        Some(socket) => extending_start_on(socket, every, work),
        None => work(),
    }
}

fn extending_start_on<T>(socket: OsString, every: Duration, work: impl FnOnce() -> T) -> T {
    let (stop, stopped) = mpsc::channel::<()>();
    let state = format!("EXTEND_TIMEOUT_USEC={}", (every * 3).as_micros());
    let beat = std::thread::spawn(move || loop {
        // Best effort, as every notification: systemd gone means nobody to tell.
        let _ = send(&socket, &state);
        // Until `work` is done (the sender dropped), once every `every`.
        if stopped.recv_timeout(every) != Err(mpsc::RecvTimeoutError::Timeout) {
            break;
        }
    });
    let out = work();
    drop(stop);
    let _ = beat.join();
    out
}

fn notify(state: &str) -> io::Result<()> {
    match std::env::var_os("NOTIFY_SOCKET") {
        Some(socket) => send(&socket, state),
        None => Ok(()),
    }
}

/// Sends `state` to `socket`: a file system path, or an abstract socket when it starts with
/// `@` (systemd's notation for a leading NUL byte). An empty name does nothing.
fn send(socket: &OsStr, state: &str) -> io::Result<()> {
    let bytes = socket.as_bytes();
    let addr = match bytes {
        [] => return Ok(()),
        [b'@', name @ ..] => SocketAddr::from_abstract_name(name)?,
        _ => SocketAddr::from_pathname(socket)?,
    };
    let sent = UnixDatagram::unbound()?.send_to_addr(state.as_bytes(), &addr)?;
    if sent != state.len() {
        return Err(io::Error::other(format!(
            "NOTIFY_SOCKET took {sent} of {} bytes",
            state.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(listener: &UnixDatagram) -> String {
        let mut buf = [0u8; 256];
        let n = listener.recv(&mut buf).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn sends_to_a_path_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).unwrap();
        send(path.as_os_str(), "READY=1").unwrap();
        assert_eq!(received(&listener), "READY=1");
        send(path.as_os_str(), "STATUS=2 jobs").unwrap();
        assert_eq!(received(&listener), "STATUS=2 jobs");
    }

    #[test]
    fn sends_to_an_abstract_socket() {
        // Unique per run: abstract names are shared by every process of the network
        // namespace (other containers' test runs too).
        let name = format!(
            "cuzk-test-notify-{}-{}",
            std::process::id(),
            cuzk_shm_layout::clock::unix_ns()
        );
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixDatagram::bind_addr(&addr).unwrap();
        send(&OsString::from(format!("@{name}")), "WATCHDOG=1").unwrap();
        assert_eq!(received(&listener), "WATCHDOG=1");
    }

    #[test]
    fn a_long_start_step_extends_the_start_timeout_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).unwrap();
        let every = Duration::from_millis(40);
        let out = extending_start_on(path.clone().into_os_string(), every, || {
            std::thread::sleep(every * 4);
            7
        });
        assert_eq!(out, 7);
        listener.set_nonblocking(true).unwrap();
        let mut beats = 0;
        let mut buf = [0u8; 64];
        while let Ok(n) = listener.recv(&mut buf) {
            assert_eq!(&buf[..n], b"EXTEND_TIMEOUT_USEC=120000");
            beats += 1;
        }
        // One at once, then one every 40 ms of the 160 ms step (timing decides the last).
        assert!((3..=6).contains(&beats), "{beats} extensions");
        // None after the step returned.
        std::thread::sleep(every * 2);
        assert!(listener.recv(&mut buf).is_err());
    }

    #[test]
    fn an_empty_socket_name_does_nothing_and_a_missing_socket_is_an_error() {
        send(OsStr::new(""), "READY=1").unwrap();
        let dir = tempfile::tempdir().unwrap();
        assert!(send(dir.path().join("absent").as_os_str(), "READY=1").is_err());
    }

    #[test]
    fn without_notify_socket_the_public_calls_do_nothing() {
        // Tests run without systemd; the variable is not set in this process.
        if std::env::var_os("NOTIFY_SOCKET").is_none() {
            notify_ready().unwrap();
            notify_status("idle\nsecond line").unwrap();
            notify_stopping().unwrap();
            notify_watchdog().unwrap();
        }
    }
}
