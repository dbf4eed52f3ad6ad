//! Pippenger's bucket method with signed digits and batch-affine bucket accumulation.
//!
//! Σ k_i·P_i = Σ_w 2^{wc} · Σ_i d_{i,w}·P_i, with each scalar recoded into signed c-bit
//! digits d ∈ [−2^{c−1}, 2^{c−1}) (top window unsigned), so a window needs 2^{c−1}
//! buckets: bucket |d|−1 collects ±P_i. A window's sum is Σ_b (b+1)·B_b, computed with two
//! running sums. Windows run in parallel.
//!
//! Recoding without carries between windows: with K = Σ_{w<W−1} 2^{wc + c−1}, the digits of
//! k are those of k' = k + K read in base 2^c, minus 2^{c−1} (except the top window).

use group::Group;
use rayon::prelude::*;

use super::batch_affine::{add_pairs, Sum};
use super::curve::AffinePoint;
use super::scalars::{self, Limbs};

/// One term of an MSM: [base index, scalar index] (an array, so its layout is fixed for
/// shared memory and device uploads).
pub type Term = [u32; 2];

/// Scalar bit width the digits must cover (Fr is 255 bits).
const SCALAR_BITS: usize = 255;
/// Windows with fewer buckets than this use projective buckets: too few buckets make
/// batch-affine additions collide and flush with tiny batches.
const AFFINE_MIN_BUCKETS: usize = 1024;

/// How scalars are cut into windows.
#[derive(Clone, Debug)]
pub struct WindowPlan {
    pub c: usize,
    pub windows: usize,
    offset: Limbs,
    top_buckets: usize,
}

impl WindowPlan {
    pub fn new(c: usize) -> Self {
        assert!((2..=20).contains(&c));
        let windows = SCALAR_BITS.div_ceil(c);
        let mut offset = [0u64; 4];
        for w in 0..windows - 1 {
            let bit = w * c + c - 1;
            offset[bit / 64] |= 1 << (bit % 64);
        }
        let top_start = (windows - 1) * c;
        let top_max = {
            let m = scalars::add(&scalars::max_scalar(), &offset);
            scalars::bits(&m, top_start, 256 - top_start)
        };
        WindowPlan {
            c,
            windows,
            offset,
            top_buckets: top_max as usize,
        }
    }

    /// The window size we use for `n` terms: about log2(n) − 5, which balances the n
    /// additions per window against the 2^c bucket additions of its reduction, capped at
    /// 15 so a window's affine buckets (2^14 × 96 B for G1) stay within L2; 16 measured
    /// 7 % slower at 2^22 terms (`msm_vs_blst` bench).
    pub fn for_terms(n: usize) -> Self {
        let log = usize::BITS as usize - n.max(1).leading_zeros() as usize;
        Self::new(log.saturating_sub(6).clamp(2, 15))
    }

    fn buckets(&self, w: usize) -> usize {
        if w + 1 == self.windows {
            self.top_buckets
        } else {
            1 << (self.c - 1)
        }
    }

    /// Signed digit of window w.
    #[inline]
    fn digit(&self, k: &Limbs, w: usize) -> i64 {
        let kp = scalars::add(k, &self.offset);
        let start = w * self.c;
        if w + 1 == self.windows {
            scalars::bits(&kp, start, (256 - start).min(32)) as i64
        } else {
            scalars::bits(&kp, start, self.c) as i64 - (1i64 << (self.c - 1))
        }
    }
}

/// Σ scalars[s]·bases[b] over `terms`. Bases must not be the identity.
pub fn msm<A: AffinePoint>(bases: &[A], scalars: &[Limbs], terms: &[Term]) -> A::Projective {
    if terms.is_empty() {
        return A::Projective::identity();
    }
    let plan = WindowPlan::for_terms(terms.len());
    msm_with(bases, scalars, terms, &plan)
}

/// [`msm`] with a chosen window plan (for tuning and tests).
pub fn msm_with<A: AffinePoint>(
    bases: &[A],
    scalars: &[Limbs],
    terms: &[Term],
    plan: &WindowPlan,
) -> A::Projective {
    let sums: Vec<A::Projective> = (0..plan.windows)
        .into_par_iter()
        .map(|w| {
            if plan.buckets(w) >= AFFINE_MIN_BUCKETS {
                AffineBuckets::new(plan.buckets(w)).window_sum(bases, scalars, terms, plan, w)
            } else {
                projective_window_sum(bases, scalars, terms, plan, w)
            }
        })
        .collect();
    // Horner: Σ_w 2^{wc}·S_w.
    sums.iter().rev().fold(A::Projective::identity(), |acc, s| {
        let mut acc = acc;
        for _ in 0..plan.c {
            acc = acc.double();
        }
        acc + s
    })
}

/// The bucket a non-zero signed digit d selects (|d| − 1) and the point it adds there:
/// P for d > 0, −P for d < 0.
#[inline(always)]
fn signed_bucket<A: AffinePoint>(d: i64, p: A) -> (usize, A) {
    if d > 0 {
        ((d - 1) as usize, p)
    } else {
        ((-d - 1) as usize, -p)
    }
}

