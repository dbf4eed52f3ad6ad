//! `correctness`'s check of H in Lagrange form with C folded into L (`HForm::Folded`,
//! `groth16::folded`): a fresh random sparse C over the synthetic partition's variables
//! (every kind of coefficient the fold treats apart, inputs with ONE among them, a quarter
//! of the rows empty), c = C·z, and prove()'s ΣH + ΣL against the CPU's coefficient form;
//! A, B_G1 and B_G2 as without the fold.

use std::sync::Arc;

use cuzk_kernels::cuda::set_folded_c;
use cuzk_kernels::witness::matrix::{Entry, R1csMatrix, INPUT};

use super::*;

/// ΣH on the CPU in the coefficient form from a, b, c.
pub(crate) type HOf<'a> = &'a dyn Fn(&[Fr], &[Fr], &[Fr]) -> G1Projective;

/// What the CPU computed for the partition (the coefficient form's sums).
pub(crate) struct Wanted<'a> {
    pub h_of: HOf<'a>,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b: G1Projective,
    pub b_g2: G2Projective,
}

pub(crate) fn folded_check(
    part: &SyntheticPartition,
    srs: ResidentBases<'_>,
    log: u32,
    seed: u64,
    want: &Wanted<'_>,
    rep: &mut Report,
) -> Result<(), GpuError> {
    let n = 1usize << log;
    let n_in = part.scalars.len() - srs.l.len();
    let c = Arc::new(random_c(n - n_in, n_in, srs.l.len(), seed));
    let z: Vec<Fr> = part.scalars.par_iter().map(fr_of_limbs).collect();
    let mut c_vals = c.apply(&z[..n_in], &z[n_in..]);
    c_vals.resize(n, Fr::ZERO);
    set_folded_c(Some(c.clone()));
    set_h_form(HForm::Folded);
    let fp = GpuProver::new(0, log, part.scalars.len(), srs);
    set_h_form(HForm::Coefficients);
    set_folded_c(None);
    let mut fp = fp?;
    let tc = Instant::now();
    let want_hl = (want.h_of)(&part.a, &part.b, &c_vals) + want.l;
    let tcpu = ms(tc.elapsed());
    // The prover reads no c: give it the synthetic one (not C·z) to show it is not read.
    let (r, t) = fp.prove(&part.as_gpu(true))?;
    let ok = fp.c_folded_into_l()
        && r.h + r.l == want_hl
        && r.a == want.a
        && r.b_g1 == want.b
        && r.b_g2 == Some(want.b_g2);
    let stats = c.stats();
    rep.row(
        &format!("prove() 2^{log}, C folded into L vs CPU"),
        Some(ok),
        ms(t.total),
        tcpu,
        &format!(
            "folded {}, h + l {} (msm_h {:.2} ms, msm_l {:.2} ms), a {} b {} b_g2 {}; C {} entries, {} rows empty",
            fp.c_folded_into_l(),
            r.h + r.l == want_hl,
            ms(t.msm_h),
            ms(t.msm_l),
            r.a == want.a,
            r.b_g1 == want.b,
            r.b_g2 == Some(want.b_g2),
            stats.entries,
            stats.empty_rows
        ),
    );
    Ok(())
}

/// `rows` rows over `n_in` inputs (ONE first) and `n_aux` aux: a quarter empty, the others
/// 1 to 3 entries, an input one time in 16, coefficients 1, −1, 2^k, small of either sign,
/// wide.
fn random_c(rows: usize, n_in: usize, n_aux: usize, seed: u64) -> R1csMatrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc0ffee);
    let mut coeffs = vec![Fr::ONE, -Fr::ONE, Fr::from(12345u64), -Fr::from(77u64)];
    coeffs.extend((0..8).map(|k| Fr::from(1u64 << (7 * k))));
    coeffs.extend((0..8).map(|_| rand_fr(&mut rng)));
    let mut entries = Vec::new();
    for row in 0..rows as u32 {
        let r = rng.next_u32();
        if r & 3 == 0 {
            continue;
        }
        for _ in 0..1 + (r >> 2) % 3 {
            let r = rng.next_u64();
            let var = if r & 15 == 0 {
                (((r >> 4) % n_in as u64) as u32) | INPUT
            } else {
                ((r >> 4) % n_aux as u64) as u32
            };
            let coeff = ((r >> 40) % coeffs.len() as u64) as u32;
            entries.push(Entry { row, var, coeff });
        }
    }
    R1csMatrix {
        rows,
        num_inputs: n_in,
        num_aux: n_aux,
        coeffs,
        entries,
    }
}
