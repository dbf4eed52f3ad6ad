//! A partition's inputs onto the device and through the steps that read only them,
//! enqueued first by `prove`: a and b (unless uploaded ahead) to the coset; C's values
//! (brought by the caller, or made on the device as a∘b when it brings none: every row of
//! a satisfied R1CS has a·b = c) to their n·coefficients, or in Lagrange form to scalars
//! listed by kind; with C folded into L nothing of C. a and b made from the recorded R1CS
//! (`Evals::FromR1cs`) need the scalars instead, which then upload first.

use cudarc::driver::sys::CUdeviceptr;

use super::super::device::DevBuf;
use super::super::lagrange::{self, AbTimes, CKinds};
use super::super::ntt;
use super::super::r1cs_eval::EvalAt;
use super::super::GpuError;
use super::{Evals, GpuPartition, GpuProver, LagrangeHere};

impl GpuProver {
    /// Enqueues the uploads (on the copy stream, each followed by its event) and the
    /// transforms (on the compute stream, each after the upload it reads); returns where
    /// C's n·coefficients lie in the coefficient form (c or the scratch buffer; c in the
    /// other forms, which do not read it as coefficients). `ahead_n`: how many of a, b are
    /// on the device already (with a and b made on the device: 1 when the scalars are);
    /// `lagrange` as `prove` found the prover's form.
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
        let [pa, pb] = p.evals.given();
        match p.c {
            Some(c_host) => {
                for (i, (x, v, ev)) in [(a, pa, e_a), (b, pb, e_b), (c, c_host, e_c)]
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
                match p.evals {
                    Evals::Given { .. } => {
                        for (i, (x, v, ev)) in [(a, pa, e_a), (b, pb, e_b)].into_iter().enumerate()
                        {
                            if i >= ahead_n {
                                d.upload(x, self.abc[i].bytes, v, cs)?;
                            }
                            ev.record(cs)?;
                        }
                        e_b.wait_on(ks)?; // the copy stream is in order: a has landed too
                    }
                    Evals::FromR1cs => {
                        // z first (the MSMs read it later), then a = A·z, b = B·z with
                        // every recorded row's a·b = C·z checked (read back by `prove`).
                        if ahead_n == 0 {
                            d.upload(self.scalars.ptr, self.scalars.bytes, p.scalars, cs)?;
                        }
                        e_b.record(cs)?;
                        e_b.wait_on(ks)?;
                        self.make_ab(log_n, p.scalars.len())?;
                    }
                }
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

    /// Enqueues a and b made from the recorded R1CS and the scalars on the device (between
    /// the two events `prove` times them by).
    fn make_ab(&self, log_n: u32, scalars: usize) -> Result<(), GpuError> {
        let d = &self.dev;
        let r1cs = self
            .r1cs
            .as_ref()
            .ok_or_else(|| GpuError::Input("this prover holds no recorded R1CS".into()))?;
        let [.., e_ab0, e_ab1] = &self.ev; // as `prove` names them
        e_ab0.record(d.compute)?;
        let at = EvalAt {
            log_n,
            z: (self.scalars.ptr, scalars),
            a: self.abc[0].ptr,
            b: self.abc[1].ptr,
            check: true,
        };
        r1cs.enqueue(d, &at, d.compute, None)?;
        e_ab1.record(d.compute)?;
        Ok(())
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
            let [.., e_kinds, _, _, _] = &self.ev; // as `prove` names them
            e_kinds.record(d.compute)?;
        }
        Ok(())
    }
}
