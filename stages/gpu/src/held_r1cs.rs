//! The recorded R1CS of the jobs' proof type, held when synthesis leaves a and b to the
//! prover (`CUZK_SYNTHESIS_AB=prover`, read by both stages from the same environment): the
//! gpu process records it as synthesis does (`cuzk_synthesis::record_r1cs`) before the
//! first prover for the jobs' parameters is made, and again only when a job brings other
//! parameters. The CUDA device's provers hold its device form and make a and b on the
//! device; the CPU device evaluates it on the host. Synthetic jobs bring their a and b.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use cuzk_stage_common::JobSpec;

use crate::PartitionDevice;

/// The parameters whose circuit's R1CS the device holds.
#[derive(Default)]
pub struct HeldR1cs {
    params: Option<PathBuf>,
}

impl HeldR1cs {
    /// Records `spec`'s R1CS and gives it to `device`, unless it holds that of the same
    /// parameters already (or the job is synthetic); whether it recorded one.
    pub fn ensure(&mut self, spec: &JobSpec, device: &mut dyn PartitionDevice) -> Result<bool> {
        if spec.synthetic.is_some() || self.params.as_ref() == Some(&spec.params_path) {
            return Ok(false);
        }
        let started = Instant::now();
        let c1 = spec.read_c1()?;
        let r1cs = cuzk_synthesis::record_r1cs(&c1)?;
        let [a, b, c] = r1cs.entries();
        eprintln!(
            "cuzk-gpu: R1CS of {} recorded in {:.2} s (entries A {a}, B {b}, C {c}): a and b are made by this device from the assignment",
            spec.params_path.display(),
            started.elapsed().as_secs_f64()
        );
        device.hold_r1cs(Arc::new(r1cs));
        self.params = Some(spec.params_path.clone());
        Ok(true)
    }
}
