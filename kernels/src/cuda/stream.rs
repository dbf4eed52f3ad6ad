//! Base streaming, for devices that cannot hold the proving key: the bases of each MSM go
//! through two staging buffers, piece by piece, while the device sums the previous piece.
//!
//! An MSM over bases 0..count is cut by base index into pieces [lo, hi) of at most `per`
//! bases; Σ_i s_i·P_i = Σ_pieces Σ_{i ∈ [lo, hi)} s_i·P_i, so each piece is an MSM of its
//! own (its terms and ones: prep_msm's plans are sorted by base, so they are contiguous
//! ranges) and the host adds the pieces' sums. Double buffering on the two streams:
//!   copy:    wait freed[b] → upload piece k into buffer b = k mod 2 → record loaded[b]
//!   compute: wait loaded[b] → MSM of piece k → record freed[b]
//! so piece k + 1 crosses PCIe while piece k is summed, and a buffer is refilled only once
//! the MSM that read it has finished.

use std::ops::Range;

use cudarc::driver::sys::CUdeviceptr;

use super::device::{DevBuf, Device, Event};
use super::GpuError;
use crate::msm::PlanRef;

/// One piece of an MSM: bases [lo, hi), and the plan entries that fall in them (for a
/// dense MSM, terms = lo..hi and no ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub lo: usize,
    pub hi: usize,
    pub terms: Range<usize>,
    pub ones: Range<usize>,
}

/// Cuts an MSM over `count` bases into pieces of at most `per` bases (`per` ≥ count: one
/// piece). `plan`: None for a dense MSM (term i = base i, scalar i). The plan must be sorted
/// by base, as prep_msm builds it ([`sorted_by_base`]; `GpuProver::prove` checks it before
/// enqueueing anything), so that each piece's entries are one contiguous range.
pub fn pieces(count: usize, per: usize, plan: Option<PlanRef<'_>>) -> Vec<Piece> {
    let per = per.max(1);
    debug_assert!(plan.is_none_or(sorted_by_base));
    let mut out = Vec::new();
    let mut lo = 0;
    loop {
        let hi = (lo + per).min(count);
        let piece = match plan {
            None => Piece {
                lo,
                hi,
                terms: lo..hi,
                ones: 0..0,
            },
            Some(p) => Piece {
                lo,
                hi,
                terms: p.terms.partition_point(|t| (t[0] as usize) < lo)
                    ..p.terms.partition_point(|t| (t[0] as usize) < hi),
                ones: p.ones.partition_point(|&b| (b as usize) < lo)
                    ..p.ones.partition_point(|&b| (b as usize) < hi),
            },
        };
        out.push(piece);
        lo = hi;
        if lo >= count {
            return out;
        }
    }
}

/// Whether each base appears at most once and in increasing order, among the terms and
/// among the ones.
pub fn sorted_by_base(plan: PlanRef<'_>) -> bool {
    plan.terms.windows(2).all(|w| w[0][0] < w[1][0]) && plan.ones.windows(2).all(|w| w[0] < w[1])
}

/// Pieces an MSM over `count` bases is cut into with `per` bases a piece (at least one).
pub fn piece_count(count: usize, per: usize) -> usize {
    count.div_ceil(per.max(1)).max(1)
}

/// The two staging buffers and their events.
pub(crate) struct StreamBuffers {
    pub bufs: [DevBuf; 2],
    loaded: [Event; 2],
    freed: [Event; 2],
    next: usize,
}

impl StreamBuffers {
    pub fn new(dev: &Device, bufs: [DevBuf; 2]) -> Result<Self, GpuError> {
        Ok(StreamBuffers {
            bufs,
            loaded: [dev.event()?, dev.event()?],
            freed: [dev.event()?, dev.event()?],
            next: 0,
        })
    }

    /// Bytes each buffer holds.
    pub fn bytes(&self) -> usize {
        self.bufs[0].bytes
    }

    /// Enqueues the upload of `host` (one piece's bases) into the next buffer once the MSM
    /// that last read that buffer is done, and makes the compute stream wait for it.
    /// Returns the buffer's device address.
    pub fn stage<T>(&mut self, dev: &Device, host: &[T]) -> Result<CUdeviceptr, GpuError> {
        let b = self.next % 2;
        self.next += 1;
        // An event never recorded counts as complete: the first two pieces do not wait.
        self.freed[b].wait_on(dev.copy)?;
        dev.upload(self.bufs[b].ptr, self.bufs[b].bytes, host, dev.copy)?;
        self.loaded[b].record(dev.copy)?;
        self.loaded[b].wait_on(dev.compute)?;
        Ok(self.bufs[b].ptr)
    }

    /// After the MSM of the piece last staged is enqueued: its buffer may be refilled once
    /// the compute stream gets here.
    pub fn release(&self, dev: &Device) -> Result<(), GpuError> {
        self.freed[(self.next + 1) % 2].record(dev.compute)
    }
}
