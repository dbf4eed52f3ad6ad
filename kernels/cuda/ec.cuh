// Layer 2: points of a curve y^2 = x^3 + b (a = 0) over a field F, one template for both
// groups of BLS12-381: G1 over Fp (b = 4) and G2 over Fp2 (b = 4(1 + u)). The formulas never
// use b, so a curve is just its field. Knows the field interface (f_mul, f_sqr,
// f_mul_sub_mul, f_add, f_sub, f_neg, f_is_zero, f_one, f_zero: bls12_381.cuh, fp2.cuh),
// nothing of MSM. Each formula's Y3 = A·B − C·D is one f_mul_sub_mul (over Fp one
// reduction for the two products; over Fp2 two fp2_mul and a subtraction). Over Fp it is
// computed last, after ZZ3, ZZZ3 and X3 are stored, so its four operands are all that is
// live across the call (the G1 madd spills 36 bytes instead of 56 under the 128-register
// cap); over Fp2 first, as it always was (y3_last): stored last, the G2 madd spilled 128
// bytes instead of 68 with the three-reduction fp2_mul of that time (docs/perf.md), and
// with today's fp2_mul ptxas gives 112 bytes of spills in the G2 madd instead of none.
template <class F> struct y3_last { static const bool value = false; };
template <> struct y3_last<fp_t> { static const bool value = true; };
//
// Inputs are affine (x, y) in Montgomery form: blst's `blst_p1_affine` (96 bytes) and
// `blst_p2_affine` (192 bytes: x.c0, x.c1, y.c0, y.c1), so blstrs `G1Affine` / `G2Affine`
// slices upload as they lie. The point at infinity is all zeros (blst_p*_affine_is_inf
// tests exactly that; there is no flag).
// Accumulators are XYZZ: x = X/ZZ, y = Y/ZZZ with ZZ^3 = ZZZ^2; infinity is ZZ = 0.
// Formulas: the "xyzz" family for a = 0 (Sutherland; explicit-formulas database
// add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1).

template <class F> struct affine_p { F x, y; };
template <class F> struct xyzz_p { F X, Y, ZZ, ZZZ; };

// G1 (the names the G1 kernels have always used) and G2.
typedef affine_p<fp_t> affine_t;
typedef xyzz_p<fp_t> xyzz_t;
typedef affine_p<fp2_t> g2_affine_t;
typedef xyzz_p<fp2_t> g2_xyzz_t;

template <class F>
__device__ __forceinline__ bool affine_is_inf(const affine_p<F>& p) {
  return f_is_zero(p.x) && f_is_zero(p.y);
}

template <class F>
__device__ __forceinline__ void xyzz_set_inf(xyzz_p<F>& p) {
  p.X = f_zero<F>(); p.Y = f_zero<F>(); p.ZZ = f_zero<F>(); p.ZZZ = f_zero<F>();
}

template <class F>
__device__ __forceinline__ bool xyzz_is_inf(const xyzz_p<F>& p) { return f_is_zero(p.ZZ); }

// Every formula's last step: ZZ3 = zz(), ZZZ3 = zzz(), X3, and Y3 = y3() (one
// f_mul_sub_mul) stored, in the order y3_last gives the field; each product runs where its
// value is stored.
template <class F, class ZZ, class ZZZ, class Y3>
__device__ __forceinline__ void xyzz_finish(xyzz_p<F>& p, const F& X3, ZZ zz, ZZZ zzz, Y3 y3) {
  if (y3_last<F>::value) {
    p.ZZ = zz();
    p.ZZZ = zzz();
    p.X = X3;
    p.Y = y3();
  } else {
    p.Y = y3();
    p.X = X3;
    p.ZZ = zz();
    p.ZZZ = zzz();
  }
}

// dbl-2008-s-1: U = 2Y, V = U^2, W = U·V, S = X·V, M = 3X^2,
// X3 = M^2 - 2S, Y3 = M(S - X3) - W·Y, ZZ3 = V·ZZ, ZZZ3 = W·ZZZ.
template <class F>
__device__ __noinline__ void xyzz_dbl(xyzz_p<F>& p) {
  if (xyzz_is_inf(p)) return;
  F U = f_add(p.Y, p.Y);
  F V = f_sqr(U);
  F W = f_mul(U, V);
  F S = f_mul(p.X, V);
  F X2 = f_sqr(p.X);
  F M = f_add(f_add(X2, X2), X2);
  F X3 = f_sub(f_sub(f_sqr(M), S), S);
  xyzz_finish(
      p, X3, [&] { return f_mul(V, p.ZZ); }, [&] { return f_mul(W, p.ZZZ); },
      [&] { return f_mul_sub_mul(M, f_sub(S, X3), W, p.Y); });
}

