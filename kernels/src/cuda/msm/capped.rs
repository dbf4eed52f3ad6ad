//! A large MSM's window sorted without a histogram (msm.cu `msm_scatter_capped`,
//! `msm_compact`, `msm_place_overflow`): each bucket owns a fixed number of slots, so the
//! scatter needs no offsets ahead and `msm_digits` no counting. The histogram's atomics
//! (one a digit: 1.75 G at 2^27, L2-bound, most of `msm_digits`' 18.7 ms) go; the scatter's
//! own returning atomic counts the buckets, a scan over sub-windows makes the offsets, and
//! a compaction moves the slots into the sorted array `msm_accumulate` reads as before.
//! Entries past a bucket's slots take an overflow list, placed behind the bucket's slots,
//! so any scalars sort exactly; uniform ones (H's) overflow rarely.

use cudarc::driver::sys::CUdeviceptr;

use super::super::device::{args, Device};
use super::super::GpuError;
use super::{digit_capacity, grid, MsmWork, Windows, MAX_WINDOWS};

/// Sub-windows of the offsets' scan: `msm_scan` a block each (1024 threads), then
/// `msm_rebase` over their totals (the workspace's `totals`, [`MAX_WINDOWS`] entries).
const SUB_WINDOWS: usize = MAX_WINDOWS;

/// Fewest terms for the capped sort: below it the windows are sorted all at once
/// (`enqueue_msm`'s small MSMs) or a bucket's slots would be mostly margin.
pub(super) const MIN_TERMS: usize = 1 << 20;

/// One window's slots: buckets [0, used) own `cap` slots each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CappedWindow {
    pub used: u32,
    pub cap: u32,
}

/// The slots of each window of an MSM of m terms. A window below the top takes each of its
/// 2^{c−1} buckets for 2 of its 2^c digit values (the top bucket for 1), so with uniform
/// scalars a bucket holds about m / 2^{c−1} entries; the top window's digits are 0 to
/// `top_values − 1` (`Windows::top_values`), buckets 0 to top_values − 2, about
/// m / top_values each. A bucket gets its mean plus four standard deviations (Poisson) plus
/// 8: at 2^27 terms and c = 20, 328 slots a bucket where the mean is 256 (of a window's
/// 2^19 buckets about 3.6 overflow, ~15 entries in all), 4800 a top bucket.
pub fn window_slots(win: &Windows, m: usize) -> Vec<CappedWindow> {
    let nb = win.buckets();
    (0..win.windows)
        .map(|w| {
            // Buckets used and their mean count: below the top every bucket, two of the
            // 2^c values each; the top window's top_values − 1 buckets, one value each.
            let (used, mean) = if w + 1 == win.windows {
                let top = (win.top_values as usize).saturating_sub(1).clamp(1, nb);
                (top, m as f64 / (top + 1) as f64)
            } else {
                (nb, m as f64 / nb as f64)
            };
            let cap = (mean + 4.0 * mean.sqrt() + 8.0).ceil() as u32;
            CappedWindow {
                used: used as u32,
                cap,
            }
        })
        .collect()
}

/// Where the capped sort keeps its slots and overflow list: in the digit buffer behind the
/// W·m digits (sized for 19 windows of the workspace's largest MSM, so a 13-window one
/// leaves 6·m entries free).
pub(super) struct CappedPlan {
    windows: Vec<CappedWindow>,
    slots: CUdeviceptr,
    ovf: CUdeviceptr,
    ovf_n: CUdeviceptr,
}

impl CappedPlan {
    /// The plan for m terms in `win`'s windows, when the free part of the digit buffer
    /// holds the largest window's slots, an overflow list of m entries (entry, bucket) and
    /// its length; None otherwise (the MSM sorts by histogram).
    pub(super) fn new(w: &MsmWork, win: &Windows, m: usize) -> Option<CappedPlan> {
        let windows = window_slots(win, m);
        let slots = windows
            .iter()
            .map(|x| x.used as usize * x.cap as usize)
            .max()?;
        let digits = win.windows as usize * m;
        // Each region on a 64-entry (256-byte) boundary.
        let at = |n: usize| n.next_multiple_of(64);
        let (s0, o0) = (at(digits), at(at(digits) + slots));
        let n0 = at(o0 + 2 * m);
        if n0 + 64 > digit_capacity(w.max_terms) {
            return None;
        }
        Some(CappedPlan {
            windows,
            slots: w.digits.at(s0 * 4),
            ovf: w.digits.at(o0 * 4),
            ovf_n: w.digits.at(n0 * 4),
        })
    }

