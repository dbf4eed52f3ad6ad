//! Window choice of the MSMs: the width c, the window count W and the recoding constant K
//! of the signed digits (msm.cu `msm_digits`), chosen by the number of terms.

use super::{MAX_CHUNK_THREADS, MAX_FIXUP_CHAIN, MIN_CHUNK, WIDE_C};
use crate::msm::scalars::Limbs;

/// r − 1 + K must fit the top window: r − 1's limbs (little-endian u64; r's lowest limb
/// ends in 1, so no borrow).
const R_MINUS_1: [u64; 4] = [
    0xffffffff00000000,
    0x53bda402fffe5bfe,
    0x3339d80809a1d805,
    0x73eda753299d7d48,
];

/// t = s + K as 9 little-endian u32 limbs (288 bits: K may pass 256), as msm_digits adds it.
fn plus_k(s: &Limbs, k: &[u32; 9]) -> [u32; 9] {
    let mut t = [0u32; 9];
    let mut carry = 0u64;
    for (i, ti) in t.iter_mut().enumerate() {
        let limb = if i < 8 {
            (s[i / 2] >> (32 * (i % 2))) as u32
        } else {
            0
        };
        let v = limb as u64 + k[i] as u64 + carry;
        *ti = v as u32;
        carry = v >> 32;
    }
    t
}

/// Window width c, window count W and the recoding constant K = Σ_w 2^{w·c + c − 1}.
#[derive(Clone, Copy, Debug)]
pub struct Windows {
    pub c: u32,
    pub windows: u32,
    pub k: [u32; 9],
    /// How many values the top window of t = s + K takes over s < r: the top window holds
    /// only the scalar's last 255 − (W − 1)·c bits, so at some widths (c = 14: 8 values,
    /// c = 15: 2) nearly every term of that window lands in a handful of buckets.
    pub top_values: u32,
}

impl Windows {
    pub fn buckets(&self) -> usize {
        1 << (self.c - 1)
    }

    /// The smallest W for which every t = s + K (s < r) keeps its top window below 2^c,
    /// so every digit fits in [−2^{c−1}, 2^{c−1}].
    pub fn for_width(c: u32) -> Windows {
        let mut w = 256u32.div_ceil(c);
        loop {
            let mut k = [0u32; 9];
            for i in 0..w {
                let bit = i * c + c - 1;
                k[(bit / 32) as usize] |= 1 << (bit % 32);
            }
            // t_max = (r − 1) + K, 288-bit.
            let t = plus_k(&R_MINUS_1, &k);
            let top_bit = (w - 1) * c;
            let fits = (0..288u32)
                .filter(|&b| b >= top_bit + c)
                .all(|b| (t[(b / 32) as usize] >> (b % 32)) & 1 == 0);
            if fits && top_bit + c <= 288 {
                // t_max's top window against K's (2^{c−1}: K's lower windows stay below
                // 2^{top_bit}); every value between occurs.
                let window = |b0: u32| {
                    (0..c).fold(0u32, |v, i| {
                        let b = b0 + i;
                        v | (((t[(b / 32) as usize] >> (b % 32)) & 1) << i)
                    })
                };
                let top_values = window(top_bit) - (1 << (c - 1)) + 1;
                return Windows {
                    c,
                    windows: w,
                    k,
                    top_values,
                };
            }
            w += 1;
        }
    }

    /// The signed digits the `msm_digits` kernel computes for `s` (a CPU model of it, for
    /// tests): d_w = window w of (s + K) − 2^{c−1}, so s = Σ_w d_w·2^{w·c}.
    pub fn digits(&self, s: &Limbs) -> Vec<i64> {
        let t = plus_k(s, &self.k);
        (0..self.windows)
            .map(|w| {
                let bit = w * self.c;
                let (limb, sh) = ((bit / 32) as usize, bit % 32);
                let lo = t[limb] as u64;
                let hi = if limb + 1 < 9 { t[limb + 1] as u64 } else { 0 };
                let raw = ((lo | hi << 32) >> sh) & ((1u64 << self.c) - 1);
                raw as i64 - (1i64 << (self.c - 1))
            })
            .collect()
    }

    /// c minimizing W·(10·m + 14·2^c) (mixed additions into buckets, then two full
    /// additions per bucket in the reduction), among 4..=16, and [`WIDE_C`] from 2^23
    /// terms, leaving out widths whose top window crowds the terms into few buckets
    /// ([`Self::top_crowded`]).
    pub fn for_terms(m: usize) -> Windows {
        let wide: &[u32] = if m >= 1 << 23 { &[WIDE_C] } else { &[] };
        let all: Vec<Windows> = (4..=16)
            .chain(wide.iter().copied())
            .map(Windows::for_width)
            .collect();
        let cost = |w: &&Windows| w.windows as u64 * (10 * m as u64 + 14 * (1u64 << w.c));
        all.iter()
            .filter(|w| !w.top_crowded(m))
            .min_by_key(cost)
            .or_else(|| all.iter().min_by_key(cost))
            .copied()
            .expect("widths to choose from")
    }

    /// Whether the top window of m terms puts so many in one bucket that its fixup is long:
    /// a bucket's chunk partials are summed by one thread, one after the other, and a top
    /// bucket holds about m / top_values terms, cut into chunks of at least [`MIN_CHUNK`]
    /// terms and at most [`MAX_CHUNK_THREADS`] chunks in all. Measured at 2^18 (H200):
    /// c = 14 (8 values) 41 ms and c = 15 (2 values) 113 ms, almost all of it fixup, against
    /// 8.8 ms at c = 13 (233 values) and 6.6 ms at c = 16.
    pub fn top_crowded(&self, m: usize) -> bool {
        let per_bucket = m as u64 / self.top_values as u64;
        let chain = (per_bucket / MIN_CHUNK as u64)
            .min(MAX_CHUNK_THREADS as u64 / self.top_values as u64)
            + 1;
        chain > MAX_FIXUP_CHAIN
    }
}
