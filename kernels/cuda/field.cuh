// Layer 1: Montgomery arithmetic over a prime field, 32-bit limbs, little-endian.
// A field is a parameter struct P with N (limbs), INV = -p^{-1} mod 2^32 (inv() returns it,
// as fe_mul reads it) and mod(i), the i-th limb of p. Elements are kept fully reduced (< p), in Montgomery form x·R mod p,
// R = 2^{32N}: the same bits blst/blstrs keep in memory, so buffers are shared as they lie.
// Knows nothing of curves.

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

// Carry-chain primitives for fe_add, fe_sub and fe_mul: one PTX instruction each on the
// device, where the carry lives in the condition-code register from one call to the next
// (the asm statements are volatile so they stay in program order); the same operations in
// plain C on the host (kernels/tests/cuda_on_host.rs), where `cy` carries it. A pair
// (lo, hi) with one product a·b is one 64-bit multiply-add: ptxas turns mad.lo.cc +
// madc.hi.cc into a single IMAD.WIDE.U32(.X) with carry in and out.
#ifdef __CUDA_ARCH__
#define FE_CY(x) ((void)(x))
// (hi:lo) = a·b + (yh:yl) [+ cy]; with carry out ("cc") or not.
__device__ __forceinline__ void mad2_cc(u32& lo, u32& hi, u32 a, u32 b, u32 yl, u32 yh, u32& cy) {
  FE_CY(cy);
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(lo) : "r"(a), "r"(b), "r"(yl));
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(hi) : "r"(a), "r"(b), "r"(yh));
}
__device__ __forceinline__ void madc2_cc(u32& lo, u32& hi, u32 a, u32 b, u32 yl, u32 yh, u32& cy) {
  FE_CY(cy);
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(lo) : "r"(a), "r"(b), "r"(yl));
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(hi) : "r"(a), "r"(b), "r"(yh));
}
__device__ __forceinline__ void madc2(u32& lo, u32& hi, u32 a, u32 b, u32 yl, u32 yh, u32& cy) {
  FE_CY(cy);
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(lo) : "r"(a), "r"(b), "r"(yl));
  asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(hi) : "r"(a), "r"(b), "r"(yh));
}
// r = x + y [+ cy], with carry out or not; r = x - y [- borrow].
__device__ __forceinline__ u32 add_cc(u32 x, u32 y, u32& cy) {
  FE_CY(cy);
  u32 r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  return r;
}
__device__ __forceinline__ u32 addc_cc(u32 x, u32 y, u32& cy) {
  FE_CY(cy);
  u32 r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  return r;
}
__device__ __forceinline__ u32 addc(u32 x, u32 y, u32& cy) {
  FE_CY(cy);
  u32 r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  return r;
}
__device__ __forceinline__ u32 sub_cc(u32 x, u32 y, u32& cy) {
  FE_CY(cy);
  u32 r;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  return r;
}
__device__ __forceinline__ u32 subc_cc(u32 x, u32 y, u32& cy) {
  FE_CY(cy);
  u32 r;
  asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  return r;
}
__device__ __forceinline__ u32 subc(u32 x, u32 y, u32& cy) {
  FE_CY(cy);
  u32 r;
  asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
  return r;
}
#undef FE_CY
#else
__device__ __forceinline__ void mad2_cc(u32& lo, u32& hi, u32 a, u32 b, u32 yl, u32 yh, u32& cy) {
  u64 s = (u64)a * b + yl;  // < 2^64: (2^32 - 1)^2 + 2^32 - 1
  u64 t = s + ((u64)yh << 32);
  cy = t < s;
  lo = (u32)t;
  hi = (u32)(t >> 32);
}
__device__ __forceinline__ void madc2_cc(u32& lo, u32& hi, u32 a, u32 b, u32 yl, u32 yh, u32& cy) {
  u64 s = (u64)a * b + yl + cy;
  u64 t = s + ((u64)yh << 32);
  cy = t < s;
  lo = (u32)t;
  hi = (u32)(t >> 32);
}
__device__ __forceinline__ void madc2(u32& lo, u32& hi, u32 a, u32 b, u32 yl, u32 yh, u32& cy) {
  u64 t = (u64)a * b + yl + cy + ((u64)yh << 32);
  lo = (u32)t;
  hi = (u32)(t >> 32);
}
__device__ __forceinline__ u32 add_cc(u32 x, u32 y, u32& cy) {
  u64 s = (u64)x + y;
  cy = (u32)(s >> 32);
  return (u32)s;
}
__device__ __forceinline__ u32 addc_cc(u32 x, u32 y, u32& cy) {
  u64 s = (u64)x + y + cy;
  cy = (u32)(s >> 32);
  return (u32)s;
}
__device__ __forceinline__ u32 addc(u32 x, u32 y, u32& cy) { return x + y + cy; }
__device__ __forceinline__ u32 sub_cc(u32 x, u32 y, u32& cy) {
  cy = x < y;
  return x - y;
}
__device__ __forceinline__ u32 subc_cc(u32 x, u32 y, u32& cy) {
  u32 r = x - y - cy;
  cy = (u64)x < (u64)y + cy;
  return r;
}
__device__ __forceinline__ u32 subc(u32 x, u32 y, u32& cy) { return x - y - cy; }
#endif

