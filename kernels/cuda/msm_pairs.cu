// Layer 3: affine pair sums of a window's buckets ahead of the XYZZ accumulation (G1). Uses
// msm.cu's sorted layout (bucket offsets, signed base indices) and its loaders.
//
// A level turns a bucket's n points (consecutive in sorted order) into ceil(n / 2):
// (P_{2i}, P_{2i+1}) -> P_{2i} + P_{2i+1}, an odd last one copied; msm_accumulate then sums
// what the last level left with XYZZ madds. An affine sum is
//   λ = (y1 − y0) / (x1 − x0)       (x0 ≠ x1)
//   λ = 3·x0² / (2·y0)              (P0 = P1)
//   x3 = λ² − x0 − x1,  y3 = λ·(x0 − x3) − y0
// and P0 = −P1 gives infinity, (0, 0) as in the SRS. A thread's k sums share one inversion
// (Montgomery's trick): with d_j the denominators and π_j = Π_{i ≤ j} d_i,
//   inv = π_last^{−1};  for j from the last down:  1/d_j = inv·π_{j−1},  inv ← inv·d_j.
// A sum so costs 6 products (π_j, the two of the walk back, λ, λ², λ·(x0 − x3)) and 1/k of
// an inversion, where the XYZZ madd it replaces costs 10 (8 M + 2 S, ec.cuh). π_j waits in
// output j's x until the walk back overwrites it with the sum.

struct PairLevel {
  const uint2* list;     // the level's input pairs (msm_pair_list), one an output
  const affine_t* in;    // the first level: the bases; after it the previous level's sums
  const u32* out_off;    // B + 1 bucket offsets of the output: ceil(n_b / 2) a bucket
  affine_t* out;
  u32 B, k;              // buckets; sums a lane
};

// What a pair sums to. Trivial kinds take no denominator.
#define PAIR_COPY0 0  // no partner, or the partner is infinity: P0
#define PAIR_COPY1 1  // P0 is infinity: P1
#define PAIR_INF 2    // P0 = −P1 (or 2·P0 with y0 = 0): infinity
#define PAIR_ADD 3    // x0 ≠ x1: den = x1 − x0
#define PAIR_DBL 4    // P0 = P1: den = 2·y0

// Counts of the next level: ceil(n_b / 2) for bucket b.
extern "C" __global__ void msm_halve_counts(const u32* off, u32* counts, u32 B) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < B) counts[b] = (off[b + 1] - off[b] + 1) >> 1;
}

#define PAIR_NONE 0xffffffffu  // no second input (base 2^31 − 1 negated: never an entry)

// The level's pairs in output order, a warp a bucket (its lanes write consecutive pairs):
// output j of bucket b sums inputs i0 = in_off[b] + 2·(j − out_off[b]) and i0 + 1 (PAIR_NONE
// past the bucket's end), as the first level's signed base indices (sorted) or, after it,
// positions in the previous level's sums (sorted = 0). The level kernel then reads one
// 8-byte pair a step, in order, instead of walking the offsets.
extern "C" __global__ void msm_pair_list(const u32* sorted, const u32* in_off, const u32* out_off, u32 B,
                                         uint2* list) {
  const u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 b = gid >> 5;
  if (b >= B) return;
  const u32 lo = in_off[b], hi = in_off[b + 1], o = out_off[b], o1 = out_off[b + 1];
  for (u32 j = o + (gid & 31); j < o1; j += 32) {
    const u32 i0 = lo + 2 * (j - o);
    uint2 e;
    e.x = sorted ? sorted[i0] : i0;
    e.y = i0 + 1 < hi ? (sorted ? sorted[i0 + 1] : i0 + 1) : PAIR_NONE;
    list[j] = e;
  }
}

// One point through L2 only (ld.global.cg): gathered bases and level sums are each read
// once a pass, so L1 is left to the offsets and to the registers spilled around the calls.
__device__ __forceinline__ affine_t ld_affine_cg(const affine_t* b) {
  const uint4* q = (const uint4*)b;
  affine_t a;
  u32* w = (u32*)&a;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(affine_t) / 16); i++) {
    uint4 v = __ldcg(q + i);
    w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
  }
  return a;
}

// 8 bytes global -> shared memory (cp.async.ca: a warp's pairs are one or two lines); on the
// host a plain copy.
__device__ __forceinline__ void cp_async8(void* smem, const void* gmem) {
#ifdef __CUDA_ARCH__
  const u32 s = (u32)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(s), "l"(gmem) : "memory");
