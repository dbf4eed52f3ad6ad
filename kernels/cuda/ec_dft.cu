// Layer 3: the G1 transforms that put H's bases in Lagrange form (docs/gpu.md "H in
// Lagrange form"; CPU reference groth16/lagrange.rs), once per proving key at start:
//   LC_j = Σ_i ω^{−ij}·(g^{−i}/n)·H_i,   LD'_j = Σ_i ω^{−ij}·(1/(n·(g^n − 1)))·H_i.
// First every base times its own scalar (ec_dft_scale), then log n radix-2 levels of
// decimation in frequency (ec_dft_level), then back to affine in natural order
// (ec_dft_affine). Points are XYZZ in between; scalars and twiddles split for GLV by the
// host (xyzz_mul_glv).

// p = k·p, k canonical: double-and-add from the top set bit, so a small k costs only its
// bits (c_fold.cu's coefficients, most of them small; the transforms' full-width scalars
// take xyzz_mul_glv below).
__device__ __noinline__ void xyzz_mul_fr(xyzz_t& p, const fr_t& k) {
  const xyzz_t base = p;
  xyzz_set_inf(p);
  bool started = false;
  for (int limb = 7; limb >= 0; limb--) {
    const u32 w = k.v[limb];
    for (int bit = 31; bit >= 0; bit--) {
      if (started) xyzz_dbl(p);
      if ((w >> bit) & 1) {
        xyzz_add(p, base);
        started = true;
      }
    }
  }
}

// The joint sparse form (JSF; Solinas, "Low-weight binary representations for pairs of
// integers", 2001) of the GLV halves k1, k2 (k's low and high 128 bits): digits u1_l, u2_l
// in {−1, 0, 1}, l ≤ 128, with k1 = Σ u1_l·2^l and k2 = Σ u2_l·2^l, and on average half
// the columns (u1_l, u2_l) nonzero where the plain binary pair has three quarters. Each
// digit kind is a 160-bit mask (5 words, word 4 the top) whose bit l + 31 holds digit l,
// so a walk from the top reads bit 159 and shifts left by one.
struct jsf_t {
  u32 pos1[5], neg1[5], pos2[5], neg2[5];
};

// m = m >> 1 with `top` as the new bit 159.
__device__ __forceinline__ void mask_push(u32 (&m)[5], u32 top) {
#pragma unroll
  for (int w = 0; w < 4; w++) m[w] = (m[w] >> 1) | (m[w + 1] << 31);
  m[4] = (m[4] >> 1) | (top << 31);
}

// m = m << 1; returns the bit shifted out (bit 159).
__device__ __forceinline__ u32 mask_pop(u32 (&m)[5]) {
  const u32 top = m[4] >> 31;
#pragma unroll
  for (int w = 4; w > 0; w--) m[w] = (m[w] << 1) | (m[w - 1] >> 31);
  m[0] <<= 1;
  return top;
}

// Solinas' algorithm (as in Hankerson, Menezes and Vanstone's Guide to ECC), one column a
// step from the bottom, k1 and k2 shifted right as it goes (only l_i = (d_i + k_i) mod 8
// is read; d_i is the carry the digits so far owe).
__device__ __forceinline__ jsf_t jsf_of(const fr_t& k) {
  u32 a[4], b[4];
#pragma unroll
  for (int w = 0; w < 4; w++) {
    a[w] = k.v[w];
    b[w] = k.v[4 + w];
  }
  jsf_t j = {};
  u32 d1 = 0, d2 = 0;
  for (int l = 0; l <= 128; l++) {
    const u32 l1 = (a[0] + d1) & 7, l2 = (b[0] + d2) & 7;
    int u1 = 0, u2 = 0;
    if (l1 & 1) {
      u1 = (l1 & 3) == 1 ? 1 : -1;  // l1 mod 4 = 1: +1, 3: −1
      if ((l1 == 3 || l1 == 5) && (l2 & 3) == 2) u1 = -u1;
    }
    if (l2 & 1) {
      u2 = (l2 & 3) == 1 ? 1 : -1;
      if ((l2 == 3 || l2 == 5) && (l1 & 3) == 2) u2 = -u2;
    }
    // 2·d = 1 + u: the carry of this column flips.
    if (2 * (int)d1 == 1 + u1) d1 = 1 - d1;
    if (2 * (int)d2 == 1 + u2) d2 = 1 - d2;
#pragma unroll
    for (int w = 0; w < 3; w++) {
      a[w] = (a[w] >> 1) | (a[w + 1] << 31);
      b[w] = (b[w] >> 1) | (b[w + 1] << 31);
    }
    a[3] >>= 1;
    b[3] >>= 1;
    mask_push(j.pos1, u1 == 1);
    mask_push(j.neg1, u1 == -1);
    mask_push(j.pos2, u2 == 1);
    mask_push(j.neg2, u2 == -1);
  }
  return j;
}

