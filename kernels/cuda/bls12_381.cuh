// Layer 1 parameters: the two BLS12-381 fields. Constants checked against blstrs by the
// CPU tests (`kernels/tests/cuda_compile.rs`) and on the device by `cuzk-gpu-check`.

// Fp: p = 0x1a0111ea...ffffaaab (381 bits), 12 limbs.
struct FpP {
  static const int N = 12;
  static const u32 INV = 0xfffcfffdu;
  static const bool LOW_LIMBS_1_MINUS_1 = false;  // see FrP
  static __device__ __forceinline__ u32 inv() { return INV; }
  static __device__ __forceinline__ u32 mod(int i) {
    switch (i) {
      case 0: return 0xffffaaabu; case 1: return 0xb9feffffu; case 2: return 0xb153ffffu;
      case 3: return 0x1eabfffeu; case 4: return 0xf6b0f624u; case 5: return 0x6730d2a0u;
      case 6: return 0xf38512bfu; case 7: return 0x64774b84u; case 8: return 0x434bacd7u;
      case 9: return 0x4b1ba7b6u; case 10: return 0x397fe69au; default: return 0x1a0111eau;
    }
  }
  // R = 2^384 mod p.
  static __device__ __forceinline__ u32 one(int i) {
    switch (i) {
      case 0: return 0x0002fffdu; case 1: return 0x76090000u; case 2: return 0xc40c0002u;
      case 3: return 0xebf4000bu; case 4: return 0x53c758bau; case 5: return 0x5f489857u;
      case 6: return 0x70525745u; case 7: return 0x77ce5853u; case 8: return 0xa256ec6du;
      case 9: return 0x5c071a97u; case 10: return 0xfa80e493u; default: return 0x15f65ec3u;
    }
  }
};

// 2p as a modulus, for the sums and differences of lazily reduced Fp values (below 2p, the
// madd's: fp_add_lz, fp_sub_lz). 2p < 2^382, so a sum of two such values (< 4p < 2^383)
// never carries out of 12 limbs, as fe_add needs.
struct FpTwiceP {
  static const int N = 12;
  // Limb i of 2p: p's limb shifted up one bit, with the top bit of the limb below.
  static __device__ __forceinline__ u32 mod(int i) {
    return (FpP::mod(i) << 1) | (i > 0 ? FpP::mod(i - 1) >> 31 : 0u);
  }
};

// Fr's -r^{-1} mod 2^32 is 0xffffffff, so m = -t_0: seen as a constant, ptxas splits every
// m·r_j of a generic row into two instructions (IMAD.X + IMAD.HI.U32.X, Fr product 255
// instead of 201 SASS instructions). Read from constant memory on the device, the value is
// opaque to it. fe_mul's rows no longer read it (LOW_LIMBS_1_MINUS_1); fe_redc_wide does.
#ifdef __CUDA_ARCH__
__constant__ u32 fr_inv_c = 0xffffffffu;
#endif

// Fr: r = 0x73eda753...00000001 (255 bits), 8 limbs.
struct FrP {
  static const int N = 8;
  static const u32 INV = 0xffffffffu;
  // r ≡ 2^64 − 2^32 + 1 (mod 2^64): limbs 1 and 2^32 − 1, which fe_mul's rows add
  // instead of multiplying.
  static const bool LOW_LIMBS_1_MINUS_1 = true;
#ifdef __CUDA_ARCH__
  static __device__ __forceinline__ u32 inv() { return fr_inv_c; }
#else
  static __device__ __forceinline__ u32 inv() { return INV; }
#endif
  static __device__ __forceinline__ u32 mod(int i) {
    switch (i) {
      case 0: return 0x00000001u; case 1: return 0xffffffffu; case 2: return 0xfffe5bfeu;
      case 3: return 0x53bda402u; case 4: return 0x09a1d805u; case 5: return 0x3339d808u;
      case 6: return 0x299d7d48u; default: return 0x73eda753u;
    }
  }
  // R = 2^256 mod r.
  static __device__ __forceinline__ u32 one(int i) {
    switch (i) {
      case 0: return 0xfffffffeu; case 1: return 0x00000001u; case 2: return 0x00034802u;
      case 3: return 0x5884b7fau; case 4: return 0xecbc4ff5u; case 5: return 0x998c4fefu;
      case 6: return 0xacc5056fu; default: return 0x1824b159u;
    }
  }
};

