//! Host memory page-locked for the prover's uploads (cuMemHostRegister).

use super::super::host_pin::HostPin;
use super::{GpuError, GpuProver};

impl GpuProver {
    /// Page-locks host memory the uploads read from (cuMemHostRegister), so copies from it
    /// are DMA at full speed and truly asynchronous. `read_only` for memory the process
    /// maps read-only (the SRS segment): CUDA refuses to register such a mapping without
    /// CU_MEMHOSTREGISTER_READ_ONLY on hosts whose devices do not use the host's page
    /// tables (x86 with an H100 or H200). Uploads only read it.
    ///
    /// # Safety
    /// `ptr..ptr + len` must be a live mapping that stays mapped until this prover is dropped.
    pub unsafe fn register_host(
        &mut self,
        ptr: *mut u8,
        len: usize,
        read_only: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: the caller's contract: the range stays mapped while this prover (which
        // holds the pin) lives.
        let pin = unsafe { HostPin::in_context(self.dev.ctx.clone(), ptr, len, read_only)? };
        self.pins.push(pin);
        Ok(())
    }
}
