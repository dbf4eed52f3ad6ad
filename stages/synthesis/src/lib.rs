//! cuzk-synthesis: the Groth16 circuit of each PoRep partition of a C1, one partition at a
//! time, with the public inputs its proof must verify against. Running the circuit through a
//! constraint system (the project's own, in `cuzk_kernels::witness`) is the caller's job.

pub mod circuits;
pub mod dispatch;
pub mod error;

pub use circuits::{PartitionCircuit, PorepCircuit, PorepCircuits};
pub use dispatch::{with_porep_circuits, CircuitsVisitor};
pub use error::SynthesisError;
