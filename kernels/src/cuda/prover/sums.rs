//! The MSMs of `GpuProver::prove`, enqueued in one piece when the bases are resident or
//! piece by piece through the staging buffers when they are streamed (`stream.rs`), and
//! the host's sum of the pieces.

use cudarc::driver::sys::CUdeviceptr;

use super::super::device::{DevBuf, Device, Event};
use super::super::layout::{DeviceXyzz, FR_BYTES};
use super::super::memory_plan::SLOT;
use super::super::msm::{self, MsmWork, PairSums, Windows, MAX_WINDOWS};
use super::super::stream::{self, StreamBuffers};
use super::super::GpuError;
use crate::msm::PlanRef;

/// One MSM of `prove`: which bases, the plan (None: dense over `dense_scalars`), where its
/// plan and scalars lie on the device, and the host bases it streams from.
pub(super) struct SumSpec<'p, T> {
    pub(super) bases: DevBuf,
    /// The bases' pair sums on the device (none held: 0; used only when the MSM runs in one
    /// piece from resident bases).
    pub(super) pairs: PairSums,
    pub(super) count: usize,
    pub(super) plan: Option<(PlanRef<'p>, CUdeviceptr, CUdeviceptr)>,
    pub(super) scalars: CUdeviceptr,
    pub(super) host: Option<&'p [T]>,
    /// Recorded on the compute stream between the terms' Pippenger and the ones' batch
    /// addition when the MSM runs in one piece (resident bases): the two parts' times.
    pub(super) terms_done: Option<&'p Event>,
    /// Recorded on the compute stream shortly before the Pippenger ends (msm::MsmHooks'
    /// `near_end`) when the MSM runs in one piece.
    pub(super) near_end: Option<&'p Event>,
    /// The workspace whose last MSM had this one's terms and scalars (B_G1's for B_G2),
    /// whose sorted entries this one accumulates from when both run in one piece
    /// (msm::MsmHooks' `sorted_in`).
    pub(super) sorted_in: Option<&'p MsmWork>,
}

/// Enqueues one MSM of `prove` (Pippenger over the plan's terms, batch addition over its
/// ones; a dense MSM has no ones) into result slots from `first` on, one SLOT per piece:
/// in one piece when the bases are resident, else piece by piece through the staging
/// buffers. Returns each piece's windows.
pub(super) fn enqueue_sum<T>(
    d: &Device,
    work: &MsmWork,
    stream: &mut Option<StreamBuffers>,
    spec: &SumSpec<'_, T>,
    results: DevBuf,
    first: usize,
) -> Result<Vec<Windows>, GpuError> {
    let pb = std::mem::size_of::<T>();
    let xb = work.curve.xyzz_bytes();
    let per = stream.as_ref().map_or(usize::MAX, |s| s.bytes() / pb);
    let pieces = stream::pieces(spec.count, per, spec.plan.map(|(p, _, _)| p));
    let mut wins = Vec::with_capacity(pieces.len());
    for (k, pc) in pieces.iter().enumerate() {
        let out = results.at((first + k) * SLOT * xb);
        let ones_out = out + (MAX_WINDOWS * xb) as u64;
        // The piece's first base, on the device.
        let at = match stream.as_mut() {
            None => spec.bases.ptr,
            Some(sb) => {
                let host = spec
                    .host
                    .ok_or_else(|| GpuError::Input("streamed MSM without its host bases".into()))?;
                sb.stage(d, &host[pc.lo..pc.hi])?
            }
        };
        // `near_end` needs the MSM in one piece; another MSM's sorted entries and the pair
        // sums (below) need it whole: one piece from resident bases.
        let whole = stream.is_none() && pieces.len() == 1;
        let hooks = msm::MsmHooks {
            near_end: spec.near_end.filter(|_| pieces.len() == 1),
            sorted_in: spec.sorted_in.filter(|_| whole),
        };
        let win = match spec.plan {
            // Dense: term i of the piece is base lo + i with scalar lo + i.
            None => {
                let scalars = spec.scalars + (pc.lo * FR_BYTES) as u64;
                let n = pc.hi - pc.lo;
                let w = msm::enqueue_msm(d, work, at, 0, n, scalars, out, hooks)?;
                d.memset(ones_out, xb, d.compute)?;
                w
            }
            // A plan indexes bases globally: base i lies at at + (i − lo)·pb (wrapping
            // arithmetic; the kernels only form addresses inside the piece).
            Some((_, terms, ones)) => {
                let base0 = at.wrapping_sub((pc.lo * pb) as u64);
                let terms = terms + (pc.terms.start * 8) as u64;
                let nt = pc.terms.len();
                let w = msm::enqueue_msm(d, work, base0, terms, nt, spec.scalars, out, hooks)?;
                if let (Some(e), 1) = (spec.terms_done, pieces.len()) {
                    e.record(d.compute)?;
                }
                let ones = ones + (pc.ones.start * 4) as u64;
                // Pair i is P_{2i} + P_{2i+1} of the whole vector: only a single resident
                // piece indexes them as the ones do.
                let pairs = if whole {
                    spec.pairs
                } else {
                    PairSums::default()
                };
                let no = pc.ones.len();
                msm::enqueue_batch_add(d, work, base0, pairs, ones, no, ones_out)?;
                w
            }
        };
        if let Some(sb) = stream.as_ref() {
            sb.release(d)?;
        }
        wins.push(win);
    }
    Ok(wins)
}

/// Σ over the pieces of (window sums by Horner + the ones' sum), each piece's SLOT results
/// in turn from the start of `slots`.
pub(super) fn combine_pieces<P: DeviceXyzz>(wins: &[Windows], slots: &[P]) -> P::Projective {
    let mut acc = <P::Projective as group::Group>::identity();
    for (k, w) in wins.iter().enumerate() {
        let sl = &slots[k * SLOT..(k + 1) * SLOT];
        acc += msm::combine_windows(w, sl) + sl[MAX_WINDOWS].to_projective();
    }
    acc
}
