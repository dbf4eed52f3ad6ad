//! A partition's inputs onto the device and through the steps that read only them,
//! enqueued first by `prove`: a and b (unless uploaded ahead) to the coset; C's values
//! (brought by the caller, or made on the device as a∘b when it brings none: every row of
//! a satisfied R1CS has a·b = c) to their n·coefficients, or in Lagrange form to scalars
//! listed by kind; with C folded into L nothing of C.

use cudarc::driver::sys::CUdeviceptr;

use super::super::device::DevBuf;
use super::super::lagrange::{self, AbTimes, CKinds};
use super::super::ntt;
use super::super::GpuError;
use super::{GpuPartition, GpuProver, LagrangeHere};

impl GpuProver {
    /// Enqueues the uploads (on the copy stream, each followed by its event) and the
    /// transforms (on the compute stream, each after the upload it reads); returns where
    /// C's n·coefficients lie in the coefficient form (c or the scratch buffer; c in the
    /// other forms, which do not read it as coefficients). `ahead_n`: how many of a, b are
    /// on the device already; `lagrange` as `prove` found the prover's form.
    pub(super) fn enqueue_inputs(
        &self,
        p: &GpuPartition<'_>,
        ahead_n: usize,
        lagrange: LagrangeHere,
        kinds: CKinds,
    ) -> Result<CUdeviceptr, GpuError> {
        let d = &self.dev;
        let (cs, ks) = (d.copy, d.compute);
        let log_n = p.domain_log2;
        let [_, e_a, e_b, e_c, ..] = &self.ev;
        let [a, b, c, s] = self.abc.map(|x| x.ptr);
        let folded = matches!(lagrange, Some(None));
        // Where C's coefficients land (c or the scratch s).
        let mut cc = c;
        match p.c {
            Some(c_host) => {
                for (i, (x, v, ev)) in [(a, p.a, e_a), (b, p.b, e_b), (c, c_host, e_c)]
                    .into_iter()
                    .enumerate()
                {
                    if i >= ahead_n && !(i == 2 && folded) {
                        d.upload(x, self.abc[i].bytes, v, cs)?;
                    }
                    ev.record(cs)?;
                    // Each input's transforms start once it has landed: A and B go to the
                    // coset, C only to its coefficients (Lagrange form: to scalars, with
                    // A·B's after B).
                    ev.wait_on(ks)?;
                    match (i, lagrange) {
                        (0 | 1, _) => ntt::to_coset(d, &self.tables, log_n, x, s)?,
                        (_, None) => cc = ntt::to_coefficients(d, &self.tables, log_n, x, s)?,
                        (_, Some(c_part)) => self.lagrange_scalars(log_n, c_part, kinds)?,
                    }
                }
            }
            None => {
                // C·z left to the prover: c = a∘b on the domain (ntt.rs
                // `product_coefficients`), made from a and b before they go to the coset,
                // so everything waits for both uploads (ahead ones have landed already).
                for (i, (x, v, ev)) in [(a, p.a, e_a), (b, p.b, e_b)].into_iter().enumerate() {
                    if i >= ahead_n {
                        d.upload(x, self.abc[i].bytes, v, cs)?;
                    }
                    ev.record(cs)?;
                }
                e_b.wait_on(ks)?; // the copy stream is in order: a has landed too
                match lagrange {
                    None => {
                        cc = ntt::product_coefficients(d, &self.tables, log_n, [a, b], c, s)?;
                        let free = if cc == c { s } else { c };
                        ntt::to_coset(d, &self.tables, log_n, a, free)?;
                        ntt::to_coset(d, &self.tables, log_n, b, free)?;
                    }
                    Some(c_part) => {
                        if c_part.is_some() {
                            lagrange::enqueue_ab(d, log_n, [a, b], c, AbTimes::CValues)?;
                        }
                        ntt::to_coset(d, &self.tables, log_n, a, s)?;
                        ntt::to_coset(d, &self.tables, log_n, b, s)?;
                        self.lagrange_scalars(log_n, c_part, kinds)?;
                    }
                }
            }
        }
        Ok(cc)
    }

    /// Lagrange and folded forms, once A and B are on the coset (and c's values, Montgomery,
    /// are in c for the Lagrange form): H's scalars a_j·b_j/(g^n − 1) in place of a, and in
    /// the Lagrange form c's values listed by kind in the scratch buffer, which the
    /// transforms are done with.
    fn lagrange_scalars(
        &self,
        log_n: u32,
        c_part: Option<(DevBuf, DevBuf)>,
        kinds: CKinds,
    ) -> Result<(), GpuError> {
        let d = &self.dev;
        let [a, b, c, _] = self.abc.map(|x| x.ptr);
        lagrange::enqueue_ab(d, log_n, [a, b], a, AbTimes::CosetScalars)?;
        if let Some((_, counts)) = c_part {
            lagrange::enqueue_c_kinds(d, log_n, c, kinds, counts.ptr)?;
            let [.., e_kinds, _] = &self.ev; // as `prove` names them
            e_kinds.record(d.compute)?;
        }
        Ok(())
    }
}
