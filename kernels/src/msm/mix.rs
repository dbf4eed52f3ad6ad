//! The scalar mix of a classified MSM: how many of its scalars are skipped (0), batch-added
//! (1) or go to Pippenger, and how wide the Pippenger scalars are. Pippenger's work is one
//! bucket addition per nonzero signed digit, so a scalar below 2^c costs one window (or two,
//! from 2^{c−1}) where a full-width one costs all W: the widths decide an MSM's cost as much
//! as the counts. `cuzk bench witness` prints this for real C1s; the synthetic partitions
//! (crate::synthetic) draw their scalars to match it.

use super::plan::MsmPlan;
use super::scalars::Limbs;
use crate::cuda::msm::Windows;

/// Window widths the nonzero digits are counted at: the ones the GPU picks for the L, A, B
/// MSMs of a 32 GiB partition (c = 20 from 2^23 terms, 16 for B's ~3.3 M).
pub const DIGIT_WIDTHS: [u32; 2] = [16, 20];

/// Counts over one plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MixStats {
    pub zeros: usize,
    pub ones: usize,
    /// Pippenger terms (neither 0 nor 1).
    pub terms: usize,
    /// Terms by bit length of their scalar: `by_bits[b]` scalars have their top set bit at
    /// b − 1 (b in 2..=255).
    pub by_bits: Vec<usize>,
    /// Nonzero signed digits summed over the terms, at each width of [`DIGIT_WIDTHS`]
    /// (the recoding `msm_digits` does: Windows::digits).
    pub nonzero_digits: [u64; 2],
    /// Madds of the ones' batch addition over the bases' aligned pair sums: the ones less
    /// those whose base 2i + 1 follows 2i in the list (the GPU's `batch_add_pairs`).
    pub one_units: usize,
    /// The same with the odd pair sums too: any two neighbours i, i + 1 of the list are one
    /// madd (taken greedily from the start, as the kernel walks its chunk).
    pub one_units_any: usize,
}

impl MixStats {
    /// The plan's terms' scalars read from `scalars` (the array the plan indexes).
    pub fn of(plan: &MsmPlan, scalars: &[Limbs]) -> MixStats {
        let windows = DIGIT_WIDTHS.map(Windows::for_width);
        let mut s = MixStats {
            zeros: plan.zeros,
            ones: plan.ones.len(),
            terms: plan.terms.len(),
            by_bits: vec![0; 256],
            nonzero_digits: [0; 2],
            one_units: plan.ones.len() - neighbour_pairs(&plan.ones, true),
            one_units_any: plan.ones.len() - neighbour_pairs(&plan.ones, false),
        };
        for &[_, si] in &plan.terms {
            let k = &scalars[si as usize];
            s.by_bits[bit_length(k)] += 1;
            for (n, w) in s.nonzero_digits.iter_mut().zip(&windows) {
                *n += w.digits(k).iter().filter(|&&d| d != 0).count() as u64;
            }
        }
        s
    }

    pub fn total(&self) -> usize {
        self.zeros + self.ones + self.terms
    }

    /// Terms whose scalar has at most `bits` bits.
    pub fn terms_up_to(&self, bits: usize) -> usize {
        self.by_bits[..=bits.min(255)].iter().sum()
    }

    /// Pippenger's bucket additions at width [`DIGIT_WIDTHS`]`[i]` as a number of
    /// full-width terms (each of those has W nonzero digits but for a 2^{−c} chance).
    pub fn full_width_equivalent(&self, i: usize) -> f64 {
        let w = Windows::for_width(DIGIT_WIDTHS[i]);
        self.nonzero_digits[i] as f64 / w.windows as f64
    }
}

/// Pairs of neighbours b, b + 1 that follow each other in a ones list, taken greedily from
/// the start (each a madd saved when its pair sum is on the device); `aligned`: only those
/// with b even (the aligned pair sums alone).
pub fn neighbour_pairs(ones: &[u32], aligned: bool) -> usize {
    let mut pairs = 0;
    let mut i = 0;
    while i + 1 < ones.len() {
        if (!aligned || ones[i].is_multiple_of(2)) && ones[i + 1] == ones[i] + 1 {
            pairs += 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    pairs
}

/// Number of bits of `k` (0 for 0).
pub fn bit_length(k: &Limbs) -> usize {
    (0..4)
        .rev()
        .find(|&i| k[i] != 0)
        .map_or(0, |i| 64 * i + 64 - k[i].leading_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::neighbour_pairs;

    #[test]
    fn pairs_are_counted_as_the_batch_addition_takes_them() {
        let aligned = |o: &[u32]| neighbour_pairs(o, true);
        let any = |o: &[u32]| neighbour_pairs(o, false);
        assert_eq!((aligned(&[0, 1, 2, 3]), any(&[0, 1, 2, 3])), (2, 2));
        // 1, 2 are neighbours but not an aligned pair; 5 after the pair (4, 5) starts over.
        assert_eq!(aligned(&[1, 2, 4, 5, 5, 6, 7]), 2);
        // Greedy: (1, 2), (4, 5), (5, 6); 7 alone.
        assert_eq!(any(&[1, 2, 4, 5, 5, 6, 7]), 3);
        assert_eq!(any(&[1, 2, 3]), 1);
        // A pair listed twice is taken twice; out of order it is not taken.
        assert_eq!(aligned(&[2, 3, 2, 3, 9, 8]), 2);
        assert_eq!(any(&[2, 3, 2, 3, 9, 8]), 2);
        assert_eq!((aligned(&[]), any(&[6])), (0, 0));
    }
}
