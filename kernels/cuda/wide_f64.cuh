// Layer 1: double-width products of 384-bit values (Fp's 12 limbs) on the FP64 pipe.
//
// Why: the G1 and G2 MSMs are bound by the FMA-heavy pipe, which runs every IMAD.WIDE of
// the integer products (docs/gpu.md), while the FP64 pipe next to it sits idle. On an H100
// or H200 that pipe does 64 double fused multiply-adds a clock an SM, as many as there are
// 32-bit IMADs; a double holds any integer below 2^53 exactly, so 48-bit limbs multiply
// there. bls12_381.cuh computes an Fp product's double-width part here (64 limb products,
// 256 FP64 instructions) and keeps only the Montgomery reduction (fe_redc_wide, 156
// IMAD.WIDE) on the integer pipe: 264 → 156 multiplies a product on the integer pipe.
//
// A value below 2^384 (12 u32 words, any value: reduced or not) is 8 limbs of 48 bits,
// x = Σ x_i·2^{48i}, each an exact integer in a double. Knows nothing of p.
//
// Splitting a limb product without an integer instruction. Column k of x·y collects the
// products x_i·y_j with i + j = k (< 2^96 each, at most 8 a column) in two accumulators:
//   h ∈ [2^100, 2^101), a multiple of 2^48: there a double's last bit is worth 2^48, so
//     h' = RZ(h + x_i·y_j) = h + floor(x_i·y_j / 2^48)·2^48 (fused multiply-add rounded
//     toward zero), and d = h' − h is exact: the product's high half, shifted;
//   l ∈ [2^52, 2^53), an integer: lo = x_i·y_j − d is exact (< 2^48, fused, any rounding),
//     and l + lo is exact while it stays below 2^53.
// Four FP64 instructions a limb product. With h = 2^100 and l = 2^52 at the start, a
// column's sums stay in range (Σ x_i·y_j < 8·2^96 = 2^99; Σ lo < 8·2^48 = 2^51) and their
// bits are the integers themselves: h = 2^100 + ΣH·2^48 has ΣH in its 52-bit mantissa
// field, l = 2^52 + ΣL has ΣL there. The integer pipe then only adds each column's ΣL, the
// previous column's ΣH and the carry (col_k = ΣL_k + ΣH_{k−1} + carry, limb k = col_k mod
// 2^48, carry = col_k >> 48) and packs the 16 limbs into 24 words.

#define F64_2_52 4503599627370496.0                  // 2^52
#define F64_2_100 1267650600228229401496703205376.0  // 2^100
#define F64_HI_2_52 0x43300000u                      // the high word of 2^52's bits

// The 8 limbs of a 12-word value. Limb 2q is w[3q] and the low half of w[3q+1]; limb 2q+1
// the high half of w[3q+1] and w[3q+2]. Each is written into the mantissa of 2^52 (exponent
// bits 0x433, a PRMT or LOP3 for the high word, a funnel shift for the low one) and 2^52
// subtracted: exact.
__device__ __forceinline__ void f64_limbs(double* d, const u32* w) {
#pragma unroll
  for (int q = 0; q < 4; q++) {
    const u32 w0 = w[3 * q], w1 = w[3 * q + 1], w2 = w[3 * q + 2];
    d[2 * q] = __dsub_rn(__hiloint2double((int)(F64_HI_2_52 | (w1 & 0xffffu)), (int)w0), F64_2_52);
    d[2 * q + 1] = __dsub_rn(
        __hiloint2double((int)__byte_perm(w2, F64_HI_2_52 >> 16, 0x5432), (int)__funnelshift_r(w1, w2, 16)),
        F64_2_52);
  }
}

// (h, l) += x·y as above.
__device__ __forceinline__ void f64_mac(double& h, double& l, double x, double y) {
  const double h2 = __fma_rz(x, y, h);
  l = __dadd_rn(l, __fma_rn(x, y, __dsub_rn(h, h2)));  // x·y − (h2 − h)
  h = h2;
}

