//! Partition shape and the byte layout of one partition slot.
//!
//! Every size is computed in `u64` with checked arithmetic: a 32 GiB PoRep partition needs
//! ~18 GiB per slot, and the layout must be right on any target before anything is mapped.

use crate::error::ShmError;

/// Bytes of one BLS12-381 scalar (Fr), as synthesis writes it.
pub const FR_BYTES: u64 = 32;
/// Bytes of one projective G1 point (x, y, z over Fp, 48 B each).
pub const G1_PROJECTIVE_BYTES: u64 = 144;
/// Bytes of one projective G2 point (x, y, z over Fp2, 96 B each).
pub const G2_PROJECTIVE_BYTES: u64 = 288;
/// Every region starts on a 4 KiB boundary: page-granular for DMA registration and for
/// huge-page backed arenas (slot strides are whole pages).
pub const REGION_ALIGN: u64 = 4096;

/// The shape of one partition circuit: everything slot sizes depend on.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PartitionShape {
    pub num_constraints: u64,
    /// log2 of the evaluation domain: the smallest power of two >= `num_constraints`.
    pub domain_log2: u32,
    /// 1: the slots have no room for a and b (EvalA, EvalB empty): synthesis leaves them to
    /// the prover, which makes them from the assignment and the recorded R1CS
    /// (`CUZK_SYNTHESIS_AB=prover`), and a slot is about half the bytes. 0: they are there.
    pub evals_by_prover: u32,
    pub num_inputs: u64,
    pub num_aux: u64,
}

impl PartitionShape {
    /// Shape from circuit counts; the domain is derived so it cannot disagree with them.
    pub fn new(num_constraints: u64, num_inputs: u64, num_aux: u64) -> Self {
        // 64 marks "no u64 domain fits"; SlotLayout::new turns that into an error.
        let domain_log2 = num_constraints
            .max(1)
            .checked_next_power_of_two()
            .map_or(64, u64::trailing_zeros);
        Self {
            num_constraints,
            domain_log2,
            evals_by_prover: 0,
            num_inputs,
            num_aux,
        }
    }

    /// One partition of a 32 GiB PoRep (FIELD-NOTES: counted with storage-proofs-porep 19.1).
    pub fn porep_32gib() -> Self {
        Self::new(130_278_541, 328, 130_169_893)
    }

    /// The same shape with no room for a and b in its slots (see `evals_by_prover`).
    pub fn with_evals_by_prover(self) -> Self {
        Self {
            evals_by_prover: 1,
            ..self
        }
    }

    /// Whether the slots leave a and b to the prover (no room for them; `evals_by_prover`).
    pub fn leaves_evals_to_prover(&self) -> bool {
        self.evals_by_prover != 0
    }

    /// Domain size, `None` when it does not fit a u64.
    pub fn domain_size(&self) -> Option<u64> {
        1u64.checked_shl(self.domain_log2)
    }
}

/// A named byte range inside a slot. The order here is the order in memory.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// The partition's actual shape as synthesized ([`PartitionMeta`]); the slot's shape is
    /// a capacity, a partition may be smaller (a 2 KiB partition in a 32 GiB slot).
    Meta,
    /// A·z and B·z evaluations, one Fr per domain element (written by synthesis). C·z has
    /// no region: a prover makes it as a∘b (every row of a satisfied R1CS has a·b = c).
    EvalA,
    EvalB,
    /// The assignment z: the public inputs, then the aux variables, one Fr each, contiguous
    /// so the MSM plans index one scalar array (host-prep rewrites it in place as canonical
    /// little-endian limbs).
    Assignment,
    /// Density bitmaps: one bit per variable, in u64 words.
    DensityAAux,
    DensityBInput,
    DensityBAux,
    /// prep_msm output, one region per MSM (L, A, B): a [`PrepHeader`] then up to
    /// `num_inputs + num_aux` entries of 8 bytes: first the u32 base indices whose scalar is
    /// 1 (batch addition), then the [base, scalar] u32 pairs of the tail (Pippenger).
    PrepL,
    PrepA,
    PrepB,
    /// MSM results: H, L, A, B_G1 (G1 projective) then B_G2 (G2 projective).
    MsmResults,
}