// r = a + b mod p. a, b < p and p < 2^{32N-1}, so a + b < 2^{32N} never carries out.
template <class P>
__device__ __forceinline__ void fe_add(u32* r, const u32* a, const u32* b) {
  u32 s[P::N], d[P::N];
  u32 cy = 0;
  s[0] = add_cc(a[0], b[0], cy);
#pragma unroll
  for (int i = 1; i < P::N; i++) s[i] = addc_cc(a[i], b[i], cy);
  // s - p; keep s if it borrows (s < p).
  d[0] = sub_cc(s[0], P::mod(0), cy);
#pragma unroll
  for (int i = 1; i < P::N; i++) d[i] = subc_cc(s[i], P::mod(i), cy);
  const u32 keep = subc(0, 0, cy);
#pragma unroll
  for (int i = 0; i < P::N; i++) r[i] = keep ? s[i] : d[i];
}

// r = x + (p & mask), N limbs: p added back after a subtraction that borrowed (mask all
// ones), x unchanged otherwise (mask 0). The carry out is dropped: it is the borrow's
// 2^{32N} coming back. fe_sub and fe_sub_wide (on the high half) end with it.
template <class P>
__device__ __forceinline__ void add_p_masked(u32* r, const u32* x, u32 mask) {
  u32 cy = 0;
  r[0] = add_cc(x[0], P::mod(0) & mask, cy);
#pragma unroll
  for (int i = 1; i < P::N - 1; i++) r[i] = addc_cc(x[i], P::mod(i) & mask, cy);
  r[P::N - 1] = addc(x[P::N - 1], P::mod(P::N - 1) & mask, cy);
}

// d = a − b mod 2^{32N}, N limbs; the borrow out is left in the carry chain (cy) for the
// caller: fe_sub turns it into a mask, fe_sub_lazy drops it.
template <class P>
__device__ __forceinline__ void sub_wrapping(u32* d, const u32* a, const u32* b, u32& cy) {
  d[0] = sub_cc(a[0], b[0], cy);
#pragma unroll
  for (int i = 1; i < P::N; i++) d[i] = subc_cc(a[i], b[i], cy);
}

// r = a - b mod p.
template <class P>
__device__ __forceinline__ void fe_sub(u32* r, const u32* a, const u32* b) {
  u32 d[P::N];
  u32 cy = 0;
  sub_wrapping<P>(d, a, b, cy);
  add_p_masked<P>(r, d, subc(0, 0, cy));  // borrowed: add p back
}

// r = a − b + p for a, b < p: in (0, 2p), not reduced. The sum is below 2^{32N}, so the
// subtraction's borrow out and the addition's carry out cancel and both are dropped. For
// the multiplier operand of fe_mul / fe_mul2 only (their b, whose limbs b_i the rows take
// one at a time), which may be any value below 2^{32N}: with a < p the rows keep
// t < a + p < 2p (t_i = (t_{i−1} + a·b_i + m·p)/2^32 with b_i < 2^32, whatever b is), and
// the product (a·b + M·p)/R < a + p < 2p, so the one final subtraction still reduces it
// fully. 2N additions against fe_sub's 3N + 1 (no borrow mask, no masked p): the NTT's
// butterflies multiply most of their differences, and the fewer instructions took NTT 2^27
// from 36.1 to 35.5 ms on the H200 (docs/perf.md), the register pass being issue-bound.
template <class P>
__device__ __forceinline__ void fe_sub_lazy(u32* r, const u32* a, const u32* b) {
  u32 d[P::N];
  u32 cy = 0;
  sub_wrapping<P>(d, a, b, cy);
  add_p_masked<P>(r, d, ~0u);  // + p always
}

