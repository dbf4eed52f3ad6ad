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
    Ok(())
}
