//! The prover's steps as separate functions, so each stage process runs its own part over
//! a partition slot (host-prep: `assignment_to_limbs`, `plan_msms`, `b_g2_msm`; the GPU
//! stage: `h_scalars`, `g1_msms`; the epilogue: `combine`), and `prove` runs them all.
//!
//! Groth16 (bellperson's prover), with z = (1, inputs…, aux…), A(X) = Σ z_j·u_j(X) etc.:
//!   H  = Σ_i h_i·[τ^i·Z(τ)/δ]₁          h = coefficients of (A·B − C)/Z
//!   L  = Σ_{aux j} z_j·[(β·u_j + α·v_j + w_j)(τ)/δ]₁
//!   ΣA = Σ_{j in A} z_j·[u_j(τ)]₁,   ΣB = Σ_{j in B} z_j·[v_j(τ)]₁ (G1 and G2)

use blstrs::{G1Projective, G2Projective, Scalar as Fr};
use rayon::prelude::*;

use super::quotient::quotient_in_place;
use super::ProveError;
use crate::msm::scalars::{self, Limbs};
use crate::msm::{MsmPlan, PlanRef, Query, Reader};
use crate::ntt::Domain;
use crate::srs::SrsView;
use crate::witness::{density_count, CircuitShape, WitnessBuffers};

/// The density bitmaps synthesis produced.
#[derive(Clone, Copy, Debug)]
pub struct Densities<'a> {
    pub a_aux: &'a [u64],
    pub b_input: &'a [u64],
    pub b_aux: &'a [u64],
}

impl<'a> Densities<'a> {
    /// The bitmaps of a witness in heap buffers.
    pub fn of(w: &'a WitnessBuffers<'_>) -> Self {
        Densities {
            a_aux: w.a_aux_density,
            b_input: w.b_input_density,
            b_aux: w.b_aux_density,
        }
    }
}

/// The assignment z = (inputs…, aux…) as one array of canonical scalars, from the two
/// heap buffers a witness keeps them in (a slot holds them contiguously already and uses
/// `assignment_to_limbs` in place).
pub fn canonical_assignment(inputs: &[Fr], aux: &[Fr]) -> Vec<Limbs> {
    let mut z: Vec<Limbs> = Vec::with_capacity(inputs.len() + aux.len());
    z.par_extend(
        inputs
            .par_iter()
            .chain(aux.par_iter())
            .map(scalars::to_limbs),
    );
    z
}

/// The classified L, A and B MSMs of one partition.
#[derive(Debug, Default)]
pub struct MsmPlans {
    pub l: MsmPlan,
    pub a: MsmPlan,
    pub b: MsmPlan,
}

/// The four G1 sums the GPU stage computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct G1Sums {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
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

/// Every vector of the SRS has exactly the points this partition's shape and densities use.
pub fn check_params(
    srs: &SrsView<'_>,
    shape: &CircuitShape,
    d: Densities<'_>,
) -> Result<(), ProveError> {
    use group::prime::PrimeCurveAffine;
    if bool::from(srs.vk.delta_g1.is_identity() | srs.vk.delta_g2.is_identity()) {
        return Err(ProveError::DeltaAtInfinity);
    }
    let (n_in, n_aux) = (shape.num_inputs, shape.num_aux);
    let a_aux = density_count(d.a_aux, n_aux);
    let b_in = density_count(d.b_input, n_in);
    let b_aux = density_count(d.b_aux, n_aux);
    check("vk.ic", srs.vk.ic.len(), n_in)?;
    check("h", srs.h.len(), shape.domain_size() - 1)?;
    check("l", srs.l.len(), n_aux)?;
    check("a", srs.a.len(), n_in + a_aux)?;
    check("b_g1", srs.b_g1.len(), b_in + b_aux)?;
    check("b_g2", srs.b_g2.len(), b_in + b_aux)
}