impl Region {
    pub const ALL: [Region; 11] = [
        Region::Meta,
        Region::EvalA,
        Region::EvalB,
        Region::Assignment,
        Region::DensityAAux,
        Region::DensityBInput,
        Region::DensityBAux,
        Region::PrepL,
        Region::PrepA,
        Region::PrepB,
        Region::MsmResults,
    ];
}

/// Contents of [`Region::Meta`], written by synthesis.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionMeta {
    pub num_constraints: u64,
    pub num_inputs: u64,
    pub num_aux: u64,
    /// [`EVALS_WRITTEN`]: synthesis wrote EvalA and EvalB; [`EVALS_BY_PROVER`]: it left them
    /// to the prover, which makes them from the assignment and the recorded R1CS.
    pub evals: u64,
}

/// [`PartitionMeta::evals`]: a and b are in the slot.
pub const EVALS_WRITTEN: u64 = 0;
/// [`PartitionMeta::evals`]: a and b are to be made from the recorded R1CS.
pub const EVALS_BY_PROVER: u64 = 1;

/// Head of each prep region: how many entries of each kind follow.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrepHeader {
    /// Scalars equal to 1: `ones` u32 base indices follow the header (4 bytes each).
    pub ones: u64,
    /// Tail terms: `terms` [base, scalar] u32 pairs follow the ones, 8-byte aligned.
    pub terms: u64,
    /// Scalars equal to 0 (skipped; counted for the timeline).
    pub zeros: u64,
}

/// Bytes before the first entry of a prep region.
pub const PREP_HEADER_BYTES: u64 = 64;

/// Offsets of the MSM results inside [`Region::MsmResults`].
pub mod msm_result {
    use super::{G1_PROJECTIVE_BYTES as G1, G2_PROJECTIVE_BYTES as G2};
    pub const H: u64 = 0;
    pub const L: u64 = G1;
    pub const A: u64 = 2 * G1;
    pub const B_G1: u64 = 3 * G1;
    pub const B_G2: u64 = 4 * G1;
    pub const TOTAL: u64 = 4 * G1 + G2;
}

/// Byte range of one region, relative to the start of its slot's data area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionSpan {
    pub offset: u64,
    pub len: u64,
}

/// Where every region of a slot lives. Same for all slots of an arena.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotLayout {
    spans: [RegionSpan; Region::ALL.len()],
    /// Bytes of the data area, rounded up to [`REGION_ALIGN`].
    data_len: u64,
}

impl SlotLayout {
    pub fn new(shape: &PartitionShape) -> Result<Self, ShmError> {
        let overflow = || ShmError::LayoutOverflow { shape: *shape };
        let mul = |a: u64, b: u64| a.checked_mul(b).ok_or_else(overflow);
        let bitmap_bytes = |bits: u64| -> Result<u64, ShmError> { mul(bits.div_ceil(64), 8) };
        let domain = shape
            .domain_size()
            .filter(|d| *d >= shape.num_constraints)
            .ok_or_else(overflow)?;
        let aux = shape.num_aux;
        let eval = mul(domain, FR_BYTES)?;
        let vars = shape.num_inputs.checked_add(aux).ok_or_else(overflow)?;
        // ones (4 B) + terms (8 B) never exceed one entry per variable: 8 B each suffices.
        let prep = mul(vars, 8)?
            .checked_add(PREP_HEADER_BYTES)
            .ok_or_else(overflow)?;
        let len_of = |r: Region| -> Result<u64, ShmError> {
            Ok(match r {
                Region::Meta => std::mem::size_of::<PartitionMeta>() as u64,
                Region::EvalA | Region::EvalB if shape.leaves_evals_to_prover() => 0,
                Region::EvalA | Region::EvalB => eval,
                Region::Assignment => mul(vars, FR_BYTES)?,
                Region::DensityAAux | Region::DensityBAux => bitmap_bytes(aux)?,
                Region::DensityBInput => bitmap_bytes(shape.num_inputs)?,
                Region::PrepL | Region::PrepA | Region::PrepB => prep,
                Region::MsmResults => msm_result::TOTAL,
            })
        };
        let mut spans = [RegionSpan { offset: 0, len: 0 }; Region::ALL.len()];
        let mut cursor = 0u64;
        for r in Region::ALL {
            let len = len_of(r)?;
            spans[r as usize] = RegionSpan {
                offset: cursor,
                len,
            };
            cursor = align_up(cursor.checked_add(len).ok_or_else(overflow)?, REGION_ALIGN)
                .ok_or_else(overflow)?;
        }
        Ok(Self {
            spans,
            data_len: cursor,
        })
    }