// mdbl-2008-s-1 for an affine input: as dbl with ZZ = ZZZ = 1.
template <class F>
__device__ __forceinline__ void xyzz_set_dbl_affine(xyzz_p<F>& r, const F& x, const F& y) {
  F U = f_add(y, y);
  F V = f_sqr(U);
  F W = f_mul(U, V);
  F S = f_mul(x, V);
  F X2 = f_sqr(x);
  F M = f_add(f_add(X2, X2), X2);
  F X3 = f_sub(f_sub(f_sqr(M), S), S);
  xyzz_finish(
      r, X3, [&] { return V; }, [&] { return W; },
      [&] { return f_mul_sub_mul(M, f_sub(S, X3), W, y); });
}

template <class F>
__device__ __noinline__ void xyzz_dbl_affine_ni(xyzz_p<F>& r, const F& x, const F& y) {
  xyzz_set_dbl_affine(r, x, y);
}

// p += (x, y) affine, (x, y) not infinity. madd-2008-s:
// P = x·ZZ - X, R = y·ZZZ - Y, PP = P^2, PPP = P·PP, Q = X·PP,
// X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - Y·PPP, ZZ3 = ZZ·PP, ZZZ3 = ZZZ·PPP.
// P = 0 means equal x: doubling if R = 0 too, else p = -(x, y) and the sum is infinity.
template <class F>
__device__ __forceinline__ void xyzz_add_affine_inl(xyzz_p<F>& p, const F& x, const F& y) {
  if (xyzz_is_inf(p)) {
    p.X = x; p.Y = y; p.ZZ = f_one<F>(); p.ZZZ = f_one<F>();
    return;
  }
  F P = f_sub(f_mul(x, p.ZZ), p.X);
  F R = f_sub(f_mul(y, p.ZZZ), p.Y);
  if (f_is_zero(P)) {
    if (f_is_zero(R)) xyzz_dbl_affine_ni(p, x, y);
    else xyzz_set_inf(p);
    return;
  }
  F PP = f_sqr(P);
  F PPP = f_mul(P, PP);
  F Q = f_mul(p.X, PP);
  F X3 = f_sub(f_sub(f_sqr(R), PPP), f_add(Q, Q));
  xyzz_finish(
      p, X3, [&] { return f_mul(p.ZZ, PP); }, [&] { return f_mul(p.ZZZ, PPP); },
      [&] { return f_mul_sub_mul(R, f_sub(Q, X3), p.Y, PPP); });
}

// The same as a call (smaller code, the accumulator goes through local memory).
template <class F>
__device__ __noinline__ void xyzz_add_affine(xyzz_p<F>& p, const F& x, const F& y) {
  xyzz_add_affine_inl(p, x, y);
}

// The accumulation's madd with the accumulator split: X and Y in registers, ZZ and ZZZ in
// this thread's shared-memory slots, and the base read from its shared-memory slot (where
// the accumulation's prefetch puts it) each time a product takes a coordinate. Inlined into
// the loop, only the products are calls, and at most five coordinates are live across one
// (the called xyzz_add_affine keeps the accumulator and its temporaries in local memory:
// ~220 local loads and stores a madd). The same formula as xyzz_add_affine_inl, ordered so
// each coordinate dies early: ZZ3 right after PP, ZZZ3 after R.
#ifdef __CUDA_ARCH__
typedef u32 sh_ptr;  // a shared-window address
// Shared loads and stores the compiler cannot forward into registers across the products
// (asm volatile, kept in order with each other): plain accesses would be, and the values
// would be live across the calls again.
template <class F>
__device__ __forceinline__ F sh_ld(sh_ptr a) {
  F r;
  u32* w = (u32*)&r;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(F) / 16); i++)
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[4 * i]), "=r"(w[4 * i + 1]), "=r"(w[4 * i + 2]), "=r"(w[4 * i + 3])
                 : "r"(a + 16 * i));
  return r;
}
template <class F>
__device__ __forceinline__ void sh_st(sh_ptr a, const F& v) {
  const u32* w = (const u32*)&v;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(F) / 16); i++)
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a + 16 * i), "r"(w[4 * i]), "r"(w[4 * i + 1]),
                 "r"(w[4 * i + 2]), "r"(w[4 * i + 3])
                 : "memory");
}
template <class T>
__device__ __forceinline__ sh_ptr sh_addr(const T* p) {
  return (u32)__cvta_generic_to_shared(p);
}
#else
// On the host (kernels/tests/cuda_on_host.rs): plain pointers and copies.
typedef unsigned char* sh_ptr;
template <class F> static inline F sh_ld(sh_ptr a) { F r; memcpy(&r, a, sizeof(F)); return r; }
template <class F> static inline void sh_st(sh_ptr a, const F& v) { memcpy(a, &v, sizeof(F)); }
template <class T> static inline sh_ptr sh_addr(const T* p) { return (sh_ptr)p; }
#endif

