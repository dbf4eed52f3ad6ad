//! A Groth16 proof from a synthesized witness: H by NTT, the five MSMs, the epilogue.

use std::time::{Duration, Instant};

use blstrs::Scalar as Fr;
use rayon::prelude::*;

use super::epilogue::{combine, MsmResults};
use super::quotient::quotient_in_place;
use super::Proof;
use crate::msm::scalars::{self, Limbs};
use crate::msm::{MsmPlan, Query};
use crate::ntt::Domain;
use crate::srs::Srs;
use crate::witness::{density_count, CircuitShape, WitnessBuffers};

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
    /// H = (A·B − C)/Z: seven NTTs and the pointwise step.
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

fn check(vector: &'static str, got: usize, expected: usize) -> Result<(), ProveError> {
    if got == expected {
        Ok(())
    } else {
        Err(ProveError::ParamsMismatch {
            vector,
            expected,
            got,
        })
    }
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
    use group::prime::PrimeCurveAffine;
    if bool::from(srs.vk.delta_g1.is_identity() | srs.vk.delta_g2.is_identity()) {
        return Err(ProveError::DeltaAtInfinity);
    }
    let (n_in, n_aux) = (shape.num_inputs, shape.num_aux);
    let a_aux = density_count(w.a_aux_density, n_aux);
    let b_in = density_count(w.b_input_density, n_in);
    let b_aux = density_count(w.b_aux_density, n_aux);
    let n = shape.domain_size();
    check("vk.ic", srs.vk.ic.len(), n_in)?;
    check("h", srs.h.len(), n - 1)?;
    check("l", srs.l.len(), n_aux)?;
    check("a", srs.a.len(), n_in + a_aux)?;
    check("b_g1", srs.b_g1.len(), b_in + b_aux)?;
    check("b_g2", srs.b_g2.len(), b_in + b_aux)?;
    let mut t = ProverTimings::default();

    let start = Instant::now();
    let domain = Domain::new(shape.domain_log2());
    let a = &mut w.a[..n];
    quotient_in_place(a, &mut w.b[..n], &mut w.c[..n], &domain);
    drop(domain);
    t.quotient = start.elapsed();

    let start = Instant::now();
    let h = to_limbs_in_place(&mut a[..n - 1]);
    // One canonical scalar array for the whole assignment: inputs, then aux.
    let mut z: Vec<Limbs> = Vec::with_capacity(n_in + n_aux);
    z.par_extend(
        w.inputs[..n_in]
            .par_iter()
            .chain(w.aux[..n_aux].par_iter())
            .map(scalars::to_limbs),
    );
    let (z_in, z_aux) = z.split_at(n_in);
    let dense = |scalars, scalar_start, base_start| Query {
        scalars,
        scalar_start,
        base_start,
        density: None,
    };
    let plan_h = MsmPlan::build(&[dense(h, 0, 0)]);
    let plan_l = MsmPlan::build(&[dense(z_aux, n_in, 0)]);
    let plan_a = MsmPlan::build(&[
        // Every input is in A (its `input · 0 = 0` constraint), so inputs are dense.
        dense(z_in, 0, 0),
        Query {
            scalars: z_aux,
            scalar_start: n_in,
            base_start: n_in,
            density: Some(w.a_aux_density),
        },
    ]);
    let plan_b = MsmPlan::build(&[
        Query {
            scalars: z_in,
            scalar_start: 0,
            base_start: 0,
            density: Some(w.b_input_density),
        },
        Query {
            scalars: z_aux,
            scalar_start: n_in,
            base_start: b_in,
            density: Some(w.b_aux_density),
        },
    ]);
    t.prep = start.elapsed();

    let timed = |d: &mut Duration, f: &dyn Fn() -> _| {
        let start = Instant::now();
        let v = f();
        *d = start.elapsed();
        v
    };
    let m = MsmResults {
        h: timed(&mut t.msm_h, &|| plan_h.execute(&srs.h, h)),
        l: timed(&mut t.msm_l, &|| plan_l.execute(&srs.l, &z)),
        a: timed(&mut t.msm_a, &|| plan_a.execute(&srs.a, &z)),
        b_g1: timed(&mut t.msm_b_g1, &|| plan_b.execute(&srs.b_g1, &z)),
        b_g2: {
            let start = Instant::now();
            let v = plan_b.execute(&srs.b_g2, &z);
            t.msm_b_g2 = start.elapsed();
            v
        },
    };

    let start = Instant::now();
    let proof = combine(&srs.vk, &m, r, s);
    t.epilogue = start.elapsed();
    Ok((proof, t))
}

/// Converts field elements to canonical limbs where they lie and returns them as limbs,
/// so H's scalars need no second buffer of the domain's size.
fn to_limbs_in_place(v: &mut [Fr]) -> &[Limbs] {
    const _: () = assert!(std::mem::size_of::<Fr>() == std::mem::size_of::<Limbs>());
    const _: () = assert!(std::mem::align_of::<Fr>() >= std::mem::align_of::<Limbs>());
    v.par_iter_mut().with_min_len(1 << 12).for_each(|x| {
        let limbs = scalars::to_limbs(x);
        // SAFETY: Fr is a repr(transparent) wrapper of blst_fr, a repr(C) [u64; 4]; size and
        // alignment are checked above, and every bit pattern is a valid [u64; 4].
        unsafe { *(x as *mut Fr as *mut Limbs) = limbs };
    });
    // SAFETY: same layout argument; the returned slice borrows `v`, so nothing reads the
    // elements as Fr while they hold canonical limbs.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const Limbs, v.len()) }
}
