//! Host side of the MSM kernels (`kernels/cuda/msm.cu`): window choice, workspace, the
//! launch sequence, and the Horner combination of window sums on the host. One launch
//! sequence for both groups: a workspace is carved for a [`Curve`], which picks the point
//! kernels (G1 or their `_g2` instantiations) and the point sizes.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use cudarc::driver::result;
use cudarc::driver::sys::{CUdeviceptr, CUfunction};
use group::Group;

use super::device::{args, DevBuf, Device, Event};
use super::error::Step;
use super::layout::{DeviceXyzz, XYZZ2_BYTES, XYZZ_BYTES};
use super::GpuError;

mod batch_add;
mod capped;
mod profile;
mod windows;
pub(crate) use batch_add::{enqueue_batch_add, enqueue_pair_sums, pair_count, PairSums};
pub use capped::{window_slots, CappedWindow};
use profile::Phase;
pub use profile::{take_profile, PHASES};
pub use windows::Windows;

/// Widest window (2^21 buckets a window; 12 windows). Windows whose buckets do not all fit
/// in [`MAX_WB`] (c = 21, 22) are processed a few at a time (`enqueue_msm`).
pub const MAX_C: u32 = 22;
/// The wide window the automatic choice takes from 2^23 terms. c = 22 (12 windows instead
/// of 13) measured slower on the H200: MSM 2^27 907 against 865 ms, 2^26 501 against 443
/// (its bucket reduction, scans and fixups cost more than the window it saves; c = 21 has
/// 13 windows too and is slower still: docs/gpu.md).
const WIDE_C: u32 = 20;
/// Most windows of any plan (c = 4 needs 64).
pub const MAX_WINDOWS: usize = 64;
/// Buckets the workspace holds (c = 20: all 13 windows × 2^19 buckets at once; c = 22: 3 of
/// its 12 windows of 2^21 at a time).
const MAX_WB: usize = 13 << 19;
/// Bucket-reduction chunk results at most.
const MAX_CHUNKS: usize = 1 << 17;
/// Threads per accumulate / batch-add launch under [`Chunking::Fixed`] (the old sizing:
/// 1.29 waves of the 80-register build on an H200, so the last wave ran 29 % full).
const FIXED_THREADS: usize = 1 << 17;
/// Most chunks (threads) of any accumulate / batch-add launch: sizes head, tail, partials.
const MAX_CHUNK_THREADS: usize = 1 << 18;
/// Fewest entries a thread sums (below this, launch and fixup costs dominate).
const MIN_CHUNK: usize = 16;
/// Longest chain of chunk partials the automatic width lets one fixup thread sum.
const MAX_FIXUP_CHAIN: u64 = 64;

/// The group an MSM sums in. The scalar side (digits, sort) is the same for both; the point
/// kernels and sizes differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    /// G1 over Fp: `xyzz_t`, 192 bytes.
    G1,
    /// G2 over Fp2: `g2_xyzz_t`, 384 bytes.
    G2,
}

impl Curve {
    /// Bytes of one XYZZ point.
    pub const fn xyzz_bytes(self) -> usize {
        match self {
            Curve::G1 => XYZZ_BYTES,
            Curve::G2 => XYZZ2_BYTES,
        }
    }

    /// Bytes of one `partial_p` (bucket index, 12 bytes of padding, the point).
    const fn partial_bytes(self) -> usize {
        16 + self.xyzz_bytes()
    }

    /// Threads of an accumulate / batch-add block (msm.cu `ACC_BLOCK`, `ACC_BLOCK_G2`):
    /// the split kernels' shared slots are this many.
    pub const fn acc_block(self) -> u32 {
        match self {
            Curve::G1 => 128,
            Curve::G2 => 64,
        }
    }

    /// Threads of a window-sum / batch-add reduction block (msm.cu `REDUCE_THREADS`,
    /// `REDUCE_THREADS_G2`): the kernels' shared arrays are this long.
    pub const fn reduce_threads(self) -> u32 {
        match self {
            Curve::G1 => 128,
            Curve::G2 => 64,
        }
    }
}

