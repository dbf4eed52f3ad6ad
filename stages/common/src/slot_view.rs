//! Typed views of a partition slot's byte regions. The layout (which region holds what)
//! is `cuzk_shm_layout::shape`; this module only gives the bytes their element types.

use blstrs::{G1Projective, G2Projective, Scalar as Fr};
use cuzk_kernels::groth16::steps::{assignment_to_limbs, Densities};
use cuzk_kernels::msm::scalars::Limbs;
use cuzk_kernels::msm::{MsmPlan, PlanRef, Term};
use cuzk_kernels::witness::{CircuitShape, Evaluated, WitnessBuffers};
use cuzk_shm_layout::shape::{
    msm_result, PartitionMeta, PrepHeader, EVALS_BY_PROVER, EVALS_WRITTEN, PREP_HEADER_BYTES,
};
use cuzk_shm_layout::{Region, SlotClaim};

/// Element types a region may hold: plain data, valid for every bit pattern.
///
/// # Safety
/// Implementors must be `repr(C)`/`repr(transparent)` over integer limbs only.
pub unsafe trait SlotElement: Copy {}
// SAFETY: blst_fr is repr(C) [u64; 4]; Fr is repr(transparent) over it.
unsafe impl SlotElement for Fr {}
// SAFETY: integer arrays.
unsafe impl SlotElement for u64 {}
// SAFETY: integer arrays.
unsafe impl SlotElement for u32 {}
// SAFETY: integer arrays.
unsafe impl SlotElement for Limbs {}
// SAFETY: integer arrays.
unsafe impl SlotElement for Term {}
// SAFETY: repr(C) of u64s.
unsafe impl SlotElement for PartitionMeta {}
// SAFETY: repr(C) of u64s.
unsafe impl SlotElement for PrepHeader {}
// SAFETY: blst_p1 is repr(C) of three Fp ([u64; 6]); G1Projective is transparent over it.
unsafe impl SlotElement for G1Projective {}
// SAFETY: blst_p2 is repr(C) of three Fp2; G2Projective is transparent over it.
unsafe impl SlotElement for G2Projective {}

/// `bytes` as a slice of `T` (as many whole elements as fit).
pub fn cast<T: SlotElement>(bytes: &[u8]) -> &[T] {
    assert_eq!(
        bytes.as_ptr() as usize % std::mem::align_of::<T>(),
        0,
        "misaligned region"
    );
    // SAFETY: aligned (asserted), within `bytes`, and every bit pattern is a valid T
    // (SlotElement); the borrow of `bytes` covers the result.
    unsafe {
        std::slice::from_raw_parts(
            bytes.as_ptr() as *const T,
            bytes.len() / std::mem::size_of::<T>(),
        )
    }
}

/// `bytes` as a mutable slice of `T`.
pub fn cast_mut<T: SlotElement>(bytes: &mut [u8]) -> &mut [T] {
    assert_eq!(
        bytes.as_ptr() as usize % std::mem::align_of::<T>(),
        0,
        "misaligned region"
    );
    // SAFETY: as for `cast`, with the exclusive borrow of `bytes`.
    unsafe {
        std::slice::from_raw_parts_mut(
            bytes.as_mut_ptr() as *mut T,
            bytes.len() / std::mem::size_of::<T>(),
        )
    }
}

/// The slot's capacity as the witness writer sees it.
pub fn capacity(claim: &SlotClaim<'_>) -> CircuitShape {
    let s = claim.arena_shape();
    CircuitShape {
        num_constraints: 1usize << s.domain_log2,
        num_inputs: s.num_inputs as usize,
        num_aux: s.num_aux as usize,
    }
}

/// The buffers synthesis writes: a, b, the assignment split into inputs (capacity many)
/// and aux, and the densities. No c: a slot has none (its prover makes c = a∘b), so
/// synthesis into a slot takes `CValues::LeftOut`.
pub fn witness_buffers<'c>(claim: &'c mut SlotClaim<'_>) -> WitnessBuffers<'c> {
    let cap_inputs = capacity(claim).num_inputs;
    let [a, b, z, da, dbi, dba] = claim.regions_mut([
        Region::EvalA,
        Region::EvalB,
        Region::Assignment,
        Region::DensityAAux,
        Region::DensityBInput,
        Region::DensityBAux,
    ]);
    let (inputs, aux) = cast_mut::<Fr>(z).split_at_mut(cap_inputs);
    WitnessBuffers {
        a: cast_mut(a),
        b: cast_mut(b),
        c: &mut [],
        inputs,
        aux,
        a_aux_density: cast_mut(da),
        b_input_density: cast_mut(dbi),
        b_aux_density: cast_mut(dba),
    }
}

