//! The ones' batch addition Σ_{i ∈ ones} P_i (msm.cu `batch_add*`), and with the proving
//! key's pair sums on the device (pairs.cu: the aligned S_i = P_{2i} + P_{2i+1} and the odd
//! T_i = P_{2i+1} + P_{2i+2}) one madd for each two neighbouring ones of the list instead of
//! two (docs/gpu.md "Ones in pairs").

use cudarc::driver::sys::CUdeviceptr;

use super::super::device::{args, Device};
use super::super::GpuError;
use super::{chunk_len, grid, point_kernels, AccumulateBuild, Curve, MsmWork};

/// Pair sums a vector of `bases` points has from its point `first` on (0: the aligned ones,
/// P_{2i} + P_{2i+1}; 1: the odd ones, P_{2i+1} + P_{2i+2}): one for each two points left.
pub(crate) const fn pair_count(bases: usize, first: usize) -> usize {
    bases.saturating_sub(first) / 2
}

/// A base vector's pair sums on the device (0: not held).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PairSums {
    pub(crate) aligned: CUdeviceptr,
    pub(crate) odd: CUdeviceptr,
}

/// Pair sums one thread of `pair_sums_*` makes with one inversion.
const PAIR_SUMS_PER_THREAD: u32 = 64;

/// Enqueues the pair sums P_{first+2i} + P_{first+2i+1} (affine, infinity as zeros) for
/// i < pair_count(n, first) of the `n` points at `bases` into `out`, on the compute stream
/// (once, when the bases are on the device).
pub(crate) fn enqueue_pair_sums(
    dev: &Device,
    curve: Curve,
    bases: CUdeviceptr,
    n: usize,
    first: usize,
    out: CUdeviceptr,
) -> Result<(), GpuError> {
    let np = pair_count(n, first);
    if np == 0 {
        return Ok(());
    }
    let (f, point) = match curve {
        Curve::G1 => (dev.k.pair_sums_g1, super::super::layout::AFFINE_BYTES),
        Curve::G2 => (dev.k.pair_sums_g2, super::super::layout::G2_AFFINE_BYTES),
    };
    let from = bases + (first * point) as u64;
    let threads = np.div_ceil(PAIR_SUMS_PER_THREAD as usize);
    let (np32, per) = (np as u32, PAIR_SUMS_PER_THREAD);
    // SAFETY: pair_sums_g1/_g2(bases, npairs, S, out): from `from` on, bases hold
    // 2·npairs ≤ n − first points of the curve, out npairs (the caller carves
    // pair_count(n, first) points).
    unsafe {
        dev.launch(
            "pair sums",
            f,
            grid(threads, 128),
            128,
            0,
            dev.compute,
            &mut args![from, np32, per, out],
        )
    }
}

/// Enqueues Σ_i bases[idx[i]] (idx = 0: Σ_{i<n} bases[i]) into one XYZZ of the workspace's
/// curve at `out`. With `pairs` (the pair sums of these bases, see [`enqueue_pair_sums`]; at
/// least the aligned ones) and a list, two neighbouring entries whose pair sum is held take
/// one madd of it (the default build's kernels only; the others ignore `pairs`).
pub(crate) fn enqueue_batch_add(
    dev: &Device,
    w: &MsmWork,
    bases: CUdeviceptr,
    pairs: PairSums,
    idx: CUdeviceptr,
    n: usize,
    out: CUdeviceptr,
) -> Result<(), GpuError> {
    let s = dev.compute;
    let pk = point_kernels(dev, w.curve)?;
    let rt = w.curve.reduce_threads();
    let ab = w.curve.acc_block();
    let paired =
        pairs.aligned != 0 && idx != 0 && AccumulateBuild::current() == AccumulateBuild::Split;
    let per = chunk_len(dev, pk.batch_add, ab, n)?;
    let parts = n.div_ceil(per);
    let groups = parts.div_ceil(256);
    let (n32, per32, parts32, g256, groups32) =
        (n as u32, per as u32, parts as u32, 256u32, groups as u32);
    // SAFETY: arguments match msm.cu's batch_add and xyzz_reduce (or their _g2
    // instantiations, the workspace's curve) and pairs.cu's batch_add_pairs(_g2), which
    // take the aligned and the odd pair sums (or null) after the bases and run
    // batch_add_split(_g2)'s loop with its blocks and shared memory (so the same
    // chunking); pairs hold pair_count(n, 0) and pair_count(n, 1) points; partials hold
    // MAX_CHUNK_THREADS + 1024 points and partials2 1024 (parts ≤ MAX_CHUNK_THREADS,
    // groups ≤ 1024); reduction blocks have the threads the kernel's shared array is sized
    // for.
    unsafe {
        if paired {
            let f = match w.curve {
                Curve::G1 => dev.k.batch_add_pairs,
                Curve::G2 => dev.k.batch_add_pairs_g2,
            };
            dev.launch(
                "batch add",
                f,
                grid(parts, ab),
                ab,
                0,
                s,
                &mut args![
                    bases,
                    pairs.aligned,
                    pairs.odd,
                    idx,
                    n32,
                    per32,
                    w.partials.ptr
                ],
            )?;
        } else {
            dev.launch(
                "batch add",
                pk.batch_add,
                grid(parts, ab),
                ab,
                0,
                s,
                &mut args![bases, idx, n32, per32, w.partials.ptr],
            )?;
        }
        dev.launch(
            "batch add reduce",
            pk.reduce,
            groups as u32,
            rt,
            0,
            s,
            &mut args![w.partials.ptr, parts32, g256, w.partials2.ptr],
        )?;
        dev.launch(
            "batch add reduce",
            pk.reduce,
            1,
            rt,
            0,
            s,
            &mut args![w.partials2.ptr, groups32, groups32, out],
        )?;
    }
    if n == 0 {
        dev.memset(out, w.curve.xyzz_bytes(), s)?;
    }
    Ok(())
}