/// The kernels that touch points, for one curve.
struct PointKernels {
    accumulate: CUfunction,
    fixup: CUfunction,
    bucket_reduce: CUfunction,
    reduce: CUfunction,
    batch_add: CUfunction,
}

/// A kernel of the module that `Device` does not keep a handle of (`msm_count`, used only
/// by windows wider than 20 bits, and an accumulate build measured side by side), looked up
/// by name.
fn extra_kernel(dev: &Device, name: &str) -> Result<CUfunction, GpuError> {
    // SAFETY: the module was loaded by `Device` and lives as long as it.
    unsafe { result::module::get_function(dev.module, CString::new(name).unwrap()) }
        .step("look up kernel")
}

fn point_kernels(dev: &Device, curve: Curve) -> Result<PointKernels, GpuError> {
    let k = &dev.k;
    Ok(match curve {
        Curve::G1 => PointKernels {
            accumulate: match AccumulateBuild::current() {
                AccumulateBuild::Wide => k.msm_accumulate_wide,
                AccumulateBuild::R80 => k.msm_accumulate,
                AccumulateBuild::NoPrefetch => extra_kernel(dev, "msm_accumulate_flat")?,
                AccumulateBuild::Split => k.msm_accumulate_split,
            },
            fixup: k.msm_fixup,
            bucket_reduce: k.msm_bucket_reduce,
            reduce: k.xyzz_reduce,
            batch_add: match AccumulateBuild::current() {
                AccumulateBuild::Split => k.batch_add_split,
                _ => k.batch_add,
            },
        },
        Curve::G2 => PointKernels {
            accumulate: match AccumulateBuild::current() {
                AccumulateBuild::Split => k.msm_accumulate_split_g2,
                _ => k.msm_accumulate_g2,
            },
            fixup: k.msm_fixup_g2,
            bucket_reduce: k.msm_bucket_reduce_g2,
            reduce: k.xyzz_reduce_g2,
            batch_add: match AccumulateBuild::current() {
                AccumulateBuild::Split => k.batch_add_split_g2,
                _ => k.batch_add_g2,
            },
        },
    })
}

/// Device workspace of the MSMs over one curve, sized for up to `max_terms` terms.
pub(crate) struct MsmWork {
    pub(crate) curve: Curve,
    digits: DevBuf,
    sorted: DevBuf,
    /// Entries `sorted` holds: [`sorted_capacity`].
    sorted_entries: usize,
    counts: DevBuf,
    offsets: DevBuf,
    cursor: DevBuf,
    /// Entries of each window when all windows share one sorted array (`msm_rebase`).
    totals: DevBuf,
    buckets: DevBuf,
    head: DevBuf,
    tail: DevBuf,
    chunk_res: DevBuf,
    partials: DevBuf,
    partials2: DevBuf,
    max_terms: usize,
}

fn digit_capacity(max_terms: usize) -> usize {
    (19 * max_terms).max(64 << 20)
}

/// Entries an MSM may sort all its windows into at once (W·m, see [`enqueue_msm`]): the
/// Pippenger terms of a 32 GiB partition's L, A and B plans (1.2-1.8 M terms, 16 windows)
/// fit; H's 13 windows of 2^27 do not, and are sorted a window at a time.
const ALL_WINDOWS_ENTRIES: usize = 32 << 20;

/// Entries of a workspace's sorted array: one window of `max_terms`, or every window of a
/// small MSM.
fn sorted_capacity(max_terms: usize) -> usize {
    max_terms.max(ALL_WINDOWS_ENTRIES)
}

impl MsmWork {
    /// Bytes of a G1 workspace.
    pub fn bytes(max_terms: usize) -> usize {
        Self::bytes_for(Curve::G1, max_terms)
    }

    /// A G1 workspace.
    pub fn carve(dev: &mut Device, max_terms: usize) -> Self {
        Self::carve_for(dev, Curve::G1, max_terms)
    }

