//! What the MSM code needs of a curve: affine coordinates over a base field (Fp for G1,
//! Fp2 for G2) for batch-affine additions, and a projective type for everything else.

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Curve;

use crate::field;

/// An affine point whose coordinates we can read and write, so additions can share one
/// field inversion across a batch (Montgomery's trick).
pub trait AffinePoint: PrimeCurveAffine<Curve = Self::Projective> + Send + Sync + 'static {
    type Base: Field;
    type Projective: Curve<AffineRepr = Self> + Send + Sync;

    fn x(&self) -> Self::Base;
    fn y(&self) -> Self::Base;
    /// The point (x, y); the caller guarantees it is on the curve.
    fn from_xy(x: Self::Base, y: Self::Base) -> Self;
    /// a − b in the base field, inlined (see `crate::field`).
    fn sub(a: Self::Base, b: Self::Base) -> Self::Base;
}

impl AffinePoint for G1Affine {
    type Base = Fp;
    type Projective = G1Projective;

    #[inline]
    fn x(&self) -> Fp {
        G1Affine::x(self)
    }
    #[inline]
    fn y(&self) -> Fp {
        G1Affine::y(self)
    }
    #[inline]
    fn from_xy(x: Fp, y: Fp) -> Self {
        G1Affine::from_raw_unchecked(x, y, false)
    }
    #[inline(always)]
    fn sub(a: Fp, b: Fp) -> Fp {
        field::fp_sub(a, b)
    }
}

impl AffinePoint for G2Affine {
    type Base = Fp2;
    type Projective = G2Projective;

    #[inline]
    fn x(&self) -> Fp2 {
        G2Affine::x(self)
    }
    #[inline]
    fn y(&self) -> Fp2 {
        G2Affine::y(self)
    }
    #[inline]
    fn from_xy(x: Fp2, y: Fp2) -> Self {
        G2Affine::from_raw_unchecked(x, y, false)
    }
    #[inline(always)]
    fn sub(a: Fp2, b: Fp2) -> Fp2 {
        field::fp2_sub(a, b)
    }
}