// The even/odd products' merge: t = x + (y_1..y_{N-1}) (y shifted down one limb), the
// carry out of the top limb kept (callers' sums stay below 2^{32N}).
template <int N>
__device__ __forceinline__ void merge_shifted(u32* t, const u32* x, const u32* y, u32& cy) {
  t[0] = add_cc(x[0], y[1], cy);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[j] = addc_cc(x[j], y[j + 1], cy);
  t[N - 1] = addc(x[N - 1], 0, cy);
}

// r = t − p if t ≥ p, else t (t < 2p): the one conditional subtraction that leaves
// Montgomery products fully reduced.
template <class P>
__device__ __forceinline__ void sub_p_once(u32* r, const u32* t, u32& cy) {
  const int N = P::N;
  u32 d[N];
  d[0] = sub_cc(t[0], P::mod(0), cy);
#pragma unroll
  for (int j = 1; j < N; j++) d[j] = subc_cc(t[j], P::mod(j), cy);
  const u32 borrow = subc(0, 0, cy);  // all ones if t < p
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = borrow ? t[j] : d[j];
}

// r = a·b·R^{-1} mod p: CIOS with the products of each row split by the parity of a's limb
// (the even/odd chains sppark's mont_t uses). The running value t is held as e + o·2^32:
// e (limbs at positions 0..N-1) collects a_j·b_i and m·p_j for even j, o (positions 1..N)
// those for odd j, so each pair (lo, hi) of one product lands on a limb pair of its own array
// and a row is two carry chains of N/2 64-bit multiply-adds each, without the adds that
// separate lo and hi halves need. Row i: e += a_even·b_i, o += a_odd·b_i; m = e_0·(-p^{-1});
// e += m·p_even, o += m·p_odd (e_0 becomes 0); then t/2^32 = o (now at positions 0..N-1) +
// (e_1..e_{N-1}) (positions 0..N-2): o becomes the next row's e, and the next row's o is
// written as its products plus e shifted down by two limbs, e_1 added into the new e_0, so
// the two arrays swap each row. p's top limb is below 2^31, so t < 2p < 2^{32N} after every
// row ("no-carry" CIOS) and t + a·b_i + m·p < 2^{32(N+1)}: no chain carries out of position
// N + 1, the carries the code drops are zero. One final conditional subtraction of p.
// fe_mul's steps: row 0's products, row i (reduction, then a·b_{i+1}), the final merge. A
// row's carry chains end within it, so two products' rows can alternate (fe_mul2).
template <class P>
__device__ __forceinline__ void fe_mul_first(u32* x, u32* y, const u32* a, u32 b0) {
  // Row 0: t = a·b_0.
#pragma unroll
  for (int j = 0; j < P::N; j += 2) {
    const u64 pe = (u64)a[j] * b0, po = (u64)a[j + 1] * b0;
    x[j] = (u32)pe;
    x[j + 1] = (u32)(pe >> 32);
    y[j] = (u32)po;
    y[j + 1] = (u32)(po >> 32);
  }
}

