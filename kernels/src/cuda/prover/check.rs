//! What `GpuProver::prove` checks of a partition: before it enqueues anything, sizes within
//! the plan and B_G2 only with its bases (`check_shape`, constant time); then, while the
//! device runs the partition's transforms and H's MSM, which read only a, b and c, the
//! L, A and B plans' indices inside their vectors and, when the bases stream, the plans
//! sorted by base (`check_plans`, a scan of every entry: ~160 M at 32 GiB), before anything
//! that reads a plan is enqueued. The scan so no longer keeps the device waiting at the
//! start of every partition.

use rayon::prelude::*;

use super::super::stream;
use super::super::GpuError;
use super::{GpuPartition, GpuProver};
use crate::msm::PlanRef;

/// Entries a thread scans at a time.
const CHUNK: usize = 1 << 16;

/// One past the largest base index and one past the largest scalar index `plan` names (0
/// for none). A 32 GiB partition's three plans hold ~160 M entries and the device idles
/// while `prove` reads them, so this is a max over chunks on every core (a loop the
/// compiler vectorizes) rather than a short-circuiting scan on one thread.
fn index_ends(plan: PlanRef<'_>) -> (usize, usize) {
    let end = |m: Option<u32>| m.map_or(0, |v| v as usize + 1);
    let ones = plan
        .ones
        .par_chunks(CHUNK)
        .map(|ch| ch.iter().copied().max())
        .max()
        .flatten();
    let (bases, scalars) = plan
        .terms
        .par_chunks(CHUNK)
        .map(|ch| {
            ch.iter()
                .fold((0u32, 0u32), |(b, s), t| (b.max(t[0]), s.max(t[1])))
        })
        .reduce(|| (0, 0), |x, y| (x.0.max(y.0), x.1.max(y.1)));
    let terms = !plan.terms.is_empty();
    (
        end(ones).max(end(terms.then_some(bases))),
        end(terms.then_some(scalars)),
    )
}

/// The partition's L, A, B plans with their names for errors; plan i has the bases of
/// `plan.counts[i + 1]`.
fn named_plans<'p>(p: &GpuPartition<'p>) -> [(PlanRef<'p>, &'static str); 3] {
    [(p.l, "L"), (p.a_plan, "A"), (p.b_plan, "B")]
}

impl GpuProver {
    pub(super) fn check_shape(&self, p: &GpuPartition<'_>) -> Result<(), GpuError> {
        let n = 1usize << p.domain_log2;
        let bad = |m: String| Err(GpuError::TooLarge(m));
        if p.domain_log2 > self.plan.max_log || p.domain_log2 < 2 {
            return bad(format!(
                "domain 2^{} outside 2^2..2^{}",
                p.domain_log2, self.plan.max_log
            ));
        }
        if p.b_g2 && self.g2.is_none() {
            return Err(GpuError::Input(
                "B_G2 asked for, but this prover holds no B_G2 bases".into(),
            ));
        }
        match (p.evals, &self.r1cs) {
            (super::Evals::Given { a, b }, _) => {
                if a.len() != n || b.len() != n || p.c.is_some_and(|c| c.len() != n) {
                    return bad(format!("a, b, c must hold 2^{} evaluations", p.domain_log2));
                }
            }
            (super::Evals::FromR1cs, None) => {
                return Err(GpuError::Input(
                    "a and b to be made from a recorded R1CS, but this prover holds none".into(),
                ))
            }
            (super::Evals::FromR1cs, Some(r1cs)) => {
                let (n_in, n_aux) = r1cs.vars();
                if p.c.is_some() || p.scalars.len() != n_in + n_aux {
                    return Err(GpuError::Input(format!(
                        "a and b made from the recorded R1CS need its {n_in} + {n_aux} variables' scalars and no c; the partition brings {} scalars{}",
                        p.scalars.len(),
                        if p.c.is_some() { " and c" } else { "" }
                    )));
                }
            }
        }
        if n - 1 > self.plan.counts[0] {
            return bad(format!(
                "H needs {} bases, {} resident",
                n - 1,
                self.plan.counts[0]
            ));
        }
        if p.scalars.len() > self.plan.max_scalars {
            return bad(format!(
                "{} scalars, planned for {}",
                p.scalars.len(),
                self.plan.max_scalars
            ));
        }
        // C folded into L: the scalars are the inputs C was folded with, then L's aux.
        if let Some(lb) = self.lagrange.as_ref().filter(|l| l.c_part.is_none()) {
            if p.scalars.len() != lb.q_inputs.len() + self.plan.counts[1] {
                return Err(GpuError::Input(format!(
                    "{} scalars; C was folded into L for {} inputs and {} aux",
                    p.scalars.len(),
                    lb.q_inputs.len(),
                    self.plan.counts[1]
                )));
            }
        }
        for (i, (plan, name)) in named_plans(p).iter().enumerate() {
            let cap = self.plan.counts[i + 1];
            if plan.terms.len() + plan.ones.len() > cap {
                return bad(format!(
                    "{name} plan has {} entries for {cap} bases",
                    plan.terms.len() + plan.ones.len()
                ));
            }
        }
        Ok(())
    }

    /// The plans' entries: every base index below its MSM's base count, every scalar index
    /// inside `p.scalars`, and sorted by base when the bases stream. `check_shape` first.
    pub(super) fn check_plans(&self, p: &GpuPartition<'_>) -> Result<(), GpuError> {
        for (i, (plan, name)) in named_plans(p).iter().enumerate() {
            let cap = self.plan.counts[i + 1];
            let (base_end, scalar_end) = index_ends(*plan);
            if base_end > cap || scalar_end > p.scalars.len() {
                return Err(GpuError::Input(format!(
                    "{name} plan indexes past its bases or scalars"
                )));
            }
            if self.stream.is_some() && !stream::sorted_by_base(*plan) {
                return Err(GpuError::Input(format!(
                    "{name} plan is not sorted by base (streamed bases are cut by base index)"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{index_ends, CHUNK};
    use crate::msm::PlanRef;

    #[test]
    fn index_ends_are_one_past_the_largest_indices() {
        let none = PlanRef {
            ones: &[],
            terms: &[],
        };
        assert_eq!(index_ends(none), (0, 0));
        // Base 0 alone still needs one base.
        let zero = PlanRef {
            ones: &[0],
            terms: &[],
        };
        assert_eq!(index_ends(zero), (1, 0));
        // Several chunks, the largest indices in the last one and in the middle of another;
        // the largest base among the ones, then among the terms.
        let mut ones: Vec<u32> = (0..3 * CHUNK as u32 + 5).map(|i| i % 1000).collect();
        let mut terms: Vec<[u32; 2]> = (0..2 * CHUNK as u32 + 3)
            .map(|i| [i % 77, i % 91])
            .collect();
        *ones.last_mut().unwrap() = 123_456;
        terms[CHUNK + 17] = [5, 70_000];
        let plan = PlanRef {
            ones: &ones,
            terms: &terms,
        };
        assert_eq!(index_ends(plan), (123_457, 70_001));
        terms[2] = [999_999, 1];
        let plan = PlanRef {
            ones: &ones,
            terms: &terms,
        };
        assert_eq!(index_ends(plan), (1_000_000, 70_001));
    }
}
