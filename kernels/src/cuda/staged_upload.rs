//! Uploads of large vectors from pageable host memory — a prover's resident bases, once per
//! prover (about 41 GB of G1 and 6 GB of G2 points at 32 GiB) — through two page-locked
//! staging buffers. A copy from pageable memory goes through the driver's own staging on
//! the calling thread, faulting the source's pages in as it goes: 13.9 s for the 32 GiB SRS
//! on an H200 host, paid by a gpu process's first partition. Here the host's threads fill
//! one buffer while the copy engine moves the other to the device:
//!
//!   host threads:  [fill 0][fill 1][wait 0, fill 0][wait 1, fill 1] ...
//!   copy stream:           [DMA 0 ][DMA 1         ][DMA 0         ] ...

use crate::copy::copy_on_threads;
use cudarc::driver::sys::CUdeviceptr;
use memmap2::MmapMut;

use super::device::{Device, Event};
use super::host_pin::HostPin;
use super::GpuError;

/// Bytes of one staging buffer: a DMA long against its set-up, a pair that pins in ~0.1 s.
const CHUNK: usize = 256 << 20;
/// Uploads smaller than this in total go the plain way (pinning the pair would cost more).
pub(crate) const MIN_BYTES: usize = 1 << 30;

/// Two page-locked buffers of [`CHUNK`] bytes and, for each, the event after its last DMA.
pub(crate) struct Staging {
    // Declared before `buf`: unregistered before the mapping goes.
    _pin: HostPin,
    buf: MmapMut,
    drained: [Event; 2],
    used: [bool; 2],
}

impl Staging {
    /// Maps and page-locks the pair (through the device's primary context, as `dev` uses).
    pub fn new(dev: &Device, ordinal: usize) -> Result<Self, GpuError> {
        let mut buf = MmapMut::map_anon(2 * CHUNK)
            .map_err(|e| GpuError::Input(format!("mapping upload staging buffers: {e}")))?;
        // SAFETY: `buf` is this struct's own mapping and outlives `_pin` (field order).
        let pin = unsafe { HostPin::new(ordinal, buf.as_mut_ptr(), buf.len(), false)? };
        Ok(Staging {
            _pin: pin,
            buf,
            drained: [dev.event()?, dev.event()?],
            used: [false; 2],
        })
    }

    /// Copies `src` to `dst` (`cap` bytes of room) on the copy stream; returns once the
    /// host has handed every chunk over (the last DMAs may still run: the caller syncs the
    /// copy stream before using the data, and the staging buffers only live until then).
    pub fn upload<T: Copy>(
        &mut self,
        dev: &Device,
        dst: CUdeviceptr,
        cap: usize,
        src: &[T],
    ) -> Result<(), GpuError> {
        // SAFETY: T is plain data (affine points, field elements): its bytes are what the
        // device reads, and `src` is borrowed for the whole call.
        let bytes = unsafe {
            std::slice::from_raw_parts(src.as_ptr() as *const u8, std::mem::size_of_val(src))
        };
        assert!(bytes.len() <= cap, "upload larger than its buffer");
        for (k, chunk) in bytes.chunks(CHUNK).enumerate() {
            let b = k % 2;
            if self.used[b] {
                // The DMA that last read this buffer must be done before it is refilled.
                self.drained[b].synchronize()?;
            }
            let stage = &mut self.buf[b * CHUNK..b * CHUNK + chunk.len()];
            copy_on_threads(stage, chunk);
            let at = k * CHUNK;
            dev.upload(dst + at as u64, cap - at, stage, dev.copy)?;
            self.drained[b].record(dev.copy)?;
            self.used[b] = true;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // A DMA may still read the buffers (an error path that did not sync): wait for both
        // before they are unmapped.
        for (e, used) in self.drained.iter().zip(self.used) {
            if used {
                let _ = e.synchronize();
            }
        }
    }
}
