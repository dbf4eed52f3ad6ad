//! The Groth16 prover, one file per step: the quotient H, the randomized epilogue, and
//! the prover that runs them over a synthesized witness and an SRS.

mod epilogue;
pub mod folded;
pub mod lagrange;
mod proof;
mod prover;
mod quotient;
pub mod steps;

pub use epilogue::{combine, MsmResults};
pub use proof::Proof;
pub use prover::{prove, ProveError, ProverTimings};
pub use quotient::quotient_in_place;
