//! Host memory page-locked for the life of a process rather than of one prover: the gpu
//! stage pins its slot arena when it starts, on a thread of its own, so the first partition
//! does not wait for it (page-locking a 121 GB arena took 17 s on an H200 host) and a prover
//! made for new parameters does not pin it again.

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext};

use super::error::Step;
use super::GpuError;

/// cuMemHostRegister's flags: PORTABLE so any context may use the pages, READ_ONLY for a
/// read-only mapping (CUDA refuses to register a read-only mapping without it on hosts whose devices do
/// not use the host's page tables: x86 with an H100 or H200).
pub fn host_register_flags(read_only: bool) -> u32 {
    use cudarc::driver::sys::{CU_MEMHOSTREGISTER_PORTABLE, CU_MEMHOSTREGISTER_READ_ONLY};
    if read_only {
        CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_READ_ONLY
    } else {
        CU_MEMHOSTREGISTER_PORTABLE
    }
}

/// A page-locked range (cuMemHostRegister, portable: every context of the process may DMA
/// from it), unregistered on drop. Holds the device's primary context, which keeps the
/// registration alive.
pub struct HostPin {
    ctx: Arc<CudaContext>,
    start: usize,
    len: usize,
}

impl HostPin {
    /// Page-locks the whole pages holding `ptr..ptr + len` through device `ordinal`'s primary
    /// context; `read_only` when the process maps them read-only.
    ///
    /// # Safety
    /// The range must be a live mapping that stays mapped until the pin is dropped.
    pub unsafe fn new(
        ordinal: usize,
        ptr: *mut u8,
        len: usize,
        read_only: bool,
    ) -> Result<Self, GpuError> {
        let ctx = CudaContext::new(ordinal).step("open device")?;
        // SAFETY: the caller's contract.
        unsafe { Self::in_context(ctx, ptr, len, read_only) }
    }

    /// As [`HostPin::new`], through a context the caller already holds (a prover's).
    ///
    /// # Safety
    /// The range must be a live mapping that stays mapped until the pin is dropped.
    pub(crate) unsafe fn in_context(
        ctx: Arc<CudaContext>,
        ptr: *mut u8,
        len: usize,
        read_only: bool,
    ) -> Result<Self, GpuError> {
        // Whole pages: the range widens to page boundaries (pages holding mapped bytes are
        // mapped), so buffers that are not page-aligned register too. A range sharing a page
        // with an earlier registration fails (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED).
        if len == 0 {
            return Err(GpuError::Input("page-locking an empty range".into()));
        }
        let page = page_size();
        let start = ptr as usize & !(page - 1);
        let len = (ptr as usize + len).next_multiple_of(page) - start;
        ctx.bind_to_thread().step("bind context")?;
        // SAFETY: the caller's contract; the range is whole pages of that mapping.
        unsafe {
            sys::cuMemHostRegister_v2(start as *mut _, len, host_register_flags(read_only))
                .result()
                .step("register host memory")?;
        }
        Ok(HostPin { ctx, start, len })
    }

    /// Bytes page-locked.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The host's page size (4 KiB on x86; 64 KiB on some aarch64 hosts, where widening to 4 KiB
/// would not reach a page boundary).
fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system; no memory is passed.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

impl Drop for HostPin {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: registered in `in_context` and still mapped (its contract).
        let _ = unsafe { sys::cuMemHostUnregister(self.start as *mut _) };
    }
}