    /// Bytes of a workspace for `curve`: everything [`Self::carve_for`] takes, with room to
    /// align each buffer to 256 bytes.
    pub fn bytes_for(curve: Curve, max_terms: usize) -> usize {
        let chunks = MAX_CHUNK_THREADS + 1024;
        let (xb, pb) = (curve.xyzz_bytes(), curve.partial_bytes());
        digit_capacity(max_terms) * 4
            + sorted_capacity(max_terms) * 4
            + MAX_WB * 4 * 3
            + MAX_WINDOWS * 4 * 2
            + MAX_WB * xb
            + 2 * chunks * pb
            + MAX_CHUNKS * xb
            + (chunks + 1024) * xb
            + 16 * 256
    }

    pub fn carve_for(dev: &mut Device, curve: Curve, max_terms: usize) -> Self {
        let chunks = MAX_CHUNK_THREADS + 1024;
        let (xb, pb) = (curve.xyzz_bytes(), curve.partial_bytes());
        MsmWork {
            curve,
            digits: dev.carve(digit_capacity(max_terms) * 4),
            sorted: dev.carve(sorted_capacity(max_terms) * 4),
            sorted_entries: sorted_capacity(max_terms),
            counts: dev.carve(MAX_WB * 4),
            offsets: dev.carve(MAX_WB * 4 + MAX_WINDOWS * 4),
            cursor: dev.carve(MAX_WB * 4),
            totals: dev.carve(MAX_WINDOWS * 4),
            buckets: dev.carve(MAX_WB * xb),
            head: dev.carve(chunks * pb),
            tail: dev.carve(chunks * pb),
            chunk_res: dev.carve(MAX_CHUNKS * xb),
            partials: dev.carve(chunks * xb),
            partials2: dev.carve(1024 * xb),
            max_terms,
        }
    }
}

/// `struct DigitParams` in msm.cu.
#[repr(C)]
struct DigitParams {
    scalars: CUdeviceptr,
    terms: CUdeviceptr,
    digits: CUdeviceptr,
    counts: CUdeviceptr,
    m: u32,
    c: u32,
    windows: u32,
    k: [u32; 9],
}

static BUILD: AtomicU32 = AtomicU32::new(AccumulateBuild::DEFAULT as u32);
static FIXED_CHUNKS: AtomicBool = AtomicBool::new(false);
static FORCE_C: AtomicU32 = AtomicU32::new(0);

/// Builds of the G1 bucket-accumulation kernel (msm.cu `ACCUMULATE_BUILD`): loop and
/// register cap, and so warps per SM (H200: 64 K registers per SM, blocks of 128 threads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccumulateBuild {
    /// The next entry's base prefetched into shared memory (cp.async) while the current madd
    /// runs, the madd called (its accumulator and temporaries through local memory), at most
    /// 128 registers (4 blocks, 16 warps per SM): the default until 2026-12-03.
    Wide = 0,
    /// The same loop without the prefetch, uncapped (128 registers, 4 blocks).
    NoPrefetch = 1,
    /// Without the prefetch, 80 registers (6 blocks, 24 warps per SM; spills in the madd).
    R80 = 80,
    /// The prefetching loop with the accumulator split (X, Y in registers, ZZ, ZZZ in shared
    /// memory) and the madd inlined, only its products called; 128 registers (4 blocks), and
    /// the batch addition of the ones the same way (`batch_add_split`): the default. H200:
    /// MSM 2^27 751.5 ms against Wide's 781.1 (docs/perf.md, 2026-12-03).
    Split = 2,
}

impl AccumulateBuild {
    /// The build the prover uses.
    pub const DEFAULT: AccumulateBuild = AccumulateBuild::Split;
    pub const ALL: [AccumulateBuild; 4] = [
        AccumulateBuild::Wide,
        AccumulateBuild::NoPrefetch,
        AccumulateBuild::R80,
        AccumulateBuild::Split,
    ];

    fn current() -> AccumulateBuild {
        let v = BUILD.load(Ordering::Relaxed);
        Self::ALL.into_iter().find(|b| *b as u32 == v).unwrap()
    }

    /// The G1 kernel's name in msm.cu.
    pub fn kernel_name(self) -> &'static str {
        match self {
            AccumulateBuild::Wide => "msm_accumulate_wide",
            AccumulateBuild::NoPrefetch => "msm_accumulate_flat",
            AccumulateBuild::R80 => "msm_accumulate",
            AccumulateBuild::Split => "msm_accumulate_split",
        }
    }
}