    /// Enqueues the sort of window `i` (its m digits at `digits`) on the compute stream:
    /// the capped scatter over `passes` bucket ranges into the slots, counting its buckets
    /// in `cnt` (zeroed by the caller); the offsets (nb + 1 at `off`) and cursors (`cursor`)
    /// by a scan over sub-windows; the slots, then the overflow, into `sorted`.
    #[allow(clippy::too_many_arguments)] // the kernels' own inputs
    pub(super) fn enqueue_window(
        &self,
        dev: &Device,
        w: &MsmWork,
        i: usize,
        (digits, terms, m, c): (CUdeviceptr, CUdeviceptr, usize, u32),
        passes: u32,
        (cnt, off, cursor): (CUdeviceptr, CUdeviceptr, CUdeviceptr),
    ) -> Result<(), GpuError> {
        let s = dev.compute;
        let CappedWindow { used, cap } = self.windows[i];
        let nb = 1u32 << (c - 1);
        let (m32, sub) = (m as u32, SUB_WINDOWS.min(nb as usize) as u32);
        let per_sub = nb / sub;
        let k = &dev.k;
        dev.memset(self.ovf_n, 4, s)?;
        // SAFETY: msm_scatter_capped(digits, terms, cnt, slots, cap, used, ovf, ovf_n, m,
        // c, lo, hi): m digits, nb counters, used·cap slots and an overflow list of 2m
        // words (one entry a term at most) in the digit buffer past the W·m digits (`new`
        // checked the room); msm_scan over `sub` blocks of per_sub counters writes nb
        // offsets and cursors and `sub` totals (≤ MAX_WINDOWS, the totals buffer),
        // msm_rebase moves them up and writes off[nb]; msm_compact (a warp a bucket:
        // used·32 threads) reads used·cap slots and writes the kept entries below off[nb];
        // msm_place_overflow writes the rest there too (each bucket's count is its kept
        // plus its overflow entries).
        unsafe {
            for r in 0..passes {
                let (lo, hi) = (nb * r / passes, nb * (r + 1) / passes);
                dev.launch(
                    "msm scatter capped",
                    k.msm_scatter_capped,
                    grid(m, 256),
                    256,
                    0,
                    s,
                    &mut args![
                        digits, terms, cnt, self.slots, cap, used, self.ovf, self.ovf_n, m32, c,
                        lo, hi
                    ],
                )?;
            }
            let totals = w.totals.ptr;
            dev.launch(
                "msm scan",
                k.msm_scan,
                sub,
                1024,
                0,
                s,
                &mut args![cnt, off, cursor, per_sub, totals],
            )?;
            dev.launch(
                "msm rebase",
                k.msm_rebase,
                grid(nb as usize, 256),
                256,
                0,
                s,
                &mut args![off, cursor, totals, per_sub, sub],
            )?;
            let sorted = w.sorted.ptr;
            dev.launch(
                "msm compact",
                k.msm_compact,
                grid(used as usize * 32, 256),
                256,
                0,
                s,
                &mut args![self.slots, cnt, off, sorted, cap, used],
            )?;
            let blocks = dev.sm_count * 2;
            dev.launch(
                "msm place overflow",
                k.msm_place_overflow,
                blocks,
                256,
                0,
                s,
                &mut args![self.ovf, self.ovf_n, cnt, cursor, sorted, cap, used],
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_at_h_size_leave_a_margin_over_the_mean() {
        let m = (1usize << 27) - 1;
        let win = Windows::for_terms(m);
        assert_eq!((win.c, win.windows), (20, 13));
        let w = window_slots(&win, m);
        // Below the top: every bucket, 256 entries on average, 4 deviations more.
        assert!(w[..12].iter().all(|x| *x
            == CappedWindow {
                used: 1 << 19,
                cap: 328
            }));
        // The top window: digits 0..29679, buckets below 29678, ~4522 entries each.
        assert_eq!(win.top_values, 29679);
        assert_eq!(
            w[12],
            CappedWindow {
                used: 29678,
                cap: 4800
            }
        );
        // The largest window's slots fit the digit buffer's 6·m free entries with the
        // overflow list's 2m.
        let slots = w
            .iter()
            .map(|x| x.used as usize * x.cap as usize)
            .max()
            .unwrap();
        assert!(13 * m + slots + 2 * m + 256 <= 19 * m);
    }
}
