//! Radix-2 transforms over Fr, recursive so that once a sub-problem fits in cache every
//! deeper level runs out of cache, and parallel with rayon at the top levels.
//!
//! Two orderings are paired so no transform needs a bit-reversal pass of its own:
//! - [`dif`]: natural-order input, bit-reversed output (decimation in frequency);
//! - [`dit`]: bit-reversed input, natural-order output (decimation in time).
//!
//! Both compute X_k = Σ_j x_j·w^{jk}; `levels[j][i] = w^{i·2^j}` holds the twiddles of
//! the blocks of size n/2^j, contiguous per level.

use blstrs::Scalar as Fr;
use ff::Field;

use crate::field::{fr_add, fr_sub};
use rayon::prelude::*;

/// Below this many elements a level runs on one thread.
const PAR_MIN: usize = 1 << 13;

/// Decimation in frequency, natural → bit-reversed.
/// X_{2m} = Σ_{j<h} (x_j + x_{j+h})·(w²)^{jm};  X_{2m+1} = Σ_{j<h} (x_j − x_{j+h})·w^j·(w²)^{jm}.
pub fn dif(data: &mut [Fr], levels: &[Vec<Fr>]) {
    check(data, levels);
    dif_rec(data, levels);
}

/// Decimation in time, bit-reversed → natural.
/// X_k = E_k + w^k·O_k;  X_{k+h} = E_k − w^k·O_k, with E, O the half-size transforms.
pub fn dit(data: &mut [Fr], levels: &[Vec<Fr>]) {
    check(data, levels);
    dit_rec(data, levels);
}

fn check(data: &[Fr], levels: &[Vec<Fr>]) {
    assert!(data.len().is_power_of_two());
    assert_eq!(
        levels.len(),
        data.len().trailing_zeros() as usize,
        "twiddles are for another size"
    );
}

fn dif_rec(data: &mut [Fr], levels: &[Vec<Fr>]) {
    if data.len() <= 1 {
        return;
    }
    let parallel = data.len() >= PAR_MIN;
    let (lo, hi) = data.split_at_mut(data.len() / 2);
    let (table, sub) = (&levels[0], &levels[1..]);
    butterflies(lo, hi, parallel, |i, u, v| {
        let (x, y) = (*u, *v);
        *u = fr_add(x, y);
        // table[0] = w^0 = 1: the first butterfly of every block needs no multiplication
        // (all of the last level's, half of the one before: about n of (n/2)·log n).
        let d = fr_sub(x, y);
        *v = if i == 0 { d } else { d * table[i] };
    });
    both_halves(lo, hi, parallel, |half| dif_rec(half, sub));
}

fn dit_rec(data: &mut [Fr], levels: &[Vec<Fr>]) {
    if data.len() <= 1 {
        return;
    }
    let parallel = data.len() >= PAR_MIN;
    let (lo, hi) = data.split_at_mut(data.len() / 2);
    let (table, sub) = (&levels[0], &levels[1..]);
    both_halves(lo, hi, parallel, |half| dit_rec(half, sub));
    butterflies(lo, hi, parallel, |i, u, v| {
        // table[0] = 1, as in `dif_rec`.
        let t = if i == 0 { *v } else { *v * table[i] };
        let x = *u;
        *u = fr_add(x, t);
        *v = fr_sub(x, t);
    });
}

/// Applies `f(i, lo[i], hi[i])` for every i, in parallel chunks if `parallel`.
fn butterflies(
    lo: &mut [Fr],
    hi: &mut [Fr],
    parallel: bool,
    f: impl Fn(usize, &mut Fr, &mut Fr) + Sync,
) {
    if parallel {
        const CH: usize = 1 << 10;
        lo.par_chunks_mut(CH)
            .zip(hi.par_chunks_mut(CH))
            .enumerate()
            .for_each(|(c, (l, h))| {
                for (k, (u, v)) in l.iter_mut().zip(h.iter_mut()).enumerate() {
                    f(c * CH + k, u, v);
                }
            });
    } else {
        for (i, (u, v)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            f(i, u, v);
        }
    }
}

/// Runs `f` on both halves, on two rayon tasks if `parallel`.
fn both_halves(lo: &mut [Fr], hi: &mut [Fr], parallel: bool, f: impl Fn(&mut [Fr]) + Sync) {
    if parallel {
        rayon::join(|| f(lo), || f(hi));
    } else {
        f(lo);
        f(hi);
    }
}

/// Reverses the low `bits` bits of `i`.
#[inline]
pub fn bit_reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Permutes `data` (length 2^k) from bit-reversed to natural order (the permutation is
/// its own inverse).
pub fn bit_reverse_permute(data: &mut [Fr]) {
    let n = data.len();
    assert!(n.is_power_of_two());
    let bits = n.trailing_zeros();
    let base = SyncPtr(data.as_mut_ptr());
    (0..n).into_par_iter().with_min_len(1 << 12).for_each(|i| {
        let j = bit_reverse(i, bits);
        if i < j {
            let p = &base;
            // SAFETY: i < j < n, so both indices are in bounds; the pair {i, j} is swapped
            // by exactly one iteration (the one with the smaller index), so no two threads
            // touch the same element.
            unsafe { std::ptr::swap(p.0.add(i), p.0.add(j)) };
        }
    });
}

struct SyncPtr(*mut Fr);
// SAFETY: used only by bit_reverse_permute, whose iterations touch disjoint elements.
unsafe impl Sync for SyncPtr {}
unsafe impl Send for SyncPtr {}

/// data[j] *= c·g^{rev(j)} for data in bit-reversed order: multiplies coefficient i (which
/// sits at position rev(i)) by c·g^i without a permutation.
///
/// With j = hi·2^m + lo, rev_k(j) = rev_m(lo)·2^{k−m} + rev_{k−m}(hi), so the factor is
/// T_lo[lo]·T_hi[hi] from two tables of √n entries each.
pub fn scale_by_powers_bitrev(data: &mut [Fr], g: Fr, c: Fr) {
    let n = data.len();
    assert!(n.is_power_of_two());
    let k = n.trailing_zeros();
    let m = k / 2;
    let (lo_len, hi_len) = (1usize << m, 1usize << (k - m));
    let g_hi_step = g.pow_vartime([hi_len as u64]); // g^{2^{k−m}}
    let lo_pows = super::domain::powers(g_hi_step, lo_len);
    let t_lo: Vec<Fr> = (0..lo_len).map(|lo| lo_pows[bit_reverse(lo, m)]).collect();
    let hi_pows = super::domain::powers(g, hi_len);
    let t_hi: Vec<Fr> = (0..hi_len)
        .map(|hi| hi_pows[bit_reverse(hi, k - m)] * c)
        .collect();
    data.par_chunks_mut(lo_len)
        .enumerate()
        .for_each(|(hi, chunk)| {
            let f = t_hi[hi];
            for (v, t) in chunk.iter_mut().zip(t_lo.iter()) {
                *v *= *t * f;
            }
        });
}
