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

/// The parameters whose circuit's R1CS the device holds, and whether a partition has been
/// proved with it yet.
///
/// The R1CS is recorded from the first job's C1. A C1 that parses but builds a circuit of
/// another shape (a Merkle path one hash too long) would leave a wrong recording that
/// fails every later job of the same parameters, so a recording no partition has been
/// proved with yet is dropped when a partition fails, and the next job records its own.
/// One proved partition shows it right: the device checks every row against the witness.
#[derive(Default)]
pub struct HeldR1cs {
    params: Option<PathBuf>,
    proved: bool,
}

impl HeldR1cs {
    /// Whether `params`' R1CS must be recorded (none held, or another's).
    fn wants(&self, params: &PathBuf) -> bool {
        self.params.as_ref() != Some(params)
    }

    /// A partition was proved with the held R1CS: it is kept from now on.
    pub fn partition_proved(&mut self) {
        self.proved = self.params.is_some();
    }

    /// A partition failed: a recording no partition was proved with yet may be the wrong
    /// one (see above), so the next partition records its job's own.
    pub fn partition_failed(&mut self) {
        if !self.proved && self.params.take().is_some() {
            eprintln!("cuzk-gpu: a partition failed before any was proved with the recorded R1CS: the next job's is recorded anew");
        }
    }

    /// Records `spec`'s R1CS and gives it to `device`, unless it holds that of the same
    /// parameters already (or the job is synthetic); whether it recorded one.
    pub fn ensure(&mut self, spec: &JobSpec, device: &mut dyn PartitionDevice) -> Result<bool> {
        if spec.synthetic.is_some() || !self.wants(&spec.params_path) {
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
        self.proved = false;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording is dropped by a failure until a partition is proved with it, and kept
    /// through failures after that (a tampered job must not cost every later job a
    /// recording).
    #[test]
    fn a_recording_is_trusted_once_a_partition_is_proved_with_it() {
        let params = PathBuf::from("/p/v28-x.params");
        let mut held = HeldR1cs::default();
        assert!(held.wants(&params));
        held.params = Some(params.clone()); // as `ensure` leaves it
        assert!(!held.wants(&params));
        held.partition_failed();
        assert!(held.wants(&params), "unproved: recorded again");

        held.params = Some(params.clone());
        held.partition_proved();
        held.partition_failed();
        assert!(!held.wants(&params), "proved once: kept");
        assert!(held.wants(&PathBuf::from("/p/other.params")));
    }
}