// Row i (a constant once the callers' loops are unrolled, so the array swap is free).
template <class P>
__device__ __forceinline__ void fe_mul_row(int i, u32* x, u32* y, const u32* a, const u32* b) {
  const int N = P::N;
  u32 cy = 0;
  u32* e = (i & 1) ? y : x;
  u32* o = (i & 1) ? x : y;
  // t += m·p, m = e_0·(-p^{-1}) mod 2^32. The odd chain first: its carry out of position
  // N + 1 is zero; the even chain's (position N) goes into o's top limb.
  if (P::LOW_LIMBS_1_MINUS_1) {
    // p_0 = 1, p_1 = 2^32 − 1, so −p^{-1} ≡ −1 and m = −e_0; m·p_0 = m and
    // m·p_1 = m·2^32 − m = (m − z)·2^32 + e_0 with z = [e_0 ≠ 0] (m = 2^32 − e_0 when
    // z, else m = 0): the two products become additions (ALU pipe), and e_0 + m = z·2^32
    // only carries z into e_1. 6 multiply-adds a row instead of 8, and no multiply for m.
    const u32 m = sub_cc(0, e[0], cy);  // borrows z
    const u32 mh = subc(m, 0, cy);       // m − z
    o[0] = add_cc(o[0], e[0], cy);
    o[1] = addc_cc(o[1], mh, cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(o[j], o[j + 1], m, P::mod(j + 1), o[j], o[j + 1], cy);
    (void)add_cc(e[0], m, cy);  // 0, carry z
    e[1] = addc_cc(e[1], 0, cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(e[j], e[j + 1], m, P::mod(j), e[j], e[j + 1], cy);
  } else {
    const u32 m = e[0] * P::inv();
    mad2_cc(o[0], o[1], m, P::mod(1), o[0], o[1], cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(o[j], o[j + 1], m, P::mod(j + 1), o[j], o[j + 1], cy);
    mad2_cc(e[0], e[1], m, P::mod(0), e[0], e[1], cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(e[j], e[j + 1], m, P::mod(j), e[j], e[j + 1], cy);
  }
  o[N - 1] = addc(o[N - 1], 0, cy);
  if (i + 1 == N) return;
  // Divide by 2^32 and add a·b_{i+1}: o is the new e; e_1 joins its low limb (carry to
  // position 1, the first limb of the new o), the new o = a_odd·b + (e_2..e_{N-1}).
  const u32 bn = b[i + 1];
  o[0] = add_cc(o[0], e[1], cy);
#pragma unroll
  for (int j = 0; j < N - 2; j += 2)
    madc2_cc(e[j], e[j + 1], a[j + 1], bn, e[j + 2], e[j + 3], cy);
  madc2(e[N - 2], e[N - 1], a[N - 1], bn, 0, 0, cy);
  mad2_cc(o[0], o[1], a[0], bn, o[0], o[1], cy);
#pragma unroll
  for (int j = 2; j < N; j += 2) madc2_cc(o[j], o[j + 1], a[j], bn, o[j], o[j + 1], cy);
  e[N - 1] = addc(e[N - 1], 0, cy);
}

// N is even, so the last row's o is x: t = x + (y_1..y_{N-1}) < 2p, then one conditional
// subtraction.
template <class P>
__device__ __forceinline__ void fe_mul_last(u32* r, const u32* x, const u32* y) {
  u32 t[P::N];
  u32 cy = 0;
  merge_shifted<P::N>(t, x, y, cy);
  sub_p_once<P>(r, t, cy);
}

template <class P>
__device__ __forceinline__ void fe_mul(u32* r, const u32* a, const u32* b) {
  static_assert(P::N % 2 == 0, "fe_mul: even limb count");
  u32 x[P::N], y[P::N];  // the two arrays: x is e on even rows, y on odd rows
  fe_mul_first<P>(x, y, a, b[0]);
#pragma unroll
  for (int i = 0; i < P::N; i++) fe_mul_row<P>(i, x, y, a, b);
  fe_mul_last<P>(r, x, y);
}

// r0 = a0·b0, r1 = a1·b1 (Montgomery), the two products' rows alternating: independent
// carry chains side by side for the scheduler, where one product's rows wait on each other.
template <class P>
__device__ __forceinline__ void fe_mul2(u32* r0, const u32* a0, const u32* b0, u32* r1,
                                        const u32* a1, const u32* b1) {
  static_assert(P::N % 2 == 0, "fe_mul2: even limb count");
  u32 x0[P::N], y0[P::N], x1[P::N], y1[P::N];
  fe_mul_first<P>(x0, y0, a0, b0[0]);
  fe_mul_first<P>(x1, y1, a1, b1[0]);
#pragma unroll
  for (int i = 0; i < P::N; i++) {
    fe_mul_row<P>(i, x0, y0, a0, b0);
    fe_mul_row<P>(i, x1, y1, a1, b1);
  }
  fe_mul_last<P>(r0, x0, y0);
  fe_mul_last<P>(r1, x1, y1);
}

// r = a²·R^{-1} mod p: the square T = a² (2N limbs) first, then its Montgomery reduction
// (SOS order). a² = Σ_i a_i²·2^{64i} + 2·Σ_{i<j} a_i·a_j·2^{32(i+j)}: the N(N-1)/2
// off-diagonal products once, doubled, plus the N squares, N(N+1)/2 multiply-adds (Fp 78)
// against the N² of the product's rows. The reduction is N rows of N (Fp 144), the same as
// the m·p half of fe_mul, so a square is N(N+1)/2 + N² + N multiplies (Fp 234) against 2N² + N
// (Fp 300): the extra work is additions (doubling, merges), which go to the ALU pipe.
//
// Off-diagonal: a_i·a_j (i < j) is a pair (lo, hi) at positions (i+j, i+j+1). Pairs with
// i+j odd go to the array o, those with i+j even to e, both indexed by absolute position
// (zero at first): row i adds a_i·a_{i+1}, a_i·a_{i+3}, ... to o and a_i·a_{i+2}, ... to e,
// two carry chains of non-overlapping pairs. A chain's carry out lands just above its last
// pair, at a position that holds at most an earlier row's carry bit (rows 2k, 2k+1 of o
// end on the same pair, so do rows 2k-1, 2k of e; checked for every limb pattern by the
// host test), so one addc without carry out takes it.
template <class P>
__device__ __forceinline__ void fe_sqr_wide(u32* w, const u32* a) {
  const int N = P::N;
  u32 e[2 * N], o[2 * N];
#pragma unroll
  for (int k = 0; k < 2 * N; k++) e[k] = o[k] = 0;
  u32 cy = 0;
#pragma unroll
  for (int i = 0; i < N - 1; i++) {
    // a_i·a_j with j - i odd: o at 2i+1, 2i+3, ...
    {
      int s = 2 * i + 1;
      mad2_cc(o[s], o[s + 1], a[i], a[i + 1], o[s], o[s + 1], cy);
#pragma unroll
      for (int j = i + 3; j < N; j += 2) {
        s = i + j;
        madc2_cc(o[s], o[s + 1], a[i], a[j], o[s], o[s + 1], cy);
      }
      if (s + 2 < 2 * N) o[s + 2] = addc(o[s + 2], 0, cy);
    }
    // a_i·a_j with j - i even, j >= i + 2: e at 2i+2, 2i+4, ...
    if (i + 2 < N) {
      int s = 2 * i + 2;
      mad2_cc(e[s], e[s + 1], a[i], a[i + 2], e[s], e[s + 1], cy);
#pragma unroll
      for (int j = i + 4; j < N; j += 2) {
        s = i + j;
        madc2_cc(e[s], e[s + 1], a[i], a[j], e[s], e[s + 1], cy);
      }
      if (s + 2 < 2 * N) e[s + 2] = addc(e[s + 2], 0, cy);
    }
  }
  // w = 2·(e + o): e starts at position 2, o at 1; 2·Σ a_i·a_j < a² < 2^{64N}, no carry out.
  w[0] = 0;
  w[1] = o[1];
  w[2] = add_cc(e[2], o[2], cy);
#pragma unroll
  for (int k = 3; k < 2 * N - 1; k++) w[k] = addc_cc(e[k], o[k], cy);
  w[2 * N - 1] = addc(e[2 * N - 1], o[2 * N - 1], cy);
  w[1] = add_cc(w[1], w[1], cy);
#pragma unroll
  for (int k = 2; k < 2 * N - 1; k++) w[k] = addc_cc(w[k], w[k], cy);
  w[2 * N - 1] = addc(w[2 * N - 1], w[2 * N - 1], cy);
  // + Σ a_i²·2^{64i}: one chain of pairs (2i, 2i+1).
  mad2_cc(w[0], w[1], a[0], a[0], w[0], w[1], cy);
#pragma unroll
  for (int i = 1; i < N - 1; i++) madc2_cc(w[2 * i], w[2 * i + 1], a[i], a[i], w[2 * i], w[2 * i + 1], cy);
  madc2(w[2 * N - 2], w[2 * N - 1], a[N - 1], a[N - 1], w[2 * N - 2], w[2 * N - 1], cy);
}

// r = T·R^{-1} mod p for T = w (2N limbs) < p·R, as t = (w_lo + M·p)/R ≤ p (Montgomery
// reduction of the low half alone: fe_mul's rows without the a·b_i products) plus w_hi < p;
// t + w_hi = (T + M·p)/R < 2p: one conditional subtraction.
// The reduction keeps fe_mul's running value e + o·2^32. Row k: m = e_0·(-p^{-1}),
// e += m·p_even, o += m·p_odd; then t/2^32 = o + (e_1..e_{N-1}): o is the next row's e with
// e_1 added to its low limb, and the next row's o is m'·p_odd + (e_2..e_{N-1}), the shift
// folded into the next row's multiply-adds (the carry of the e_1 addition enters that
// chain at its first limb, position 1 of the new value), so the arrays swap each row.
template <class P, bool REDUCE = true>
__device__ __forceinline__ void fe_redc_wide(u32* r, const u32* w) {
  const int N = P::N;
  static_assert(N % 2 == 0, "fe_redc_wide: even limb count");
  u32 x[N], y[N];  // x is e on even rows, y on odd rows
  u32 cy = 0;
#pragma unroll
  for (int j = 0; j < N; j++) x[j] = w[j];
  {
    // Row 0: o = m·p_odd, e += m·p_even (carry out of position N into o's top limb).
    const u32 m = x[0] * P::inv();
#pragma unroll
    for (int j = 0; j < N; j += 2) {
      const u64 po = (u64)m * P::mod(j + 1);
      y[j] = (u32)po;
      y[j + 1] = (u32)(po >> 32);
    }
    mad2_cc(x[0], x[1], m, P::mod(0), x[0], x[1], cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(x[j], x[j + 1], m, P::mod(j), x[j], x[j + 1], cy);
    y[N - 1] = addc(y[N - 1], 0, cy);
  }
#pragma unroll
  for (int i = 1; i < N; i++) {
    u32* e = (i & 1) ? x : y;  // the previous row's e: becomes this row's o
    u32* o = (i & 1) ? y : x;  // the previous row's o: becomes this row's e
    o[0] = add_cc(o[0], e[1], cy);
    const u32 m = o[0] * P::inv();
    // New o (in e's registers) = m·p_odd + (e_2..e_{N-1}), taking the carry of o_0 + e_1.
#pragma unroll
    for (int j = 0; j < N - 2; j += 2)
      madc2_cc(e[j], e[j + 1], m, P::mod(j + 1), e[j + 2], e[j + 3], cy);
    madc2(e[N - 2], e[N - 1], m, P::mod(N - 1), 0, 0, cy);
    // New e (in o's registers) += m·p_even; its carry out of position N into new o's top.
    mad2_cc(o[0], o[1], m, P::mod(0), o[0], o[1], cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(o[j], o[j + 1], m, P::mod(j), o[j], o[j + 1], cy);
    e[N - 1] = addc(e[N - 1], 0, cy);
  }
  // N is even: the last row's e is y, its o is x. t = x + (y_1..y_{N-1}) ≤ p, then + w_hi.
  u32 t[N];
  merge_shifted<N>(t, x, y, cy);
  t[0] = add_cc(t[0], w[N], cy);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[j] = addc_cc(t[j], w[N + j], cy);
  t[N - 1] = addc(t[N - 1], w[2 * N - 1], cy);
  if (REDUCE) {
    sub_p_once<P>(r, t, cy);
  } else {
#pragma unroll
    for (int j = 0; j < N; j++) r[j] = t[j];
  }
}

// r = a²·R^{-1} mod p (see fe_sqr_wide, fe_redc_wide); REDUCE false: congruent, below 2p.
template <class P, bool REDUCE = true>
__device__ __forceinline__ void fe_sqr(u32* r, const u32* a) {
  u32 w[2 * P::N];
  fe_sqr_wide<P>(w, a);
  fe_redc_wide<P, REDUCE>(r, w);
}

// w = a·b (H limbs each, 2H limbs out), H even, no reduction. Row i adds a_j·b_i at
// positions (i+j, i+j+1): the even j in one carry chain, the odd j in another, into two
// arrays by the parity of a pair's start (ev: even starts, od: odd starts), so the pairs of
// one chain never overlap. A chain's carry out lands just above its last pair, where at most
// one earlier row's carry bit lies (rows 2k, 2k+1 of ev end on the same pair, rows 2k-1,
// 2k of od), so one addc without carry out takes it. ev + od at the end.
template <int H>
__device__ __forceinline__ void fe_mul_wide(u32* w, const u32* a, const u32* b) {
  static_assert(H % 2 == 0, "fe_mul_wide: even limb count");
  u32 ev[2 * H], od[2 * H];
#pragma unroll
  for (int k = 0; k < 2 * H; k++) ev[k] = od[k] = 0;
  u32 cy = 0;
#pragma unroll
  for (int i = 0; i < H; i++) {
    u32* x = (i & 1) ? od : ev;  // takes the even j: pairs start at i + j, parity of i
    u32* y = (i & 1) ? ev : od;  // the odd j
    mad2_cc(x[i], x[i + 1], a[0], b[i], x[i], x[i + 1], cy);
#pragma unroll
    for (int j = 2; j < H; j += 2) madc2_cc(x[i + j], x[i + j + 1], a[j], b[i], x[i + j], x[i + j + 1], cy);
    x[i + H] = addc(x[i + H], 0, cy);  // i + H < 2H
    mad2_cc(y[i + 1], y[i + 2], a[1], b[i], y[i + 1], y[i + 2], cy);
#pragma unroll
    for (int j = 3; j < H; j += 2) madc2_cc(y[i + j], y[i + j + 1], a[j], b[i], y[i + j], y[i + j + 1], cy);
    if (i + H + 1 < 2 * H) y[i + H + 1] = addc(y[i + H + 1], 0, cy);
  }
  // a·b < 2^{64H}: no carry out of the top limb.
  w[0] = ev[0];
  w[1] = add_cc(ev[1], od[1], cy);
#pragma unroll
  for (int k = 2; k < 2 * H - 1; k++) w[k] = addc_cc(ev[k], od[k], cy);
  w[2 * H - 1] = addc(ev[2 * H - 1], od[2 * H - 1], cy);
}

// t = a·b (2N limbs, no reduction) with one Karatsuba level: halves a = a0 + a1·X,
// b = b0 + b1·X, X = 2^{32H}, H = N/2. a·b = a0b0 + (s_a·s_b − a0b0 − a1b1)·X + a1b1·X² with
// s = x0 + x1: three H×H products (Fp 3·36 = 108 multiply-adds instead of 144); fe_mul_kara
// reduces it (SOS). Any N-limb a, b (a·b < 2^{64N}), reduced or not.
// s_a = c_a·X + s'_a (c_a the carry bit), so s_a·s_b = s'_a·s'_b + (c_a·s'_b + c_b·s'_a)·X
// + c_a·c_b·X²: the bits select additions (masks, no branches). The middle term
// a0b1 + a1b0 < 2^{64H+1} needs 2H + 1 limbs; every partial difference is non-negative.
template <class P>
__device__ __forceinline__ void fe_mul_kara_wide(u32* t, const u32* a, const u32* b) {
  const int N = P::N, H = P::N / 2;
  u32 lo[N], hi[N], mid[N], sa[H], sb[H];
  fe_mul_wide<H>(lo, a, b);
  fe_mul_wide<H>(hi, a + H, b + H);
  u32 cy = 0;
  sa[0] = add_cc(a[0], a[H], cy);
#pragma unroll
  for (int j = 1; j < H; j++) sa[j] = addc_cc(a[j], a[H + j], cy);
  const u32 ca = addc(0, 0, cy);
  sb[0] = add_cc(b[0], b[H], cy);
#pragma unroll
  for (int j = 1; j < H; j++) sb[j] = addc_cc(b[j], b[H + j], cy);
  const u32 cb = addc(0, 0, cy);
  fe_mul_wide<H>(mid, sa, sb);
  const u32 ma = 0u - ca, mb = 0u - cb;
  u32 m[N + 1];
  // m = mid + (c_a·s'_b + c_b·s'_a)·X + c_a·c_b·X².
#pragma unroll
  for (int j = 0; j < H; j++) m[j] = mid[j];
  m[H] = add_cc(mid[H], sb[0] & ma, cy);
#pragma unroll
  for (int j = 1; j < H; j++) m[H + j] = addc_cc(mid[H + j], sb[j] & ma, cy);
  m[N] = addc(ca & cb, 0, cy);
  m[H] = add_cc(m[H], sa[0] & mb, cy);
#pragma unroll
  for (int j = 1; j < H; j++) m[H + j] = addc_cc(m[H + j], sa[j] & mb, cy);
  m[N] = addc(m[N], 0, cy);
  // m −= a0b0, m −= a1b1.
  m[0] = sub_cc(m[0], lo[0], cy);
#pragma unroll
  for (int j = 1; j < N; j++) m[j] = subc_cc(m[j], lo[j], cy);
  m[N] = subc(m[N], 0, cy);
  m[0] = sub_cc(m[0], hi[0], cy);
#pragma unroll
  for (int j = 1; j < N; j++) m[j] = subc_cc(m[j], hi[j], cy);
  m[N] = subc(m[N], 0, cy);
  // T = lo + hi·X² + m·X (2N limbs; a·b < 2^{64N}, no carry out).
#pragma unroll
  for (int j = 0; j < H; j++) t[j] = lo[j];
  t[H] = add_cc(lo[H], m[0], cy);
#pragma unroll
  for (int j = 1; j < H; j++) t[H + j] = addc_cc(lo[H + j], m[j], cy);
#pragma unroll
  for (int j = 0; j < H; j++) t[N + j] = addc_cc(hi[j], m[H + j], cy);
  t[N + H] = addc_cc(hi[H], m[N], cy);
#pragma unroll
  for (int j = H + 1; j < N - 1; j++) t[N + j] = addc_cc(hi[j], 0, cy);
  t[2 * N - 1] = addc(hi[N - 1], 0, cy);
}

// r = a·b·R^{-1} mod p: fe_mul_kara_wide, then fe_redc_wide (a·b < p² < p·R).
template <class P, bool REDUCE = true>
__device__ __forceinline__ void fe_mul_kara(u32* r, const u32* a, const u32* b) {
  u32 t[2 * P::N];
  fe_mul_kara_wide<P>(t, a, b);
  fe_redc_wide<P, REDUCE>(r, t);
}

// r = a + b, M limbs, no reduction (callers know a + b < 2^{32M}).
template <int M>
__device__ __forceinline__ void add_limbs(u32* r, const u32* a, const u32* b) {
  u32 cy = 0;
  r[0] = add_cc(a[0], b[0], cy);
#pragma unroll
  for (int j = 1; j < M - 1; j++) r[j] = addc_cc(a[j], b[j], cy);
  r[M - 1] = addc(a[M - 1], b[M - 1], cy);
}

// r = a − b, M limbs, for a ≥ b (callers know it).
template <int M>
__device__ __forceinline__ void sub_limbs(u32* r, const u32* a, const u32* b) {
  u32 cy = 0;
  r[0] = sub_cc(a[0], b[0], cy);
#pragma unroll
  for (int j = 1; j < M - 1; j++) r[j] = subc_cc(a[j], b[j], cy);
  r[M - 1] = subc(a[M - 1], b[M - 1], cy);
}

// t = x − y mod p·R for x, y < p·R (2N limbs each): x − y, plus p·R (p added to the high
// half) where it borrows, so t ∈ [0, p·R), what fe_redc_wide takes. p·R ≡ 0 after the
// reduction's division by R, so t·R^{-1} ≡ (x − y)·R^{-1} (mod p).
template <class P>
__device__ __forceinline__ void fe_sub_wide(u32* t, const u32* x, const u32* y) {
  const int N = P::N;
  u32 cy = 0;
  t[0] = sub_cc(x[0], y[0], cy);
#pragma unroll
  for (int j = 1; j < 2 * N; j++) t[j] = subc_cc(x[j], y[j], cy);
  add_p_masked<P>(t + N, t + N, subc(0, 0, cy));  // x < y: + p·R
}

// (a·b − c·d)·R^{-1} mod p with one reduction where two products take two: the
// double-width products' difference (fe_sub_wide) is below p·R. The point formulas' Y3 =
// R·(Q − X3) − Y·PPP (ec.cuh) so costs 2·108 + 156 multiplies instead of 2·264.
template <class P, bool REDUCE = true>
__device__ __forceinline__ void fe_mul_sub_mul(u32* r, const u32* a, const u32* b, const u32* c, const u32* d) {
  u32 t[2 * P::N], u[2 * P::N];
  fe_mul_kara_wide<P>(t, a, b);
  fe_mul_kara_wide<P>(u, c, d);
  fe_sub_wide<P>(t, t, u);
  fe_redc_wide<P, REDUCE>(r, t);
}

template <class P>
__device__ __forceinline__ bool fe_is_zero(const u32* a) {
  u32 acc = 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) acc |= a[i];
  return acc == 0;
}

template <class P>
__device__ __forceinline__ bool fe_eq(const u32* a, const u32* b) {
  u32 acc = 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) acc |= a[i] ^ b[i];
  return acc == 0;
}

template <class P>
__device__ __forceinline__ void fe_copy(u32* r, const u32* a) {
#pragma unroll
  for (int i = 0; i < P::N; i++) r[i] = a[i];
}

template <class P>
__device__ __forceinline__ void fe_zero(u32* r) {
#pragma unroll
  for (int i = 0; i < P::N; i++) r[i] = 0;
}

// R mod p: the Montgomery form of 1.
template <class P>
__device__ __forceinline__ void fe_one(u32* r) {
#pragma unroll
  for (int i = 0; i < P::N; i++) r[i] = P::one(i);
}

// r = -a mod p (0 stays 0).
template <class P>
__device__ __forceinline__ void fe_neg(u32* r, const u32* a) {
  u32 z[P::N];
  fe_zero<P>(z);
  fe_sub<P>(r, z, a);
}

// r = a^{p-2} = a^{-1} (Fermat; 0 maps to 0). Square-and-multiply, not unrolled: used
// once per thread where it is used at all (synthetic SRS).
template <class P>
__device__ void fe_inv(u32* r, const u32* a) {
  u32 acc[P::N];
  fe_one<P>(acc);
  for (int bit = 32 * P::N - 1; bit >= 0; bit--) {
    fe_mul<P>(acc, acc, acc);
    u32 limb = P::mod(bit >> 5);
    if ((bit >> 5) == 0) limb -= 2;  // p - 2: p is odd and its low limb is > 2
    if ((limb >> (bit & 31)) & 1) fe_mul<P>(acc, acc, a);
  }
  fe_copy<P>(r, acc);
}
