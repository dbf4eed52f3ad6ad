//! cuzk-kernels: the mathematics of a Groth16 proof over BLS12-381.
//!
//! Layers never reach upward: `ntt` and `msm` know nothing of Groth16; `groth16`
//! combines them; `srs` reads parameter files; `witness` fills the buffers the prover reads.

pub mod copy;
pub mod cuda;
pub mod field;
pub mod groth16;
pub mod msm;
pub mod ntt;
pub mod progress;
pub mod srs;
pub mod synthetic;
pub mod witness;
