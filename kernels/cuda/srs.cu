// Synthetic SRS for speed runs: point i = A[j mod 2^a_bits] + B[j >> a_bits], j = first + i, from two
// small tables of valid affine points made on the host. Each thread makes S consecutive
// points with one shared inversion (Montgomery's trick): the prefix products of
// dx_k = xB − xA are parked in the output's x slots, one inversion, then walked back.
// λ = (yB − yA)/dx, x3 = λ^2 − xA − xB, y3 = λ(xA − x3) − yA. Distinct x is assumed (the
// tables are random multiples of the generator).
extern "C" __global__ void srs_synthetic(const affine_t* A, u32 a_bits, const affine_t* Bt,
                                         affine_t* out, u32 n, u32 S, u32 first) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 lo = t * S;
  if (lo >= n) return;
  const u32 hi = min(n, lo + S);
  const u32 amask = (1u << a_bits) - 1;
  fp_t acc = fp_one();
  for (u32 i = lo; i < hi; i++) {
    out[i].x = acc;
    const u32 j = first + i;
    const affine_t a = ld_affine(A + (j & amask)), b = ld_affine(Bt + (j >> a_bits));
    acc = fp_mul(acc, fp_sub(b.x, a.x));
  }
  fp_t inv = fp_inv(acc);
  for (u32 i = hi; i-- > lo;) {
    const u32 j = first + i;
    const affine_t a = ld_affine(A + (j & amask)), b = ld_affine(Bt + (j >> a_bits));
    const fp_t dx = fp_sub(b.x, a.x);
    const fp_t dx_inv = fp_mul(inv, out[i].x);
    inv = fp_mul(inv, dx);
    const fp_t lam = fp_mul(fp_sub(b.y, a.y), dx_inv);
    const fp_t x3 = fp_sub(fp_sub(fp_sqr(lam), a.x), b.x);
    out[i].y = fp_sub(fp_mul(lam, fp_sub(a.x, x3)), a.y);
    out[i].x = x3;
  }
}
