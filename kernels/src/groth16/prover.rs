//! A Groth16 proof from a synthesized witness in one call: the steps of `steps.rs` in
//! order (the stage processes run the same steps, each its own part).

use std::time::{Duration, Instant};

use blstrs::Scalar as Fr;

use super::epilogue::{combine, MsmResults};
use super::steps::{self, Densities};
use super::Proof;
use crate::srs::Srs;
use crate::witness::{CircuitShape, WitnessBuffers};

#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error("parameters do not match the circuit: vector `{vector}` has {got} points, the circuit needs {expected}")]
    ParamsMismatch {
        vector: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("parameters have δ at infinity (a subverted setup); refusing to prove")]
    DeltaAtInfinity,
}

/// Wall time of each step of one proof.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProverTimings {
    /// H = (A·B − C)/Z: six NTTs and the pointwise steps.
    pub quotient: Duration,
    /// Scalars out of Montgomery form and classified (prep_msm).
    pub prep: Duration,
    pub msm_h: Duration,
    pub msm_l: Duration,
    pub msm_a: Duration,
    pub msm_b_g1: Duration,
    pub msm_b_g2: Duration,
    pub epilogue: Duration,
}

/// Proves with blinding factors r, s. The witness's `a`, `b`, `c` are consumed (they
/// hold H and scratch afterwards); inputs, aux and densities are only read.
pub fn prove(
    srs: &Srs,
    shape: &CircuitShape,
    w: WitnessBuffers<'_>,
    r: Fr,
    s: Fr,
) -> Result<(Proof, ProverTimings), ProveError> {
    let srs = srs.view();
    let d = Densities {
        a_aux: w.a_aux_density,
        b_input: w.b_input_density,
        b_aux: w.b_aux_density,
    };
    steps::check_params(&srs, shape, d)?;
    let (n_in, n_aux) = (shape.num_inputs, shape.num_aux);
    let mut t = ProverTimings::default();

    let start = Instant::now();
    let h = steps::h_scalars(w.a, w.b, w.c, shape.domain_log2());
    t.quotient = start.elapsed();

    let start = Instant::now();
    let z = steps::canonical_assignment(&w.inputs[..n_in], &w.aux[..n_aux]);
    let plans = steps::plan_msms(&z, n_in, d);
    t.prep = start.elapsed();

    let mut times = [Duration::ZERO; 4];
    let g1 = steps::g1_msms(
        &srs,
        h,
        &z,
        [plans.l.as_ref(), plans.a.as_ref(), plans.b.as_ref()],
        &mut times,
    );
    [t.msm_h, t.msm_l, t.msm_a, t.msm_b_g1] = times;
    let start = Instant::now();
    let b_g2 = steps::b_g2_msm(&srs, &z, plans.b.as_ref());
    t.msm_b_g2 = start.elapsed();

    let start = Instant::now();
    let m = MsmResults {
        h: g1.h,
        l: g1.l,
        a: g1.a,
        b_g1: g1.b_g1,
        b_g2,
    };
    let proof = combine(&srs.vk, &m, r, s);
    t.epilogue = start.elapsed();
    Ok((proof, t))
}