struct fr_t { u32 v[8]; };
struct fp_t { u32 v[12]; };

// Multiplications are called, not inlined: one copy of the ~190 (Fr) / ~510 (Fp product) /
// ~390 (Fp square) instructions instead of one per use keeps the hot loops inside the
// instruction cache (inlined, the MSM's bucket accumulation ran ~6x under the multiply-add
// ceiling, when a product was ~1100 instructions).
// Fp: the G1 MSM is bound by the FMA-heavy pipe (IMAD.WIDE), so the product is Karatsuba
// + SOS reduction (264 multiplies against CIOS's 300; more additions, which go to the ALU
// pipe) and squares have their own function (234 multiplies): MSM 2^27 − 1 864.6 → 824.1 ms
// on the H200 (docs/gpu.md). Fr keeps CIOS (fe_mul): Karatsuba + SOS over Fr (fe_mul_kara<FrP>,
// 4-limb halves) made NTT 2^27 51.40 → 52.92 ms: 112 multiplies instead of 128, but the
// FMA-pipe count barely moves (112 IMAD.WIDE + 41 IMAD → 102 + 49) while 67 IADD3 and 21 SEL
// are added (193 → 279 instructions). The NTT squares nothing (fe_sqr<FrP> unused). With r's
// low limbs added (FrP), the product is 112 IMAD.WIDE, no IMAD, 93 IADD3 (216 instructions).
__device__ __noinline__ fr_t fr_mul(fr_t a, fr_t b) { fr_t r; fe_mul<FrP>(r.v, a.v, b.v); return r; }
// Two independent products in one call, their rows alternating (fe_mul2): where a caller
// has two at hand (the NTT's butterflies), the scheduler gets a second carry chain to issue
// while the first waits.
struct fr2_t { fr_t a, b; };

// An Fr from global memory by two read-only 16-byte loads (the NTT's data and tables:
// memory no thread of the kernel writes).
__device__ __forceinline__ fr_t ld_fr(const fr_t* p) {
  const uint4* q = (const uint4*)p;
  uint4 a = __ldg(q), b = __ldg(q + 1);
  fr_t r;
  r.v[0] = a.x; r.v[1] = a.y; r.v[2] = a.z; r.v[3] = a.w;
  r.v[4] = b.x; r.v[5] = b.y; r.v[6] = b.z; r.v[7] = b.w;
  return r;
}

// The same by plain loads, for kernels that write where they read (in place).
__device__ __forceinline__ fr_t ld_fr_rw(const fr_t* p) {
  const uint4* q = (const uint4*)p;
  uint4 a = q[0], b = q[1];
  fr_t r;
  r.v[0] = a.x; r.v[1] = a.y; r.v[2] = a.z; r.v[3] = a.w;
  r.v[4] = b.x; r.v[5] = b.y; r.v[6] = b.z; r.v[7] = b.w;
  return r;
}

