//! Per-phase times of the MSMs (`CUZK_MSM_PROFILE`): each phase of [`super::enqueue_msm`]
//! waits for the stream and is timed on the host, for measurement only (never in
//! production: the waits delay whatever is enqueued after the MSM).

use super::super::device::Device;
use super::super::GpuError;
use super::{Curve, Windows};

/// Phases of [`super::enqueue_msm`]: digits + scan, scatter, accumulate, fixup, bucket reduction.
pub const PHASES: [&str; 5] = ["digits", "scatter", "accumulate", "fixup", "reduce"];

/// Seconds spent per phase since the last [`take_profile`], when `CUZK_MSM_PROFILE` is set
/// (each phase then waits for the stream: for measurement only, never in production).
static PROFILE: std::sync::Mutex<[f64; 5]> = std::sync::Mutex::new([0.0; 5]);

fn profiling() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("CUZK_MSM_PROFILE").is_some())
}

/// Per-phase seconds gathered so far (and reset).
pub fn take_profile() -> [f64; 5] {
    std::mem::take(&mut *PROFILE.lock().unwrap())
}

/// A profiled MSM's phase clock (inactive unless `CUZK_MSM_PROFILE` is set) and its own
/// phases' seconds; with `CUZK_MSM_PROFILE=each` each MSM prints them (stderr) at its end.
pub(super) struct Phase(Option<std::time::Instant>, [f64; 5]);

impl Phase {
    pub(super) fn start(dev: &Device) -> Result<Self, GpuError> {
        if !profiling() {
            return Ok(Phase(None, [0.0; 5]));
        }
        dev.sync(dev.compute)?;
        Ok(Phase(Some(std::time::Instant::now()), [0.0; 5]))
    }
    pub(super) fn end(&mut self, dev: &Device, i: usize) -> Result<(), GpuError> {
        if let Some(t) = self.0 {
            dev.sync(dev.compute)?;
            let dt = t.elapsed().as_secs_f64();
            PROFILE.lock().unwrap()[i] += dt;
            self.1[i] += dt;
            self.0 = Some(std::time::Instant::now());
        }
        Ok(())
    }
    pub(super) fn report(&self, curve: Curve, m: usize, win: &Windows) {
        if self.0.is_some() && std::env::var("CUZK_MSM_PROFILE").is_ok_and(|v| v == "each") {
            let ms: Vec<String> = PHASES
                .iter()
                .zip(self.1)
                .map(|(n, t)| format!("{n} {:.2}", t * 1e3))
                .collect();
            eprintln!(
                "msm profile: {curve:?} {m} terms, c = {}, {} windows: {} ms",
                win.c,
                win.windows,
                ms.join(", ")
            );
        }
    }
}