// p = k·p by GLV: k = k1 + k2·λ (the host splits it, `lagrange::glv_split`; k1 in the
// low 128 bits of k, k2 in the high) with λ = z² − 1 (128 bits) and λ·(x, y) = (β·x, y),
// so k·p = k1·p + k2·φ(p): 128 doublings shared by both halves, and at each bit one
// addition of p, φ(p) or p + φ(p) — against 255 doublings and ~128 additions for k whole.
// Where a warp's lanes hold different scalars some lane adds at nearly every bit, so the
// warp makes ~128 additions; a warp-uniform scalar takes xyzz_mul_glv_jsf below.
__device__ __noinline__ void xyzz_mul_glv(xyzz_t& p, const fr_t& k, const fp_t& beta) {
  const xyzz_t a = p;
  xyzz_t b = p;
  b.X = fp_mul(b.X, beta);  // x = X/ZZ, so β·x = β·X/ZZ
  xyzz_t ab = a;
  xyzz_add(ab, b);
  xyzz_set_inf(p);
  bool started = false;
  for (int bit = 127; bit >= 0; bit--) {
    const u32 w = bit >> 5, s = bit & 31;
    const u32 b1 = (k.v[w] >> s) & 1, b2 = (k.v[4 + w] >> s) & 1;
    if (started) xyzz_dbl(p);
    if (b1 | b2) {
      xyzz_add(p, b1 & b2 ? ab : (b1 ? a : b));
      started = true;
    }
  }
}

// The same product for a scalar every lane of the warp shares (ec_dft_level's uniform
// levels), over the joint sparse form of (k1, k2): its zero columns (~64 of 129) are
// skipped by the whole warp, a column (±1, 0), (0, ±1) or (±1, ±1) of one sign adds ±p,
// ±φ(p) or ±(p + φ(p)), and one of opposite signs (~12 of 129) adds ±p and then ∓φ(p): ~77
// additions where the binary pair makes ~96 (and a warp of different scalars 128). The
// points are picked by name as in xyzz_mul_glv, not from an indexed table (a table in the
// stack frame halved the windowed products' speed: docs/perf.md).
__device__ __noinline__ void xyzz_mul_glv_jsf(xyzz_t& p, const fr_t& k, const fp_t& beta) {
  jsf_t j = jsf_of(k);
  const xyzz_t a = p;
  xyzz_t b = p;
  b.X = fp_mul(b.X, beta);
  xyzz_t ab = a;
  xyzz_add(ab, b);
  xyzz_set_inf(p);
  bool started = false;
  for (int l = 128; l >= 0; l--) {
    const u32 p1 = mask_pop(j.pos1), n1 = mask_pop(j.neg1), p2 = mask_pop(j.pos2), n2 = mask_pop(j.neg2);
    if (started) xyzz_dbl(p);
    const u32 u1 = p1 | n1, u2 = p2 | n2;
    if (u1 | u2) {
      const bool both = u1 && u2, same = both && p1 == p2;
      xyzz_t q = same ? ab : (u1 ? a : b);
      if (u1 ? n1 : n2) q.Y = f_neg(q.Y);
      xyzz_add(p, q);
      if (both && !same) {
        q = b;
        if (n2) q.Y = f_neg(q.Y);
        xyzz_add(p, q);
      }
      started = true;
    }
  }
}

