// Layer 3: multi-scalar multiplication (Pippenger, signed digits) and batch addition, one
// code path for G1 and G2: the kernels that touch points are templates over the coordinate
// field F (ec.cuh), instantiated as the G1 kernels (names unchanged, F = Fp) and the G2
// kernels (suffix _g2, F = Fp2). Digits, scan and scatter never touch a point and serve
// both. Knows the curves and Fr limbs, nothing of Groth16.
//
// Scalars are canonical (not Montgomery), 8 little-endian u32 limbs. A term is either
// dense (scalar i with base i) or a [base, scalar] index pair (a `PlanRef` term).
//
// Per MSM, with c-bit windows and W windows:
// 1. msm_digits: t = s + K, K = Σ_w 2^{w·c + c − 1}; window w of t, minus 2^{c−1}, is a
//    signed digit d_w in [−2^{c−1}, 2^{c−1}] and s = Σ_w d_w·2^{w·c} (no carries between
//    windows). Stored raw (d + 2^{c−1}, 32 bits); a histogram per window counts each
//    bucket |d| − 1.
// 2. msm_scan: exclusive prefix sums of the histograms (bucket offsets); for small MSMs
//    msm_rebase puts every window's entries into one sorted array.
// 3. msm_scatter (per window): each term's base index, sign in bit 31, lands in its
//    bucket's range: a counting sort by bucket; large MSMs in several launches over bucket
//    ranges, one stretch of the sorted array a launch (msm.rs `scatter_passes`). Large
//    MSMs sorted a window at a time skip steps 1's histogram and 2: msm_scatter_capped
//    places each entry in its bucket's fixed slots and counts the bucket, then the counts'
//    scan, msm_compact and msm_place_overflow (below) fill the same sorted array.
// 4. msm_accumulate (per window, or once for all windows of a small MSM): the sorted array
//    is cut into equal chunks of S entries; each thread sums its chunk (affine + XYZZ
//    additions) in one flat loop, the threads of a warp in step; a bucket wholly inside the
//    chunk is stored directly, a bucket cut by a chunk edge leaves a partial (head/tail). G1
//    prefetches the next entry's base.
// 5. msm_fixup (as accumulate): buckets cut across chunks sum their partials (a thread a
//    chunk), empty ones are infinity (a thread a bucket).
// 6. msm_bucket_reduce (all windows): chunks of Q buckets, one wave of threads, running
//    sums from the top:
//    Σ_b (b + 1)·S_b = Σ_{chunks} (Σ_{b in chunk} (b − lo + 1)·S_b + lo·Σ_{b in chunk} S_b).
// 7. xyzz_reduce: sums groups of points (a window's chunk results, in two launches: blocks
//    of them, then the window's blocks; batch-add partials).
// The host then combines the W window sums by Horner: Σ_w 2^{w·c}·T_w.

// A bucket cut by a chunk edge: its index and the chunk's part of its sum.
template <class F> struct partial_p { u32 bucket; u32 pad[3]; xyzz_p<F> p; };
typedef partial_p<fp_t> Partial;

#define NONE 0xffffffffu

// One affine base through the read-only cache, 16 bytes a load (G1: 6 loads, G2: 12).
template <class F>
__device__ __forceinline__ affine_p<F> ld_affine(const affine_p<F>* b) {
  const uint4* q = (const uint4*)b;
  affine_p<F> a;
  u32* w = (u32*)&a;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(affine_p<F>) / 16); i++) {
    uint4 v = __ldg(q + i);
    w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
  }
  return a;
}

struct DigitParams {
  const u32* scalars;  // 8 limbs each
  const u32* terms;    // [base, scalar] pairs, or 0 for dense
  u32* digits;         // W × m raw digits
  u32* counts;         // W × B histogram
  u32 m, c, windows, k[9];  // K = Σ_w 2^{w·c + c − 1}, 9 limbs (may exceed 256 bits)
};

extern "C" __global__ void msm_digits(const DigitParams p) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.m) return;
  const u32 si = p.terms ? p.terms[2 * i + 1] : i;
  const uint4* sp = (const uint4*)(p.scalars + 8 * (size_t)si);
  uint4 a = __ldg(sp), b = __ldg(sp + 1);
  u32 s[9] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, 0};
  u64 c = 0;
