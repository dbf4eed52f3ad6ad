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
  const u32* sorted;     // the first level: msm_scatter's signed base indices; 0 after it
  const affine_t* in;    // the first level: the bases; after it the previous level's sums
  const u32* in_off;     // B + 1 bucket offsets of the input
  const u32* out_off;    // B + 1 bucket offsets of the output: ceil(n_b / 2) a bucket
  affine_t* out;
  u32 B, k;              // buckets; sums a thread
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

// Input i of the level: the base a signed index names (negated for a negative digit), or a
// previous level's sum.
__device__ __forceinline__ affine_t pair_load(const PairLevel& p, u32 i) {
  if (!p.sorted) return ld_affine_cg(p.in + i);
  const u32 e = p.sorted[i];
  affine_t a = ld_affine_cg(p.in + (e & 0x7fffffffu));
  if (e >> 31) a.y = fp_neg(a.y);
  return a;
}

// Output j's two inputs (bucket b holds j) and what they sum to; den for ADD and DBL.
__device__ __forceinline__ u32 pair_at(const PairLevel& p, u32 b, u32 j, affine_t& a, affine_t& c, fp_t& den) {
  const u32 i0 = p.in_off[b] + 2 * (j - p.out_off[b]);
  a = pair_load(p, i0);
  if (i0 + 1 >= p.in_off[b + 1]) return PAIR_COPY0;
  c = pair_load(p, i0 + 1);
  if (affine_is_inf(c)) return PAIR_COPY0;
  if (affine_is_inf(a)) return PAIR_COPY1;
  den = fp_sub(c.x, a.x);
  if (!fp_is_zero(den)) return PAIR_ADD;
  if (!fp_eq(a.y, c.y) || fp_is_zero(a.y)) return PAIR_INF;
  den = fp_add(a.y, a.y);
  return PAIR_DBL;
}

// Thread t writes outputs [t·k, t·k + k) of the level. The forward pass keeps the running
// product of the denominators and leaves π_j in output j's x and d_j in its y (0 for a
// trivial pair: no denominator); one inversion; the backward pass first steps the inverse
// (two products on values it has just loaded, nothing else live), then loads the points
// and forms the sum, so few values stay live across the field calls (each one a call: what
// is live across it is saved to local memory).
template <int UNUSED>
__device__ __forceinline__ void pair_level(const PairLevel& p) {
  const u32 total = p.out_off[p.B];
  const u32 j0 = (blockIdx.x * blockDim.x + threadIdx.x) * p.k;
  if (j0 >= total) return;
  const u32 j1 = min(j0 + p.k, total);
  u32 b = find_bucket(p.out_off, p.B, j0);  // out_off[b] <= j0 < out_off[b + 1]
  fp_t pi = fp_one();
  for (u32 j = j0; j < j1; j++) {
    while (p.out_off[b + 1] <= j) b++;
    affine_t a, c;
    fp_t den = fp_zero();
    if (pair_at(p, b, j, a, c, den) >= PAIR_ADD) pi = fp_mul(pi, den);
    else den = fp_zero();
    p.out[j].x = pi;
    p.out[j].y = den;
  }
  fp_t inv = fp_inv(pi);
  for (u32 j = j1; j-- > j0;) {
    while (p.out_off[b] > j) b--;
    const fp_t d = p.out[j].y;
    affine_t r;
    if (fp_is_zero(d)) {
      affine_t a, c;
      fp_t den;
      const u32 kind = pair_at(p, b, j, a, c, den);
      if (kind == PAIR_COPY0) r = a;
      else if (kind == PAIR_COPY1) r = c;
      else { r.x = fp_zero(); r.y = fp_zero(); }
    } else {
      // 1/d_j = inv·π_{j−1} (π_{j−1} still in output j − 1), then inv = π_{j−1}^{−1}.
      const fp_t dinv = j > j0 ? fp_mul(inv, p.out[j - 1].x) : inv;
      inv = fp_mul(inv, d);
      const u32 i0 = p.in_off[b] + 2 * (j - p.out_off[b]);
      const affine_t a = pair_load(p, i0), c = pair_load(p, i0 + 1);
      fp_t num;
      if (fp_eq(a.x, c.x)) { const fp_t x2 = fp_sqr(a.x); num = fp_add(fp_add(x2, x2), x2); }  // 3·x0²
      else num = fp_sub(c.y, a.y);
      const fp_t lam = fp_mul(num, dinv);
      r.x = fp_sub(fp_sub(fp_sqr(lam), a.x), c.x);
      r.y = fp_sub(fp_mul(lam, fp_sub(a.x, r.x)), a.y);
    }
    p.out[j] = r;
  }
}

// Builds by register cap (msm.rs `PairBuild`): 128 registers (4 blocks of 128 an SM, the
// default), 168 (3 blocks), 255 (2 blocks).
extern "C" __global__ void __launch_bounds__(128, 4) msm_pair_level(const PairLevel p) { pair_level<0>(p); }
extern "C" __global__ void __launch_bounds__(128, 3) msm_pair_level_r168(const PairLevel p) { pair_level<0>(p); }
extern "C" __global__ void __launch_bounds__(128, 2) msm_pair_level_r255(const PairLevel p) { pair_level<0>(p); }