/// Σ_b (b+1)·B_b for buckets B_0..B_{n−1}, via running sums from the top.
fn reduce_buckets<A: AffinePoint>(
    buckets: impl DoubleEndedIterator<Item = Option<A::Projective>>,
) -> A::Projective {
    let mut running = A::Projective::identity();
    let mut total = A::Projective::identity();
    for b in buckets.rev() {
        if let Some(p) = b {
            running += p;
        }
        total += running;
    }
    total
}

fn projective_window_sum<A: AffinePoint>(
    bases: &[A],
    scalars: &[Limbs],
    terms: &[Term],
    plan: &WindowPlan,
    w: usize,
) -> A::Projective {
    let mut buckets = vec![A::Projective::identity(); plan.buckets(w)];
    for &[b, s] in terms {
        let d = plan.digit(&scalars[s as usize], w);
        if d != 0 {
            let (i, p) = signed_bucket(d, bases[b as usize]);
            buckets[i] += p;
        }
    }
    reduce_buckets::<A>(buckets.into_iter().map(Some))
}

/// Buckets kept affine; additions into them wait in a batch until one inversion serves
/// them all. A bucket already waiting in the batch defers further points to the next one.
struct AffineBuckets<A: AffinePoint> {
    value: Vec<A>,
    occupied: Vec<bool>,
    pending: Vec<bool>,
    batch: Vec<(A, A)>,
    batch_bucket: Vec<u32>,
    deferred: Vec<(u32, A)>,
    scratch: Vec<(A::Base, A::Base)>,
    batch_max: usize,
}

impl<A: AffinePoint> AffineBuckets<A> {
    fn new(n: usize) -> Self {
        // One inversion per batch: large batches amortize it, but a batch that covers too many
        // buckets makes new points meet buckets already waiting (deferred to the next batch).
        let batch_max = (n / 4).clamp(256, 4096);
        AffineBuckets {
            value: vec![A::identity(); n],
            occupied: vec![false; n],
            pending: vec![false; n],
            batch: Vec::with_capacity(batch_max),
            batch_bucket: Vec::with_capacity(batch_max),
            deferred: Vec::new(),
            scratch: Vec::with_capacity(batch_max),
            batch_max,
        }
    }

    fn window_sum(
        mut self,
        bases: &[A],
        scalars: &[Limbs],
        terms: &[Term],
        plan: &WindowPlan,
        w: usize,
    ) -> A::Projective {
        // Terms go in blocks: the block's digits first, with a prefetch of each bucket they
        // hit, then the inserts, so the buckets' cache misses overlap instead of queueing.
        const BLOCK: usize = 32;
        let mut digits = [0i64; BLOCK];
        for block in terms.chunks(BLOCK) {
            for (d, &[_, s]) in digits.iter_mut().zip(block) {
                *d = plan.digit(&scalars[s as usize], w);
                if *d != 0 {
                    prefetch(&self.value[(d.unsigned_abs() - 1) as usize]);
                }
            }
            for (&d, &[b, _]) in digits.iter().zip(block) {
                if d == 0 {
                    continue;
                }
                let (bucket, p) = signed_bucket(d, bases[b as usize]);
                self.insert(bucket as u32, p);
                if self.batch.len() >= self.batch_max {
                    self.flush();
                }
            }
        }
        while !self.batch.is_empty() || !self.deferred.is_empty() {
            self.flush();
        }
        let AffineBuckets {
            value, occupied, ..
        } = self;
        reduce_buckets::<A>(
            value
                .into_iter()
                .zip(occupied)
                .map(|(v, o)| o.then(|| v.to_curve()))
                .collect::<Vec<_>>()
                .into_iter(),
        )
    }

    #[inline]
    fn insert(&mut self, b: u32, p: A) {
        let i = b as usize;
        if !self.occupied[i] {
            self.value[i] = p;
            self.occupied[i] = true;
        } else if self.pending[i] || self.batch.len() >= self.batch_max {
            self.deferred.push((b, p));
        } else {
            self.pending[i] = true;
            self.batch.push((self.value[i], p));
            self.batch_bucket.push(b);
        }
    }

    /// Performs the batch, then retries the deferred points once.
    fn flush(&mut self) {
        let (value, occupied, pending, bb) = (
            &mut self.value,
            &mut self.occupied,
            &mut self.pending,
            &self.batch_bucket,
        );
        add_pairs(&self.batch, &mut self.scratch, |t, sum| {
            let i = bb[t] as usize;
            pending[i] = false;
            match sum {
                Sum::Point(q) => value[i] = q,
                Sum::Identity => occupied[i] = false,
            }
        });
        self.batch.clear();
        self.batch_bucket.clear();
        for (b, p) in std::mem::take(&mut self.deferred) {
            self.insert(b, p);
        }
    }
}

/// Asks for the cache line holding `v` ahead of its use (a hint; no effect on results).
#[inline(always)]
fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: _mm_prefetch only hints the cache; it never faults, and the pointer comes
    // from a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            v as *const T as *const i8,
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}
