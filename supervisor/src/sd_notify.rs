//! Telling systemd how the supervisor is doing (the sd_notify(3) protocol): one datagram
//! of `KEY=value` lines to the unix socket named by `$NOTIFY_SOCKET`. Without that variable
//! (not started by systemd, or not `Type=notify`) every call does nothing.

use std::ffi::OsStr;
use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
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
    use std::ffi::OsString;

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
