//! How host values lie in device memory: the same bytes blstrs keeps (Montgomery limbs,
//! little-endian), so slices upload as they are; and the way back from XYZZ.

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use ff::Field;
use group::Group;

use crate::msm::scalars::Limbs;

/// An XYZZ point as the kernels write it: X, Y, ZZ, ZZZ, each 12 u32 limbs (Montgomery).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Xyzz(pub [[u64; 6]; 4]);

/// A G2 XYZZ point as the kernels write it (`g2_xyzz_t`): X, Y, ZZ, ZZZ, each an Fp2 as
/// (c0, c1), each Fp 12 u32 limbs (Montgomery).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Xyzz2(pub [[[u64; 6]; 2]; 4]);

pub const XYZZ_BYTES: usize = 192;
pub const AFFINE_BYTES: usize = 96;
pub const FR_BYTES: usize = 32;
pub const XYZZ2_BYTES: usize = 384;
/// blst's `blst_p2_affine`: x.c0, x.c1, y.c0, y.c1 (no infinity flag: infinity is all
/// zeros), what `g2_affine_t` reads.
pub const G2_AFFINE_BYTES: usize = 192;

const _: () = assert!(std::mem::size_of::<Xyzz>() == XYZZ_BYTES);
const _: () = assert!(std::mem::size_of::<G1Affine>() == AFFINE_BYTES);
const _: () = assert!(std::mem::size_of::<Xyzz2>() == XYZZ2_BYTES);
const _: () = assert!(std::mem::size_of::<G2Affine>() == G2_AFFINE_BYTES);
const _: () = assert!(std::mem::size_of::<Fp2>() == 96);
const _: () = assert!(std::mem::size_of::<Fr>() == FR_BYTES);
const _: () = assert!(std::mem::size_of::<Limbs>() == FR_BYTES);

impl Xyzz {
    /// x = X/ZZ, y = Y/ZZZ (ZZ^3 = ZZZ^2) in Jacobian coordinates without an inversion:
    /// Z' = ZZ·ZZZ, X' = X·ZZ·ZZZ^2, Y' = Y·ZZ^3·ZZZ^2 (then X'/Z'^2 = X/ZZ, Y'/Z'^3 = Y/ZZZ).
    pub fn to_projective(&self) -> G1Projective {
        let [x, y, zz, zzz] = self.0.map(Fp::from_raw_unchecked);
        if bool::from(ff::Field::is_zero(&zz)) {
            return G1Projective::identity();
        }
        let zzz2 = zzz.square();
        let z = zz * zzz;
        let xj = x * zz * zzz2;
        let yj = y * zz.square() * zz * zzz2;
        G1Projective::from_raw_unchecked(xj, yj, z)
    }
}

/// An XYZZ point read back from the device, for either group: what the window sums and the
/// Horner combination on the host are generic over.
pub trait DeviceXyzz: Copy + Default {
    type Projective: Group;
    /// x = X/ZZ, y = Y/ZZZ as a blstrs point (no inversion).
    fn to_projective(&self) -> Self::Projective;
}

impl DeviceXyzz for Xyzz {
    type Projective = G1Projective;
    fn to_projective(&self) -> G1Projective {
        Xyzz::to_projective(self)
    }
}

impl Xyzz2 {
    /// [`Xyzz::to_projective`] over Fp2: Z' = ZZ·ZZZ, X' = X·ZZ·ZZZ^2, Y' = Y·ZZ^3·ZZZ^2.
    pub fn to_projective(&self) -> G2Projective {
        let [x, y, zz, zzz] = self.0.map(fp2_from_raw);
        if bool::from(ff::Field::is_zero(&zz)) {
            return G2Projective::identity();
        }
        let zzz2 = zzz.square();
        let z = zz * zzz;
        let xj = x * zz * zzz2;
        let yj = y * zz.square() * zz * zzz2;
        G2Projective::from_raw_unchecked(xj, yj, z)
    }
}

impl DeviceXyzz for Xyzz2 {
    type Projective = G2Projective;
    fn to_projective(&self) -> G2Projective {
        Xyzz2::to_projective(self)
    }
}

/// The bytes of a slice of plain values (field elements, points, limbs, indices).
pub fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is Copy plain data here (blstrs' repr(transparent) wrappers of limb arrays,
    // u32/u64 arrays); reading its bytes is always valid and the lifetime is kept.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// An Fr's Montgomery limbs as they lie in memory (what the kernels compute with).
pub fn fr_raw(x: &Fr) -> [u64; 4] {
    // SAFETY: blstrs::Scalar is repr(transparent) over blst_fr, a repr(C) [u64; 4].
    unsafe { std::mem::transmute::<Fr, [u64; 4]>(*x) }
}

/// The Fr whose Montgomery limbs are `raw` (the caller guarantees raw < r).
pub fn fr_from_raw(raw: [u64; 4]) -> Fr {
    // SAFETY: same layout as `fr_raw`; raw is fully reduced, as every kernel output is.
    unsafe { std::mem::transmute::<[u64; 4], Fr>(raw) }
}

/// Fp's Montgomery limbs.
pub fn fp_raw(x: &Fp) -> [u64; 6] {
    // SAFETY: blstrs::Fp is repr(transparent) over blst_fp, a repr(C) [u64; 6].
    unsafe { std::mem::transmute::<Fp, [u64; 6]>(*x) }
}

/// Fp2's Montgomery limbs, c0 then c1 (blst's `blst_fp2`).
pub fn fp2_raw(x: &Fp2) -> [[u64; 6]; 2] {
    [fp_raw(&x.c0()), fp_raw(&x.c1())]
}

/// The Fp2 whose Montgomery limbs are `raw` (c0, c1; each fully reduced, as every kernel
/// output is).
pub fn fp2_from_raw(raw: [[u64; 6]; 2]) -> Fp2 {
    Fp2::new(
        Fp::from_raw_unchecked(raw[0]),
        Fp::from_raw_unchecked(raw[1]),
    )
}