/// After synthesis: records the actual shape, closes the gap between the inputs and the
/// aux variables when the partition has fewer inputs than the slot's capacity (so the
/// assignment is one array, inputs then aux, as the MSM plans index it) and rewrites the
/// assignment as canonical limbs. `evals`: what synthesis wrote of a and b (recorded for the
/// prover: [`evals_by_prover`]).
pub fn seal_witness(claim: &mut SlotClaim<'_>, actual: &CircuitShape, evals: Evaluated) {
    let cap_inputs = capacity(claim).num_inputs;
    if actual.num_inputs < cap_inputs {
        let z = cast_mut::<Fr>(claim.region_mut(Region::Assignment));
        z.copy_within(cap_inputs..cap_inputs + actual.num_aux, actual.num_inputs);
    }
    // Canonical limbs from here on: Pippenger reads the scalars' bits. Done here, by the
    // stage that owns the assignment, so the later stages only read it and a stage killed
    // half way leaves its input intact for the redo.
    let n = actual.num_inputs + actual.num_aux;
    assignment_to_limbs(&mut cast_mut::<Fr>(claim.region_mut(Region::Assignment))[..n]);
    cast_mut::<PartitionMeta>(claim.region_mut(Region::Meta))[0] = PartitionMeta {
        num_constraints: actual.num_constraints as u64,
        num_inputs: actual.num_inputs as u64,
        num_aux: actual.num_aux as u64,
        evals: match evals {
            Evaluated::Here(_) => EVALS_WRITTEN,
            Evaluated::ByProver => EVALS_BY_PROVER,
        },
    };
}

/// Whether synthesis left the slot's a and b to the prover (to make from the recorded R1CS).
pub fn evals_by_prover(claim: &SlotClaim<'_>) -> bool {
    cast::<PartitionMeta>(claim.region(Region::Meta))[0].evals == EVALS_BY_PROVER
}

/// The slot's a and b over the partition's domain as synthesis wrote them; None where it
/// left them to the prover. A slot that says they are written and has no room for them
/// (an arena sized without a and b) is an error.
pub fn written_evals<'c>(claim: &'c SlotClaim<'_>) -> anyhow::Result<Option<[&'c [Fr]; 2]>> {
    if evals_by_prover(claim) {
        return Ok(None);
    }
    let n = meta(claim).domain_size();
    let get = |r: Region| {
        cast::<Fr>(claim.region(r)).get(..n).ok_or_else(|| {
            anyhow::anyhow!(
                "the slot says its a and b are written, and its {r:?} region holds fewer than the domain's {n} values (slots sized without a and b: CUZK_SYNTHESIS_AB=prover)"
            )
        })
    };
    Ok(Some([get(Region::EvalA)?, get(Region::EvalB)?]))
}

/// The partition's actual shape, as synthesis recorded it.
pub fn meta(claim: &SlotClaim<'_>) -> CircuitShape {
    let m = cast::<PartitionMeta>(claim.region(Region::Meta))[0];
    CircuitShape {
        num_constraints: m.num_constraints as usize,
        num_inputs: m.num_inputs as usize,
        num_aux: m.num_aux as usize,
    }
}

/// The density bitmaps (read-only).
pub fn densities<'c>(claim: &'c SlotClaim<'_>) -> Densities<'c> {
    Densities {
        a_aux: cast(claim.region(Region::DensityAAux)),
        b_input: cast(claim.region(Region::DensityBInput)),
        b_aux: cast(claim.region(Region::DensityBAux)),
    }
}

/// Writes a plan given as its pieces in order (`steps::PlanPieces::each`: the inputs'
/// part, then the aux chunks') into a prep region: header, the ones (u32), then the terms
/// at the next 8-byte boundary. Each piece is copied once, straight from where the scan
/// made it. Returns the header written.
pub fn write_plan(region: &mut [u8], pieces: &[&MsmPlan]) -> PrepHeader {
    let [ones, terms, zeros] = MsmPlan::counts(pieces);
    let header = PrepHeader {
        ones: ones as u64,
        terms: terms as u64,
        zeros: zeros as u64,
    };
    let (head, body) = region.split_at_mut(PREP_HEADER_BYTES as usize);
    cast_mut::<PrepHeader>(head)[0] = header;
    let (ones_region, terms_region) = body.split_at_mut((ones * 4).div_ceil(8) * 8);
    MsmPlan::gather_into(
        pieces,
        &mut cast_mut::<u32>(ones_region)[..ones],
        &mut cast_mut::<Term>(terms_region)[..terms],
    );
    header
}

