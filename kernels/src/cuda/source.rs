//! The kernel sources, embedded, and their run-time compilation by NVRTC (once per process).
//!
//! Layers in order, each using only those before it: field → curve → algorithms.

use std::sync::OnceLock;

use super::GpuError;

/// The `.cu` files of `kernels/cuda/`, in layer order.
pub const SOURCES: [(&str, &str); 7] = [
    ("field.cuh", include_str!("../../cuda/field.cuh")),
    ("bls12_381.cuh", include_str!("../../cuda/bls12_381.cuh")),
    ("g1.cuh", include_str!("../../cuda/g1.cuh")),
    ("ntt.cu", include_str!("../../cuda/ntt.cu")),
    ("msm.cu", include_str!("../../cuda/msm.cu")),
    ("srs.cu", include_str!("../../cuda/srs.cu")),
    ("selftest.cu", include_str!("../../cuda/selftest.cu")),
];

/// The target: Hopper (H100, H200).
pub const ARCH: &str = "sm_90";

/// One translation unit: the sources concatenated in layer order.
pub fn program() -> String {
    let mut s = String::new();
    for (name, text) in SOURCES {
        s.push_str(&format!("// ---- {name}\n"));
        s.push_str(text);
        s.push('\n');
    }
    s
}

/// Whether libnvrtc can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library by its usual names; no symbol is called.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compiles the program to PTX for [`ARCH`] with NVRTC.
pub fn compile() -> Result<String, GpuError> {
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(ARCH),
        options: vec!["--std=c++17".into(), "-default-device".into()],
        name: Some("cuzk.cu".into()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(program(), opts)
        .map_err(|e| GpuError::Compile(e.to_string()))?;
    Ok(ptx.to_src())
}

/// [`compile`], once per process.
pub fn ptx() -> Result<&'static str, GpuError> {
    static PTX: OnceLock<Result<String, String>> = OnceLock::new();
    match PTX.get_or_init(|| compile().map_err(|e| e.to_string())) {
        Ok(p) => Ok(p),
        Err(e) if e.starts_with("NVRTC not found") => Err(GpuError::NoNvrtc),
        Err(e) => Err(GpuError::Compile(e.clone())),
    }
}
