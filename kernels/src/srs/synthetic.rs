//! An SRS image of given vector lengths filled with valid but meaningless points, for
//! synthetic partitions (`crate::synthetic`): the stages read it exactly as they read a
//! decoded parameter file, so a synthetic job exercises the same code at full size.
//!
//! Speed is all it is for: the vectors cycle through 2^16 distinct points (multiples of
//! one point), which costs an MSM the same as distinct points do, and fills 47 GB for a
//! 32 GiB partition in seconds instead of the hour real parameters take to make.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use group::{Curve, Group};
use rayon::prelude::*;

use super::image::{seal, slice_mut, write_vk, ImageLayout};
use super::VerifyingKey;

const DISTINCT: usize = 1 << 16;
const RUN: usize = 1 << 10;

/// Bytes the image of these counts (ic, h, l, a, b_g1, b_g2) takes.
pub fn synthetic_image_len(counts: [usize; 6]) -> usize {
    ImageLayout::new(counts).len
}

/// k·Q, (k+1)·Q, ... for DISTINCT points, k from 1: runs of successive additions, each
/// run started by one scalar multiplication, normalized to affine in batches.
fn multiples<P: Group<Scalar = Fr> + Curve>(q: P) -> Vec<P::AffineRepr>
where
    P::AffineRepr: Copy + Default + Send,
{
    let mut out = vec![P::AffineRepr::default(); DISTINCT];
    out.par_chunks_mut(RUN).enumerate().for_each(|(run, dst)| {
        let mut p = q * Fr::from((run * RUN + 1) as u64);
        let mut proj = Vec::with_capacity(RUN);
        for _ in 0..dst.len() {
            proj.push(p);
            p += q;
        }
        P::batch_normalize(&proj, dst);
    });
    out
}

fn cycle<T: Copy + Send + Sync>(dst: &mut [T], points: &[T], offset: usize) {
    dst.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (i, x) in chunk.iter_mut().enumerate() {
                *x = points[(offset + c * (1 << 16) + i) % points.len()];
            }
        });
}

/// Fills `out` (`synthetic_image_len(counts)` bytes, 64-byte aligned) with an image that
/// `view_image` reads like a decoded parameter file.
pub fn fill_synthetic_image(counts: [usize; 6], out: &mut [u8]) {
    let img = ImageLayout::new(counts);
    assert_eq!(out.len(), img.len, "image buffer of the wrong size");
    let q1 = G1Projective::generator() * Fr::from(0x5eed_cafe_u64);
    let q2 = G2Projective::generator() * Fr::from(0x5eed_cafe_u64);
    let g1 = multiples(q1);
    let g2 = multiples(q2);
    let small = |k: u64| Fr::from(k);
    let vk = VerifyingKey {
        alpha_g1: (G1Projective::generator() * small(2)).to_affine(),
        beta_g1: (G1Projective::generator() * small(3)).to_affine(),
        beta_g2: (G2Projective::generator() * small(3)).to_affine(),
        gamma_g2: (G2Projective::generator() * small(5)).to_affine(),
        delta_g1: (G1Projective::generator() * small(7)).to_affine(),
        delta_g2: (G2Projective::generator() * small(7)).to_affine(),
        ic: g1[..counts[0]].to_vec(),
    };
    write_vk(out, &img, &vk);
    // Different offsets per vector, so h, l, a and b_g1 do not pair the same points.
    for (v, (&at, &n)) in img.vectors.iter().zip(&counts).enumerate().take(5).skip(1) {
        cycle::<G1Affine>(slice_mut(out, at, n), &g1, v * 12_345);
    }
    cycle::<G2Affine>(slice_mut(out, img.vectors[5], counts[5]), &g2, 0);
    seal(out, &img);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srs::view_image;
    use group::prime::PrimeCurveAffine;

    #[test]
    fn a_synthetic_image_reads_back_with_its_counts_and_valid_points() {
        let counts = [3, 4095, 3000, 2990, 800, 800];
        let mut buf = vec![0u64; synthetic_image_len(counts).div_ceil(8)];
        // SAFETY: u64 storage viewed as bytes (alignment 8 ≤ 64 is enough for the points
        // the image holds: they need 8), length within the allocation.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut u8, synthetic_image_len(counts))
        };
        fill_synthetic_image(counts, bytes);
        let v = view_image(bytes).unwrap();
        assert_eq!(v.vk.ic.len(), 3);
        assert_eq!(
            [v.h.len(), v.l.len(), v.a.len(), v.b_g1.len(), v.b_g2.len()],
            [4095, 3000, 2990, 800, 800]
        );
        for p in v.h.iter().chain(v.l).chain(v.b_g1) {
            assert!(bool::from(p.is_on_curve()) && !bool::from(p.is_identity()));
        }
        assert!(v.b_g2.iter().all(|p| bool::from(p.is_on_curve())));
        assert_ne!(v.h[0], v.h[1]);
        assert_ne!(v.h[0], v.l[0]);
    }
}
