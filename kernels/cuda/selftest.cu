// Small kernels for the device check: each layer against the CPU on its own, so a wrong
// MSM points at a field, a formula or the algorithm.

extern "C" __global__ void test_fr_mul(const fr_t* a, const fr_t* b, fr_t* out, u32 n) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fr_mul(a[i], b[i]);
}

extern "C" __global__ void test_fp_mul(const fp_t* a, const fp_t* b, fp_t* out, u32 n) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fp_mul(a[i], b[i]);
}

// out[i] = p[i] + q[i] through the XYZZ formulas: mixed add, then a full add of the result
// to itself (doubling), so out[2i] = p + q and out[2i+1] = 2(p + q) + q (madd after dbl).
extern "C" __global__ void test_g1_add(const affine_t* p, const affine_t* q, xyzz_t* out, u32 n) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  xyzz_t acc;
  xyzz_set_inf(acc);
  xyzz_add_affine_signed(acc, ld_affine(p + i), false);
  xyzz_add_affine_signed(acc, ld_affine(q + i), false);
  out[2 * i] = acc;
  xyzz_t d = acc;
  xyzz_add(d, acc);
  xyzz_add_affine_signed(d, ld_affine(q + i), false);
  out[2 * i + 1] = d;
}

// out[2i] = a[i]·b[i], out[2i+1] = a[i]^2 (Karatsuba product and complex squaring).
extern "C" __global__ void test_fp2_mul(const fp2_t* a, const fp2_t* b, fp2_t* out, u32 n) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[2 * i] = fp2_mul(a[i], b[i]);
  out[2 * i + 1] = fp2_sqr(a[i]);
}

// test_g1_add over G2: out[2i] = p + q, out[2i+1] = 2(p + q) + q.
extern "C" __global__ void test_g2_add(const g2_affine_t* p, const g2_affine_t* q, g2_xyzz_t* out, u32 n) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  g2_xyzz_t acc;
  xyzz_set_inf(acc);
  xyzz_add_affine_signed(acc, ld_affine(p + i), false);
  xyzz_add_affine_signed(acc, ld_affine(q + i), false);
  out[2 * i] = acc;
  g2_xyzz_t d = acc;
  xyzz_add(d, acc);
  xyzz_add_affine_signed(d, ld_affine(q + i), false);
  out[2 * i + 1] = d;
}
