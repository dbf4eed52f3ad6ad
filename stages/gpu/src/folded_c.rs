//! C for H in Lagrange form with C folded into L (`CUZK_GPU_H_FORM=folded`; docs/gpu.md
//! "C folded into L"): the gpu process records the circuit's C from the blank circuit of
//! its jobs' proof type before the first prover for their parameters is made, and again
//! only when a job brings other parameters. A synthetic job gets a C of its shape without
//! entries (L' = L: its bases are random points, the speed is the same).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use cuzk_kernels::cuda::set_folded_c;
use cuzk_kernels::synthetic::SyntheticShape;
use cuzk_kernels::witness::matrix::R1csMatrix;
use cuzk_stage_common::JobSpec;
use cuzk_synthesis::Split;

/// The parameters whose circuit's C the process has set (`set_folded_c`), and that C.
#[derive(Default)]
pub struct FoldedC {
    params: Option<PathBuf>,
    c: Option<Arc<R1csMatrix>>,
}

impl FoldedC {
    /// Sets C for `spec`'s parameters unless it is set already; whether it recorded one.
    pub fn ensure(&mut self, spec: &JobSpec) -> Result<bool> {
        if self.params.as_ref() == Some(&spec.params_path) {
            return Ok(false);
        }
        let started = Instant::now();
        let (c, how) = match &spec.synthetic {
            Some(s) => {
                let shape = SyntheticShape::by_name(&s.synthetic)
                    .with_context(|| format!("no synthetic shape {:?}", s.synthetic))?;
                let empty = R1csMatrix {
                    num_inputs: shape.num_inputs,
                    num_aux: shape.num_aux,
                    ..Default::default()
                };
                (empty, "empty: a synthetic job".to_string())
            }
            None => {
                let c1 = spec.read_c1()?;
                let (c, split) = cuzk_synthesis::record_c(&c1, rayon::current_num_threads())?;
                let how = match split {
                    Split::Threads(n) => format!("a run of challenges per thread, {n} threads"),
                    Split::OnePiece(why) => format!("in one piece: {why}"),
                };
                (c, how)
            }
        };
        eprintln!(
            "cuzk-gpu: C of {} recorded ({} entries; {how}) in {:.1} s; folded into L when the prover starts",
            spec.params_path.display(),
            c.entries.len(),
            started.elapsed().as_secs_f64()
        );
        let c = Arc::new(c);
        set_folded_c(Some(c.clone()));
        self.params = Some(spec.params_path.clone());
        self.c = Some(c);
        Ok(true)
    }
}