#pragma unroll
  for (int l = 0; l < 9; l++) {
    c = (u64)s[l] + p.k[l] + (c >> 32);
    s[l] = (u32)c;
  }
  const u32 half = 1u << (p.c - 1), B = half, mask = (1u << p.c) - 1;
  for (u32 w = 0; w < p.windows; w++) {
    const u32 bit = w * p.c, limb = bit >> 5, sh = bit & 31;
    u64 two = (u64)s[limb] | ((limb + 1 < 9 ? (u64)s[limb + 1] : 0) << 32);
    const u32 raw = (u32)(two >> sh) & mask;
    p.digits[(size_t)w * p.m + i] = raw;
    // counts = 0: digits only, the histograms come window by window from msm_count (windows
    // too wide for every window's buckets to be held at once, see msm.rs).
    if (p.counts && raw != half) {
      const u32 bucket = (raw > half ? raw - half : half - raw) - 1;
      atomicAdd(&p.counts[w * B + bucket], 1u);
    }
  }
}

// One window's histogram from its stored raw digits (msm_digits' counting, for windows
// processed a few at a time).
extern "C" __global__ void msm_count(const u32* digits, u32* counts, u32 m, u32 c) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const u32 half = 1u << (c - 1);
  const u32 raw = digits[i];
  if (raw != half) atomicAdd(&counts[(raw > half ? raw - half : half - raw) - 1], 1u);
}

// One block per window: the exclusive prefix sums of window w's histogram, cursor = offsets
// (scatter positions). Windows sorted one at a time (totals = 0): offsets[w·(B+1) + b], the
// last entry the window's total. All windows sorted into one array (totals != 0, msm.rs
// `enqueue_msm`, small MSMs): offsets[w·B + b] counted from the window's start, its total in
// totals[w]; msm_rebase then moves each window behind the ones before it.
extern "C" __global__ void __launch_bounds__(1024) msm_scan(const u32* counts, u32* offsets, u32* cursor, u32 B,
                                                            u32* totals) {
  __shared__ u32 part[1024];
  const u32 w = blockIdx.x, tid = threadIdx.x;
  const u32 per = (B + 1023) / 1024;
  const u32* cnt = counts + (size_t)w * B;
  u32 sum = 0;
  for (u32 b = tid * per; b < min(B, (tid + 1) * per); b++) sum += cnt[b];
  part[tid] = sum;
  __syncthreads();
  for (u32 off = 1; off < 1024; off <<= 1) {  // Hillis-Steele inclusive scan
    u32 v = tid >= off ? part[tid - off] : 0;
    __syncthreads();
    part[tid] += v;
    __syncthreads();
  }
  u32 run = part[tid] - sum;
  u32* out = offsets + (size_t)w * (totals ? B : B + 1);
  u32* cur = cursor + (size_t)w * B;
  for (u32 b = tid * per; b < min(B, (tid + 1) * per); b++) {
    out[b] = run; cur[b] = run; run += cnt[b];
  }
  if (tid == 1023) {
    if (totals) totals[w] = part[1023];
    else out[B] = part[1023];
  }
}

// All windows in one sorted array: window w's entries follow those of windows 0..w−1, so
// its offsets and cursors move up by Σ_{v<w} totals[v], and offsets[W·B] is the end of the
// last window. The W·B buckets then read as one window of W·B buckets (bucket w·B + b is
// window w's bucket b, where the workspace keeps it), which one accumulate and one fixup
// launch cover.
extern "C" __global__ void msm_rebase(u32* offsets, u32* cursor, const u32* totals, u32 B, u32 windows) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= windows * B) return;
  const u32 w = i / B;
  u32 base = 0;
  for (u32 v = 0; v < w; v++) base += totals[v];
  offsets[i] += base;
  cursor[i] += base;
  if (i == windows * B - 1) offsets[windows * B] = base + totals[w];
}

// Both scatters' step for term i of one window: when its digit d ≠ 0 and its bucket
// |d| − 1 is in [lo, hi) (the launch's range), the next place in the bucket from the
// returning atomic on counter[bucket], and its entry (base index, sign of d in bit 31).
__device__ __forceinline__ bool scatter_entry(const u32* digits, const u32* terms, u32* counter, u32 m, u32 c,
                                              u32 lo, u32 hi, u32& bucket, u32& pos, u32& e) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return false;
  const u32 half = 1u << (c - 1);
  const u32 raw = digits[i];
  if (raw == half) return false;
  bucket = (raw > half ? raw - half : half - raw) - 1;
  if (bucket < lo || bucket >= hi) return false;
  pos = atomicAdd(&counter[bucket], 1u);
  e = (terms ? terms[2 * i] : i) | (raw < half ? 0x80000000u : 0u);
  return true;
}

