//! The CPU device: the kernels crate's NTT and MSMs. Like a GPU it works on its own
//! copy of a and b (buffers allocated once, reused for every partition), so the slot's
//! evaluations stay intact and a redo after a crash reads the bytes synthesis wrote, and
//! makes c = a∘b itself (the slot holds no c: every row of a satisfied R1CS has a·b = c).
//! Where synthesis left a and b to the prover, it makes them from the assignment and the
//! recorded R1CS it holds, every row checked (`ab_from_r1cs.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use blstrs::Scalar as Fr;
use cuzk_kernels::groth16::steps::{b_g2_msm, g1_msms, h_scalars};
use cuzk_kernels::srs::SrsView;
use cuzk_kernels::witness::R1cs;
use cuzk_shm_layout::SlotClaim;
use cuzk_stage_common::runtime::Lookahead;
use cuzk_stage_common::slot_view::{msm_inputs, written_evals, MsmInputs};
use ff::Field;
use rayon::prelude::*;

use crate::ab_from_r1cs::AbFromR1cs;
use crate::{PartitionDevice, PartitionSums, Steps};

pub struct CpuDevice {
    /// Device memory stand-in: a, b, c of the largest domain seen.
    scratch: [Vec<Fr>; 3],
    /// The recorded R1CS, when synthesis leaves a and b to the prover.
    r1cs: Option<AbFromR1cs>,
}

impl CpuDevice {
    /// `domain`: the arena's slot domain, so nothing is allocated per partition.
    pub fn new(domain: usize) -> Self {
        CpuDevice {
            scratch: std::array::from_fn(|_| vec![Fr::ZERO; domain]),
            r1cs: None,
        }
    }
}

impl PartitionDevice for CpuDevice {
    fn describe(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn hold_r1cs(&mut self, r1cs: Arc<R1cs>) {
        self.r1cs = Some(AbFromR1cs::new(r1cs));
    }

    fn prove(
        &mut self,
        claim: &SlotClaim<'_>,
        srs: &SrsView<'_>,
        b_g2: bool,
        // The CPU has nothing to overlap: it never takes a slot ahead.
        _ahead: &mut Lookahead<'_, '_>,
    ) -> Result<(PartitionSums, Steps)> {
        let MsmInputs { shape, z, plans } = msm_inputs(claim, srs)?;
        let n = shape.domain_size();
        let started = Instant::now();
        let [a, b, c] = &mut self.scratch;
        for v in [&mut *a, &mut *b, &mut *c] {
            if v.len() < n {
                v.resize(n, Fr::ZERO);
            }
        }
        match written_evals(claim)? {
            Some([wa, wb]) => {
                a[..n].copy_from_slice(wa);
                b[..n].copy_from_slice(wb);
            }
            None => {
                let Some(r1cs) = self.r1cs.as_mut() else {
                    anyhow::bail!(
                        "the slot's a and b are left to the prover, and this process holds no recorded R1CS (is CUZK_SYNTHESIS_AB the same for every stage?)"
                    );
                };
                r1cs.evaluate(&shape, z, &mut a[..n], &mut b[..n])?;
            }
        }
        // C·z = a∘b row by row (the zero padding too), as the CUDA prover makes it.
        c[..n]
            .par_iter_mut()
            .zip(&a[..n])
            .zip(&b[..n])
            .for_each(|((c, a), b)| *c = a * b);
        let upload = started.elapsed();
        let started = Instant::now();
        let h = h_scalars(a, b, c, shape.domain_log2());
        let ntt = started.elapsed();
        let mut t = [Duration::ZERO; 4];
        let g1 = g1_msms(srs, h, z, plans, &mut t);
        let mut steps = vec![
            ("upload", upload),
            ("ntt", ntt),
            ("msm_h", t[0]),
            ("msm_l", t[1]),
            ("msm_a", t[2]),
            ("msm_b_g1", t[3]),
        ];
        let b_g2 = b_g2.then(|| {
            let started = Instant::now();
            let sum = b_g2_msm(srs, z, plans[2]);
            steps.push(("msm_b_g2", started.elapsed()));
            sum
        });
        Ok((PartitionSums { g1, b_g2 }, steps))
    }
}
