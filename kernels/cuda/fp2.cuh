// Layer 1: Fp2 = Fp[u]/(u^2 + 1), the field of G2's coordinates. c0 + c1·u is two Fp in
// Montgomery form, c0 first: blst's `blst_fp2` (blstrs `Fp2`), 96 bytes, so G2 points upload
// as they lie. Built on fp_mul/fp_add/fp_sub only (bls12_381.cuh): no new Fp code.

struct fp2_t { fp_t c0, c1; };

// Karatsuba, u^2 = −1: (a0 + a1·u)(b0 + b1·u) = (a0·b0 − a1·b1) + ((a0 + a1)(b0 + b1) −
// a0·b0 − a1·b1)·u: 3 Fp products instead of 4. Called, not inlined, like fp_mul: one copy
// of the three calls and five additions instead of one per use keeps the G2 point formulas
// (~11 of these each) small enough for the instruction cache.
__device__ __noinline__ fp2_t fp2_mul(fp2_t a, fp2_t b) {
  const fp_t t0 = fp_mul(a.c0, b.c0);
  const fp_t t1 = fp_mul(a.c1, b.c1);
  const fp_t t2 = fp_mul(fp_add(a.c0, a.c1), fp_add(b.c0, b.c1));
  fp2_t r;
  r.c0 = fp_sub(t0, t1);
  r.c1 = fp_sub(fp_sub(t2, t0), t1);
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
// Y3 over Fp2: two products and a subtraction. The double-width version (fp2_mul with two
// reductions for three, and a·b − c·d with two for twelve) made B_G2 slower on the H200
// (107 → 146 ms a 32 GiB partition, docs/perf.md): its called products need more
// registers, and the 255-register G2 kernels spilled more around every call.
__device__ __forceinline__ fp2_t f_mul_sub_mul(const fp2_t& a, const fp2_t& b, const fp2_t& c, const fp2_t& d) {
  return fp2_sub(fp2_mul(a, b), fp2_mul(c, d));
}
__device__ __forceinline__ fp2_t f_add(const fp2_t& a, const fp2_t& b) { return fp2_add(a, b); }
__device__ __forceinline__ fp2_t f_sub(const fp2_t& a, const fp2_t& b) { return fp2_sub(a, b); }
__device__ __forceinline__ fp2_t f_neg(const fp2_t& a) { return fp2_neg(a); }
__device__ __forceinline__ bool f_is_zero(const fp2_t& a) { return fp2_is_zero(a); }
template <> __device__ __forceinline__ fp2_t f_one<fp2_t>() { return fp2_one(); }
template <> __device__ __forceinline__ fp2_t f_zero<fp2_t>() { return fp2_zero(); }
