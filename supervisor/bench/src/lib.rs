//! cuzk-bench: measures the cuzk pipeline the way operators do.
//!
//! - [`analysis`]: a timeline log read back: per-stage percentiles, GPU busy time and idle
//!   gaps, slot occupancy, per-job wall time, throughput and the stage that bounds it;
//! - [`waterfall`]: the same log as a picture (SVG);
//! - [`steps`]: a partition's GPU steps against their floors, as a picture (SVG);
//! - [`ceilings`]: each field product and the madd alone, and whole workloads, against the
//!   floors' multiply-add rate, as a picture (SVG);
//! - [`batch`]: N jobs through a running supervisor's drop directory, C in flight;
//! - [`compare`]: filecoin-proofs against our prover on the same C1, through `cuzk bench c2`;
//! - [`variants`]: builds of the kernels side by side, from `cuzk-gpu-check` reports;
//! - [`bar_chart`]: the legend and row names the bar pictures share.

pub mod analysis;
pub mod bar_chart;
pub mod batch;
pub mod ceilings;
pub mod compare;
pub mod report;
pub mod steps;
pub mod variants;
pub mod waterfall;
