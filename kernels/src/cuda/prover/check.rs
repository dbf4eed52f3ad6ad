//! What `GpuProver::prove` checks of a partition before it enqueues anything: sizes within
//! the plan, indices inside their vectors, B_G2 only with its bases, plans sorted by base when
//! the bases stream.

use super::super::stream;
use super::super::GpuError;
use super::{GpuPartition, GpuProver};

impl GpuProver {
    pub(super) fn check(&self, p: &GpuPartition<'_>) -> Result<(), GpuError> {
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
        if p.a.len() != n || p.b.len() != n || p.c.len() != n {
            return bad(format!("a, b, c must hold 2^{} evaluations", p.domain_log2));
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
        for (i, (plan, name)) in [(p.l, "L"), (p.a_plan, "A"), (p.b_plan, "B")]
            .iter()
            .enumerate()
        {
            let cap = self.plan.counts[i + 1];
            if plan.terms.len() + plan.ones.len() > cap {
                return bad(format!(
                    "{name} plan has {} entries for {cap} bases",
                    plan.terms.len() + plan.ones.len()
                ));
            }
            let ns = p.scalars.len() as u32;
            let cb = cap as u32;
            if plan.ones.iter().any(|&b| b >= cb)
                || plan.terms.iter().any(|&[b, s]| b >= cb || s >= ns)
            {
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
