//! What can go wrong on the GPU, with the step that failed and whether the context
//! survives it (a sticky error means the process must restart to use the device again).

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::cudaError_enum as E;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no CUDA driver on this machine (libcuda not found)")]
    NoDriver,
    #[error(
        "NVRTC not found (libnvrtc); install nvidia-cuda-nvrtc and put its lib on LD_LIBRARY_PATH"
    )]
    NoNvrtc,
    #[error("NVRTC could not compile the kernels: {0}")]
    Compile(String),
    #[error("the prebuilt kernels (CUZK_KERNELS_CUBIN) could not be read: {0}")]
    Cubin(String),
    #[error("CUDA error in `{step}`: {} (context {})", describe(driver), if *.context_usable { "still usable" } else { "lost: restart the process" })]
    Cuda {
        step: &'static str,
        /// Not the error's `source()`: formatting a `DriverError` asks libcuda for its
        /// text (`describe` does that only where the library is present).
        driver: DriverError,
        context_usable: bool,
    },
    #[error("device memory: {0}")]
    OutOfMemory(String),
    #[error("partition does not fit the plan: {0}")]
    TooLarge(String),
    #[error("{0}")]
    Input(String),
}

impl GpuError {
    /// Whether the CUDA context can keep serving after this error. Errors that poison the
    /// context (a faulting kernel, a hardware error) make every later call fail.
    pub fn context_usable(&self) -> bool {
        match self {
            GpuError::Cuda { context_usable, .. } => *context_usable,
            _ => true,
        }
    }

    /// Whether the error is this machine's set-up rather than the partition's: no driver or
    /// NVRTC, kernels that do not compile or load, a device that does not open, device
    /// memory another process holds when the prover plans its buffers. The same would happen
    /// to every job, so none should fail for it: the gpu process exits and is restarted
    /// after back-off while the jobs wait (`cuzk-gpu`). A sticky error met at a set-up step
    /// is not one: it is an earlier fault's (a kernel that faulted while the device was
    /// readied for a job) surfacing at the next call on the poisoned context, and taken
    /// for set-up it would restart the process for ever with nothing counted.
    pub fn is_setup(&self) -> bool {
        match self {
            GpuError::NoDriver
            | GpuError::NoNvrtc
            | GpuError::Compile(_)
            | GpuError::Cubin(_)
            | GpuError::OutOfMemory(_) => true,
            GpuError::Cuda {
                step,
                context_usable,
                ..
            } => {
                *context_usable
                    && matches!(
                        *step,
                        "open device"
                            | "bind context"
                            | "read compute capability"
                            | "load kernel module"
                            | "look up kernel"
                    )
            }
            GpuError::TooLarge(_) | GpuError::Input(_) => false,
        }
    }

    /// Whether the same partition could succeed on another try: not when its inputs are
    /// wrong or too large for the plan (an assignment that fails the R1CS check fails the
    /// same way every time).
    pub fn worth_a_retry(&self) -> bool {
        !matches!(self, GpuError::Input(_) | GpuError::TooLarge(_))
    }
}

/// The driver's error by name, with libcuda's description where the library loads
/// (cudarc's own formatting loads it, and panics on a machine without one).
fn describe(e: &DriverError) -> String {
    let name = format!("{:?}", e.0);
    if !super::driver_present() {
        return name;
    }
    match e.error_string() {
        Ok(text) => format!("{name}: {}", text.to_string_lossy()),
        Err(_) => name,
    }
}

/// Errors after which the context is unusable ("sticky" in CUDA's words).
fn is_sticky(e: &DriverError) -> bool {
    matches!(
        e.0,
        E::CUDA_ERROR_ILLEGAL_ADDRESS
            | E::CUDA_ERROR_LAUNCH_FAILED
            | E::CUDA_ERROR_MISALIGNED_ADDRESS
            | E::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | E::CUDA_ERROR_HARDWARE_STACK_ERROR
            | E::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | E::CUDA_ERROR_INVALID_PC
            | E::CUDA_ERROR_ASSERT
            | E::CUDA_ERROR_LAUNCH_TIMEOUT
            | E::CUDA_ERROR_ECC_UNCORRECTABLE
            | E::CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

/// Attaches the step name to a driver result.
pub(crate) trait Step<T> {
    fn step(self, step: &'static str) -> Result<T, GpuError>;
}

impl<T> Step<T> for Result<T, DriverError> {
    fn step(self, step: &'static str) -> Result<T, GpuError> {
        self.map_err(|driver| GpuError::Cuda {
            step,
            context_usable: !is_sticky(&driver),
            driver,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda(step: &'static str, code: E) -> GpuError {
        Err::<(), _>(DriverError(code)).step(step).unwrap_err()
    }

    /// What fails every job alike is the machine's, what fails one partition is its own.
    #[test]
    fn set_up_errors_are_told_from_a_partitions_errors() {
        for e in [
            GpuError::NoDriver,
            GpuError::NoNvrtc,
            GpuError::Compile("error: identifier \"fp_t\" is undefined".into()),
            GpuError::Cubin("/nonexistent/cuzk.cubin: No such file".into()),
            GpuError::OutOfMemory("the plan needs 90 GiB, 70 free".into()),
            cuda("load kernel module", E::CUDA_ERROR_INVALID_IMAGE),
            cuda("open device", E::CUDA_ERROR_NO_DEVICE),
        ] {
            assert!(e.is_setup(), "{e}");
        }
        for e in [
            GpuError::Input("the assignment fails row 7".into()),
            GpuError::TooLarge("2^28 scalars".into()),
            cuda("upload", E::CUDA_ERROR_INVALID_VALUE),
            cuda("msm accumulate", E::CUDA_ERROR_ILLEGAL_ADDRESS),
            // An earlier fault on the context, met where a prover is made.
            cuda("load kernel module", E::CUDA_ERROR_ILLEGAL_ADDRESS),
            cuda("open device", E::CUDA_ERROR_LAUNCH_FAILED),
        ] {
            assert!(!e.is_setup(), "{e}");
        }
        assert!(!cuda("msm accumulate", E::CUDA_ERROR_ILLEGAL_ADDRESS).context_usable());
    }

    /// A CUDA error prints on any machine: by name without libcuda (cudarc's own
    /// formatting would panic there), with the driver's text beside it where it loads.
    #[test]
    fn a_cuda_error_prints_without_the_driver() {
        let e = cuda("msm accumulate", E::CUDA_ERROR_ILLEGAL_ADDRESS);
        // No source: a chain printer (anyhow's `{:#}`) has no DriverError to format.
        assert!(std::error::Error::source(&e).is_none());
        let text = e.to_string();
        assert!(
            text.starts_with("CUDA error in `msm accumulate`: CUDA_ERROR_ILLEGAL_ADDRESS")
                && text.ends_with("(context lost: restart the process)"),
            "{text}"
        );
    }
}
