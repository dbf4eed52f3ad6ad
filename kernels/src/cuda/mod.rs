//! The CUDA backend: our own BLS12-381 kernels (`kernels/cuda/*.cu`, compiled at run time
//! by NVRTC for sm_90) and the host code that drives them. See docs/gpu.md.
//!
//! Entry point: [`GpuProver`], one per device (B_G2 included when given its bases).
//! [`GpuG2Msm`] is the B_G2 MSM alone, for checks and timing against the CPU (same kernels
//! and launch sequence as the prover's). Without a driver or NVRTC every constructor
//! returns a [`GpuError`] (never panics), so callers can fall back to the CPU path.

#![deny(unsafe_op_in_unsafe_fn)]

mod c_fold;
mod device;
mod error;
mod host_pin;
mod lagrange;
pub mod lagrange_cache;
pub mod layout;
pub mod memory_plan;
pub mod msm;
pub mod msm_g2;
mod ntt;
mod prover;
pub mod r1cs_eval;
pub mod source;
mod staged_upload;
mod step_log;
pub mod stream;
pub mod synthetic;

pub use c_fold::{fold_chunks, CHUNK_COST};
pub use error::GpuError;
pub use host_pin::HostPin;
pub use lagrange::{
    glv_beta, glv_split, h_form, lagrange_bases_on, set_folded_c, set_h_form, set_lagrange_cache,
    HForm,
};
pub use msm_g2::{G2Timings, GpuG2Msm};
pub use ntt::{set_full_tables, set_pass_build, PassBuild as NttPassBuild};
pub use prover::{
    plan_bytes, BaseSet, Ceiling, Evals, GpuPartition, GpuProver, GpuResults, GpuTimings, Preload,
    ResidentBases, FLOOR_RATE,
};
pub use r1cs_eval::set_r1cs_form;

/// Whether a CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda by its usual names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

impl BaseSet {
    fn from_index(i: usize) -> BaseSet {
        [BaseSet::H, BaseSet::L, BaseSet::A, BaseSet::BG1][i]
    }
}
