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
use crate::witness::matrix::R1csMatrix;

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
        c: Option<&R1csMatrix>,
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

/// `first()` (a prover in the Lagrange form, which sets its flag when making LC and LD' or
/// L' failed), or, when that making failed and the context still serves, `coefficients()`:
/// the Lagrange form is a speed-up, not a need, so a transform or fold that does not fit,
/// or a cache that cannot be read, leaves the prover in the coefficient form rather than
/// without one. Any other error is returned as it is.
pub(super) fn or_coefficient_form<T>(
    first: impl FnOnce(&mut bool) -> Result<T, GpuError>,
    coefficients: impl FnOnce() -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    let mut make_failed = false;
    match first(&mut make_failed) {
        Err(e) if make_failed && e.context_usable() => {
            eprintln!(
                "cuzk-kernels: H's bases not put in Lagrange form ({e}); this prover takes the coefficient form"
            );
            coefficients()
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::result::DriverError;
    use cudarc::driver::sys::cudaError_enum as E;

    fn cuda(e: E, usable: bool) -> GpuError {
        GpuError::Cuda {
            step: "test",
            driver: DriverError(e),
            context_usable: usable,
        }
    }

    /// The coefficient form is taken only when making the Lagrange form failed and the
    /// context still serves; other failures and successes pass through.
    #[test]
    fn only_a_failed_make_in_a_usable_context_falls_back() {
        let second = || Ok::<_, GpuError>("coefficients");
        // Made, the plan allocated: the Lagrange prover.
        let r = or_coefficient_form(|_| Ok("lagrange"), second);
        assert_eq!(r.unwrap(), "lagrange");
        // The transform's memory: the coefficient form.
        let r = or_coefficient_form(
            |failed| {
                *failed = true;
                Err(GpuError::OutOfMemory("transform".into()))
            },
            second,
        );
        assert_eq!(r.unwrap(), "coefficients");
        let r = or_coefficient_form(
            |failed| {
                *failed = true;
                Err(GpuError::Input("a fold that does not match".into()))
            },
            second,
        );
        assert_eq!(r.unwrap(), "coefficients");
        // A lost context: nothing else can run, the error stands.
        let r = or_coefficient_form(
            |failed| {
                *failed = true;
                Err(cuda(E::CUDA_ERROR_ILLEGAL_ADDRESS, false))
            },
            second,
        );
        assert!(!r.unwrap_err().context_usable());
        // The plan itself does not fit (not the making): the error stands, no retry.
        let r = or_coefficient_form(
            |_| Err::<&str, _>(GpuError::OutOfMemory("plan".into())),
            || panic!("no second try"),
        );
        assert!(matches!(r, Err(GpuError::OutOfMemory(w)) if w == "plan"));
    }
}
