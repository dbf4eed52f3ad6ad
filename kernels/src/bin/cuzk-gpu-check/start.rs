//! `cuzk-gpu-check start`: the time to a ready prover.

use super::*;

/// Time from nothing to a ready `GpuProver` (context, kernels compiled and loaded, a small
/// plan allocated): what a gpu stage process pays at start. Run it with
/// `CUZK_KERNELS_LOAD=ptx CUDA_CACHE_DISABLE=1` for the old path (PTX JIT-compiled by the
/// driver, no driver cache) and without them for the CUBIN.
pub(crate) fn start(rep: &mut Report) -> Result<(), GpuError> {
    let t = Instant::now();
    // NVRTC (once per process; the prover below reuses it when the device is sm_90).
    cuzk_kernels::cuda::source::compiled(cuzk_kernels::cuda::source::ARCH)?;
    let t_nvrtc = ms(t.elapsed());
    let g = G1Affine::generator();
    let bases = vec![g; 1 << 10];
    let g2 = vec![G2Affine::generator(); 1 << 10];
    let all = ResidentBases {
        h: &bases,
        l: &bases,
        a: &bases,
        b_g1: &bases,
        b_g2: Some(&g2),
    };
    let gpu = GpuProver::new(0, 10, 1 << 10, all)?;
    let total = ms(t.elapsed());
    let how = match std::env::var("CUZK_KERNELS_LOAD").as_deref() {
        Ok("ptx") => "NVRTC PTX, driver JIT",
        _ => "NVRTC CUBIN",
    };
    let cache = if std::env::var_os("CUDA_CACHE_DISABLE").is_some() {
        ", driver cache off"
    } else {
        ""
    };
    rep.row(
        &format!("start: GpuProver::new ({how}{cache})"),
        None,
        total,
        0.0,
        &format!(
            "NVRTC {t_nvrtc:.0} ms, then context + module load + plan {:.0} ms",
            total - t_nvrtc
        ),
    );
    println!("device: {}", gpu.describe());
    Ok(())
}
