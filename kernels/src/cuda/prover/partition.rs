//! What one `prove` call is given: the partition (its evaluations of A and B brought or made
//! on the device, the scalars and plans), the proving key's bases, and what the next call's
//! partition sends ahead; and what a prover remembers of that upload.

use blstrs::{G1Affine, G2Affine, Scalar as Fr};

use crate::msm::scalars::Limbs;
use crate::msm::PlanRef;

/// One partition's inputs, as synthesis and prep_msm leave them.
pub struct GpuPartition<'a> {
    pub domain_log2: u32,
    /// Evaluations of A and B on the domain: brought, or made by the prover.
    pub evals: Evals<'a>,
    /// C's evaluations (Montgomery Fr, 2^domain_log2). None leaves C·z to the prover,
    /// which makes it as a∘b on the device (every row of an assignment that satisfies the
    /// R1CS has a·b = c: `ntt::product_coefficients`), so nothing is uploaded for it; the
    /// gpu stage's slots hold no c.
    pub c: Option<&'a [Fr]>,
    /// Canonical scalars: inputs, then aux.
    pub scalars: &'a [Limbs],
    pub l: PlanRef<'a>,
    pub a_plan: PlanRef<'a>,
    pub b_plan: PlanRef<'a>,
    /// Also compute B_G2 (with `b_plan`); needs the prover made with B_G2 bases.
    pub b_g2: bool,
    /// The proving key's bases on the host: read by a prover that streams them
    /// (`GpuProver::streams_bases`); None for a resident one.
    pub bases: Option<ResidentBases<'a>>,
}

/// Where a partition's evaluations of A and B on the domain come from.
#[derive(Clone, Copy)]
pub enum Evals<'a> {
    /// Written by synthesis: Montgomery Fr, 2^domain_log2 each.
    Given { a: &'a [Fr], b: &'a [Fr] },
    /// Made on the device from the partition's scalars (z) and the recorded R1CS the
    /// prover holds ([`r1cs_eval::set_r1cs_form`]): a = A·z, b = B·z, every recorded row's
    /// a·b = C·z checked (a row that fails fails the partition: c is then taken as a∘b).
    /// The scalars upload first, so nothing of this partition is uploaded ahead.
    FromR1cs,
}

impl<'a> Evals<'a> {
    /// a and b as brought (empty when the prover makes them).
    pub(super) fn given(&self) -> [&'a [Fr]; 2] {
        match *self {
            Evals::Given { a, b } => [a, b],
            Evals::FromR1cs => [&[], &[]],
        }
    }
}

/// The next partition's evaluations of A and B, uploaded ahead by [`GpuProver::prove_ahead`]
/// into the spare buffers while the current partition computes (`a` when the plan has one
/// spare, both when it has two). `key` names that partition for the caller (the gpu stage:
/// its slot and the slot's generation, unique to one claim); the next call uses the upload
/// only if it presents the same key and the same slices. `scalars`: Some when the next
/// partition's a and b are to be made on the device (`Evals::FromR1cs`): its scalars, which
/// it needs first, go ahead instead (into the first spare, which then changes places with
/// the scalars' buffer), and `a`, `b` are not read.
pub struct Preload<'a> {
    pub key: u64,
    pub a: &'a [Fr],
    pub b: &'a [Fr],
    pub scalars: Option<&'a [Limbs]>,
}

/// What a prover remembers of an upload ahead: the key and, per input uploaded (a, then b;
/// or the scalars), where the caller's slice lies and its length.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) struct Preloaded {
    key: u64,
    pub(super) inputs: Vec<(usize, usize)>,
    pub(super) scalars: bool,
}

impl Preloaded {
    pub(super) fn of(key: u64, inputs: &[&[Fr]]) -> Self {
        Preloaded {
            key,
            inputs: inputs
                .iter()
                .map(|v| (v.as_ptr() as usize, v.len()))
                .collect(),
            scalars: false,
        }
    }

    pub(super) fn scalars_of(key: u64, z: &[Limbs]) -> Self {
        Preloaded {
            key,
            inputs: vec![(z.as_ptr() as usize, z.len())],
            scalars: true,
        }
    }
}

/// The proving key's base vectors a prover keeps resident: H, L, A, B_G1 always; B_G2 when
/// the device is to compute it (same count as B_G1).
#[derive(Clone, Copy)]
pub struct ResidentBases<'a> {
    pub h: &'a [G1Affine],
    pub l: &'a [G1Affine],
    pub a: &'a [G1Affine],
    pub b_g1: &'a [G1Affine],
    pub b_g2: Option<&'a [G2Affine]>,
}

impl ResidentBases<'_> {
    pub(super) fn g1_counts(&self) -> [usize; 4] {
        [self.h.len(), self.l.len(), self.a.len(), self.b_g1.len()]
    }
}
