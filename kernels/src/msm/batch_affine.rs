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
    scratch: &mut Vec<A::Base>,
    mut emit: impl FnMut(usize, Sum<A>),
) {
    scratch.clear();
    let mut acc = A::Base::ONE;
    // Prefix products of the dx values; equal x (doubling or P + (−P)) uses 1 here and is
    // handled on its own below.
    for (p, q) in pairs {
        scratch.push(acc);
        let dx = q.x() - p.x();
        if !bool::from(dx.is_zero()) {
            acc *= dx;
        }
    }
    let mut inv = acc.invert().unwrap();
    for (t, (p, q)) in pairs.iter().enumerate().rev() {
        let (x1, y1, x2, y2) = (p.x(), p.y(), q.x(), q.y());
        let dx = x2 - x1;
        if bool::from(dx.is_zero()) {
            emit(t, if y1 == y2 { double(p) } else { Sum::Identity });
            continue;
        }
        let dx_inv = inv * scratch[t];
        inv *= dx;
        let lambda = (y2 - y1) * dx_inv;
        let x3 = lambda.square() - x1 - x2;
        let y3 = lambda * (x1 - x3) - y1;
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
