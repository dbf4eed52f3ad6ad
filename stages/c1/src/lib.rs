//! cuzk-c1: reads a commit-phase-1 (C1) output, in the lotus/Curio envelope or as bare
//! filecoin-proofs-api JSON, and exposes what synthesis and verification need.

pub mod error;
pub mod input;
pub mod open;
pub mod parse;
pub mod proof_type;
pub mod prover_id;
pub mod shape;

pub use error::{C1Error, C1Part};
pub use input::{C1Input, GivenIds};
pub use parse::C1Format;
pub use proof_type::RegisteredSealProof;
pub use prover_id::prover_id_from_miner_id;
pub use shape::{with_tree_shape, ShapeVisitor};