#else
  memcpy(smem, gmem, 8);
#endif
}
// Waits for every copy this thread has issued.
__device__ __forceinline__ void cp_async_wait0() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}
__device__ __forceinline__ void cp_fp(fp_t* smem, const fp_t* gmem) {
#pragma unroll
  for (int i = 0; i < 3; i++) cp_async16((uint4*)smem + i, (const uint4*)gmem + i);
}

#define PAIR_BLOCK 64  // threads per pair-level block (msm.rs launches 64)

// A step's inputs as they are fetched: the pair (msm_pair_list), then the points (the
// forward pass copies x0 and x1 only) and π_{j−32}, the running product of this lane's
// previous output (backward only).
struct alignas(16) PairPts { fp_t x0, y0, x1, y1, pi; };  // cp.async: 16-byte aligned

// Where each lane is in the level: its outputs j_s = seg + 32·s + lane, s = 0, 1, ... (a
// warp owns 32·k consecutive outputs and its lanes take consecutive ones at every step, so
// the pairs, the previous level's sums, the outputs and π all move as whole lines).
struct PairWalk {
  const PairLevel& p;
  u32 seg, lane;
  __device__ __forceinline__ u32 out(u32 s) const { return seg + 32 * s + lane; }
  __device__ __forceinline__ void fetch_ent(u32 s, uint2& e) const {
    cp_async8(&e, &p.list[out(s)]);
  }
  // Step s's points (x only going forward), and going back π_{j−32} when s > 0.
  __device__ __forceinline__ void fetch_pts(u32 s, bool forward, const uint2& e, PairPts& q) const {
    const affine_t* a = p.in + (e.x & 0x7fffffffu);
    cp_fp(&q.x0, &a->x);
    if (!forward) cp_fp(&q.y0, &a->y);
    if (e.y != PAIR_NONE) {
      const affine_t* c = p.in + (e.y & 0x7fffffffu);
      cp_fp(&q.x1, &c->x);
      if (!forward) cp_fp(&q.y1, &c->y);
    }
    if (!forward && s > 0) cp_fp(&q.pi, &p.out[out(s) - 32].x);
  }
};

// Step s's inputs, negated where their entry's sign bit says (level 1), and what they sum
// to; den for ADD and DBL, num the slope's numerator.
__device__ __forceinline__ u32 pair_kind(const uint2& e, affine_t& a, affine_t& c, fp_t& den, fp_t& num) {
  if (e.x >> 31) a.y = fp_neg(a.y);
  if (e.y == PAIR_NONE) return PAIR_COPY0;
  if (e.y >> 31) c.y = fp_neg(c.y);
  if (affine_is_inf(c)) return PAIR_COPY0;
  if (affine_is_inf(a)) return PAIR_COPY1;
  den = fp_sub(c.x, a.x);
  if (!fp_is_zero(den)) { num = fp_sub(c.y, a.y); return PAIR_ADD; }
  if (!fp_eq(a.y, c.y) || fp_is_zero(a.y)) return PAIR_INF;
  den = fp_add(a.y, a.y);
  const fp_t x2 = fp_sqr(a.x);
  num = fp_add(fp_add(x2, x2), x2);  // 3·x0²
  return PAIR_DBL;
}

// The forward pass's denominator of step s from x0, x1 alone when that decides it (both
// x nonzero, so neither point is infinity, and unequal: ADD); otherwise from both points,
// read again (rare: infinity, equal or opposite points). 0 for a trivial pair.
__device__ __forceinline__ fp_t pair_den(const PairLevel& p, const uint2& e, const PairPts& q) {
  if (e.y == PAIR_NONE) return fp_zero();
  if (!fp_is_zero(q.x0) && !fp_is_zero(q.x1) && !fp_eq(q.x0, q.x1)) return fp_sub(q.x1, q.x0);
  affine_t a = ld_affine_cg(p.in + (e.x & 0x7fffffffu)), c = ld_affine_cg(p.in + (e.y & 0x7fffffffu));
  fp_t den = fp_zero(), num;
  return pair_kind(e, a, c, den, num) >= PAIR_ADD ? den : fp_zero();
}