// The 52-bit mantissa field: ΣL of an l accumulator, ΣH of an h accumulator.
__device__ __forceinline__ u64 f64_field(double v) {
  return (u64)__double_as_longlong(v) & 0x000fffffffffffffull;
}

// Column k into limb k: col = ΣL_k + ΣH_{k−1} + carry; limb = col mod 2^48 as (low word,
// high word whose low 16 bits count), carry = col >> 48. hprev becomes this column's ΣH.
__device__ __forceinline__ void f64_column(u32& lo, u32& hi, u64& hprev, u64& carry, double h, double l) {
  const u64 col = f64_field(l) + hprev + carry;
  hprev = f64_field(h);
  lo = (u32)col;
  hi = (u32)(col >> 32);
  carry = col >> 48;
}

// 16 limbs of 48 bits (lo word, high word's low 16 bits) into 24 words: the inverse of
// f64_limbs' split, one PRMT a word.
__device__ __forceinline__ void f64_pack(u32* t, const u32* lo, const u32* hi) {
#pragma unroll
  for (int q = 0; q < 8; q++) {
    t[3 * q] = lo[2 * q];
    t[3 * q + 1] = __byte_perm(hi[2 * q], lo[2 * q + 1], 0x5410);
    t[3 * q + 2] = __byte_perm(lo[2 * q + 1], hi[2 * q + 1], 0x5432);
  }
}

// t = a·b (24 words), a, b < 2^384: column by column (product scanning), 64 limb products.
__device__ __forceinline__ void fe_mul_wide_f64(u32* t, const u32* a, const u32* b) {
  double x[8], y[8];
  f64_limbs(x, a);
  f64_limbs(y, b);
  u32 lo[16], hi[16];
  u64 hprev = 0, carry = 0;
#pragma unroll
  for (int k = 0; k < 15; k++) {
    double h = F64_2_100, l = F64_2_52;
#pragma unroll
    for (int i = (k < 8 ? 0 : k - 7); i <= (k < 8 ? k : 7); i++) f64_mac(h, l, x[i], y[k - i]);
    f64_column(lo[k], hi[k], hprev, carry, h, l);
  }
  // The top limb: ΣH_14 + carry (a·b < 2^768, so below 2^48).
  const u64 top = hprev + carry;
  lo[15] = (u32)top;
  hi[15] = (u32)(top >> 32);
  f64_pack(t, lo, hi);
}

// t = a² (24 words): a² = Σ_i a_i²·2^{96i} + Σ_{i<j} (2a_i)·a_j·2^{48(i+j)}, 36 limb
// products instead of 64. 2a_i < 2^49 is exact; a column then holds at most 4 products
// below 2^97 and one square below 2^96 (< 2^100 together, ΣL < 5·2^48, ΣH < 5·2^49).
__device__ __forceinline__ void fe_sqr_wide_f64(u32* t, const u32* a) {
  double x[8], x2[8];
  f64_limbs(x, a);
#pragma unroll
  for (int i = 0; i < 8; i++) x2[i] = __dadd_rn(x[i], x[i]);
  u32 lo[16], hi[16];
  u64 hprev = 0, carry = 0;
#pragma unroll
  for (int k = 0; k < 15; k++) {
    double h = F64_2_100, l = F64_2_52;
#pragma unroll
    for (int i = (k < 8 ? 0 : k - 7); 2 * i < k; i++) f64_mac(h, l, x2[i], x[k - i]);
    if ((k & 1) == 0) f64_mac(h, l, x[k / 2], x[k / 2]);
    f64_column(lo[k], hi[k], hprev, carry, h, l);
  }
  const u64 top = hprev + carry;
  lo[15] = (u32)top;
  hi[15] = (u32)(top >> 32);
  f64_pack(t, lo, hi);
}
