//! Host memory page-locked for the prover's uploads (cuMemHostRegister).

use super::super::host_pin::host_register_flags;
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
        use super::super::error::Step;
        self.dev.ctx.bind_to_thread().step("bind context")?;
        // Whole pages: the range widens to page boundaries (pages holding mapped bytes are
        // mapped), so heap buffers that are not page-aligned register too. Ranges sharing a
        // page with an earlier registration fail (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED).
        const PAGE: usize = 4096;
        let start = ptr as usize & !(PAGE - 1);
        let len = (ptr as usize + len).next_multiple_of(PAGE) - start;
        let ptr = start as *mut u8;
        // SAFETY: the caller's contract; PORTABLE so any context may use it.
        unsafe {
            cudarc::driver::sys::cuMemHostRegister_v2(
                ptr as *mut _,
                len,
                host_register_flags(read_only),
            )
            .result()
            .step("register host memory")?;
        }
        self.registered.push(ptr as usize);
        Ok(())
    }
}
