//! What the gpu process does with a partition whose device work failed. The count of
//! failed tries lives in the job record (`JobView::note_lost_attempt`), beside the losses
//! recovery counts when a process dies holding the partition: it outlives this process,
//! so a partition that fails every device it meets fails its job after
//! `LOST_ATTEMPTS_BEFORE_FAILING` tries, however often the gpu process restarts.

use cuzk_kernels::cuda::GpuError;
use cuzk_shm_layout::job::LOST_ATTEMPTS_BEFORE_FAILING;

/// The gpu process's answer to a device error on a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDeviceError {
    /// The machine's set-up, not the partition's (no NVRTC, kernels that do not load,
    /// device memory held elsewhere): give the slot back uncounted and exit; the jobs
    /// wait for the restarted process.
    WaitForSetup,
    /// The CUDA context is lost: give the slot back (counted) and exit for a fresh one.
    RestartContext,
    /// Give the slot back (counted) for another try; this process keeps serving.
    Retry,
    /// Fail the job with this error as its reason.
    FailJob,
}

/// `note_lost` counts this try as lost in the job record and returns the partition's count
/// so far; it is called for every error but set-up errors, which are not the partition's.
pub fn after_device_error(e: &GpuError, note_lost: impl FnOnce() -> u8) -> AfterDeviceError {
    if e.is_setup() {
        return AfterDeviceError::WaitForSetup;
    }
    let lost = note_lost();
    if !e.context_usable() {
        AfterDeviceError::RestartContext
    } else if e.worth_a_retry() && lost < LOST_ATTEMPTS_BEFORE_FAILING {
        AfterDeviceError::Retry
    } else {
        AfterDeviceError::FailJob
    }
}

/// A test hook (tests/pipeline): with `CUZK_TEST_GPU_ERRORS` naming a directory, the gpu
/// stage's first partition ends in a retryable CUDA error and the next one tried in a lost
/// context, each once per directory (a marker file each, made with `create_new`, so a
/// restarted process does not repeat them): the pipeline test sees both paths end in a
/// verified proof on the CPU device, where no real CUDA error can be provoked.
pub fn injected_error() -> Option<GpuError> {
    // Read once: the hook costs a partition nothing when it is off.
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let dir = DIR
        .get_or_init(|| std::env::var_os("CUZK_TEST_GPU_ERRORS").map(Into::into))
        .as_deref()?;
    let first = |name: &str| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(name))
            .is_ok()
    };
    let error = |code, context_usable| GpuError::Cuda {
        step: "CUZK_TEST_GPU_ERRORS",
        driver: cudarc::driver::result::DriverError(code),
        context_usable,
    };
    use cudarc::driver::sys::cudaError_enum as E;
    if first("retryable") {
        Some(error(E::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, true))
    } else if first("context-lost") {
        Some(error(E::CUDA_ERROR_ILLEGAL_ADDRESS, false))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::result::DriverError;
    use cudarc::driver::sys::cudaError_enum as E;

    fn cuda(step: &'static str, code: E, context_usable: bool) -> GpuError {
        GpuError::Cuda {
            step,
            driver: DriverError(code),
            context_usable,
        }
    }

    /// A retryable error is retried until the job record's count reaches the limit, then
    /// fails the job; a lost context always restarts (recovery-like: counted, and the
    /// count fails the job in the record itself); set-up errors never count or fail.
    #[test]
    fn device_errors_are_retried_up_to_the_record_s_limit() {
        use AfterDeviceError::*;
        let transient = cuda("launch H MSM", E::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, true);
        let answers: Vec<_> = (1..=LOST_ATTEMPTS_BEFORE_FAILING)
            .map(|n| after_device_error(&transient, || n))
            .collect();
        let mut expected = vec![Retry; LOST_ATTEMPTS_BEFORE_FAILING as usize - 1];
        expected.push(FailJob);
        assert_eq!(answers, expected);

        let input = GpuError::Input("constraint 7 does not hold".into());
        assert_eq!(
            after_device_error(&input, || 1),
            FailJob,
            "the same every time"
        );

        let lost = cuda("launch NTT", E::CUDA_ERROR_ILLEGAL_ADDRESS, false);
        assert_eq!(after_device_error(&lost, || 1), RestartContext);
        assert_eq!(after_device_error(&lost, || 9), RestartContext);
        // A fault while the device was readied ahead poisons the context; the next
        // partition meets it where its prover is made: counted, not set-up.
        let mut counted = false;
        let poisoned = cuda("load kernel module", E::CUDA_ERROR_ILLEGAL_ADDRESS, false);
        let answer = after_device_error(&poisoned, || {
            counted = true;
            1
        });
        assert_eq!((answer, counted), (RestartContext, true));

        for setup in [
            GpuError::NoNvrtc,
            GpuError::Cubin("kernels.cubin: not found".into()),
            GpuError::OutOfMemory("12 GiB held by pid 77".into()),
            cuda("load kernel module", E::CUDA_ERROR_INVALID_IMAGE, true),
        ] {
            let answer = after_device_error(&setup, || panic!("a set-up error was counted"));
            assert_eq!(answer, WaitForSetup);
        }
    }
}