// Each term whose bucket is in [lo, hi) places its entry (base index, sign in bit 31) in
// its bucket's range. The host runs it over bucket ranges one after another (one range,
// [0, B), for small MSMs), so each launch writes one stretch of the sorted array (the
// range's entries are contiguous there), where its 4-byte entries land closer together
// (msm.rs `scatter_passes`), at the price of reading every digit once a range.
extern "C" __global__ void msm_scatter(const u32* digits, const u32* terms, u32* cursor, u32* sorted, u32 m, u32 c,
                                       u32 lo, u32 hi) {
  u32 bucket, pos, e;
  if (scatter_entry(digits, terms, cursor, m, c, lo, hi, bucket, pos, e)) sorted[pos] = e;
}

// The sort of a large MSM's window without a histogram (msm.rs `capped`): bucket b < used
// owns the slots [b·cap, b·cap + cap) of `slots`, and each entry takes the next slot of its
// bucket, so no offsets are needed before the scatter and msm_digits counts nothing; the
// scatter's returning atomic on cnt[b] counts the bucket at the same time. An entry past
// its bucket's cap, or in a bucket ≥ used, goes to the overflow list with its bucket
// (ovf[2k], ovf[2k + 1]), so any scalars sort exactly; with cap a few deviations above the
// mean count, uniform scalars (H's) overflow rarely. Then msm_scan and msm_rebase over
// sub-windows turn cnt into offsets, msm_compact moves the slots into the sorted array
// and msm_place_overflow adds the overflow behind each bucket's slots.
extern "C" __global__ void msm_scatter_capped(const u32* digits, const u32* terms, u32* cnt, u32* slots, u32 cap,
                                              u32 used, u32* ovf, u32* ovf_n, u32 m, u32 c, u32 lo, u32 hi) {
  u32 bucket, pos, e;
  if (!scatter_entry(digits, terms, cnt, m, c, lo, hi, bucket, pos, e)) return;
  if (bucket < used && pos < cap) {
    slots[(size_t)bucket * cap + pos] = e;
  } else {
    const u32 k = atomicAdd(ovf_n, 1u);
    ovf[2 * k] = e;
    ovf[2 * k + 1] = bucket;
  }
}

// Entries a bucket keeps in its slots: the first min(count, cap), none past `used`.
__device__ __forceinline__ u32 capped_kept(u32 count, u32 b, u32 cap, u32 used) {
  return b < used ? min(count, cap) : 0;
}

// A warp a bucket: its kept slots, j < min(cnt[b], cap), to their places off[b] + j in the
// sorted array, 32 consecutive entries a step (coalesced both ways). (A thread a slot, as
// first written, spent 172 M threads a window at 2^27 on a division each and a third of
// them on empty slots: ~0.7 ms a window.)
extern "C" __global__ void msm_compact(const u32* slots, const u32* cnt, const u32* off, u32* sorted, u32 cap,
                                       u32 used) {
  const u32 b = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (b >= used) return;
  const u32 kept = capped_kept(cnt[b], b, cap, used), at = off[b];
  const u32* from = slots + (size_t)b * cap;
  for (u32 j = lane; j < kept; j += 32) sorted[at + j] = from[j];
}

// The overflow list's entries behind their buckets' slots: cursor[b] starts at off[b]
// (msm_scan), and the kept entries fill [off[b], off[b] + kept). A grid-stride loop over
// the list, whose length only the device knows (a few blocks do nothing when it is empty).
extern "C" __global__ void msm_place_overflow(const u32* ovf, const u32* ovf_n, const u32* cnt, u32* cursor,
                                              u32* sorted, u32 cap, u32 used) {
  const u32 n = *ovf_n;
  for (u32 k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
    const u32 e = ovf[2 * k], b = ovf[2 * k + 1];
    sorted[atomicAdd(&cursor[b], 1u) + capped_kept(cnt[b], b, cap, used)] = e;
  }
}

// First bucket whose range holds position pos: the largest b with offsets[b] <= pos and
// offsets[b + 1] > pos.
__device__ __forceinline__ u32 find_bucket(const u32* off, u32 B, u32 pos) {
  u32 lo = 0, hi = B;  // off[lo] <= pos < off[hi]
  while (hi - lo > 1) {
    u32 mid = (lo + hi) >> 1;
    if (off[mid] <= pos) lo = mid; else hi = mid;
  }
  return lo;
}