/// Rewrites field elements as canonical little-endian limbs where they lie (out of
/// Montgomery form: Pippenger reads the scalar's bits) and returns them as limbs.
pub fn assignment_to_limbs(v: &mut [Fr]) -> &[Limbs] {
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

/// The L, A and B plans as prep_msm's scan leaves them: the inputs' plans (a few
/// hundred variables), then the aux chunks' parts (`MsmPlan::scan_parts`). Each plan is
/// its pieces concatenated; host-prep copies them into its slot once ([`PlanPieces::each`])
/// and keeps the pieces' buffers for its next partition ([`PlanPieces::scan`]),
/// [`plan_msms`] gathers them into vectors.
#[derive(Default)]
pub struct PlanPieces {
    inputs: [MsmPlan; 3],
    aux: Vec<[MsmPlan; 3]>,
}

impl PlanPieces {
    /// [`plan_msms`]' scan of `z` into these pieces: the previous scan's are cleared and
    /// their capacity reused (`MsmPlan::scan_parts_into`).
    pub fn scan(&mut self, z: &[Limbs], n_in: usize, d: Densities<'_>) {
        let (z_in, z_aux) = z.split_at(n_in);
        let b_in = density_count(d.b_input, n_in);
        // The inputs first (a few hundred): A has every input (its `input · 0 = 0`
        // constraint), B those of its density; L has none.
        let inputs = |density| {
            MsmPlan::build(&[Query {
                scalars: z_in,
                scalar_start: 0,
                base_start: 0,
                density,
            }])
        };
        self.inputs = [MsmPlan::default(), inputs(None), inputs(Some(d.b_input))];
        // Then the aux variables, read once for the three: L has every one (its bases from
        // 0), A those of its aux density (after the inputs' bases), B those of its own.
        let reader = |base_start, density| Reader {
            base_start,
            density,
        };
        MsmPlan::scan_parts_into(
            &mut self.aux,
            z_aux,
            n_in,
            [
                reader(0, None),
                reader(n_in, Some(d.a_aux)),
                reader(b_in, Some(d.b_aux)),
            ],
        );
    }

    /// The pieces of L, A and B, each in its order.
    pub fn each(&self) -> [Vec<&MsmPlan>; 3] {
        std::array::from_fn(|k| {
            std::iter::once(&self.inputs[k])
                .chain(self.aux.iter().map(|part| &part[k]))
                .collect()
        })
    }
}

/// prep_msm: classifies every scalar of L, A and B into 0 / 1 / other and pairs it with
/// its base. `z` is the canonical assignment, inputs (n_in of them) then aux.
pub fn plan_msms(z: &[Limbs], n_in: usize, d: Densities<'_>) -> MsmPlans {
    let [l, a, b] = plan_pieces(z, n_in, d).each().map(|p| MsmPlan::gather(&p));
    MsmPlans { l, a, b }
}

/// [`plan_msms`]' scan, its plans left in pieces.
pub fn plan_pieces(z: &[Limbs], n_in: usize, d: Densities<'_>) -> PlanPieces {
    let mut pieces = PlanPieces::default();
    pieces.scan(z, n_in, d);
    pieces
}

/// H = (A·B − C)/Z by six NTTs, in `a`; returns its n − 1 coefficients as canonical
/// limbs (the last coefficient of a degree n − 2 quotient is never used).
pub fn h_scalars<'a>(a: &'a mut [Fr], b: &mut [Fr], c: &mut [Fr], domain_log2: u32) -> &'a [Limbs] {
    let n = 1usize << domain_log2;
    let domain = Domain::new(domain_log2);
    quotient_in_place(&mut a[..n], &mut b[..n], &mut c[..n], &domain);
    assignment_to_limbs(&mut a[..n - 1])
}

/// The GPU stage's MSMs on the CPU: H over the dense h scalars, then L, A and B_G1 from
/// their plans over the canonical assignment `z`. Times each into `times` (h, l, a, b_g1).
pub fn g1_msms(
    srs: &SrsView<'_>,
    h: &[Limbs],
    z: &[Limbs],
    plans: [PlanRef<'_>; 3],
    times: &mut [std::time::Duration; 4],
) -> G1Sums {
    let timed = |d: &mut std::time::Duration, f: &dyn Fn() -> G1Projective| {
        let start = std::time::Instant::now();
        let v = f();
        *d = start.elapsed();
        v
    };
    let [th, tl, ta, tb] = times;
    let plan_h = MsmPlan::build(&[Query {
        scalars: h,
        scalar_start: 0,
        base_start: 0,
        density: None,
    }]);
    G1Sums {
        h: timed(th, &|| plan_h.execute(srs.h, h)),
        l: timed(tl, &|| plans[0].execute(srs.l, z)),
        a: timed(ta, &|| plans[1].execute(srs.a, z)),
        b_g1: timed(tb, &|| plans[2].execute(srs.b_g1, z)),
    }
}

/// ΣB in G2 (host-prep does it on the CPU, beside the GPU's G1 work).
pub fn b_g2_msm(srs: &SrsView<'_>, z: &[Limbs], plan_b: PlanRef<'_>) -> G2Projective {
    plan_b.execute(srs.b_g2, z)
}
