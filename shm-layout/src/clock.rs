//! Clocks shared by all processes of one machine.

use nix::time::{clock_gettime, ClockId};

/// CLOCK_MONOTONIC in ns: one clock for every process on the host, so a timestamp written
/// by a publisher can be subtracted from one read by a consumer (hand-off latency).
pub fn monotonic_ns() -> u64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC exists on Linux");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Wall-clock ns since the Unix epoch, for per-state timestamps a person reads.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