template <class F> struct xyzz_sh { F X, Y; sh_ptr zz, zzz; };

template <class F>
__device__ __forceinline__ void xyzz_sh_set_inf(xyzz_sh<F>& p) {
  p.X = f_zero<F>(); p.Y = f_zero<F>(); sh_st(p.zz, f_zero<F>()); sh_st(p.zzz, f_zero<F>());
}
// Points a split accumulator at this thread's two shared slots and sets it to infinity.
template <class F>
__device__ __forceinline__ void xyzz_sh_init(xyzz_sh<F>& p, F* zz_slot, F* zzz_slot) {
  p.zz = sh_addr(zz_slot);
  p.zzz = sh_addr(zzz_slot);
  xyzz_sh_set_inf(p);
}
// The accumulator as a point, its coordinates reduced below p (over Fp the madd keeps them
// below 2p, see fp_mul_lz; over Fp2 they are reduced already).
template <class F>
__device__ __forceinline__ xyzz_p<F> xyzz_sh_get(const xyzz_sh<F>& p) {
  xyzz_p<F> r;
  r.X = f_canon(p.X); r.Y = f_canon(p.Y); r.ZZ = f_canon(sh_ld<F>(p.zz)); r.ZZZ = f_canon(sh_ld<F>(p.zzz));
  return r;
}
template <class F>
__device__ __forceinline__ void xyzz_sh_put(xyzz_sh<F>& p, const xyzz_p<F>& r) {
  p.X = r.X; p.Y = r.Y; sh_st(p.zz, r.ZZ); sh_st(p.zzz, r.ZZZ);
}

// The rare case P = 0 (same x): 2p when p = (x, y) (R = 0), else p = −(x, y) and the sum is
// infinity. Values in and out: no address of the caller's registers is taken.
template <class F>
__device__ __noinline__ xyzz_p<F> xyzz_madd_same_x(xyzz_p<F> p, affine_p<F> a) {
  xyzz_p<F> r;
  if (f_is_zero(f_sub(f_mul(a.y, p.ZZZ), p.Y))) xyzz_set_dbl_affine(r, a.x, a.y);
  else xyzz_set_inf(r);
  return r;
}

// p += ±a for the affine point at shared address `a` (x, then y); a may be infinity (all
// zeros), which adds nothing, as in xyzz_add_affine_signed. Over Fp the accumulator's
// coordinates and the temporaries are lazily reduced (below 2p: fp_mul_lz and its kin, through
// the f_*_lz interface; over Fp2 that interface is the reduced operations);
// the base's are reduced, which is below 2p too. ZZ = 0 exactly marks infinity: it is set so,
// and a product of non-zero values is ≢ 0, so neither 0 nor p.
template <class F>
__device__ __forceinline__ void xyzz_madd_sh(xyzz_sh<F>& p, sh_ptr a, bool neg) {
  const sh_ptr ax = a, ay = a + sizeof(F);
  if (f_is_zero(sh_ld<F>(ax)) && f_is_zero(sh_ld<F>(ay))) return;
  if (f_is_zero(sh_ld<F>(p.zz))) {
    const F y = sh_ld<F>(ay);
    p.X = sh_ld<F>(ax);
    p.Y = neg ? f_neg(y) : y;
    sh_st(p.zz, f_one<F>());
    sh_st(p.zzz, f_one<F>());
    return;
  }
  const F P = f_sub_lz(f_mul_lz(sh_ld<F>(ax), sh_ld<F>(p.zz)), p.X);
  if (f_is_zero_lz(P)) {
    affine_p<F> b;
    b.x = sh_ld<F>(ax);
    b.y = sh_ld<F>(ay);
    if (neg) b.y = f_neg(b.y);
    xyzz_sh_put(p, xyzz_madd_same_x(xyzz_sh_get(p), b));
    return;
  }
  const F PP = f_sqr_lz(P);
  sh_st(p.zz, f_mul_lz(sh_ld<F>(p.zz), PP));  // ZZ3 = ZZ·PP
  const F PPP = f_mul_lz(P, PP);
  const F Q = f_mul_lz(p.X, PP);
  F y = sh_ld<F>(ay);
  if (neg) y = f_neg(y);
  const F R = f_sub_lz(f_mul_lz(y, sh_ld<F>(p.zzz)), p.Y);
  sh_st(p.zzz, f_mul_lz(sh_ld<F>(p.zzz), PPP));  // ZZZ3 = ZZZ·PPP
  const F X3 = f_sub_lz(f_sub_lz(f_sqr_lz(R), PPP), f_add_lz(Q, Q));
  p.Y = f_mul_sub_mul_lz(R, f_sub_lz_4p(Q, X3), p.Y, PPP);  // Y3 = R(Q − X3) − Y·PPP
  p.X = X3;
}