// The end of a run (the entries of bucket b in this chunk, [run_start, run_end)): a bucket
// wholly inside the chunk is stored, else its part is the chunk's head (the run the chunk
// starts in) or tail (the run it ends in) partial.
template <class F>
__device__ __forceinline__ void flush_run(const u32* off, u32 b, u32 start, u32 run_start, u32 run_end,
                                          const xyzz_p<F>& acc, xyzz_p<F>* buckets, partial_p<F>* head,
                                          partial_p<F>* tail, u32 t) {
  if (run_start == off[b] && run_end == off[b + 1]) buckets[b] = acc;
  else if (run_start == start) { head[t].bucket = b; head[t].p = acc; }
  else { tail[t].bucket = b; tail[t].p = acc; }
}

// Entry q starts a new run: the finished run is flushed, the sum reset, and b moves to the
// bucket whose range holds q (skipping empty buckets); its run ends at the chunk's end or
// the bucket's.
template <class F>
__device__ __forceinline__ void next_run(const u32* off, u32& b, u32 q, u32 start, u32 end, u32& run_start,
                                         u32& run_end, xyzz_p<F>& acc, xyzz_p<F>* buckets,
                                         partial_p<F>* head, partial_p<F>* tail, u32 t) {
  flush_run(off, b, start, run_start, run_end, acc, buckets, head, tail, t);
  xyzz_set_inf(acc);
  do b++; while (off[b + 1] <= q);
  run_start = q;
  run_end = min(end, off[b + 1]);
}

// Thread t sums entries [t·S, t·S + S) of the sorted array, one flat loop over the entries:
// when entry q starts a new bucket's run, the finished run is flushed and the accumulator
// reset, then entry q is added. Every thread of a warp so runs its S madds in step. (The
// loop used to be nested, an inner loop per bucket run: a warp then waited at the end of each
// run for its longest one, Poisson-distributed lengths around m/2^{c−1}, and ran the madd with
// about half its threads at 2^24 terms, c = 22; Nsight Compute: 16.6 active threads a warp.)
template <class F>
__device__ __forceinline__ void accumulate(const u32* sorted, const u32* off, u32 B, u32 S,
                                           const affine_p<F>* bases, xyzz_p<F>* buckets,
                                           partial_p<F>* head, partial_p<F>* tail) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 total = off[B];
  const u32 start = t * S;
  if (start >= total) return;
  const u32 end = min(start + S, total);
  head[t].bucket = NONE;
  tail[t].bucket = NONE;
  u32 b = find_bucket(off, B, start);  // off[b] <= start < off[b + 1]
  u32 run_start = start, run_end = min(end, off[b + 1]);
  xyzz_p<F> acc;
  xyzz_set_inf(acc);
  for (u32 q = start; q < end; q++) {
    if (q == run_end) next_run(off, b, q, start, end, run_start, run_end, acc, buckets, head, tail, t);
    const u32 e = sorted[q];
    xyzz_add_affine_signed(acc, ld_affine(bases + (e & 0x7fffffffu)), e >> 31);
  }
  flush_run(off, b, start, run_start, run_end, acc, buckets, head, tail, t);
}

// 16 bytes global -> shared memory without passing through a register (cp.async, sm_80+),
// L2 only (.cg: the bases are gathered at random, L1 would not hit). The thread waits for its
// own copies (cp_async_wait1); on the host (kernels/tests/cuda_on_host.rs) a plain copy.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#ifdef __CUDA_ARCH__
  const u32 s = (u32)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#else
  memcpy(smem, gmem, 16);
#endif
}
// Closes the group of copies issued since the last commit (an empty group is allowed).
__device__ __forceinline__ void cp_async_commit() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
// Waits until at most one group (the newest) is still in flight.
__device__ __forceinline__ void cp_async_wait1() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}

#define ACC_BLOCK 128    // threads per G1 accumulate block (msm.rs `Curve::acc_block`)
#define ACC_BLOCK_G2 64  // threads per G2 split accumulate / batch-add block

// Copies one base into this thread's shared slot, 16 bytes at a time (cp.async).
template <class F>
__device__ __forceinline__ void prefetch_base(affine_p<F>* slot, const affine_p<F>* base) {
  const uint4* src = (const uint4*)base;
  uint4* dst = (uint4*)slot;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(affine_p<F>) / 16); i++) cp_async16(dst + i, src + i);
}