/// Chooses the bucket-accumulation build. Process-wide; for measurements.
pub fn set_accumulate_build(b: AccumulateBuild) {
    BUILD.store(b as u32, Ordering::Relaxed);
}

/// How accumulate and batch-add launches cut their entries into per-thread chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunking {
    /// As many threads as the kernel keeps resident on the device at once (one full wave),
    /// so no SM idles through a partial last wave: the default.
    Waves,
    /// 2^17 threads whatever the device (the old sizing, for comparison).
    Fixed,
}

/// Chooses the chunking. Process-wide; for measurements.
pub fn set_chunking(c: Chunking) {
    FIXED_CHUNKS.store(c == Chunking::Fixed, Ordering::Relaxed);
}

/// Entries per thread for a launch of `f` (blocks of `block` threads) over `n` entries:
/// n / (threads resident at once), or n / 2^17 under [`Chunking::Fixed`]; at least
/// [`MIN_CHUNK`].
fn chunk_len(dev: &Device, f: CUfunction, block: u32, n: usize) -> Result<usize, GpuError> {
    let threads = if FIXED_CHUNKS.load(Ordering::Relaxed) {
        FIXED_THREADS
    } else {
        dev.resident_threads(f, block)?.min(MAX_CHUNK_THREADS)
    };
    Ok(n.div_ceil(threads).max(MIN_CHUNK))
}

/// Forces the window width of every following MSM (0: chosen by size). For tests.
pub fn force_window_width(c: u32) {
    assert!(c == 0 || (4..=MAX_C).contains(&c));
    FORCE_C.store(c, Ordering::Relaxed);
}

/// Sorted arrays (4 bytes an entry) up to this size are scattered in one launch: they stay in
/// the H200's 50 MB L2 while their entries land.
const SCATTER_ONE_LAUNCH: usize = 32 << 20;
/// Above it, one more bucket range for each this many bytes of the sorted array.
const SCATTER_STRETCH: usize = 256 << 20;

/// Scatter launches (`msm_scatter`, a bucket range each) a window of m terms: one while the
/// sorted array fits [`SCATTER_ONE_LAUNCH`], else 1 + ceil(4·m / [`SCATTER_STRETCH`]): the L and A MSMs of a 32 GiB partition (~13 M terms) 2, the H MSM
/// (2^27) 3. Every launch reads all m digits, and the random 4-byte writes of one cost less
/// the smaller the stretch of the array they fall in. On the H200 (docs/perf.md), the
/// scatter of a 2^27-term MSM: 78.1 ms in one launch a window, 54.3 in 2 ranges, 51.4 in 3,
/// 53.3 in 4, 59.1 in 6, 103.5 in 16; L and A 1-2 ms faster each in 2 ranges, B (3.3 M
/// terms, 13 MB) 1 ms slower. `CUZK_MSM_SCATTER_PASSES` overrides it (for measurements).
fn scatter_passes(m: usize) -> usize {
    static P: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let forced = *P.get_or_init(|| {
        std::env::var("CUZK_MSM_SCATTER_PASSES")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&p| p >= 1)
    });
    forced.unwrap_or(if 4 * m <= SCATTER_ONE_LAUNCH {
        1
    } else {
        1 + (4 * m).div_ceil(SCATTER_STRETCH)
    })
}

/// Whether large MSMs sort a window into capped slots (`capped`); `CUZK_MSM_SORT=hist`
/// sorts them by histogram as before 2026-12-04 (for side-by-side measurement).
fn capped_sort() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("CUZK_MSM_SORT").map_or(true, |v| v != "hist"))
}

/// `CUZK_MSM_REDUCE_Q`: buckets a bucket-reduction chunk, instead of [`ReducePlan::new`]'s
/// one wave (for measurements: a sweep of q with one build).
fn forced_reduce_q() -> Option<usize> {
    static Q: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *Q.get_or_init(|| {
        std::env::var("CUZK_MSM_REDUCE_Q")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&q| q >= 1)
    })
}

/// The chain length from which [`ReducePlan::new`] prefers a power of two.
pub const POW2_CHAIN_MIN: usize = 64;

fn grid(n: usize, block: u32) -> u32 {
    n.div_ceil(block as usize) as u32
}

