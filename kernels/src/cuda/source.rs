//! The kernel sources, embedded, and their run-time compilation by NVRTC (once per process).
//!
//! Layers in order, each using only those before it: field → curve → algorithms.
//!
//! NVRTC compiles for a real architecture (`sm_XY`), so it runs ptxas itself and hands back
//! a CUBIN: the driver loads that as it lies. Loading NVRTC's PTX instead made the driver
//! JIT-compile it again at module load (seconds on a fresh machine, docs/gpu.md).

use std::ffi::{c_char, CStr};
use std::sync::OnceLock;

use cudarc::nvrtc::{result, sys};

use super::GpuError;

/// The `.cu` files of `kernels/cuda/`, in layer order.
pub const SOURCES: [(&str, &str); 15] = [
    ("field.cuh", include_str!("../../cuda/field.cuh")),
    ("bls12_381.cuh", include_str!("../../cuda/bls12_381.cuh")),
    ("shoup.cuh", include_str!("../../cuda/shoup.cuh")),
    ("fp2.cuh", include_str!("../../cuda/fp2.cuh")),
    ("ec.cuh", include_str!("../../cuda/ec.cuh")),
    ("ntt.cu", include_str!("../../cuda/ntt.cu")),
    ("msm.cu", include_str!("../../cuda/msm.cu")),
    ("pairs.cu", include_str!("../../cuda/pairs.cu")),
    ("ec_dft.cu", include_str!("../../cuda/ec_dft.cu")),
    ("h_lagrange.cu", include_str!("../../cuda/h_lagrange.cu")),
    ("c_fold.cu", include_str!("../../cuda/c_fold.cu")),
    ("r1cs.cu", include_str!("../../cuda/r1cs.cu")),
    ("srs.cu", include_str!("../../cuda/srs.cu")),
    ("selftest.cu", include_str!("../../cuda/selftest.cu")),
    ("ceiling.cu", include_str!("../../cuda/ceiling.cu")),
];

/// The default target: Hopper (H100, H200). [`compile_for`] takes any real architecture.
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
    unsafe { sys::is_culib_present() }
}

/// What NVRTC made of the program for one architecture.
pub struct Compiled {
    /// `sm_XY`.
    pub arch: String,
    /// Device code for `arch`, loaded by the driver without further compilation.
    pub cubin: Vec<u8>,
    /// The intermediate PTX (for `ptxas -v` register reports and the CI test).
    pub ptx: String,
}

/// Compiles the program for [`ARCH`].
pub fn compile() -> Result<Compiled, GpuError> {
    compile_for(ARCH)
}

/// An NVRTC program, destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

fn nvrtc_err(what: &str, e: result::NvrtcError) -> GpuError {
    GpuError::Compile(format!("{what}: {e}"))
}

/// Compiles the program to a CUBIN (and PTX) for the real architecture `arch` (`sm_XY`).
pub fn compile_for(arch: &str) -> Result<Compiled, GpuError> {
    if !nvrtc_present() {
        return Err(GpuError::NoNvrtc);
    }
    if !arch.starts_with("sm_") {
        return Err(GpuError::Compile(format!(
            "{arch}: a real architecture (sm_XY) is needed for a CUBIN"
        )));
    }
    let src = std::ffi::CString::new(program()).expect("kernel sources hold no NUL");
    let prog = Program(
        result::create_program(&src, Some(c"cuzk.cu")).map_err(|e| nvrtc_err("create", e))?,
    );
    let opts = [
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "-default-device".into(),
        // ptxas compiles the kernels on all host cores; the code is the same (SASS
        // compared), only the start is shorter.
        "-Xptxas=--split-compile=0".into(),
    ];
    // SAFETY: `prog` is live (destroyed by its Drop after the last use below); `src`
    // outlives it.
    if let Err(e) = unsafe { result::compile_program(prog.0, &opts) } {
        // SAFETY: as above; NVRTC writes the log NUL-terminated into a buffer of its size.
        let log = unsafe {
            result::get_program_log(prog.0)
                .map(|l| CStr::from_ptr(l.as_ptr()).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        return Err(GpuError::Compile(format!("{e}: {log}")));
    }
    // SAFETY: `prog` compiled successfully; the buffers are sized by NVRTC's own answer.
    let (cubin, ptx) = unsafe {
        let mut size = 0usize;
        sys::nvrtcGetCUBINSize(prog.0, &mut size)
            .result()
            .map_err(|e| nvrtc_err("CUBIN size", e))?;
        let mut cubin = vec![0u8; size];
        sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char)
            .result()
            .map_err(|e| nvrtc_err("CUBIN", e))?;
        let ptx = result::get_ptx(prog.0).map_err(|e| nvrtc_err("PTX", e))?;
        let ptx = CStr::from_ptr(ptx.as_ptr()).to_string_lossy().into_owned();
        (cubin, ptx)
    };
    if cubin.is_empty() {
        return Err(GpuError::Compile(format!("NVRTC made no CUBIN for {arch}")));
    }
    Ok(Compiled {
        arch: arch.to_string(),
        cubin,
        ptx,
    })
}

/// [`compile_for`], once per process (the first caller's `arch` wins; a process drives
/// devices of one kind).
pub fn compiled(arch: &str) -> Result<&'static Compiled, GpuError> {
    static DONE: OnceLock<Result<Compiled, String>> = OnceLock::new();
    match DONE.get_or_init(|| compile_for(arch).map_err(|e| e.to_string())) {
        Ok(c) if c.arch == arch => Ok(c),
        Ok(c) => Err(GpuError::Compile(format!(
            "kernels already compiled for {}, not {arch}",
            c.arch
        ))),
        Err(e) if e.starts_with("NVRTC not found") => Err(GpuError::NoNvrtc),
        Err(e) => Err(GpuError::Compile(e.clone())),
    }
}