// accumulate with the next entry's base prefetched: while the madd of entry q runs, the
// base of entry q + 1 is copied into this thread's other shared-memory slot (cp.async), so
// the two dependent global loads (sorted[q], then the 96-byte base it names) no longer stall
// the thread before each madd. A register prefetch would not do: the madd is a call, and a
// value live across it is saved to local memory (a store that waits for the load) at once.
// 2 × 128 × 96 B = 24 KiB of shared memory a block (G1 only).
// SPLIT (the default G1 build): the accumulator split (xyzz_madd_sh, ec.cuh), X, Y in
// registers, ZZ, ZZZ in this thread's shared-memory slots (12 KiB more a block), the madd
// inlined so only the products are calls, and the base read from its prefetch slot where a
// product takes a coordinate. Without it the called madd moves the accumulator and its
// temporaries through local memory (~220 local loads and stores a madd).
// BLOCK: the threads a block (G1 ACC_BLOCK; G2 ACC_BLOCK_G2, its 192-byte bases and 96-byte
// coordinates filling the 48 KiB a block may declare at half as many threads).
template <class F, bool SPLIT, int BLOCK = ACC_BLOCK>
__device__ __forceinline__ void accumulate_pf(const u32* sorted, const u32* off, u32 B, u32 S,
                                              const affine_p<F>* bases, xyzz_p<F>* buckets,
                                              partial_p<F>* head, partial_p<F>* tail) {
  __shared__ affine_p<F> slot[2][BLOCK];
  __shared__ F zz[SPLIT ? BLOCK : 1], zzz[SPLIT ? BLOCK : 1];
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 total = off[B];
  const u32 start = t * S;
  if (start >= total) return;
  const u32 end = min(start + S, total);
  head[t].bucket = NONE;
  tail[t].bucket = NONE;
  u32 e_next = sorted[start];
  prefetch_base(&slot[0][threadIdx.x], bases + (e_next & 0x7fffffffu));
  cp_async_commit();
  u32 k = 0;  // the slot holding entry q's base
  u32 b = find_bucket(off, B, start);
  u32 run_start = start, run_end = min(end, off[b + 1]);
  xyzz_p<F> acc;  // the accumulator (SPLIT: only on its way to a flush)
  xyzz_sh<F> split;
  if (SPLIT) xyzz_sh_init(split, &zz[threadIdx.x], &zzz[threadIdx.x]);
  else xyzz_set_inf(acc);
  for (u32 q = start; q < end; q++) {
    if (q == run_end) {
      if (SPLIT) acc = xyzz_sh_get(split);
      next_run(off, b, q, start, end, run_start, run_end, acc, buckets, head, tail, t);
      if (SPLIT) xyzz_sh_set_inf(split);
    }
    const u32 e = e_next;
    if (q + 1 < end) {
      e_next = sorted[q + 1];
      prefetch_base(&slot[k ^ 1][threadIdx.x], bases + (e_next & 0x7fffffffu));
    }
    cp_async_commit();
    cp_async_wait1();  // entry q's copies (the older group) have landed
    if (SPLIT) xyzz_madd_sh(split, sh_addr(&slot[k][threadIdx.x]), e >> 31);
    else xyzz_add_affine_signed(acc, slot[k][threadIdx.x], e >> 31);
    k ^= 1;
  }
  if (SPLIT) acc = xyzz_sh_get(split);
  flush_run(off, b, start, run_start, run_end, acc, buckets, head, tail, t);
}

