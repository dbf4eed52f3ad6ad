//! What every cuzk stage process shares: the job description in the arena's job table,
//! typed views of a partition slot's regions, the decoded SRS in a shared segment, and the
//! stage loop (attach, claim, work, publish, stop on SIGTERM).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod job_spec;
pub mod params_check;
pub mod pass_through;
pub mod runtime;
pub mod slot_view;
pub mod srs_cache;

pub use job_spec::{BG2Stage, JobSpec, SyntheticJob};
pub use runtime::{StageArgs, StageRuntime};
pub use srs_cache::{is_fault_in_the_file, SrsCache};