/// How the bucket reduction cuts g windows of nb buckets: chunks of q buckets (q need not
/// divide nb), one thread each, about as many as one wave of `wave` threads holds, so every
/// chunk runs at once. (64K threads of chunks a power of two long, as before, were 1.05 waves
/// of the G1 kernel's 792 resident 64-thread blocks at 2^27 and 1.3 at a partition's tails:
/// a second wave of whole chains.) A window's chunk results are padded with infinity to
/// parts·per and summed by `parts` blocks of `per` (at most the reduction's threads), then
/// its parts by one block.
///
/// Long chains (a wave's q ≥ [`POW2_CHAIN_MIN`]) are cut to the power of two just below
/// when that adds at most 1/8 more chunks: there the reduction runs throughput-bound at full
/// occupancy, so a few more chains cost little, and a chunk's start lo = k·q, multiplied in
/// by double-and-add (`xyzz_mul_small`), has as few set bits as k (H200, MSM 2^27: chains of
/// 128 took the reduction 8.4 ms where the one-wave 135 took 8.9, 256 took 10.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    pub q: usize,
    pub chunks: usize,
    pub parts: usize,
    pub per: usize,
}

impl ReducePlan {
    pub fn new(nb: usize, g: usize, wave: usize, threads: usize) -> ReducePlan {
        let q = (g * nb).div_ceil(wave.max(1));
        let below = if q >= POW2_CHAIN_MIN {
            1 << q.ilog2()
        } else {
            q
        };
        // q ≤ below·9/8: at most 1/8 more chunks than the wave's.
        let q = if 8 * q <= 9 * below { below } else { q };
        Self::with_q(nb, q, threads)
    }

    /// Chunks of q buckets (clamped to 1..=nb), whatever the wave.
    pub fn with_q(nb: usize, q: usize, threads: usize) -> ReducePlan {
        let q = q.clamp(1, nb);
        let chunks = nb.div_ceil(q);
        let parts = chunks.div_ceil(threads);
        let per = chunks.div_ceil(parts);
        ReducePlan {
            q,
            chunks,
            parts,
            per,
        }
    }

    /// Chunk results a window, padding included.
    pub fn pad(&self) -> usize {
        self.parts * self.per
    }
}

/// What a caller may ask of [`enqueue_msm`] beyond its sum (none: `Default`).
#[derive(Clone, Copy, Default)]
pub(crate) struct MsmHooks<'a> {
    /// Recorded on the compute stream before the last window's scatter (a window at a
    /// time; with all windows at once, before the accumulation): about one window plus the
    /// bucket reduction before the MSM ends (~63 ms of H's 740 at 32 GiB on an H200).
    pub(crate) near_end: Option<&'a Event>,
    /// A workspace whose last MSM on this stream had the same terms and scalars (B_G1's,
    /// for B_G2: one plan, one base index a B-variable in both groups). Its entries,
    /// sorted by bucket, and their offsets are still there, so this MSM skips its digits,
    /// scan and scatter and accumulates from them, when that MSM sorted all its windows
    /// into one array (a partition's tails); otherwise it sorts its own as usual.
    pub(crate) sorted_in: Option<&'a MsmWork>,
}