// The G1 builds (the host picks one, `msm::set_accumulate_build`; all are launched as one
// full wave of resident blocks, `msm::Chunking::Waves`):
// - msm_accumulate_split, the default: the prefetching loop with the accumulator split and
//   the madd inlined (accumulate_pf with SPLIT), at most 128 registers (4 blocks, 16 warps per SM).
//   H200: MSM 2^27 751.5 ms against 781.1 for msm_accumulate_wide; the madd alone (ceiling.cu)
//   0.372 ns against 0.387 (docs/perf.md, 2026-12-03).
// - msm_accumulate_wide: the prefetching loop calling the madd (accumulate_pf without SPLIT), at most 128
//   registers (uncapped it takes 128 anyway, the cap keeps it there).
// - msm_accumulate_flat: the same loop without the prefetch, uncapped (124 registers).
// - msm_accumulate: without the prefetch, capped at 80 registers (6 blocks, 24 warps, with
//   spills in the madd).
// On the H200 the loop is bound by the FMA-heavy pipe (the IMAD.WIDE of the field products:
// 85 % of its cycles busy in Nsight Compute), so more warps do not help: capped at 96 and
// 80 registers it measured 1.6 % and 0.5 % slower than at 128 (docs/gpu.md). G2 has one
// build, uncapped, without the prefetch (its two slots would take 48 KiB a block).
// The prefetching loop's two G1 builds, as the macro's loops (a template of F alone).
template <class F>
__device__ __forceinline__ void accumulate_called(const u32* sorted, const u32* off, u32 B, u32 S,
                                                  const affine_p<F>* bases, xyzz_p<F>* buckets,
                                                  partial_p<F>* head, partial_p<F>* tail) {
  accumulate_pf<F, false>(sorted, off, B, S, bases, buckets, head, tail);
}
template <class F>
__device__ __forceinline__ void accumulate_split(const u32* sorted, const u32* off, u32 B, u32 S,
                                                 const affine_p<F>* bases, xyzz_p<F>* buckets,
                                                 partial_p<F>* head, partial_p<F>* tail) {
  accumulate_pf<F, true>(sorted, off, B, S, bases, buckets, head, tail);
}
template <class F>
__device__ __forceinline__ void accumulate_split_g2(const u32* sorted, const u32* off, u32 B, u32 S,
                                                    const affine_p<F>* bases, xyzz_p<F>* buckets,
                                                    partial_p<F>* head, partial_p<F>* tail) {
  accumulate_pf<F, true, ACC_BLOCK_G2>(sorted, off, B, S, bases, buckets, head, tail);
}
#define ACCUMULATE_BUILD(name, F, bounds, loop)                                              \
  extern "C" __global__ void bounds name(const u32* sorted, const u32* off, u32 B, u32 S,    \
                                         const affine_p<F>* bases, xyzz_p<F>* buckets,      \
                                         partial_p<F>* head, partial_p<F>* tail) {          \
    loop<F>(sorted, off, B, S, bases, buckets, head, tail);                                 \
  }
ACCUMULATE_BUILD(msm_accumulate_wide, fp_t, __launch_bounds__(ACC_BLOCK, 4), accumulate_called)
ACCUMULATE_BUILD(msm_accumulate_flat, fp_t, , accumulate)
ACCUMULATE_BUILD(msm_accumulate_split, fp_t, __launch_bounds__(ACC_BLOCK, 4), accumulate_split)
ACCUMULATE_BUILD(msm_accumulate, fp_t, __launch_bounds__(ACC_BLOCK, 6), accumulate)
ACCUMULATE_BUILD(msm_accumulate_g2, fp2_t, , accumulate)
// G2 with the split accumulator and the prefetch, blocks of ACC_BLOCK_G2 (36 KiB of shared
// memory: two 192-byte base slots and the 96-byte ZZ, ZZZ a thread), uncapped.
ACCUMULATE_BUILD(msm_accumulate_split_g2, fp2_t, __launch_bounds__(ACC_BLOCK_G2), accumulate_split_g2)

// Thread i (launched over max(B, chunks) threads): bucket i, if empty, is infinity; and if
// chunk i's last run is a bucket that goes on past the chunk and starts in it, that
// bucket's sum from the partials of the chunks it spans. A thread a chunk does the point
// additions (the cut buckets are as many as the chunks, and the chunks' threads sit side by
// side): the thread a bucket before ran them on one thread of ~8 in a warp at 2^27 (13
// windows of 2^19 buckets, ~67 K chunks a window), the others idle.
template <class F>
__device__ __forceinline__ void fixup(const u32* off, u32 B, u32 S, xyzz_p<F>* buckets,
                                      const partial_p<F>* head, const partial_p<F>* tail) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < B && off[i] == off[i + 1]) xyzz_set_inf(buckets[i]);
  const u32 total = off[B], start = i * S;
  if (start >= total) return;
  const u32 end = min(start + S, total);
  // The chunk's last run: its tail partial, or its head when the chunk is one run (a run
  // stored whole leaves none; a run that starts before the chunk is its first chunk's).
  const u32 b = tail[i].bucket != NONE ? tail[i].bucket : head[i].bucket;
  if (b == NONE || off[b] / S != i || off[b + 1] <= end) return;
  const u32 t1 = (off[b + 1] - 1) / S;
  xyzz_p<F> acc;
  xyzz_set_inf(acc);
  for (u32 t = i; t <= t1; t++) {
    if (head[t].bucket == b) xyzz_add(acc, head[t].p);
    if (tail[t].bucket == b) xyzz_add(acc, tail[t].p);
  }
  buckets[b] = acc;
}

