//! Affine point additions in batches that share one inversion.
//!
//! P1 + P2 (P1 ≠ ±P2): λ = (y2 − y1)/(x2 − x1); x3 = λ² − x1 − x2; y3 = λ·(x1 − x3) − y1.
//! The n inversions of a batch become one inversion and 3(n−1) multiplications
//! (prefix products, then walking back), so an addition costs about 6 field
//! multiplications instead of the 11 of a mixed Jacobian addition.

use ff::Field;
use group::Group;

use super::curve::AffinePoint;

/// Outcome of one pending addition.
pub enum Sum<A: AffinePoint> {
    Point(A),
    /// P + (−P).
    Identity,
}

/// Adds `pairs[t].0 + pairs[t].1` for every t, with one field inversion in all.
/// `scratch` is reused storage (cleared here). Neither operand may be the identity.
pub fn add_pairs<A: AffinePoint>(
    pairs: &[(A, A)],
    scratch: &mut Vec<(A::Base, A::Base)>,
    mut emit: impl FnMut(usize, Sum<A>),
) {
    scratch.clear();
    let mut acc = A::Base::ONE;
    // Prefix products of the dx values, each kept beside its prefix for the walk back;
    // equal x (doubling or P + (−P)) contributes 1 here and is handled on its own below.
    for (p, q) in pairs {
        let dx = A::sub(q.x(), p.x());
        scratch.push((acc, dx));
        if !bool::from(dx.is_zero()) {
            acc *= dx;
        }
    }
    let mut inv = acc.invert().unwrap();
    for (t, (p, q)) in pairs.iter().enumerate().rev() {
        let (prefix, dx) = scratch[t];
        if bool::from(dx.is_zero()) {
            emit(
                t,
                if p.y() == q.y() {
                    double(p)
                } else {
                    Sum::Identity
                },
            );
            continue;
        }
        let dx_inv = inv * prefix;
        inv *= dx;
        let (x1, y1) = (p.x(), p.y());
        let lambda = A::sub(q.y(), y1) * dx_inv;
        let x3 = A::sub(A::sub(lambda.square(), x1), q.x());
        let y3 = A::sub(lambda * A::sub(x1, x3), y1);
        emit(t, Sum::Point(A::from_xy(x3, y3)));
    }
}

/// 2P, the rare case two equal points meet in a batch.
#[cold]
fn double<A: AffinePoint>(p: &A) -> Sum<A> {
    let d = p.to_curve().double();
    if bool::from(d.is_identity()) {
        Sum::Identity
    } else {
        Sum::Point(group::Curve::to_affine(&d))
    }
}