// out[i] = s[i]·in[i] (affine in, XYZZ out; infinity stays infinity).
extern "C" __global__ void __launch_bounds__(128) ec_dft_scale(xyzz_t* out, const affine_t* in, const fr_t* s, u32 n,
                                                                const fp_t beta) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const affine_t a = in[i];
  xyzz_t p;
  if (affine_is_inf(a)) {
    xyzz_set_inf(p);
  } else {
    p.X = a.x;
    p.Y = a.y;
    p.ZZ = f_one<fp_t>();
    p.ZZZ = f_one<fp_t>();
    xyzz_mul_glv(p, s[i], beta);
  }
  out[i] = p;
}

// One DIF level over blocks of 2h = 2^{log_h + 1}: (u, v) → (u + v, (u − v)·w^{i·n/(2h)}),
// i the butterfly's place in its block, tw[k] = w^k for k < n/2. A thread a butterfly.
// With at least 32 blocks the 32 lanes of a warp take one i in 32 blocks, so they share
// the twiddle, and its product skips the zero columns of the twiddle's joint sparse form
// (xyzz_mul_glv_jsf: ~77 additions a product where a warp of different twiddles makes
// 128); with fewer (the first five levels) consecutive threads take consecutive i of one
// block. The host's progress lines weigh the levels by the same threshold (lagrange.rs
// WARP_UNIFORM_LEVEL): a change here changes it there.
extern "C" __global__ void __launch_bounds__(128) ec_dft_level(xyzz_t* x, const fr_t* tw, u32 log_n, u32 log_h,
                                                                const fp_t beta) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (1u << (log_n - 1))) return;
  const u32 h = 1u << log_h;
  const u32 log_blocks = log_n - 1 - log_h;
  u32 i, blk;
  if (log_blocks >= 5) {
    // Warp w: i = w / (blocks/32), blocks 32·(w mod (blocks/32)) + lane.
    const u32 w = t >> 5, per_i = log_blocks - 5;
    i = w >> per_i;
    blk = ((w & ((1u << per_i) - 1)) << 5) | (t & 31);
  } else {
    i = t & (h - 1);
    blk = t >> log_h;
  }
  const u32 a = (blk << (log_h + 1)) | i;
  xyzz_t u = x[a];
  xyzz_t d = x[a + h];
  const xyzz_t v = d;
  d.Y = f_neg(d.Y);
  xyzz_add(d, u);  // u − v
  xyzz_add(u, v);
  if (i != 0) {
    const fr_t& w = tw[i << (log_n - 1 - log_h)];
    if (log_blocks >= 5)
      xyzz_mul_glv_jsf(d, w, beta);
    else
      xyzz_mul_glv(d, w, beta);
  }
  x[a] = u;
  x[a + h] = d;
}

// p as an affine point (x = X/ZZ, y = Y/ZZZ; one inversion of ZZ·ZZZ), Montgomery,
// infinity all zeros, as the MSM kernels read bases.
__device__ __forceinline__ affine_t xyzz_to_affine(const xyzz_t& p) {
  affine_t a;
  if (xyzz_is_inf(p)) {
    a.x = fp_zero();
    a.y = fp_zero();
  } else {
    const fp_t t = fp_inv(fp_mul(p.ZZ, p.ZZZ));
    a.x = fp_mul(p.X, fp_mul(p.ZZZ, t));
    a.y = fp_mul(p.Y, fp_mul(p.ZZ, t));
  }
  return a;
}

// out[j] = x[rev(j)] as an affine point: the DIF levels' bit-reversed result in natural
// order.
extern "C" __global__ void __launch_bounds__(128) ec_dft_affine(affine_t* out, const xyzz_t* x, u32 log_n) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= (1u << log_n)) return;
  out[j] = xyzz_to_affine(x[__brev(j) >> (32 - log_n)]);
}