// An Fr to global memory by two 16-byte stores.
__device__ __forceinline__ void st_fr(fr_t* p, const fr_t& x) {
  uint4* q = (uint4*)p;
  q[0] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
  q[1] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
}
__device__ __noinline__ fr2_t fr_mul2(fr_t a0, fr_t b0, fr_t a1, fr_t b1) {
  fr2_t r;
  fe_mul2<FrP>(r.a.v, a0.v, b0.v, r.b.v, a1.v, b1.v);
  return r;
}
__device__ __forceinline__ fr_t fr_add(const fr_t& a, const fr_t& b) { fr_t r; fe_add<FrP>(r.v, a.v, b.v); return r; }
__device__ __forceinline__ fr_t fr_sub(const fr_t& a, const fr_t& b) { fr_t r; fe_sub<FrP>(r.v, a.v, b.v); return r; }
// a − b + r in (0, 2r), unreduced: only as the second operand of fr_mul / fr_mul2 (fe_sub_lazy).
__device__ __forceinline__ fr_t fr_sub_lazy(const fr_t& a, const fr_t& b) { fr_t r; fe_sub_lazy<FrP>(r.v, a.v, b.v); return r; }
__device__ __noinline__ fp_t fp_mul(fp_t a, fp_t b) { fp_t r; fe_mul_kara<FpP>(r.v, a.v, b.v); return r; }
__device__ __noinline__ fp_t fp_sqr(fp_t a) { fp_t r; fe_sqr<FpP>(r.v, a.v); return r; }
// (a·b − c·d)·R^{-1}: two double-width products and one reduction (fe_mul_sub_mul), 372
// multiplies where fp_mul twice and fp_sub take 528: the Y3 of every point formula.
__device__ __noinline__ fp_t fp_mul_sub_mul(fp_t a, fp_t b, fp_t c, fp_t d) {
  fp_t r;
  fe_mul_sub_mul<FpP>(r.v, a.v, b.v, c.v, d.v);
  return r;
}
// Lazily reduced Fp (the bucket accumulation's madd, xyzz_madd_sh): values below 2p rather
// than below p. A Montgomery product of two such values is below 2p without its final
// conditional subtraction: a·b < 4p² < p·R (4p < R = 2^384), so fe_redc_wide's t ≤ p plus
// its high half < p stays below 2p; the same for the square and for a·b − c·d (+ p·R where
// it borrows, below p·R). Sums and differences reduce modulo 2p (FpTwiceP) and stay below
// 2p; a value is ≡ 0 when it is 0 or p. Each product so drops the 12-limb subtraction and
// 12 selects at the end of its dependency chain. Values leave the madd reduced below p
// (fp_canon, xyzz_sh_get), so everything else sees reduced values only.
__device__ __noinline__ fp_t fp_mul_lz(fp_t a, fp_t b) { fp_t r; fe_mul_kara<FpP, false>(r.v, a.v, b.v); return r; }
__device__ __noinline__ fp_t fp_sqr_lz(fp_t a) { fp_t r; fe_sqr<FpP, false>(r.v, a.v); return r; }
__device__ __noinline__ fp_t fp_mul_sub_mul_lz(fp_t a, fp_t b, fp_t c, fp_t d) {
  fp_t r;
  fe_mul_sub_mul<FpP, false>(r.v, a.v, b.v, c.v, d.v);
  return r;
}
__device__ __forceinline__ fp_t fp_add_lz(const fp_t& a, const fp_t& b) { fp_t r; fe_add<FpTwiceP>(r.v, a.v, b.v); return r; }
__device__ __forceinline__ fp_t fp_sub_lz(const fp_t& a, const fp_t& b) { fp_t r; fe_sub<FpTwiceP>(r.v, a.v, b.v); return r; }
// a − b + 2p for a, b < 2p: in (0, 4p), with no borrow mask or select (fe_sub_lazy). Only
// for the madd's Q − X3, which goes into Y3 = R·(Q − X3) − Y·PPP alone: R·(Q − X3) < 2p·4p
// = 8p² < p·R (8p < R = 2^384), so fp_mul_sub_mul_lz's difference stays below p·R and its
// result below 2p as with operands below 2p.
__device__ __forceinline__ fp_t fp_sub_lz_4p(const fp_t& a, const fp_t& b) { fp_t r; fe_sub_lazy<FpTwiceP>(r.v, a.v, b.v); return r; }
__device__ __forceinline__ bool fp_is_zero_lz(const fp_t& a) {
  u32 z = 0, q = 0;
#pragma unroll
  for (int i = 0; i < FpP::N; i++) { z |= a.v[i]; q |= a.v[i] ^ FpP::mod(i); }
  return z == 0 || q == 0;
}
// x mod p for x < 2p.
__device__ __forceinline__ fp_t fp_canon(const fp_t& a) { fp_t r; u32 cy = 0; sub_p_once<FpP>(r.v, a.v, cy); return r; }

