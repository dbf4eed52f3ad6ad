//! prep_msm: one scan over an MSM's scalars that sorts each term into "skip" (0),
//! "batch addition" (1) or "Pippenger" (anything else), and pairs it with its base.

use rayon::prelude::*;

use super::curve::AffinePoint;
use super::pippenger::{msm, Term};
use super::scalars::{Limbs, ONE, ZERO};
use super::sum_indexed;
use crate::witness::{density_bit, density_count};

/// A run of variables an MSM reads, and where its bases start.
pub struct Query<'a> {
    /// Canonical scalars of the variables.
    pub scalars: &'a [Limbs],
    /// Index of `scalars[0]` in the scalar array the plan is executed with.
    pub scalar_start: usize,
    /// Index of this run's first base in the base vector.
    pub base_start: usize,
    /// If present, only variables with their bit set have a base (consecutively);
    /// the others are skipped. If absent, variable i has base `base_start + i`.
    pub density: Option<&'a [u64]>,
}

impl Query<'_> {
    /// Number of bases this run consumes.
    pub fn bases_used(&self) -> usize {
        match self.density {
            Some(d) => density_count(d, self.scalars.len()),
            None => self.scalars.len(),
        }
    }
}

/// The classified terms of one MSM.
#[derive(Default, Debug)]
pub struct MsmPlan {
    /// Bases whose scalar is 1.
    pub ones: Vec<u32>,
    /// (base, scalar) pairs for Pippenger.
    pub terms: Vec<Term>,
    /// Scalars equal to 0 (counted for the record, never touched again).
    pub zeros: usize,
}

const CHUNK: usize = 1 << 16;

impl MsmPlan {
    pub fn build(queries: &[Query<'_>]) -> Self {
        let mut plan = MsmPlan::default();
        for q in queries {
            plan.add(q);
        }
        plan
    }

    fn add(&mut self, q: &Query<'_>) {
        let n = q.scalars.len();
        let chunks = n.div_ceil(CHUNK);
        // Base index at the start of each chunk: a prefix sum of densities.
        let starts: Vec<usize> = (0..chunks)
            .scan(q.base_start, |next, c| {
                let at = *next;
                let len = CHUNK.min(n - c * CHUNK);
                *next += match q.density {
                    Some(d) => count_range(d, c * CHUNK, len),
                    None => len,
                };
                Some(at)
            })
            .collect();
        let parts: Vec<MsmPlan> = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut part = MsmPlan::default();
                let mut base = starts[c];
                for i in c * CHUNK..(c * CHUNK + CHUNK).min(n) {
                    if let Some(d) = q.density {
                        if !density_bit(d, i) {
                            continue;
                        }
                    }
                    let s = &q.scalars[i];
                    if *s == ZERO {
                        part.zeros += 1;
                    } else if *s == ONE {
                        part.ones.push(base as u32);
                    } else {
                        part.terms.push([base as u32, (q.scalar_start + i) as u32]);
                    }
                    base += 1;
                }
                part
            })
            .collect();
        for p in parts {
            self.ones.extend_from_slice(&p.ones);
            self.terms.extend_from_slice(&p.terms);
            self.zeros += p.zeros;
        }
    }

    /// Σ over the plan: batch addition of the ones plus Pippenger over the rest.
    pub fn execute<A: AffinePoint>(&self, bases: &[A], scalars: &[Limbs]) -> A::Projective {
        self.as_ref().execute(bases, scalars)
    }

    pub fn as_ref(&self) -> PlanRef<'_> {
        PlanRef {
            ones: &self.ones,
            terms: &self.terms,
        }
    }
}

/// A classified MSM borrowed from wherever it lies: an [`MsmPlan`], or the prep output a
/// host-prep process wrote into a partition slot.
#[derive(Clone, Copy, Debug)]
pub struct PlanRef<'a> {
    /// Bases whose scalar is 1 (batch addition).
    pub ones: &'a [u32],
    /// [base, scalar] pairs for Pippenger.
    pub terms: &'a [Term],
}

impl PlanRef<'_> {
    /// Σ_{i ∈ ones} bases[i] + Σ_{(b, s) ∈ terms} scalars[s]·bases[b].
    pub fn execute<A: AffinePoint>(&self, bases: &[A], scalars: &[Limbs]) -> A::Projective {
        let (ones, rest) = rayon::join(
            || sum_indexed(bases, self.ones),
            || msm(bases, scalars, self.terms),
        );
        ones + rest
    }
}

/// Set bits in [start, start + len) of a bitmap; `start` is a multiple of 64.
fn count_range(bits: &[u64], start: usize, len: usize) -> usize {
    debug_assert_eq!(start % 64, 0);
    density_count(&bits[start / 64..], len)
}
