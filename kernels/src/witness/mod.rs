//! Witness generation into caller-owned buffers.
//!
//! [`WitnessWriter`] is a bellpepper `ConstraintSystem` that synthesizes any bellperson
//! circuit straight into [`WitnessBuffers`]: the a, b, c evaluations, the assignments and
//! the density bitmaps. It computes exactly what bellperson's own prover records, so a
//! proof from these buffers is the proof bellperson would make. [`census::CensusCs`] counts
//! a circuit's variables by the gadget that allocated them (the scalar mix of sizes we
//! cannot synthesize here).

pub mod blocks;
mod buffers;
pub mod c_matrix;
pub mod census;
pub mod device_form;
pub mod matrix;
mod matrix_runs;
pub mod r1cs;
mod shape;
mod writer;

pub use blocks::{synthesize_blocks_into, BlockLayout, BlocksError};
pub use buffers::{density_bit, density_count, first_difference, OwnedWitness, WitnessBuffers};
pub use matrix::{R1csMatrix, Recorded, Which};
pub use r1cs::{Evaluated, R1cs, R1csError};
pub use shape::CircuitShape;
pub use writer::{synthesize_into, CValues, WitnessError, WitnessWriter};