// Lane l of warp w writes outputs seg + 32·s + l, s < k, seg = 32·k·w. The forward pass
// keeps the running product π of the denominators and leaves π_j in output j's x; one
// inversion; the backward pass walks the outputs down:
//   1/d_j = inv·π_{j−32},  inv ← inv·d_j,  λ = num_j / d_j,
//   x3 = λ² − x0 − x1,  y3 = λ·(x0 − x3) − y0.
// Each pass fetches two steps ahead through shared memory (cp.async): step s + 2's entries
// and step s + 1's points land while step s computes, so the gather of a base behind the
// load of its index does not stall the lane (a value held in a register across the field
// calls would be saved to local memory at once, waiting for its load).
__device__ __forceinline__ void pair_level(const PairLevel& p) {
  __shared__ uint2 ent_s[3][PAIR_BLOCK];
  __shared__ PairPts pts_s[2][PAIR_BLOCK];
  const u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 tid = threadIdx.x % PAIR_BLOCK;  // the host emulation runs blocks of 128
  const u32 total = p.out_off[p.B];
  const PairWalk w{p, (gid >> 5) * 32 * p.k, gid & 31};
  if (w.out(0) >= total) return;
  const u32 n = min(p.k, (total - w.out(0) + 31) / 32);  // this lane's steps: outputs below total

  // Forward: π_j into out[j].x.
  w.fetch_ent(0, ent_s[0][tid]);
  cp_async_commit();
  cp_async_wait0();
  w.fetch_pts(0, true, ent_s[0][tid], pts_s[0][tid]);
  if (n > 1) w.fetch_ent(1, ent_s[1][tid]);
  cp_async_commit();
  fp_t pi = fp_one();
  for (u32 s = 0; s < n; s++) {
    cp_async_wait0();  // step s's points and step s + 1's entries have landed
    if (s + 1 < n) w.fetch_pts(s + 1, true, ent_s[(s + 1) % 3][tid], pts_s[(s + 1) & 1][tid]);
    if (s + 2 < n) w.fetch_ent(s + 2, ent_s[(s + 2) % 3][tid]);
    cp_async_commit();
    const fp_t den = pair_den(p, ent_s[s % 3][tid], pts_s[s & 1][tid]);
    if (!fp_is_zero(den)) pi = fp_mul(pi, den);
    p.out[w.out(s)].x = pi;
  }
  fp_t inv = fp_inv(pi);

  // Backward, from step n − 1 down.
  const u32 last = n - 1;
  w.fetch_ent(last, ent_s[last % 3][tid]);
  cp_async_commit();
  cp_async_wait0();
  w.fetch_pts(last, false, ent_s[last % 3][tid], pts_s[last & 1][tid]);
  if (last > 0) w.fetch_ent(last - 1, ent_s[(last - 1) % 3][tid]);
  cp_async_commit();
  for (u32 s = last + 1; s-- > 0;) {
    cp_async_wait0();
    if (s >= 1) w.fetch_pts(s - 1, false, ent_s[(s - 1) % 3][tid], pts_s[(s - 1) & 1][tid]);
    if (s >= 2) w.fetch_ent(s - 2, ent_s[(s - 2) % 3][tid]);
    cp_async_commit();
    const uint2& e = ent_s[s % 3][tid];
    const PairPts& q = pts_s[s & 1][tid];
    affine_t a, c, r;
    a.x = q.x0; a.y = q.y0;
    if (e.y != PAIR_NONE) { c.x = q.x1; c.y = q.y1; }
    fp_t den, num;
    const u32 kind = pair_kind(e, a, c, den, num);
    if (kind >= PAIR_ADD) {
      const fp_t dinv = s > 0 ? fp_mul(inv, q.pi) : inv;
      inv = fp_mul(inv, den);
      const fp_t lam = fp_mul(num, dinv);
      r.x = fp_sub(fp_sub(fp_sqr(lam), a.x), c.x);
      r.y = fp_sub(fp_mul(lam, fp_sub(a.x, r.x)), a.y);
    } else if (kind == PAIR_COPY0) r = a;
    else if (kind == PAIR_COPY1) r = c;
    else { r.x = fp_zero(); r.y = fp_zero(); }
    p.out[w.out(s)] = r;
  }
}

// Blocks of 64: 2 × 240 + 3 × 8 bytes of shared memory a thread (33 KiB a block) allow 6
// blocks, 12 warps, an SM; 128 registers.
extern "C" __global__ void __launch_bounds__(PAIR_BLOCK, 8) msm_pair_level(const PairLevel p) { pair_level(p); }
