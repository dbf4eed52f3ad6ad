//! What one `GpuProver::prove` call's steps took on the device.

use std::time::Duration;

/// Device time of each step (CUDA events), and the whole call's wall time.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuTimings {
    /// a, b, c, scalars and plans host → device (copy stream).
    pub upload: Duration,
    /// The six NTTs of H (from the first kernel; overlaps the b, c uploads; with a and b
    /// made from the recorded R1CS, that too).
    pub ntt: Duration,
    /// a and b made from the recorded R1CS and checked (`Evals::FromR1cs`; else zero).
    pub r1cs: Duration,
    /// H's MSM (in Lagrange form the dense one over LC).
    pub msm_h: Duration,
    /// In Lagrange form, the sums over LD' of C's values (zero in the coefficient form).
    pub msm_c: Duration,
    pub msm_l: Duration,
    pub msm_a: Duration,
    pub msm_b_g1: Duration,
    /// Zero when B_G2 was not asked for.
    pub msm_b_g2: Duration,
    /// Of msm_l, msm_a, msm_b_g1, msm_b_g2: the batch addition of the scalars equal to 1
    /// (the rest is the Pippenger "tail" over the other scalars). Zero when the bases are
    /// streamed (the two parts then alternate piece by piece) or B_G2 was not asked for.
    pub ones: [Duration; 4],
    /// Window sums back to the host and combined there.
    pub finish: Duration,
    /// This partition's `a` was on the device already (uploaded during the previous call).
    pub a_ahead: bool,
    /// Its `b` too (the plan has two spare buffers).
    pub b_ahead: bool,
    /// With a and b made on the device: its scalars were on the device already.
    pub scalars_ahead: bool,
    /// The next partition's `a` (and `b`) uploaded during this call (copy stream, under the
    /// compute); zero when none was.
    pub upload_ahead: Duration,
    pub total: Duration,
}

impl GpuTimings {
    /// The device steps by their timeline names (`msm_b_g2` only when B_G2 was computed):
    /// what the gpu stage reports and the device check prints.
    pub fn steps(&self, b_g2: bool) -> Vec<(&'static str, Duration)> {
        let mut v = vec![("upload", self.upload)];
        if self.r1cs > Duration::ZERO {
            v.push(("r1cs_ab", self.r1cs));
        }
        v.extend([("ntt", self.ntt), ("msm_h", self.msm_h)]);
        if self.msm_c > Duration::ZERO {
            v.push(("msm_c", self.msm_c));
        }
        v.extend([
            ("msm_l", self.msm_l),
            ("msm_a", self.msm_a),
            ("msm_b_g1", self.msm_b_g1),
        ]);
        if b_g2 {
            v.push(("msm_b_g2", self.msm_b_g2));
        }
        if self.upload_ahead > Duration::ZERO {
            v.push(("upload_ahead", self.upload_ahead));
        }
        v
    }
}
