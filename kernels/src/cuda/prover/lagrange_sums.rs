//! `prove`'s sums over LD' in Lagrange form (docs/gpu.md "H in Lagrange form";
//! `lagrange.rs`): Σ_j c_j·LD'_j from the lists h_c_kinds made of c's values.

use blstrs::G1Projective;
use cudarc::driver::sys::CUdeviceptr;

use super::super::device::{DevBuf, Event};
use super::super::lagrange::CKinds;
use super::super::layout::{Xyzz, XYZZ_BYTES};
use super::super::memory_plan::SLOT;
use super::super::msm::{self, MsmHooks, PairSums, Windows, MAX_WINDOWS};
use super::super::GpuError;
use super::{combine_pieces, GpuProver};

impl GpuProver {
    /// Enqueues Σ_j c_j·LD'_j on the compute stream into result slots `first` and
    /// `first + 1`: the other values by Pippenger over `c` (canonical by now) with the ones'
    /// batch addition in the first slot (its windows, then its ones' place), the minus
    /// ones' and the twos' batch additions in the second (places 0 and 1). The launches
    /// are sized by the kinds' counts, which the host reads here on the copy stream once
    /// `kinds_done` has passed: H's MSM is queued on the compute stream before this, so the
    /// device does not wait for the host. Returns the Pippenger part's windows. (Not through
    /// `sums::enqueue_sum`, which cuts plans into pieces by their host copies: these lists
    /// exist only on the device, and the form is for resident bases, one piece.)
    pub(super) fn enqueue_c_sums(
        &self,
        ld: DevBuf,
        counts: DevBuf,
        kinds: CKinds,
        c: CUdeviceptr,
        first: usize,
        kinds_done: &Event,
    ) -> Result<Windows, GpuError> {
        let d = &self.dev;
        kinds_done.wait_on(d.copy)?;
        let mut cnt = [0u32; 4];
        d.download(&mut cnt, counts.ptr, d.copy)?;
        d.sync(d.copy)?;
        let [ones, neg_ones, twos, other] = cnt.map(|v| v as usize);
        let xb = XYZZ_BYTES;
        let slot = self.results.at(first * SLOT * xb);
        let next = self.results.at((first + 1) * SLOT * xb);
        let w = msm::enqueue_msm(
            d,
            &self.work,
            ld.ptr,
            kinds.other,
            other,
            c,
            slot,
            MsmHooks::default(),
        )?;
        // LD' has no pair sums (no room for them at 32 GiB).
        let none = PairSums::default();
        for (list, k, out) in [
            (kinds.ones, ones, slot + (MAX_WINDOWS * xb) as u64),
            (kinds.neg_ones, neg_ones, next),
            (kinds.twos, twos, next + xb as u64),
        ] {
            msm::enqueue_batch_add(d, &self.work, ld.ptr, none, list, k, out)?;
        }
        Ok(w)
    }
}

/// Σ_j c_j·LD'_j from the two slots [`GpuProver::enqueue_c_sums`] filled (read back from
/// the first on): Pippenger + ones − minus ones + 2·twos.
pub(super) fn c_sum(w: Windows, slots: &[Xyzz]) -> G1Projective {
    let next = &slots[SLOT..];
    let twos = next[1].to_projective();
    combine_pieces(&[w], slots) - next[0].to_projective() + (twos + twos)
}