// The field interface of the split accumulator's madd (ec.cuh xyzz_madd_sh): over Fp the
// lazily reduced operations above; over Fp2 (fp2.cuh) the reduced ones, which keep the same
// bounds (below p is below 2p). Thin inline forwards, as the f_ interface below.
__device__ __forceinline__ fp_t f_mul_lz(const fp_t& a, const fp_t& b) { return fp_mul_lz(a, b); }
__device__ __forceinline__ fp_t f_sqr_lz(const fp_t& a) { return fp_sqr_lz(a); }
__device__ __forceinline__ fp_t f_mul_sub_mul_lz(const fp_t& a, const fp_t& b, const fp_t& c, const fp_t& d) {
  return fp_mul_sub_mul_lz(a, b, c, d);
}
__device__ __forceinline__ fp_t f_add_lz(const fp_t& a, const fp_t& b) { return fp_add_lz(a, b); }
__device__ __forceinline__ fp_t f_sub_lz(const fp_t& a, const fp_t& b) { return fp_sub_lz(a, b); }
__device__ __forceinline__ fp_t f_sub_lz_4p(const fp_t& a, const fp_t& b) { return fp_sub_lz_4p(a, b); }
__device__ __forceinline__ bool f_is_zero_lz(const fp_t& a) { return fp_is_zero_lz(a); }
__device__ __forceinline__ fp_t f_canon(const fp_t& a) { return fp_canon(a); }

// The two halves of fp_mul as calls of their own, for Fp2 (fp2.cuh), whose products keep
// their Karatsuba terms double-width and reduce two of three: a·b (2N limbs, any 12-limb
// a, b, e.g. sums of two reduced elements) and T·R^{-1} for T < p·R.
struct fpw_t { u32 v[24]; };
__device__ __noinline__ fpw_t fp_mul_wide(fp_t a, fp_t b) { fpw_t r; fe_mul_kara_wide<FpP>(r.v, a.v, b.v); return r; }
__device__ __noinline__ fp_t fp_redc(fpw_t t) { fp_t r; fe_redc_wide<FpP>(r.v, t.v); return r; }
__device__ __forceinline__ fp_t fp_add(const fp_t& a, const fp_t& b) { fp_t r; fe_add<FpP>(r.v, a.v, b.v); return r; }
__device__ __forceinline__ fp_t fp_sub(const fp_t& a, const fp_t& b) { fp_t r; fe_sub<FpP>(r.v, a.v, b.v); return r; }
__device__ __forceinline__ fp_t fp_neg(const fp_t& a) { fp_t r; fe_neg<FpP>(r.v, a.v); return r; }
__device__ __forceinline__ bool fp_is_zero(const fp_t& a) { return fe_is_zero<FpP>(a.v); }
__device__ __forceinline__ bool fp_eq(const fp_t& a, const fp_t& b) { return fe_eq<FpP>(a.v, b.v); }
__device__ __forceinline__ fp_t fp_one() { fp_t r; fe_one<FpP>(r.v); return r; }
__device__ __forceinline__ fp_t fp_zero() { fp_t r; fe_zero<FpP>(r.v); return r; }
__device__ __forceinline__ fp_t fp_inv(const fp_t& a) { fp_t r; fe_inv<FpP>(r.v, a.v); return r; }

// The field interface the curve formulas (ec.cuh) are written against, so one template
// serves G1 (over Fp) and G2 (over Fp2, fp2.cuh). Thin inline forwards: no code of their own.
__device__ __forceinline__ fp_t f_mul(const fp_t& a, const fp_t& b) { return fp_mul(a, b); }
__device__ __forceinline__ fp_t f_sqr(const fp_t& a) { return fp_sqr(a); }
__device__ __forceinline__ fp_t f_mul_sub_mul(const fp_t& a, const fp_t& b, const fp_t& c, const fp_t& d) { return fp_mul_sub_mul(a, b, c, d); }
__device__ __forceinline__ fp_t f_add(const fp_t& a, const fp_t& b) { return fp_add(a, b); }
__device__ __forceinline__ fp_t f_sub(const fp_t& a, const fp_t& b) { return fp_sub(a, b); }
__device__ __forceinline__ fp_t f_neg(const fp_t& a) { return fp_neg(a); }
__device__ __forceinline__ bool f_is_zero(const fp_t& a) { return fp_is_zero(a); }
template <class F> __device__ __forceinline__ F f_one();
template <class F> __device__ __forceinline__ F f_zero();
template <> __device__ __forceinline__ fp_t f_one<fp_t>() { return fp_one(); }
template <> __device__ __forceinline__ fp_t f_zero<fp_t>() { return fp_zero(); }
