//! cuzk-synthesis: the Groth16 circuit of each PoRep partition of a C1, one partition at a
//! time, with the public inputs its proof must verify against, and its synthesis through the
//! project's own constraint system (`cuzk_kernels::witness`) into caller buffers.

pub mod c_matrix;
pub mod circuits;
pub mod dispatch;
pub mod error;
pub mod exact;
mod panics;
pub mod params;
pub mod recorded;
pub mod slot;
pub mod threads;
pub mod witness;

pub use c_matrix::record_c;
pub use circuits::{PartitionCircuit, PorepCircuit, PorepCircuits};
pub use dispatch::{with_porep_circuits, CircuitsVisitor};
pub use error::SynthesisError;
pub use exact::ParamsShape;
pub use params::params_path;
pub use recorded::{record_r1cs, slot_evals_from_env, Combinations};
pub use slot::{synthesize_into_slot, synthetic_into_slot};
pub use threads::{Split, ThreadedError, ThreadedSynthesis};
pub use witness::synthesize_partition;