// p += q, both XYZZ. add-2008-s:
// U1 = X1·ZZ2, U2 = X2·ZZ1, S1 = Y1·ZZZ2, S2 = Y2·ZZZ1, P = U2 - U1, R = S2 - S1,
// PP = P^2, PPP = P·PP, Q = U1·PP, X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - S1·PPP,
// ZZ3 = ZZ1·ZZ2·PP, ZZZ3 = ZZZ1·ZZZ2·PPP.
template <class F>
__device__ __noinline__ void xyzz_add(xyzz_p<F>& p, const xyzz_p<F>& q) {
  if (xyzz_is_inf(q)) return;
  if (xyzz_is_inf(p)) { p = q; return; }
  F U1 = f_mul(p.X, q.ZZ);
  F U2 = f_mul(q.X, p.ZZ);
  F S1 = f_mul(p.Y, q.ZZZ);
  F S2 = f_mul(q.Y, p.ZZZ);
  F P = f_sub(U2, U1);
  F R = f_sub(S2, S1);
  if (f_is_zero(P)) {
    if (f_is_zero(R)) xyzz_dbl(p);
    else xyzz_set_inf(p);
    return;
  }
  F PP = f_sqr(P);
  F PPP = f_mul(P, PP);
  F Q = f_mul(U1, PP);
  F X3 = f_sub(f_sub(f_sqr(R), PPP), f_add(Q, Q));
  xyzz_finish(
      p, X3, [&] { return f_mul(f_mul(p.ZZ, q.ZZ), PP); },
      [&] { return f_mul(f_mul(p.ZZZ, q.ZZZ), PPP); },
      [&] { return f_mul_sub_mul(R, f_sub(Q, X3), S1, PPP); });
}

// p += ±a for an affine point that may be infinity (SRS entries never are; tests use it).
template <class F>
__device__ __forceinline__ void xyzz_add_affine_signed(xyzz_p<F>& p, const affine_p<F>& a, bool neg) {
  if (affine_is_inf(a)) return;
  xyzz_add_affine(p, a.x, neg ? f_neg(a.y) : a.y);
}

// p = k·p for a small non-negative k (double-and-add from the top bit).
template <class F>
__device__ void xyzz_mul_small(xyzz_p<F>& p, u32 k) {
  xyzz_p<F> base = p;
  xyzz_set_inf(p);
  if (k == 0) return;
  for (int bit = 31 - __clz(k); bit >= 0; bit--) {
    xyzz_dbl(p);
    if ((k >> bit) & 1) xyzz_add(p, base);
  }
}

// Explicit instantiations, here rather than at first use: the front end then emits the
// called functions ahead of the kernels, in this order, as it did before the formulas were
// templates; ptxas' register assignment follows that order, so this keeps the G1 kernels'
// SASS exactly as it was (checked per kernel, docs/gpu.md).
#define EC_INSTANTIATE(F)                                                              \
  template __device__ void xyzz_dbl<F>(xyzz_p<F>&);                                    \
  template __device__ void xyzz_dbl_affine_ni<F>(xyzz_p<F>&, const F&, const F&);      \
  template __device__ void xyzz_add_affine<F>(xyzz_p<F>&, const F&, const F&);         \
  template __device__ void xyzz_add<F>(xyzz_p<F>&, const xyzz_p<F>&);
EC_INSTANTIATE(fp_t)
EC_INSTANTIATE(fp2_t)