/// Enqueues Σ_i scalars[s_i]·bases[b_i] over m terms (terms: [base, scalar] pairs, or 0
/// for dense: term i = (i, i)) on the compute stream; the W window sums (points of the
/// workspace's curve, as are the bases) land in `out`.
#[allow(clippy::too_many_arguments)] // the kernels' own inputs, each a device pointer or size
pub(crate) fn enqueue_msm(
    dev: &Device,
    w: &MsmWork,
    bases: CUdeviceptr,
    terms: CUdeviceptr,
    m: usize,
    scalars: CUdeviceptr,
    out: CUdeviceptr,
    hooks: MsmHooks<'_>,
) -> Result<Windows, GpuError> {
    let MsmHooks {
        near_end,
        sorted_in,
    } = hooks;
    if m > w.max_terms {
        return Err(GpuError::TooLarge(format!(
            "{m} MSM terms, planned for {}",
            w.max_terms
        )));
    }
    let win = match FORCE_C.load(Ordering::Relaxed) {
        0 => Windows::for_terms(m),
        c => Windows::for_width(c),
    };
    let nb = win.buckets();
    let nw = win.windows as usize;
    let xb = w.curve.xyzz_bytes();
    if nw * m > digit_capacity(w.max_terms) {
        return Err(GpuError::TooLarge(format!("{nw} windows of {m} digits")));
    }
    let s = dev.compute;
    if m == 0 {
        if let Some(e) = near_end {
            e.record(s)?;
        }
        dev.memset(out, nw * xb, s)?;
        return Ok(win);
    }
    // Windows are processed in groups of g whose buckets (and histograms, offsets, cursors)
    // fit the workspace's MAX_WB: every window at once up to c = 20 (one group, digits and
    // histograms in one pass), 6 at c = 21, 3 at c = 22 (digits in one pass, then each
    // window's histogram from its digits). Each group is reduced to its window sums before
    // the next one reuses the buckets.
    let g = nw.min(MAX_WB / nb);
    let grouped = g < nw;
    let p = DigitParams {
        scalars,
        terms,
        digits: w.digits.ptr,
        counts: if grouped { 0 } else { w.counts.ptr },
        m: m as u32,
        c: win.c,
        windows: win.windows,
        k: win.k,
    };
    let mut ph = Phase::start(dev)?;
    let pk = point_kernels(dev, w.curve)?;
    // Small MSMs sort every window into one array (msm_rebase), so one accumulate and one
    // fixup launch cover all W·2^{c−1} buckets: a launch a window cost the 32 GiB
    // partition's L, A and B tails (16 windows of 1.2-1.8 M terms) a partly idle device at
    // the end of each of 16 accumulations and 16 small fixups. Larger ones (H: 13 windows
    // of 2^27) sort and accumulate a window at a time in one window's array.
    let reuse = sorted_in.filter(|src| !grouped && nw * m <= src.sorted_entries);
    let all_windows = reuse.is_some() || (!grouped && nw * m <= w.sorted_entries);
    // A window at a time (H), each window sorted into capped slots a bucket rather than by
    // its histogram (`capped`), unless `CUZK_MSM_SORT=hist` or the digit buffer lacks room.
    let capped = (!all_windows && !grouped && m >= capped::MIN_TERMS && capped_sort())
        .then(|| capped::CappedPlan::new(w, &win, m))
        .flatten();
    // The sorted entries and their buckets' offsets the accumulation reads.
    let (sorted, offsets) = match reuse {
        Some(src) => (src.sorted.ptr, src.offsets.ptr),
        None => (w.sorted.ptr, w.offsets.ptr),
    };
    let acc_n = if all_windows { nw * m } else { m };
    let ab = w.curve.acc_block();
    let acc_s = chunk_len(dev, pk.accumulate, ab, acc_n)? as u32;
    let acc_threads = acc_n.div_ceil(acc_s as usize);
    let (m32, c32, b32) = (m as u32, win.c, nb as u32);
    // Bucket ranges a window is scattered in (the same for every window of this MSM).
    let passes = scatter_passes(m) as u32;
    // Bucket reduction: one wave of threads a group (the same cut for every group, so
    // chunk results line up by window), at most half of MAX_CHUNKS (padding included, a
    // group's chunk results then fit the workspace on any device).
    let wave = dev
        .resident_threads(pk.bucket_reduce, 64)?
        .min(MAX_CHUNKS / 2);
    let rt = w.curve.reduce_threads() as usize;
    let rp = match forced_reduce_q() {
        // At least the q of a wave of MAX_CHUNKS / 2, so the results still fit.
        Some(q) => ReducePlan::with_q(nb, q.max((g * nb).div_ceil(MAX_CHUNKS / 2)), rt),
        None => ReducePlan::new(nb, g, wave, rt),
    };
    assert!(g * rp.pad() <= MAX_CHUNKS);
    // Window i's scatter (i counted from the MSM's first window), in `passes` bucket
    // ranges: its digits' entries land in `sorted` at the cursors given.
    let scatter = |i: usize, cursor: CUdeviceptr| -> Result<(), GpuError> {
        let digits = w.digits.at(i * m * 4);
        for r in 0..passes {
            let (lo, hi) = (b32 * r / passes, b32 * (r + 1) / passes);
            // SAFETY: msm_scatter(digits, terms, cursor, sorted, m, c, lo, hi); window i's
            // m digits, its 2^{c−1} cursors, and a sorted array of at least its entries.
            unsafe {
                dev.launch(
                    "msm scatter",
                    dev.k.msm_scatter,
                    grid(m, 256),
                    256,
                    0,
                    s,
                    &mut args![digits, terms, cursor, w.sorted.ptr, m32, c32, lo, hi],
                )?;
            }
        }
        Ok(())
    };
    // Buckets [0, nbs) from `buckets` on (one window's, or all windows' at once), their
    // entries at offsets `off` of the sorted array: summed by chunks, then cut buckets fixed.
    let accumulate = |ph: &mut Phase, off: CUdeviceptr, nbs: u32, buckets: CUdeviceptr| {
        // SAFETY: msm_accumulate_* and msm_fixup(_g2) take (sorted, off, B, S, bases,
        // buckets, head, tail) and (off, B, S, buckets, head, tail), the fixup over
        // max(nbs, acc_threads) threads (a bucket and a chunk each); off holds nbs + 1
        // offsets into the sorted array, buckets nbs points of the workspace's curve, head
        // and tail a partial a thread (acc_threads ≤ MAX_CHUNK_THREADS).
        unsafe {
            dev.launch(
                "msm accumulate",
                pk.accumulate,
                grid(acc_threads, ab),
                ab,
                0,
                s,
                &mut args![sorted, off, nbs, acc_s, bases, buckets, w.head.ptr, w.tail.ptr],
            )?;
            ph.end(dev, 2)?;
            dev.launch(
                "msm fixup",
                pk.fixup,
                grid((nbs as usize).max(acc_threads), 128),
                128,
                0,
                s,
                &mut args![off, nbs, acc_s, buckets, w.head.ptr, w.tail.ptr],
            )?;
        }
        ph.end(dev, 3)
    };
    // SAFETY (all launches below): arguments match the kernels' parameter lists in msm.cu
    // (the G1 and G2 instantiations take the same arguments); buffers are carved for
    // max_terms (checked above) and MAX_WB buckets of this workspace's curve (a group holds
    // g·nb ≤ MAX_WB), whose points the `bases` of the caller hold; the sorted array holds
    // nw·m entries where all windows share it (`sorted_in`'s: sorted there by an MSM of
    // the same terms, whose base indices hold for these bases too); partials (MAX_CHUNK_THREADS + 1024 points,
    // free until a batch addition on this stream) the gw·parts ≤ MAX_CHUNKS window parts.
    unsafe {
        if reuse.is_none() {
            if !grouped {
                dev.memset(w.counts.ptr, nw * nb * 4, s)?;
            }
            // The capped sort counts in its scatter: digits only.
            let p = DigitParams {
                counts: if capped.is_some() { 0 } else { p.counts },
                ..p
            };
            dev.launch(
                "msm digits",
                dev.k.msm_digits,
                grid(m, 256),
                256,
                0,
                s,
                &mut args![p],
            )?;
        }
        for w0 in (0..nw).step_by(g) {
            let gw = g.min(nw - w0);
            if reuse.is_some() {
                // All windows in one group, their entries sorted already.
                if let Some(e) = near_end {
                    e.record(s)?;
                }
                accumulate(&mut ph, offsets, (nw * nb) as u32, w.buckets.ptr)?;
            } else {
                if let Some(cp) = &capped {
                    // Each window: scatter into slots, counts to offsets, slots to sorted.
                    ph.end(dev, 0)?;
                    for i in 0..nw {
                        if let (Some(e), true) = (near_end, i + 1 == nw) {
                            e.record(s)?;
                        }
                        let (off, cur) = (w.offsets.at(i * (nb + 1) * 4), w.cursor.at(i * nb * 4));
                        let window = (w.digits.at(i * m * 4), terms, m, win.c);
                        cp.enqueue_window(
                            dev,
                            w,
                            i,
                            window,
                            passes,
                            (w.counts.at(i * nb * 4), off, cur),
                        )?;
                        ph.end(dev, 1)?;
                        accumulate(&mut ph, off, b32, w.buckets.at(i * nb * xb))?;
                    }
                } else {
                    if grouped {
                        dev.memset(w.counts.ptr, gw * nb * 4, s)?;
                        for i in 0..gw {
                            let digits = w.digits.at((w0 + i) * m * 4);
                            let counts = w.counts.at(i * nb * 4);
                            dev.launch(
                                "msm count",
                                extra_kernel(dev, "msm_count")?,
                                grid(m, 256),
                                256,
                                0,
                                s,
                                &mut args![digits, counts, m32, c32],
                            )?;
                        }
                    }
                    let totals: CUdeviceptr = if all_windows { w.totals.ptr } else { 0 };
                    dev.launch(
                        "msm scan",
                        dev.k.msm_scan,
                        gw as u32,
                        1024,
                        0,
                        s,
                        &mut args![w.counts.ptr, w.offsets.ptr, w.cursor.ptr, b32, totals],
                    )?;
                    if all_windows {
                        let nw32 = nw as u32;
                        dev.launch(
                            "msm rebase",
                            dev.k.msm_rebase,
                            grid(nw * nb, 256),
                            256,
                            0,
                            s,
                            &mut args![w.offsets.ptr, w.cursor.ptr, totals, b32, nw32],
                        )?;
                    }
                    ph.end(dev, 0)?;
                    if all_windows {
                        for i in 0..nw {
                            scatter(i, w.cursor.at(i * nb * 4))?;
                        }
                        ph.end(dev, 1)?;
                        if let Some(e) = near_end {
                            e.record(s)?;
                        }
                        accumulate(&mut ph, offsets, (nw * nb) as u32, w.buckets.ptr)?;
                    } else {
                        for i in 0..gw {
                            if let (Some(e), true) = (near_end, w0 + i + 1 == nw) {
                                e.record(s)?;
                            }
                            scatter(w0 + i, w.cursor.at(i * nb * 4))?;
                            ph.end(dev, 1)?;
                            let off = w.offsets.at(i * (nb + 1) * 4);
                            accumulate(&mut ph, off, b32, w.buckets.at(i * nb * xb))?;
                        }
                    }
                }
            }
            let (q32, gw32, pad32) = (rp.q as u32, gw as u32, rp.pad() as u32);
            dev.launch(
                "msm bucket reduce",
                pk.bucket_reduce,
                grid(gw * rp.pad(), 64),
                64,
                0,
                s,
                &mut args![w.buckets.ptr, b32, q32, gw32, pad32, w.chunk_res.ptr],
            )?;
            // A window's chunk results summed in two launches: `parts` blocks a window of at
            // most one result a thread and a tree, then a block a window over its parts. One
            // block a window summing all of them ran a chain of chunks / threads additions
            // and the tree on gw SMs only (16 of the H200's 132 for a partition's tails).
            let sums = out + (w0 * xb) as u64;
            let levels: [(CUdeviceptr, usize, usize, CUdeviceptr); 2] = [
                (w.chunk_res.ptr, gw * rp.pad(), rp.per, w.partials.ptr),
                (w.partials.ptr, gw * rp.parts, rp.parts, sums),
            ];
            for (input, n, per, output) in levels {
                let (n32, per32) = (n as u32, per as u32);
                dev.launch(
                    "msm window sums",
                    pk.reduce,
                    grid(n, per as u32),
                    w.curve.reduce_threads(),
                    0,
                    s,
                    &mut args![input, n32, per32, output],
                )?;
            }
            ph.end(dev, 4)?;
        }
    }
    ph.report(w.curve, m, &win);
    Ok(win)
}

/// Σ_w 2^{w·c}·T_w (Horner, on the host: W·c doublings), in either group.
pub fn combine_windows<P: DeviceXyzz>(win: &Windows, sums: &[P]) -> P::Projective {
    let mut acc = P::Projective::identity();
    for t in sums[..win.windows as usize].iter().rev() {
        for _ in 0..win.c {
            acc = acc.double();
        }
        acc += t.to_projective();
    }
    acc
}
