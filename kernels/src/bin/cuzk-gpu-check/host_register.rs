//! `cuzk-gpu-check host-register`: page-locking a read-only file mapping, as the gpu stage
//! does with the SRS segment when its bases stream, without and with
//! CU_MEMHOSTREGISTER_READ_ONLY. The one with the flag must succeed; the row without it
//! says what the driver does on this host (it refused on x86 hosts of H100s and H200s,
//! where the gpu stage registered the SRS so until 2026-12-07).

use super::*;
use cuzk_kernels::cuda::HostPin;

pub(crate) fn host_register(rep: &mut Report) -> Result<(), GpuError> {
    const BYTES: usize = 64 << 20;
    let path = std::env::temp_dir().join(format!("cuzk-host-register-{}", std::process::id()));
    let io = |e: std::io::Error| GpuError::Input(format!("{}: {e}", path.display()));
    std::fs::write(&path, vec![7u8; BYTES]).map_err(io)?;
    let file = std::fs::File::open(&path).map_err(io)?;
    // SAFETY: the file is ours (just written, removed below) and nobody changes it.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    let _ = std::fs::remove_file(&path);
    for read_only in [false, true] {
        let t = Instant::now();
        // SAFETY: `map` stays mapped until after the pin is dropped at the end of this
        // iteration.
        let pinned = unsafe { HostPin::new(0, map.as_ptr() as *mut u8, BYTES, read_only) };
        let took = ms(t.elapsed());
        let what = format!(
            "page-lock a read-only mapping of 64 MiB, {}",
            if read_only {
                "PORTABLE | READ_ONLY (what the gpu stage does)"
            } else {
                "PORTABLE alone"
            }
        );
        let note = match &pinned {
            Ok(_) => "registered".to_string(),
            Err(e) => format!("refused: {e}"),
        };
        // Only the flagged registration is required to work; the other row informs.
        let ok = read_only.then_some(pinned.is_ok());
        rep.row(&what, ok, took, 0.0, &note);
    }
    copies_across_a_registered_range(&map, rep)
}

/// Uploads from inside, outside and across a page-locked range of the same mapping: the
/// gpu stage once registered only each base vector's inner pages, and every streamed
/// piece that began in an edge page failed with CUDA_ERROR_INVALID_VALUE.
fn copies_across_a_registered_range(map: &[u8], rep: &mut Report) -> Result<(), GpuError> {
    use cudarc::driver::result;
    const PAGE: usize = 4096;
    let n = map.len();
    // Held to the end: the pins' own references to the primary context are dropped on the
    // way, and the last one would take the context (and `dst`, `stream`) with it.
    let _ctx = cudarc::driver::CudaContext::new(0)
        .map_err(|e| GpuError::Input(format!("open device: {e:?}")))?;
    // SAFETY: `map` stays mapped until after `pin` is dropped at the end of this function.
    let pin = unsafe { HostPin::new(0, map[4 * PAGE..].as_ptr() as *mut u8, n - 8 * PAGE, true)? };
    let err = |e: result::DriverError| GpuError::Input(format!("{e:?}"));
    // SAFETY: a plain allocation in the context HostPin::new bound to this thread.
    let dst = unsafe { result::malloc_sync(n) }.map_err(err)?;
    let cases = [
        (
            "upload from registered pages only",
            8 * PAGE..16 * PAGE,
            true,
        ),
        ("upload from pageable pages only", 0..2 * PAGE, true),
        (
            "upload across the registered range's first page",
            2 * PAGE..6 * PAGE,
            false,
        ),
        (
            "upload of the whole mapping, registered in part",
            0..n,
            false,
        ),
    ];
    for (what, range, must) in cases {
        let t = Instant::now();
        // SAFETY: dst holds n bytes; the source is mapped; the null stream is the context's
        // legacy default stream, synchronized before the source's next use.
        let done = unsafe { result::memcpy_htod_async(dst, &map[range], std::ptr::null_mut()) }
            .and_then(|()| unsafe { result::stream::synchronize(std::ptr::null_mut()) });
        let note = match &done {
            Ok(()) => "copied".to_string(),
            Err(e) => format!("refused: {e:?}"),
        };
        // The copies the gpu stage makes now must work; the others say what the driver
        // does with a range partly registered.
        rep.row(
            what,
            must.then_some(done.is_ok()),
            ms(t.elapsed()),
            0.0,
            &note,
        );
    }
    // The same across a boundary on a non-blocking stream (the prover's kind), and across
    // two registrations that meet (what registering each base vector's pages gave).
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(err)?;
    drop(pin);
    let half = (n / 2) & !(PAGE - 1);
    // SAFETY: as above; the two ranges are whole pages of `map` and do not overlap.
    let pins = unsafe {
        (
            HostPin::new(
                0,
                map[4 * PAGE..].as_ptr() as *mut u8,
                half - 4 * PAGE,
                true,
            )?,
            HostPin::new(
                0,
                map[half..].as_ptr() as *mut u8,
                n - half - 4 * PAGE,
                true,
            )?,
        )
    };
    for (what, range) in [
        (
            "non-blocking stream: across a registered range's first page",
            2 * PAGE..6 * PAGE,
        ),
        (
            "non-blocking stream: across two registrations that meet",
            half - 2 * PAGE..half + 2 * PAGE,
        ),
        ("non-blocking stream: pageable, registered, pageable", 0..n),
    ] {
        let t = Instant::now();
        // SAFETY: dst holds n bytes; the source is mapped; synchronized before returning.
        let done = unsafe { result::memcpy_htod_async(dst, &map[range], stream) }
            .and_then(|()| unsafe { result::stream::synchronize(stream) });
        let note = match &done {
            Ok(()) => "copied".to_string(),
            Err(e) => format!("refused: {e:?}"),
        };
        rep.row(what, None, ms(t.elapsed()), 0.0, &note);
    }
    drop(pins);
    // SAFETY: allocated above; no copy is in flight (synchronized).
    unsafe { result::free_sync(dst) }.map_err(err)?;
    Ok(())
}
