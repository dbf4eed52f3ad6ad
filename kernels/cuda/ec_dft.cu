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

// p = k·p by GLV: k = k1 + k2·λ (the host splits it, `lagrange::glv_split`; k1 in the
// low 128 bits of k, k2 in the high) with λ = z² − 1 (128 bits) and λ·(x, y) = (β·x, y),
// so k·p = k1·p + k2·φ(p): 128 doublings shared by both halves, and at each bit one
// addition of p, φ(p) or p + φ(p) — against 255 doublings and ~128 additions for k whole.
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
extern "C" __global__ void __launch_bounds__(128) ec_dft_level(xyzz_t* x, const fr_t* tw, u32 log_n, u32 log_h,
                                                                const fp_t beta) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (1u << (log_n - 1))) return;
  const u32 h = 1u << log_h;
  const u32 i = t & (h - 1);
  const u32 a = ((t >> log_h) << (log_h + 1)) | i;
  xyzz_t u = x[a];
  xyzz_t d = x[a + h];
  const xyzz_t v = d;
  d.Y = f_neg(d.Y);
  xyzz_add(d, u);  // u − v
  xyzz_add(u, v);
  if (i != 0) xyzz_mul_glv(d, tw[i << (log_n - 1 - log_h)], beta);
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