extern "C" __global__ void msm_fixup(const u32* off, u32 B, u32 S, xyzz_t* buckets,
                                     const Partial* head, const Partial* tail) {
  fixup<fp_t>(off, B, S, buckets, head, tail);
}

extern "C" __global__ void msm_fixup_g2(const u32* off, u32 B, u32 S, g2_xyzz_t* buckets,
                                        const partial_p<fp2_t>* head, const partial_p<fp2_t>* tail) {
  fixup<fp2_t>(off, B, S, buckets, head, tail);
}

// Thread (w, q) reduces buckets [q·Q, min(B, q·Q + Q)) of window w into out[w·pad + q]:
// Σ_b (b − lo + 1)·S_b by running sums from the top, plus lo·Σ_b S_b. Q need not divide B
// (the host picks it so the threads fill one wave); a window's results are padded to pad
// entries with infinity (threads whose chunk starts past B), so that the window-sum blocks
// of the next step each read within one window.
template <class F>
__device__ __forceinline__ void bucket_reduce(const xyzz_p<F>* buckets, u32 B, u32 Q, u32 windows, u32 pad,
                                              xyzz_p<F>* out) {
  const u32 id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= windows * pad) return;
  const u32 w = id / pad, q = id % pad, lo = q * Q;
  xyzz_p<F> acc, tot;
  xyzz_set_inf(acc);
  xyzz_set_inf(tot);
  if (lo >= B) { out[id] = tot; return; }
  const xyzz_p<F>* bk = buckets + (size_t)w * B;
  for (u32 b = min(B, lo + Q); b-- > lo;) {
    xyzz_add(acc, bk[b]);
    xyzz_add(tot, acc);
  }
  if (lo != 0) {
    xyzz_mul_small(acc, lo);
    xyzz_add(tot, acc);
  }
  out[id] = tot;
}

extern "C" __global__ void msm_bucket_reduce(const xyzz_t* buckets, u32 B, u32 Q, u32 windows, u32 pad,
                                             xyzz_t* out) {
  bucket_reduce<fp_t>(buckets, B, Q, windows, pad, out);
}

extern "C" __global__ void msm_bucket_reduce_g2(const g2_xyzz_t* buckets, u32 B, u32 Q, u32 windows, u32 pad,
                                                g2_xyzz_t* out) {
  bucket_reduce<fp2_t>(buckets, B, Q, windows, pad, out);
}

// Block g sums in[g·per .. min(n, (g+1)·per)) into out[g]: a strided loop, then a tree in
// shared memory. THREADS points of shared memory: 128 × 192 bytes for G1, 64 × 384 for G2
// (24 KiB each; 128 G2 points would be the whole 48 KiB a block may declare).
template <class F, int THREADS>
__device__ __forceinline__ void reduce(const xyzz_p<F>* in, u32 n, u32 per, xyzz_p<F>* out) {
  __shared__ xyzz_p<F> sm[THREADS];
  const u32 g = blockIdx.x, tid = threadIdx.x;
  const u32 lo = g * per, hi = min(n, lo + per);
  xyzz_p<F> acc;
  xyzz_set_inf(acc);
  for (u32 i = lo + tid; i < hi; i += THREADS) xyzz_add(acc, in[i]);
  sm[tid] = acc;
  for (u32 off = THREADS / 2; off > 0; off >>= 1) {
    __syncthreads();
    if (tid < off) {
      xyzz_p<F> a = sm[tid];
      xyzz_add(a, sm[tid + off]);
      sm[tid] = a;
    }
  }
  if (tid == 0) out[g] = sm[0];
}

#define REDUCE_THREADS 128
#define REDUCE_THREADS_G2 64
extern "C" __global__ void __launch_bounds__(REDUCE_THREADS) xyzz_reduce(const xyzz_t* in, u32 n, u32 per, xyzz_t* out) {
  reduce<fp_t, REDUCE_THREADS>(in, n, per, out);
}

extern "C" __global__ void __launch_bounds__(REDUCE_THREADS_G2) xyzz_reduce_g2(const g2_xyzz_t* in, u32 n, u32 per,
                                                                               g2_xyzz_t* out) {
  reduce<fp2_t, REDUCE_THREADS_G2>(in, n, per, out);
}

