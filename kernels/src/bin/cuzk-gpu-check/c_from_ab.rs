//! `correctness`'s check of C·z left to the prover (`GpuPartition::c` None, as the gpu
//! stage proves): fresh random a and b with c = a∘b (the relation every row of a satisfied
//! R1CS has), H from prove() and prove_ahead() against the CPU's coefficient form given
//! that c, and against the same prover given c.

use cuzk_kernels::cuda::{GpuPartition, Preload};

use super::folded::HOf;
use super::*;

pub(crate) fn c_from_ab_check(
    p: &mut GpuProver,
    part: &SyntheticPartition,
    seed: u64,
    rep: &mut Report,
    form: &str,
    cpu_h: HOf<'_>,
) -> Result<(), GpuError> {
    let n = part.a.len();
    let pair = |s: u64| {
        let (a, b) = (rand_frs(n, s ^ 0xa), rand_frs(n, s ^ 0xb));
        let c: Vec<Fr> = a.par_iter().zip(&b).map(|(x, y)| x * y).collect();
        (a, b, c)
    };
    let (a1, b1, c1) = pair(seed ^ 0xab1);
    let (a2, b2, c2) = pair(seed ^ 0xab2);
    let with = |a, b, c| with_inputs(part, a, b, c);
    let t0 = Instant::now();
    let (want1, want2) = (cpu_h(&a1, &b1, &c1), cpu_h(&a2, &b2, &c2));
    let tcpu = ms(t0.elapsed());
    let (made, t) = p.prove(&with(&a1, &b1, None))?;
    let (given, _) = p.prove(&with(&a1, &b1, Some(&c1)))?;
    // The gpu stage's way: the next partition's a and b uploaded ahead, its c made.
    let ahead = || {
        Some(Preload {
            key: 8,
            a: &a2[..],
            b: &b2[..],
            scalars: None,
        })
    };
    let (ahead1, _) = p.prove_ahead(&with(&a1, &b1, None), Some(7), ahead)?;
    let (ahead2, t2) = p.prove_ahead(&with(&a2, &b2, None), Some(8), || None)?;
    let ok = made.h == want1
        && given == made
        && ahead1 == made
        && ahead2.h == want2
        && ahead2.h != made.h
        && t2.a_ahead;
    rep.row(
        &format!(
            "prove() 2^{}, {form}: c = a∘b made on the device vs CPU",
            part.domain_log2
        ),
        Some(ok),
        ms(t.total),
        tcpu,
        &format!(
            "H vs CPU {}, same as with c uploaded {}, with a, b uploaded ahead {} (a ahead {})",
            made.h == want1,
            given == made,
            ahead1 == made && ahead2.h == want2,
            t2.a_ahead
        ),
    );
    Ok(())
}

/// `part` with other evaluations.
fn with_inputs<'a>(
    part: &'a SyntheticPartition,
    a: &'a [Fr],
    b: &'a [Fr],
    c: Option<&'a [Fr]>,
) -> GpuPartition<'a> {
    let mut g = part.as_gpu(true);
    (g.evals, g.c) = (cuzk_kernels::cuda::Evals::Given { a, b }, c);
    g
}
