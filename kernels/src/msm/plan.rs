//! prep_msm: one scan over an MSM's scalars that sorts each term into "skip" (0),
//! "batch addition" (1) or "Pippenger" (anything else), and pairs it with its base.

use rayon::prelude::*;

use super::curve::AffinePoint;
use super::pippenger::{msm, Term};
use super::scalars::{Limbs, ONE, ZERO};
use super::sum_indexed;
use crate::copy::gather_on_threads;
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

/// One MSM's view of a run of scalars that several MSMs read (L, A and B all read the aux
/// variables, each through its own density): where its bases start and which variables
/// it has.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    /// Index of this MSM's base for the run's first variable it has.
    pub base_start: usize,
    /// As [`Query::density`]: only variables with their bit set have a base.
    pub density: Option<&'a [u64]>,
}

/// What a scalar is, for the plans: skipped, batch-added or Pippenger.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Zero,
    One,
    Other,
}

fn kind(s: &Limbs) -> Kind {
    if *s == ZERO {
        Kind::Zero
    } else if *s == ONE {
        Kind::One
    } else {
        Kind::Other
    }
}

impl MsmPlan {
    /// The plan of the queries' runs, in their order (a scan a run).
    pub fn build(queries: &[Query<'_>]) -> Self {
        let mut plan = MsmPlan::default();
        for q in queries {
            let reader = Reader {
                base_start: q.base_start,
                density: q.density,
            };
            MsmPlan::extend_all([&mut plan], q.scalars, q.scalar_start, [reader]);
        }
        plan
    }

    /// Appends one run of scalars to K plans at once, each read through its own
    /// [`Reader`]: every scalar is loaded and compared with 0 and 1 once for all K (a
    /// 32 GiB partition's aux is 4.2 GB, which L, A and B would otherwise each scan).
    /// Each plan gets exactly what [`MsmPlan::build`] with that reader's query appends.
    pub fn extend_all<const K: usize>(
        plans: [&mut MsmPlan; K],
        scalars: &[Limbs],
        scalar_start: usize,
        readers: [Reader<'_>; K],
    ) {
        let parts = MsmPlan::scan_parts(scalars, scalar_start, readers);
        for (k, plan) in plans.into_iter().enumerate() {
            // What the plan held (a few hundred inputs where it held anything), then the run.
            let head = std::mem::take(plan);
            let pieces: Vec<&MsmPlan> = std::iter::once(&head)
                .chain(parts.iter().map(|p| &p[k]))
                .collect();
            *plan = MsmPlan::gather(&pieces);
        }
    }

    /// The scan of [`MsmPlan::extend_all`] with its result left where the chunks made it:
    /// plan k is every part's k-th plan, concatenated in order. A writer with a destination
    /// of its own (host-prep's slot regions) copies the parts there once, where gathering
    /// them first would copy every term twice.
    pub fn scan_parts<const K: usize>(
        scalars: &[Limbs],
        scalar_start: usize,
        readers: [Reader<'_>; K],
    ) -> Vec<[MsmPlan; K]> {
        let mut parts = Vec::new();
        MsmPlan::scan_parts_into(&mut parts, scalars, scalar_start, readers);
        parts
    }

    /// [`MsmPlan::scan_parts`] into parts kept from an earlier scan: each chunk's lists
    /// are cleared and refilled in the capacity they already have, so a process that
    /// keeps them (host-prep, a partition after another of the same shape) allocates and
    /// faults in nothing here (FIELD-NOTES: reuse buffers rather than free them).
    pub fn scan_parts_into<const K: usize>(
        parts: &mut Vec<[MsmPlan; K]>,
        scalars: &[Limbs],
        scalar_start: usize,
        readers: [Reader<'_>; K],
    ) {
        let n = scalars.len();
        let chunks = n.div_ceil(CHUNK);
        // Each reader's base index at the start of each chunk: a prefix sum of densities.
        let starts: [Vec<usize>; K] = readers.map(|r| {
            (0..chunks)
                .scan(r.base_start, |next, c| {
                    let at = *next;
                    let len = CHUNK.min(n - c * CHUNK);
                    *next += match r.density {
                        Some(d) => count_range(d, c * CHUNK, len),
                        None => len,
                    };
                    Some(at)
                })
                .collect()
        });
        parts.resize_with(chunks, || std::array::from_fn(|_| MsmPlan::default()));
        parts.par_iter_mut().enumerate().for_each(|(c, part)| {
            part.iter_mut().for_each(MsmPlan::clear);
            let mut base: [usize; K] = std::array::from_fn(|k| starts[k][c]);
            let first = c * CHUNK;
            let run = &scalars[first..(first + CHUNK).min(n)];
            for (i, s) in (first..).zip(run) {
                let what = kind(s);
                for k in 0..K {
                    if let Some(d) = readers[k].density {
                        if !density_bit(d, i) {
                            continue;
                        }
                    }
                    let p = &mut part[k];
                    match what {
                        Kind::Zero => p.zeros += 1,
                        Kind::One => p.ones.push(base[k] as u32),
                        Kind::Other => p.terms.push([base[k] as u32, (scalar_start + i) as u32]),
                    }
                    base[k] += 1;
                }
            }
        });
    }

    /// Empties the plan, keeping its lists' capacity.
    pub fn clear(&mut self) {
        self.ones.clear();
        self.terms.clear();
        self.zeros = 0;
    }

    /// One plan from pieces that each cover a run of its variables, in order.
    pub fn gather(pieces: &[&MsmPlan]) -> MsmPlan {
        let [ones, terms, zeros] = MsmPlan::counts(pieces);
        // Zeroed vectors are untouched pages until the copy writes them (one pass).
        let mut plan = MsmPlan {
            ones: vec![0; ones],
            terms: vec![[0; 2]; terms],
            zeros,
        };
        MsmPlan::gather_into(pieces, &mut plan.ones, &mut plan.terms);
        plan
    }

    /// The pieces' ones, terms and zeros counted together.
    pub fn counts(pieces: &[&MsmPlan]) -> [usize; 3] {
        pieces.iter().fold([0; 3], |[o, t, z], p| {
            [o + p.ones.len(), t + p.terms.len(), z + p.zeros]
        })
    }

    /// Copies the pieces' ones and terms, one after another, into `ones` and `terms`
    /// (exactly [`MsmPlan::counts`] long) on the pool's threads: a 32 GiB partition's
    /// ones are ~250 MB a plan, which one thread's copy would leave as a serial tail after
    /// the parallel scan. Wherever a plan is written (a vector, a slot's prep region).
    pub fn gather_into(pieces: &[&MsmPlan], ones: &mut [u32], terms: &mut [Term]) {
        let ones_from: Vec<&[u32]> = pieces.iter().map(|p| &p.ones[..]).collect();
        let terms_from: Vec<&[Term]> = pieces.iter().map(|p| &p.terms[..]).collect();
        gather_on_threads(ones, &ones_from);
        gather_on_threads(terms, &terms_from);
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Scalars of every kind (0, 1, other) in runs that cross chunk boundaries.
    fn scalars(n: usize, rng: &mut ChaCha8Rng) -> Vec<Limbs> {
        (0..n)
            .map(|_| match rng.gen_range(0..10) {
                0..=3 => ZERO,
                4..=7 => ONE,
                _ => [rng.gen(), rng.gen(), rng.gen(), rng.gen::<u64>() >> 2],
            })
            .collect()
    }

    fn bits(n: usize, rng: &mut ChaCha8Rng) -> Vec<u64> {
        (0..n.div_ceil(64)).map(|_| rng.gen()).collect()
    }

    /// The plan by its definition, one variable at a time: each run's variables in
    /// order, those its reader has taking consecutive bases.
    fn by_definition(runs: &[(&[Limbs], usize, Reader<'_>)]) -> MsmPlan {
        let mut plan = MsmPlan::default();
        for &(scalars, scalar_start, r) in runs {
            let mut base = r.base_start;
            for (i, s) in scalars.iter().enumerate() {
                if r.density.is_some_and(|d| (d[i / 64] >> (i % 64)) & 1 == 0) {
                    continue;
                }
                if *s == ZERO {
                    plan.zeros += 1;
                } else if *s == ONE {
                    plan.ones.push(base as u32);
                } else {
                    plan.terms.push([base as u32, (scalar_start + i) as u32]);
                }
                base += 1;
            }
        }
        plan
    }

    /// Parts kept from a scan and scanned into again (fewer chunks, other scalars) hold
    /// exactly what a fresh scan of the second run makes: nothing of the first is left.
    #[test]
    fn kept_parts_scanned_again_are_a_fresh_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let (big, small) = (
            scalars(4 * CHUNK + 5, &mut rng),
            scalars(CHUNK + 77, &mut rng),
        );
        let d = bits(big.len(), &mut rng);
        let readers = [
            Reader {
                base_start: 3,
                density: None,
            },
            Reader {
                base_start: 0,
                density: Some(&d[..]),
            },
        ];
        let mut kept = MsmPlan::scan_parts(&big, 0, readers);
        MsmPlan::scan_parts_into(&mut kept, &small, 9, readers);
        let fresh = MsmPlan::scan_parts(&small, 9, readers);
        assert_eq!(kept.len(), 2);
        for (k, f) in kept.iter().zip(&fresh) {
            for (k, f) in k.iter().zip(f) {
                assert_eq!((&k.ones, &k.terms, k.zeros), (&f.ones, &f.terms, f.zeros));
            }
        }
    }

    /// One scan for three readers gives each plan what its definition gives (and so
    /// does `build`, a scan a query): the same ones and terms in the same order, the same
    /// zeros, after a first run appended to each; over several chunks.
    #[test]
    fn one_scan_for_three_plans_is_each_plan_by_definition() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 3 * CHUNK + 1234;
        let (first, z) = (scalars(300, &mut rng), scalars(n, &mut rng));
        let (d1, d2) = (bits(n, &mut rng), bits(n, &mut rng));
        let reader = |base_start, density| Reader {
            base_start,
            density,
        };
        let readers = [
            reader(0, None),
            reader(300, Some(&d1[..])),
            reader(17, Some(&d2[..])),
        ];
        let head = reader(0, None);
        let mut got: [MsmPlan; 3] = std::array::from_fn(|_| by_definition(&[(&first, 0, head)]));
        let [g0, g1, g2] = &mut got;
        MsmPlan::extend_all([g0, g1, g2], &z, 300, readers);
        for (g, r) in got.iter().zip(readers) {
            let want = by_definition(&[(&first, 0, head), (&z, 300, r)]);
            assert_eq!(g.ones, want.ones);
            assert_eq!(g.terms, want.terms);
            assert_eq!(g.zeros, want.zeros);
            assert!(!want.ones.is_empty() && !want.terms.is_empty() && want.zeros > 0);
            let built = MsmPlan::build(&[
                Query {
                    scalars: &first,
                    scalar_start: 0,
                    base_start: 0,
                    density: None,
                },
                Query {
                    scalars: &z,
                    scalar_start: 300,
                    base_start: r.base_start,
                    density: r.density,
                },
            ]);
            assert_eq!(
                (built.ones, built.terms, built.zeros),
                (want.ones, want.terms, want.zeros)
            );
        }
    }
}
