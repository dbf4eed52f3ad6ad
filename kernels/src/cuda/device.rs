//! The device: context, compiled module, kernels, streams, events and the one device
//! allocation every buffer is carved from. Thin over cudarc's driver calls so nothing
//! hidden (event tracking, implicit synchronization) runs in the hot path.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::result::{self, stream::StreamKind};
use cudarc::driver::sys;
use cudarc::driver::CudaContext;

use super::error::Step;
use super::source;
use super::GpuError;

/// The kernels of `kernels/cuda/`, looked up once.
pub(crate) struct Kernels {
    pub ntt_pass: sys::CUfunction,
    pub ntt_pass_full: sys::CUfunction,
    pub ntt_pass_r9_full: sys::CUfunction,
    pub ntt_pass_r9: sys::CUfunction,
    pub ntt_pass_r9u: sys::CUfunction,
    pub ntt_full_table: sys::CUfunction,
    pub ec_dft_scale: sys::CUfunction,
    pub ec_dft_level: sys::CUfunction,
    pub ec_dft_affine: sys::CUfunction,
    pub h_coset_scalars: sys::CUfunction,
    pub c_fold_chunks: sys::CUfunction,
    pub c_fold_sum: sys::CUfunction,
    pub r1cs_eval: sys::CUfunction,
    pub r1cs_eval_long: sys::CUfunction,
    pub h_c_kinds: sys::CUfunction,
    pub msm_digits: sys::CUfunction,
    pub msm_scan: sys::CUfunction,
    pub msm_rebase: sys::CUfunction,
    pub msm_scatter: sys::CUfunction,
    pub msm_scatter_capped: sys::CUfunction,
    pub msm_compact: sys::CUfunction,
    pub msm_place_overflow: sys::CUfunction,
    pub msm_accumulate: sys::CUfunction,
    pub msm_accumulate_wide: sys::CUfunction,
    pub msm_accumulate_split: sys::CUfunction,
    pub msm_fixup: sys::CUfunction,
    pub msm_bucket_reduce: sys::CUfunction,
    pub xyzz_reduce: sys::CUfunction,
    pub batch_add: sys::CUfunction,
    pub batch_add_split: sys::CUfunction,
    // The G2 instantiations of the point kernels above (same arguments, G2 points).
    pub msm_accumulate_g2: sys::CUfunction,
    pub msm_accumulate_split_g2: sys::CUfunction,
    pub msm_fixup_g2: sys::CUfunction,
    pub msm_bucket_reduce_g2: sys::CUfunction,
    pub xyzz_reduce_g2: sys::CUfunction,
    pub batch_add_g2: sys::CUfunction,
    pub batch_add_split_g2: sys::CUfunction,
    // The ones' batch addition over aligned pair sums and the pair sums' making (pairs.cu).
    pub batch_add_pairs: sys::CUfunction,
    pub batch_add_pairs_g2: sys::CUfunction,
    pub pair_sums_g1: sys::CUfunction,
    pub pair_sums_g2: sys::CUfunction,
    pub srs_synthetic: sys::CUfunction,
    pub test_fr_mul: sys::CUfunction,
    pub test_fp_mul: sys::CUfunction,
    pub test_g1_add: sys::CUfunction,
    pub test_fp2_mul: sys::CUfunction,
    pub test_g2_add: sys::CUfunction,
    // The ceilings (ceiling.cu, `GpuProver::ceilings`).
    pub ceiling_imad: sys::CUfunction,
    pub ceiling_fr_mul: sys::CUfunction,
    pub ceiling_fr_mul2: sys::CUfunction,
    pub ceiling_fp_mul: sys::CUfunction,
    pub ceiling_fp_sqr: sys::CUfunction,
    pub ceiling_g1_madd: sys::CUfunction,
    pub ceiling_g1_madd_sh: sys::CUfunction,
}

/// A region of the device allocation.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DevBuf {
    pub ptr: sys::CUdeviceptr,
    pub bytes: usize,
}

impl DevBuf {
    /// The sub-buffer starting `offset` bytes in.
    pub fn at(&self, offset: usize) -> sys::CUdeviceptr {
        debug_assert!(offset <= self.bytes);
        self.ptr + offset as u64
    }
}