    pub fn span(&self, region: Region) -> RegionSpan {
        self.spans[region as usize]
    }

    /// Bytes of the data area of one slot (all regions, padded to a page).
    pub fn data_len(&self) -> u64 {
        self.data_len
    }
}

/// Rounds `v` up to a multiple of `align` (a power of two); `None` on overflow.
pub fn align_up(v: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    v.checked_add(align - 1).map(|x| x & !(align - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_is_next_power_of_two() {
        assert_eq!(PartitionShape::new(1 << 20, 1, 1).domain_log2, 20);
        assert_eq!(PartitionShape::new((1 << 20) + 1, 1, 1).domain_log2, 21);
        assert_eq!(PartitionShape::porep_32gib().domain_log2, 27);
    }

    #[test]
    fn porep_32gib_slot_arithmetic_in_u64() {
        let shape = PartitionShape::porep_32gib();
        let l = SlotLayout::new(&shape).unwrap();
        let domain = 1u64 << 27;
        let aux = 130_169_893u64;
        assert_eq!(l.span(Region::EvalA).len, domain * 32); // 4 GiB: overflows u32
        assert_eq!(l.span(Region::Assignment).len, (328 + aux) * 32);
        assert_eq!(l.span(Region::DensityAAux).len, aux.div_ceil(64) * 8);
        assert_eq!(l.span(Region::DensityBInput).len, 6 * 8);
        assert_eq!(l.span(Region::PrepB).len, 64 + (328 + aux) * 8);
        assert_eq!(l.span(Region::MsmResults).len, 4 * 144 + 288);
        let unpadded: u64 = Region::ALL.iter().map(|r| l.span(*r).len).sum();
        assert_eq!(
            unpadded,
            32 + 2 * domain * 32
                + (328 + aux) * 32
                + 2 * aux.div_ceil(64) * 8
                + 6 * 8
                + 3 * (64 + (328 + aux) * 8)
                + 864
        );
        assert!(l.data_len() >= unpadded && l.data_len() < unpadded + 11 * 4096);
        // ~15.9 GB (14.8 GiB) per slot (no c: 4.3 GB less): far beyond u32, within u64.
        assert!(l.data_len() > 15_900_000_000 && l.data_len() < 16_000_000_000);

        // a and b left to the prover: no room for them, the rest where it was sized.
        let lean = SlotLayout::new(&shape.with_evals_by_prover()).unwrap();
        for r in [Region::EvalA, Region::EvalB] {
            assert_eq!(lean.span(r).len, 0);
        }
        for r in [Region::Assignment, Region::PrepB, Region::MsmResults] {
            assert_eq!(lean.span(r).len, l.span(r).len);
        }
        // ~7.3 GB a slot, 8.6 GB (2 × 4 GiB) less.
        assert_eq!(l.data_len() - lean.data_len(), 2 * domain * 32);
    }

    #[test]
    fn regions_are_page_aligned_and_disjoint() {
        for shape in [
            PartitionShape::porep_32gib(),
            PartitionShape::new(2_687_921, 40, 2_685_673),
            PartitionShape::new(1000, 3, 7),
        ] {
            let l = SlotLayout::new(&shape).unwrap();
            let mut end = 0;
            for r in Region::ALL {
                let s = l.span(r);
                assert_eq!(s.offset % REGION_ALIGN, 0, "{r:?}");
                assert!(s.offset >= end, "{r:?} overlaps its predecessor");
                end = s.offset + s.len;
            }
            assert!(end <= l.data_len());
            assert_eq!(l.data_len() % REGION_ALIGN, 0);
        }
    }

    #[test]
    fn absurd_shape_is_an_error_not_a_wrap() {
        let shape = PartitionShape::new(1 << 40, 1, u64::MAX / 8);
        assert!(matches!(
            SlotLayout::new(&shape),
            Err(ShmError::LayoutOverflow { .. })
        ));
    }
}
