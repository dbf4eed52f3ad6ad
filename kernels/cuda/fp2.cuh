// Layer 1: Fp2 = Fp[u]/(u^2 + 1), the field of G2's coordinates. c0 + c1·u is two Fp in
// Montgomery form, c0 first: blst's `blst_fp2` (blstrs `Fp2`), 96 bytes, so G2 points upload
// as they lie. Built on the Fp layer (bls12_381.cuh: fp_mul, fp_mul_wide, fp_redc) and the
// limb additions of field.cuh.

struct fp2_t { fp_t c0, c1; };

// Karatsuba, u^2 = −1: (a0 + a1·u)(b0 + b1·u) = (a0·b0 − a1·b1) + ((a0 + a1)(b0 + b1) −
// a0·b0 − a1·b1)·u: 3 Fp products instead of 4, and 2 reductions instead of 3. The products
// stay double-width (fp_mul_wide): t0 = a0·b0, t1 = a1·b1, s = (a0 + a1)(b0 + b1) with the
// sums not reduced (< 2p, so s < 4p² and s − t0 − t1 = a0·b1 + a1·b0 exactly, < 2p² < p·R);
// c0 = (t0 − t1)·R^{-1} takes p·R where the difference borrows (fe_sub_wide). 3·108 + 2·156
// = 636 multiplies against 3·264 = 792. Each piece is a call (fp_mul_wide, fp_redc), so the
// G2 kernels (255 registers) see callees no larger than fp_mul; the same steps inlined here
// spilled more around every call and made B_G2 slower (107 → 146 ms, docs/perf.md). In this
// order few values are live across the calls: t0 + t1 in one 24-limb value, c0 before s.
// Called, not inlined, like fp_mul: one copy instead of one per use keeps the G2 point
// formulas (~11 of these each) small enough for the instruction cache.
__device__ __noinline__ fp2_t fp2_mul(fp2_t a, fp2_t b) {
  fp_t sa, sb;
  add_limbs<12>(sa.v, a.c0.v, a.c1.v);
  add_limbs<12>(sb.v, b.c0.v, b.c1.v);
  fpw_t t0 = fp_mul_wide(a.c0, b.c0);
  const fpw_t t1 = fp_mul_wide(a.c1, b.c1);
  fpw_t d;
  fe_sub_wide<FpP>(d.v, t0.v, t1.v);
  add_limbs<24>(t0.v, t0.v, t1.v);
  fp2_t r;
  r.c0 = fp_redc(d);
  fpw_t s = fp_mul_wide(sa, sb);
  sub_limbs<24>(s.v, s.v, t0.v);
  r.c1 = fp_redc(s);
  return r;
}

// Complex squaring: (a0 + a1·u)^2 = (a0 + a1)(a0 − a1) + 2·a0·a1·u: 2 Fp products.
__device__ __noinline__ fp2_t fp2_sqr(fp2_t a) {
  fp2_t r;
  r.c0 = fp_mul(fp_add(a.c0, a.c1), fp_sub(a.c0, a.c1));
  r.c1 = fp_mul(fp_add(a.c0, a.c0), a.c1);
  return r;
}

__device__ __forceinline__ fp2_t fp2_add(const fp2_t& a, const fp2_t& b) {
  fp2_t r; r.c0 = fp_add(a.c0, b.c0); r.c1 = fp_add(a.c1, b.c1); return r;
}
__device__ __forceinline__ fp2_t fp2_sub(const fp2_t& a, const fp2_t& b) {
  fp2_t r; r.c0 = fp_sub(a.c0, b.c0); r.c1 = fp_sub(a.c1, b.c1); return r;
}
__device__ __forceinline__ fp2_t fp2_neg(const fp2_t& a) {
  fp2_t r; r.c0 = fp_neg(a.c0); r.c1 = fp_neg(a.c1); return r;
}
__device__ __forceinline__ bool fp2_is_zero(const fp2_t& a) {
  return fp_is_zero(a.c0) && fp_is_zero(a.c1);
}
__device__ __forceinline__ fp2_t fp2_one() { fp2_t r; r.c0 = fp_one(); r.c1 = fp_zero(); return r; }
__device__ __forceinline__ fp2_t fp2_zero() { fp2_t r; r.c0 = fp_zero(); r.c1 = fp_zero(); return r; }

// The field interface of ec.cuh (see the Fp one in bls12_381.cuh).
__device__ __forceinline__ fp2_t f_mul(const fp2_t& a, const fp2_t& b) { return fp2_mul(a, b); }
__device__ __forceinline__ fp2_t f_sqr(const fp2_t& a) { return fp2_sqr(a); }
// Y3 over Fp2: two fp2_mul and a subtraction (4 reductions). One a·b − c·d with 2, its six
// double-width products through the same calls, spilled 116 bytes in the 255-register G2
// kernels and ran B_G2 in 105 ms against 99 (32 GiB partition, H200, docs/perf.md).
__device__ __forceinline__ fp2_t f_mul_sub_mul(const fp2_t& a, const fp2_t& b, const fp2_t& c, const fp2_t& d) {
  return fp2_sub(fp2_mul(a, b), fp2_mul(c, d));
}
__device__ __forceinline__ fp2_t f_add(const fp2_t& a, const fp2_t& b) { return fp2_add(a, b); }
__device__ __forceinline__ fp2_t f_sub(const fp2_t& a, const fp2_t& b) { return fp2_sub(a, b); }
__device__ __forceinline__ fp2_t f_neg(const fp2_t& a) { return fp2_neg(a); }
__device__ __forceinline__ bool f_is_zero(const fp2_t& a) { return fp2_is_zero(a); }
template <> __device__ __forceinline__ fp2_t f_one<fp2_t>() { return fp2_one(); }
template <> __device__ __forceinline__ fp2_t f_zero<fp2_t>() { return fp2_zero(); }

// The split accumulator's interface (bls12_381.cuh f_mul_lz): over Fp2 the reduced
// operations, whose results below p meet the lazy bounds (below 2p; Q − X3 below 4p).
__device__ __forceinline__ fp2_t f_mul_lz(const fp2_t& a, const fp2_t& b) { return fp2_mul(a, b); }
__device__ __forceinline__ fp2_t f_sqr_lz(const fp2_t& a) { return fp2_sqr(a); }
__device__ __forceinline__ fp2_t f_mul_sub_mul_lz(const fp2_t& a, const fp2_t& b, const fp2_t& c, const fp2_t& d) {
  return f_mul_sub_mul(a, b, c, d);
}
__device__ __forceinline__ fp2_t f_add_lz(const fp2_t& a, const fp2_t& b) { return fp2_add(a, b); }
__device__ __forceinline__ fp2_t f_sub_lz(const fp2_t& a, const fp2_t& b) { return fp2_sub(a, b); }
__device__ __forceinline__ fp2_t f_sub_lz_4p(const fp2_t& a, const fp2_t& b) { return fp2_sub(a, b); }
__device__ __forceinline__ bool f_is_zero_lz(const fp2_t& a) { return fp2_is_zero(a); }
__device__ __forceinline__ fp2_t f_canon(const fp2_t& a) { return a; }