pub(crate) struct Device {
    pub ctx: Arc<CudaContext>,
    pub module: sys::CUmodule,
    pub k: Kernels,
    /// Kernels run here.
    pub compute: sys::CUstream,
    /// Uploads run here, ordered against `compute` by events.
    pub copy: sys::CUstream,
    pub sm_count: u32,
    base: sys::CUdeviceptr,
    size: usize,
    used: usize,
}

/// Opens device `ordinal` (checking for a driver first: cudarc panics without one),
/// compiles the kernels to a CUBIN for the device's architecture (or, with
/// `CUZK_KERNELS_CUBIN` set, loads a prebuilt cubin of the same sources) and looks up every
/// kernel. `CUZK_KERNELS_LOAD=ptx` loads NVRTC's PTX instead, which the driver then
/// JIT-compiles: only to measure what the CUBIN saves at start.
pub(crate) fn open(ordinal: usize) -> Result<Device, GpuError> {
    // SAFETY: only tries to dlopen libcuda by its usual names.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::NoDriver);
    }
    let ctx = CudaContext::new(ordinal).step("open device")?;
    ctx.bind_to_thread().step("bind context")?;
    let cc = |a| ctx.attribute(a).step("read compute capability");
    let arch = format!(
        "sm_{}{}",
        cc(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        cc(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?
    );
    let image: Vec<u8> = match std::env::var_os("CUZK_KERNELS_CUBIN").filter(|p| !p.is_empty()) {
        Some(path) => std::fs::read(&path)
            .map_err(|e| GpuError::Cubin(format!("{}: {e}", path.to_string_lossy())))?,
        None if std::env::var("CUZK_KERNELS_LOAD").as_deref() == Ok("ptx") => {
            let mut v = source::compiled(&arch)?.ptx.as_bytes().to_vec();
            v.push(0);
            v
        }
        None => source::compiled(&arch)?.cubin.clone(),
    };
    // SAFETY: `image` is a cubin (ELF) read whole or a NUL-terminated PTX text; it outlives
    // the call.
    let module = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
        .step("load kernel module")?;
    let f = |name: &str| {
        // SAFETY: `module` was just loaded and is never unloaded while Device lives.
        unsafe { result::module::get_function(module, CString::new(name).unwrap()) }
            .step("look up kernel")
    };
    let k = Kernels {
        ntt_pass: f("ntt_pass")?,
        ntt_pass_full: f("ntt_pass_full")?,
        ntt_pass_r9_full: f("ntt_pass_r9_full")?,
        ntt_pass_r9: f("ntt_pass_r9")?,
        ntt_pass_r9u: f("ntt_pass_r9u")?,
        ntt_full_table: f("ntt_full_table")?,
        ec_dft_scale: f("ec_dft_scale")?,
        ec_dft_level: f("ec_dft_level")?,
        ec_dft_affine: f("ec_dft_affine")?,
        h_coset_scalars: f("h_coset_scalars")?,
        c_fold_chunks: f("c_fold_chunks")?,
        c_fold_sum: f("c_fold_sum")?,
        r1cs_eval: f("r1cs_eval")?,
        r1cs_eval_long: f("r1cs_eval_long")?,
        h_c_kinds: f("h_c_kinds")?,
        msm_digits: f("msm_digits")?,
        msm_scan: f("msm_scan")?,
        msm_rebase: f("msm_rebase")?,
        msm_scatter: f("msm_scatter")?,
        msm_scatter_capped: f("msm_scatter_capped")?,
        msm_compact: f("msm_compact")?,
        msm_place_overflow: f("msm_place_overflow")?,
        msm_accumulate: f("msm_accumulate")?,
        msm_accumulate_wide: f("msm_accumulate_wide")?,
        msm_accumulate_split: f("msm_accumulate_split")?,
        msm_fixup: f("msm_fixup")?,
        msm_bucket_reduce: f("msm_bucket_reduce")?,
        xyzz_reduce: f("xyzz_reduce")?,
        batch_add: f("batch_add")?,
        batch_add_split: f("batch_add_split")?,
        msm_accumulate_g2: f("msm_accumulate_g2")?,
        msm_accumulate_split_g2: f("msm_accumulate_split_g2")?,
        msm_fixup_g2: f("msm_fixup_g2")?,
        msm_bucket_reduce_g2: f("msm_bucket_reduce_g2")?,
        xyzz_reduce_g2: f("xyzz_reduce_g2")?,
        batch_add_g2: f("batch_add_g2")?,
        batch_add_split_g2: f("batch_add_split_g2")?,
        batch_add_pairs: f("batch_add_pairs")?,
        batch_add_pairs_g2: f("batch_add_pairs_g2")?,
        pair_sums_g1: f("pair_sums_g1")?,
        pair_sums_g2: f("pair_sums_g2")?,
        srs_synthetic: f("srs_synthetic")?,
        test_fr_mul: f("test_fr_mul")?,
        test_fp_mul: f("test_fp_mul")?,
        test_g1_add: f("test_g1_add")?,
        test_fp2_mul: f("test_fp2_mul")?,
        test_g2_add: f("test_g2_add")?,
        ceiling_imad: f("ceiling_imad")?,
        ceiling_fr_mul: f("ceiling_fr_mul")?,
        ceiling_fr_mul2: f("ceiling_fr_mul2")?,
        ceiling_fp_mul: f("ceiling_fp_mul")?,
        ceiling_fp_sqr: f("ceiling_fp_sqr")?,
        ceiling_g1_madd: f("ceiling_g1_madd")?,
        ceiling_g1_madd_sh: f("ceiling_g1_madd_sh")?,
    };
    for f in [k.ntt_pass, k.ntt_pass_full] {
        // SAFETY: the function handle is valid; the attribute only raises the shared-memory cap.
        unsafe {
            sys::cuFuncSetAttribute(
                f,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                crate::cuda::ntt::MAX_SMEM as i32,
            )
            .result()
            .step("raise NTT shared memory")?;
        }
    }
    let compute = result::stream::create(StreamKind::NonBlocking).step("create stream")?;
    let copy = result::stream::create(StreamKind::NonBlocking).step("create stream")?;
    let sm_count = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .step("read SM count")? as u32;
    Ok(Device {
        ctx,
        module,
        k,
        compute,
        copy,
        sm_count,
        base: 0,
        size: 0,
        used: 0,
    })
}

impl Device {
    /// Threads of `f` (blocks of `block`, no dynamic shared memory) resident on the whole
    /// device at once: one full wave.
    pub fn resident_threads(&self, f: sys::CUfunction, block: u32) -> Result<usize, GpuError> {
        // SAFETY: `f` was looked up in this device's module, which lives as long as self.
        let per_sm =
            unsafe { result::occupancy::max_active_block_per_multiprocessor(f, block as i32, 0) }
                .step("read occupancy")?;
        Ok(per_sm.max(1) as usize * self.sm_count as usize * block as usize)
    }

    /// (free, total) device memory.
    pub fn mem_info(&self) -> Result<(usize, usize), GpuError> {
        result::mem_get_info().step("read free memory")
    }

    /// The one allocation; `carve` hands out pieces of it.
    pub fn allocate(&mut self, bytes: usize) -> Result<(), GpuError> {
        // SAFETY: plain cuMemAlloc in the current context; freed in Drop.
        self.base = unsafe { result::malloc_sync(bytes) }
            .map_err(|e| GpuError::OutOfMemory(format!("allocating {bytes} bytes failed: {e}")))?;
        self.size = bytes;
        Ok(())
    }

    /// Frees the allocation (everything carved from it goes with it), so that `allocate`
    /// can make another: start-time work that needs memory of its own before the plan's
    /// one allocation (H's bases put in Lagrange form, `lagrange.rs`).
    pub fn release(&mut self) -> Result<(), GpuError> {
        if self.base != 0 {
            self.sync(self.compute)?;
            self.sync(self.copy)?;
            // SAFETY: allocated by `allocate` in this context; nothing carved from it is
            // used after this (both streams are idle).
            unsafe { result::free_sync(self.base) }.step("free device memory")?;
        }
        self.base = 0;
        self.size = 0;
        self.used = 0;
        Ok(())
    }

    /// The next `bytes` of the allocation, 256-byte aligned.
    pub fn carve(&mut self, bytes: usize) -> DevBuf {
        let start = self.used.next_multiple_of(256);
        assert!(start + bytes <= self.size, "device plan undersized");
        self.used = start + bytes;
        DevBuf {
            ptr: self.base + start as u64,
            bytes,
        }
    }

    /// Launches `f` on `stream` with the given argument pointers.
    #[allow(clippy::too_many_arguments)]
    ///
    /// # Safety
    /// `args` must point at values whose types and order match the kernel's parameters, and
    /// every device pointer among them must be valid for what the kernel touches.
    pub unsafe fn launch(
        &self,
        step: &'static str,
        f: sys::CUfunction,
        grid: u32,
        block: u32,
        smem: u32,
        stream: sys::CUstream,
        args: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        if grid == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { result::launch_kernel(f, (grid, 1, 1), (block, 1, 1), smem, stream, args) }
            .step(step)
    }

    pub fn memset(
        &self,
        buf: sys::CUdeviceptr,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<(), GpuError> {
        // SAFETY: callers pass regions carved from the allocation.
        unsafe { result::memset_d8_async(buf, 0, bytes, stream) }.step("clear buffer")
    }

    /// Host → device on `stream`. The host slice must stay alive and unchanged until the
    /// stream has passed this copy (callers synchronize before returning to their caller).
    pub fn upload<T>(
        &self,
        dst: sys::CUdeviceptr,
        cap: usize,
        src: &[T],
        stream: sys::CUstream,
    ) -> Result<(), GpuError> {
        assert!(
            std::mem::size_of_val(src) <= cap,
            "upload larger than its buffer"
        );
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: dst has room (checked); T is plain data (field elements, points, indices).
        unsafe { result::memcpy_htod_async(dst, src, stream) }.step("upload")
    }

    /// Device → device on `stream` (both regions carved from the allocation).
    pub fn copy_within(
        &self,
        dst: sys::CUdeviceptr,
        src: sys::CUdeviceptr,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<(), GpuError> {
        // SAFETY: callers pass non-overlapping regions of the allocation holding `bytes`.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, stream) }.step("copy on device")
    }

    pub fn download<T>(
        &self,
        dst: &mut [T],
        src: sys::CUdeviceptr,
        stream: sys::CUstream,
    ) -> Result<(), GpuError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: src holds at least size_of_val(dst) bytes written by our kernels; T is plain
        // data for which every bit pattern is valid.
        unsafe { result::memcpy_dtoh_async(dst, src, stream) }.step("download")
    }

    pub fn sync(&self, stream: sys::CUstream) -> Result<(), GpuError> {
        // SAFETY: the stream was created by `open` and lives as long as self.
        unsafe { result::stream::synchronize(stream) }.step("wait for stream")
    }

    pub fn event(&self) -> Result<Event, GpuError> {
        Ok(Event(
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).step("create event")?,
        ))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: each handle was created by `open`/`allocate` in this context and is
        // released once; errors at teardown have nobody to report to.
        unsafe {
            let _ = self.ctx.bind_to_thread();
            if self.base != 0 {
                let _ = result::free_sync(self.base);
            }
            let _ = result::stream::destroy(self.compute);
            let _ = result::stream::destroy(self.copy);
            let _ = result::module::unload(self.module);
        }
    }
}

/// A CUDA event (timing and cross-stream ordering).
pub(crate) struct Event(pub sys::CUevent);

impl Event {
    pub fn record(&self, stream: sys::CUstream) -> Result<(), GpuError> {
        // SAFETY: both handles are live.
        unsafe { result::event::record(self.0, stream) }.step("record event")
    }
    /// Makes `stream` wait for this event.
    pub fn wait_on(&self, stream: sys::CUstream) -> Result<(), GpuError> {
        // SAFETY: both handles are live.
        unsafe { sys::cuStreamWaitEvent(stream, self.0, 0).result() }.step("wait event")
    }
    /// Blocks this thread until the work before the event's last record has run.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        // SAFETY: the handle is live.
        unsafe { sys::cuEventSynchronize(self.0).result() }.step("wait for event")
    }
    /// Milliseconds from `self` to `end` (both recorded and complete).
    pub fn ms_to(&self, end: &Event) -> Result<f32, GpuError> {
        // SAFETY: both handles are live and recorded.
        unsafe { result::event::elapsed(self.0, end.0) }.step("read event time")
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by Device::event, destroyed once.
        let _ = unsafe { result::event::destroy(self.0) };
    }
}

/// `[*mut c_void]` from kernel arguments, in order.
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        [$(&$a as *const _ as *mut ::std::ffi::c_void),*]
    };
}
pub(crate) use args;