// Batch addition: thread t sums bases[idx[i]] for i in [t·S, t·S + S) (idx = 0: dense,
// bases[i]) into out[t]. A macro rather than an inlined template body (as the others): the
// inlined body compiled the G1 kernel to different SASS (the accumulator's clearing moved
// ahead of the bounds check), the body written in the kernel keeps it as it was.
#define BATCH_ADD(name, F, bounds)                                                            \
  extern "C" __global__ void bounds name(const affine_p<F>* bases, const u32* idx, u32 n, u32 S, \
                                         xyzz_p<F>* out) {                                    \
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x;                                      \
    const u32 lo = t * S;                                                                     \
    if (lo >= n) return;                                                                      \
    const u32 hi = min(n, lo + S);                                                            \
    xyzz_p<F> acc;                                                                            \
    xyzz_set_inf(acc);                                                                        \
    for (u32 i = lo; i < hi; i++) xyzz_add_affine_signed(acc, ld_affine(bases + (idx ? idx[i] : i)), false); \
    out[t] = acc;                                                                             \
  }
// G1: 128 registers, 16 warps/SM, as the accumulation: at 80 (24 warps) fp_mul_sub_mul
// spills inside its products; 80, 128 and uncapped timed the same with the two-product Y3.
// The default build's batch addition is batch_add_split (below); this one goes with the
// other builds.
BATCH_ADD(batch_add, fp_t, __launch_bounds__(128, 4))
BATCH_ADD(batch_add_g2, fp2_t, )                       // G2: uncapped, one wave (as accumulate)

// The batch addition of the Split build (msm::AccumulateBuild): the SPLIT prefetching loop without
// runs, the next point prefetched into shared memory, the accumulator split (xyzz_madd_sh).
// Thread t sums the units that start in entries [t·S, t·S + S) of the list into out[t]; a
// unit source says where the unit at entry i (< hi) lies and how many entries it takes
// (`next(i, hi, at)`): OneBase one base an entry (here), PairUnits two neighbours as one
// pair sum (pairs.cu).
template <class F, int BLOCK, class Units>
__device__ __forceinline__ void batch_add_units(const Units& units, u32 n, u32 S, xyzz_p<F>* out) {
  __shared__ affine_p<F> slot[2][BLOCK];
  __shared__ F zz[BLOCK], zzz[BLOCK];
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 lo = t * S;
  if (lo >= n) return;
  const u32 hi = min(n, lo + S);
  const affine_p<F>* at;
  u32 step = units.next(lo, hi, at);
  prefetch_base(&slot[0][threadIdx.x], at);
  cp_async_commit();
  u32 k = 0;
  xyzz_sh<F> acc;
  xyzz_sh_init(acc, &zz[threadIdx.x], &zzz[threadIdx.x]);
  for (u32 i = lo; i < hi;) {
    const u32 i2 = i + step;
    if (i2 < hi) {
      step = units.next(i2, hi, at);
      prefetch_base(&slot[k ^ 1][threadIdx.x], at);
    }
    cp_async_commit();
    cp_async_wait1();
    xyzz_madd_sh(acc, sh_addr(&slot[k][threadIdx.x]), false);
    k ^= 1;
    i = i2;
  }
  out[t] = xyzz_sh_get(acc);
}

// One base an entry: bases[idx[i]] (idx = 0: dense, bases[i]).
template <class F> struct OneBase {
  const affine_p<F>* bases;
  const u32* idx;
  __device__ __forceinline__ u32 next(u32 i, u32, const affine_p<F>*& at) const {
    at = bases + (idx ? idx[i] : i);
    return 1;
  }
};
extern "C" __global__ void __launch_bounds__(ACC_BLOCK, 4) batch_add_split(const affine_t* bases, const u32* idx,
                                                                           u32 n, u32 S, xyzz_t* out) {
  batch_add_units<fp_t, ACC_BLOCK>(OneBase<fp_t>{bases, idx}, n, S, out);
}
extern "C" __global__ void __launch_bounds__(ACC_BLOCK_G2) batch_add_split_g2(const g2_affine_t* bases,
                                                                              const u32* idx, u32 n, u32 S,
                                                                              g2_xyzz_t* out) {
  batch_add_units<fp2_t, ACC_BLOCK_G2>(OneBase<fp2_t>{bases, idx}, n, S, out);
}