/// Reads a plan written by [`write_plan`], in place.
pub fn read_plan(region: &[u8]) -> (PlanRef<'_>, PrepHeader) {
    let (head, body) = region.split_at(PREP_HEADER_BYTES as usize);
    let h = cast::<PrepHeader>(head)[0];
    let ones_bytes = (h.ones as usize * 4).div_ceil(8) * 8;
    let (ones, terms) = body.split_at(ones_bytes);
    (
        PlanRef {
            ones: &cast::<u32>(ones)[..h.ones as usize],
            terms: &cast::<Term>(terms)[..h.terms as usize],
        },
        h,
    )
}

/// Where each MSM result lies in [`Region::MsmResults`].
#[derive(Clone, Copy, Debug)]
pub enum MsmResult {
    H,
    L,
    A,
    BG1,
}

impl MsmResult {
    fn offset(self) -> usize {
        (match self {
            MsmResult::H => msm_result::H,
            MsmResult::L => msm_result::L,
            MsmResult::A => msm_result::A,
            MsmResult::BG1 => msm_result::B_G1,
        }) as usize
    }
}

pub fn write_g1(region: &mut [u8], which: MsmResult, p: &G1Projective) {
    let at = which.offset();
    cast_mut::<G1Projective>(&mut region[at..at + 144])[0] = *p;
}

pub fn read_g1(region: &[u8], which: MsmResult) -> G1Projective {
    let at = which.offset();
    cast::<G1Projective>(&region[at..at + 144])[0]
}

pub fn write_b_g2(region: &mut [u8], p: &G2Projective) {
    let at = msm_result::B_G2 as usize;
    cast_mut::<G2Projective>(&mut region[at..at + 288])[0] = *p;
}

pub fn read_b_g2(region: &[u8]) -> G2Projective {
    let at = msm_result::B_G2 as usize;
    cast::<G2Projective>(&region[at..at + 288])[0]
}

/// What the gpu stage reads from a prepped slot: the partition's shape, its canonical
/// assignment (inputs then aux) and the L, A, B plans, checked against the proving key.
pub struct MsmInputs<'c> {
    pub shape: CircuitShape,
    pub z: &'c [Limbs],
    /// L, A, B.
    pub plans: [PlanRef<'c>; 3],
}

pub fn msm_inputs<'c>(
    claim: &'c SlotClaim<'_>,
    srs: &cuzk_kernels::srs::SrsView<'_>,
) -> Result<MsmInputs<'c>, cuzk_kernels::groth16::ProveError> {
    let shape = meta(claim);
    cuzk_kernels::groth16::steps::check_params(srs, &shape, densities(claim))?;
    let z = &cast::<Limbs>(claim.region(Region::Assignment))[..shape.num_inputs + shape.num_aux];
    let plan = |r| read_plan(claim.region(r)).0;
    Ok(MsmInputs {
        shape,
        z,
        plans: [
            plan(Region::PrepL),
            plan(Region::PrepA),
            plan(Region::PrepB),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan written as pieces (one without ones, one without terms, three ones in all
    /// so the terms start after padding) reads back as the pieces one after another, with
    /// the header's counts.
    #[test]
    fn plan_written_as_pieces_reads_back_in_order() {
        let piece = |ones: Vec<u32>, terms: Vec<Term>, zeros| MsmPlan { ones, terms, zeros };
        let pieces = [
            piece(vec![3], vec![], 2),
            piece(vec![], vec![[5, 9]], 0),
            piece(vec![7, 8], vec![[10, 11], [12, 13]], 4),
        ];
        let refs: Vec<&MsmPlan> = pieces.iter().collect();
        let mut buf = vec![0xAAu8; 256 + 8];
        let at = buf.as_ptr().align_offset(8);
        let region = &mut buf[at..at + 256];
        let written = write_plan(region, &refs);
        let (plan, header) = read_plan(region);
        for h in [written, header] {
            assert_eq!((h.ones, h.terms, h.zeros), (3, 3, 6));
        }
        assert_eq!(plan.ones, &[3, 7, 8]);
        assert_eq!(plan.terms, &[[5, 9], [10, 11], [12, 13]]);
    }
}
