//! H's Lagrange form at the prover's start: what `GpuProver::build` makes on the device and
//! brings back before the plan's one allocation (LC, and LD' for sums over c every
//! partition or, with C folded into L, L' = L − Cᵀ·LD' and the inputs' Q; docs/gpu.md "C
//! folded into L"), and what a prover tells of the form it holds.

use blstrs::G1Affine;
use group::prime::PrimeCurveAffine;

use super::super::c_fold;
use super::super::device::{DevBuf, Device};
use super::super::lagrange;
use super::super::memory_plan::LagrangeBases;
use super::super::GpuError;
use super::GpuProver;
use crate::witness::c_matrix::CMatrix;

pub(super) struct Made {
    pub lc: Vec<G1Affine>,
    pub ld: Option<Vec<G1Affine>>,
    /// (L', Q_inputs)
    pub folded: Option<(Vec<G1Affine>, Vec<G1Affine>)>,
}

impl Made {
    /// LC and LD' from `h` on `dev`, then, for `LagrangeBases::Folded` with `c`, C folded
    /// into `l` on `dev` (LD' then goes); each step's time logged.
    pub fn make(
        dev: &mut Device,
        kind: LagrangeBases,
        c: Option<&CMatrix>,
        h: &[G1Affine],
        l: &[G1Affine],
    ) -> Result<Made, GpuError> {
        // From the cache directory when it holds them (lagrange.rs `set_lagrange_cache`).
        let (lc, ld) = lagrange::lagrange_bases_cached(dev, h)?;
        Ok(match (kind, c) {
            (LagrangeBases::Folded, Some(c)) => {
                let (l_folded, q_in, took) = c_fold::fold_on_device(dev, l, &ld, c)?;
                eprintln!(
                    "cuzk-kernels: C ({} entries) folded into L's {} bases on the device in {:.1} s",
                    c.entries.len(),
                    l.len(),
                    took.as_secs_f64()
                );
                Made {
                    lc,
                    ld: None,
                    folded: Some((l_folded, q_in)),
                }
            }
            _ => Made {
                lc,
                ld: Some(ld),
                folded: None,
            },
        })
    }
}

impl GpuProver {
    /// LD' when H's MSM is in Lagrange form with sums over c's values.
    pub(crate) fn lagrange_ld_buf(&self) -> Option<DevBuf> {
        self.lagrange
            .as_ref()
            .and_then(|l| l.c_part.as_ref().map(|c| c.ld))
    }

    /// Synthetic provers (speed only): the inputs' Q of a prover with C folded into L, all O.
    pub(crate) fn set_synthetic_q_inputs(&mut self, inputs: usize) {
        if let Some(lb) = self.lagrange.as_mut().filter(|l| l.c_part.is_none()) {
            lb.q_inputs = vec![G1Affine::identity(); inputs];
        }
    }

    /// Whether C is folded into L (`HForm::Folded`): `prove` reads no c, and its L sum is
    /// ΣL + ΣH's C part (only their sum is ΣH + ΣL).
    pub fn c_folded_into_l(&self) -> bool {
        self.lagrange.as_ref().is_some_and(|l| l.c_part.is_none())
    }

    /// Whether H's MSM is in Lagrange form (for partitions of H's domain).
    pub fn h_in_lagrange_form(&self) -> bool {
        self.lagrange.is_some()
    }
}
