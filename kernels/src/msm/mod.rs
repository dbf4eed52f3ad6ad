//! Multi-scalar multiplication Σ k_i·P_i over G1 and G2, split the way Groth16 scalars
//! want it: scalars equal to 0 are skipped, scalars equal to 1 are summed by batch
//! addition, the rest go through Pippenger.

mod batch_affine;
mod batch_sum;
mod curve;
pub mod mix;
mod pippenger;
mod plan;
pub mod scalars;

pub use batch_sum::{sum_indexed, tree_sum};
pub use curve::AffinePoint;
pub use pippenger::{msm, msm_with, Term, WindowPlan};
pub use plan::{MsmPlan, PlanRef, Query, Reader};
