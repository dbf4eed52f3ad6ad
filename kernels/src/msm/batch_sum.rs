//! Σ P_i for the bases whose scalar is exactly 1: a pairwise tree of batch-affine
//! additions, one inversion per tree level per block.

use group::Group;
use rayon::prelude::*;

use super::batch_affine::{add_pairs, Sum};
use super::curve::AffinePoint;

/// Points per block: big enough that a level's inversion is amortized over thousands of
/// additions, small enough that a block stays in L2.
const BLOCK: usize = 1 << 13;
/// Below this many points a level is finished with projective additions.
const TAIL: usize = 16;

/// Σ bases[i] over `indices`.
pub fn sum_indexed<A: AffinePoint>(bases: &[A], indices: &[u32]) -> A::Projective {
    indices
        .par_chunks(BLOCK)
        .map(|chunk| {
            let points: Vec<A> = chunk
                .iter()
                .map(|&i| bases[i as usize])
                .filter(|p| !bool::from(p.is_identity()))
                .collect();
            tree_sum(points)
        })
        .reduce(A::Projective::identity, |a, b| a + b)
}

/// Sums a list of non-identity affine points level by level.
pub fn tree_sum<A: AffinePoint>(mut points: Vec<A>) -> A::Projective {
    let mut pairs = Vec::with_capacity(points.len() / 2);
    let mut scratch = Vec::with_capacity(points.len() / 2);
    while points.len() > TAIL {
        pairs.clear();
        pairs.extend(points.chunks_exact(2).map(|c| (c[0], c[1])));
        let odd = (points.len() % 2 == 1).then(|| points[points.len() - 1]);
        points.clear();
        add_pairs(&pairs, &mut scratch, |_, s| {
            if let Sum::Point(p) = s {
                points.push(p);
            }
        });
        points.extend(odd);
    }
    points
        .iter()
        .fold(A::Projective::identity(), |acc, p| acc + *p)
}
