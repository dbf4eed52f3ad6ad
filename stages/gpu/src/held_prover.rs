//! The prover a CUDA device holds, and whether it serves a partition: a prover is made for
//! one parameter file (its SRS mapping's address is the key) and with or without B_G2's
//! bases; a partition of other parameters, or one that now wants B_G2 on the device, needs
//! another. Whether the stage must make c for a partition (synthesis left it out) depends
//! on the prover that partition will use, so both questions are answered here, from one
//! rule.

use cuzk_kernels::cuda::GpuProver;

/// What the rule needs to know of a prover.
pub trait ProverTraits {
    /// Whether it holds B_G2's bases (computes B_G2 on the device).
    fn has_b_g2(&self) -> bool;
    /// Whether it folds C into L (reads no c).
    fn c_folded_into_l(&self) -> bool;
}

impl ProverTraits for GpuProver {
    fn has_b_g2(&self) -> bool {
        GpuProver::has_b_g2(self)
    }
    fn c_folded_into_l(&self) -> bool {
        GpuProver::c_folded_into_l(self)
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

    /// Whether the prover a partition of `key` will use reads c: all but a held one that
    /// folds C into L. One still to be made counts as reading it (what form it takes is
    /// known only once made: the folded form may not fit, or not apply to its domain).
    pub fn reads_c(&self, key: usize, b_g2: bool) -> bool {
        !self.serving(key, b_g2).is_some_and(|p| p.c_folded_into_l())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        g2: bool,
        folded: bool,
    }

    impl ProverTraits for Fake {
        fn has_b_g2(&self) -> bool {
            self.g2
        }
        fn c_folded_into_l(&self) -> bool {
            self.folded
        }
    }

    fn holding(key: usize, g2: bool, folded: bool) -> HeldProver<Fake> {
        HeldProver {
            prover: Some((key, Fake { g2, folded })),
            b_g2_on_cpu: None,
        }
    }

    /// c is skipped only for a partition the held folded prover will prove: not for other
    /// parameters (a smaller sector in a larger arena takes the coefficient form), not when
    /// B_G2 is now wanted (a new prover), not before any prover is made.
    #[test]
    fn c_is_made_unless_the_held_folded_prover_serves_the_partition() {
        let (a, b) = (0x1000, 0x2000);
        assert!(
            HeldProver::<Fake>::new().reads_c(a, false),
            "nothing made yet"
        );
        let folded = holding(a, false, true);
        assert!(
            !folded.reads_c(a, false),
            "the folded prover of these parameters"
        );
        assert!(
            folded.reads_c(b, false),
            "other parameters: a prover still to be made"
        );
        assert!(
            folded.reads_c(a, true),
            "B_G2 now wanted: a prover still to be made"
        );
        let mut g2_on_cpu = holding(a, false, true);
        g2_on_cpu.b_g2_on_cpu = Some(a);
        assert!(
            !g2_on_cpu.reads_c(a, true),
            "B_G2 known not to fit: the held prover serves"
        );
        assert!(!holding(a, true, true).reads_c(a, true));
        assert!(
            holding(a, false, false).reads_c(a, false),
            "coefficient form"
        );
    }

    /// The held prover serves its own key, with B_G2 when it holds it or B_G2 runs on the
    /// CPU for that key.
    #[test]
    fn a_prover_serves_its_key_and_its_b_g2_choice() {
        let (a, b) = (0x1000, 0x2000);
        let h = holding(a, false, false);
        assert!(h.serving(a, false).is_some());
        assert!(h.serving(b, false).is_none());
        assert!(h.serving(a, true).is_none());
        assert!(holding(a, true, false).serving(a, false).is_some());
        assert!(!h.wants_g2(a, false));
        assert!(h.wants_g2(a, true));
    }
}
