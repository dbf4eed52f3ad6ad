//! What a prover's memory plan took, in one line: what the gpu stage logs once per proving
//! key (operators size devices by it) and the device checks print.

use super::super::memory_plan::{gib, LagrangeBases};
use super::GpuProver;

impl GpuProver {
    /// Device name, multiprocessors and the bytes planned.
    pub fn describe(&self) -> String {
        let name = self.dev.ctx.name().unwrap_or_else(|_| "?".into());
        format!(
            "{name}, {} SMs, max domain 2^{}, {} scalars, B_G2 {}, bases {}, H's bases {}, spare buffers {}, NTT full tables {}, pair sums {}, {}, {:.1} GiB allocated",
            self.dev.sm_count,
            self.plan.max_log,
            self.plan.max_scalars,
            if self.g2.is_some() {
                "on the device"
            } else {
                "not held"
            },
            match self.plan.stream_bytes {
                None => "resident".to_string(),
                Some(s) => format!("streamed through 2 x {} MiB", s >> 20),
            },
            if self.plan.lagrange == Some(LagrangeBases::Folded) {
                "in Lagrange form with C folded into L (LC, L')".into()
            } else if self.plan.lagrange.is_some() {
                format!(
                    "in Lagrange form (LC, LD', {:.1} GiB more)",
                    gib(self.plan.lagrange_bytes())
                )
            } else {
                "as coefficients' bases".into()
            },
            ["none", "a", "a and b"][self.spares.len()],
            if self.tables.holds_full() {
                "held"
            } else {
                "not held"
            },
            if self.plan.pairs {
                let odd = if self.plan.odd_pairs { self.plan.pairs_bytes(1) } else { 0 };
                let what = if odd > 0 { "aligned and odd" } else { "aligned" };
                format!("{what}, {:.1} GiB", gib(self.plan.pairs_bytes(0) + odd))
            } else {
                "not held".into()
            },
            if self.r1cs.is_some() {
                format!(
                    "recorded R1CS held for a and b, {:.2} GiB",
                    gib(self.plan.r1cs_bytes)
                )
            } else {
                "no recorded R1CS (a and b brought)".into()
            },
            gib(self.plan.bytes())
        )
    }
}
