//! The prover a CUDA device holds, and whether it serves a partition: a prover is made for
//! one parameter file (its SRS mapping's address is the key) and with or without B_G2's
//! bases; a partition of other parameters, or one that now wants B_G2 on the device, needs
//! another.

use cuzk_kernels::cuda::GpuProver;

/// What the rule needs to know of a prover.
pub trait ProverTraits {
    /// Whether it holds B_G2's bases (computes B_G2 on the device).
    fn has_b_g2(&self) -> bool;
}

impl ProverTraits for GpuProver {
    fn has_b_g2(&self) -> bool {
        GpuProver::has_b_g2(self)
    }
}

pub struct HeldProver<P> {
    /// The prover and the key of the SRS it holds.
    pub prover: Option<(usize, P)>,
    /// The SRS whose B_G2 bases did not fit on the device beside its G1 bases: for it,
    /// B_G2 runs on the process's CPU threads instead (slow, but no job is lost).
    pub b_g2_on_cpu: Option<usize>,
}

impl<P: ProverTraits> HeldProver<P> {
    pub fn new() -> Self {
        HeldProver {
            prover: None,
            b_g2_on_cpu: None,
        }
    }

    /// Whether a prover for `key` should hold B_G2's bases: asked for, and not known not
    /// to fit.
    pub fn wants_g2(&self, key: usize, b_g2: bool) -> bool {
        b_g2 && self.b_g2_on_cpu != Some(key)
    }

    /// The prover that serves `key` (with B_G2's bases when they are wanted), if it is the
    /// one held; None: a new one must be made.
    pub fn serving(&self, key: usize, b_g2: bool) -> Option<&P> {
        let want_g2 = self.wants_g2(key, b_g2);
        self.prover
            .as_ref()
            .filter(|(k, p)| *k == key && (p.has_b_g2() || !want_g2))
            .map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        g2: bool,
    }

    impl ProverTraits for Fake {
        fn has_b_g2(&self) -> bool {
            self.g2
        }
    }

    fn holding(key: usize, g2: bool) -> HeldProver<Fake> {
        HeldProver {
            prover: Some((key, Fake { g2 })),
            b_g2_on_cpu: None,
        }
    }

    /// The held prover serves its own key, with B_G2 when it holds it or B_G2 runs on the
    /// CPU for that key; nothing serves before a prover is made.
    #[test]
    fn a_prover_serves_its_key_and_its_b_g2_choice() {
        let (a, b) = (0x1000, 0x2000);
        assert!(HeldProver::<Fake>::new().serving(a, false).is_none());
        let h = holding(a, false);
        assert!(h.serving(a, false).is_some());
        assert!(h.serving(b, false).is_none());
        assert!(
            h.serving(a, true).is_none(),
            "B_G2 now wanted: a new prover"
        );
        assert!(holding(a, true).serving(a, false).is_some());
        assert!(!h.wants_g2(a, false));
        assert!(h.wants_g2(a, true));
        let mut g2_on_cpu = holding(a, false);
        g2_on_cpu.b_g2_on_cpu = Some(a);
        assert!(
            g2_on_cpu.serving(a, true).is_some(),
            "B_G2 known not to fit: the held prover serves"
        );
    }
}
