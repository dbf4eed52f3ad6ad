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

// r = a - b mod p.
template <class P>
__device__ __forceinline__ void fe_sub(u32* r, const u32* a, const u32* b) {
  u32 d[P::N];
  u32 cy = 0;
  d[0] = sub_cc(a[0], b[0], cy);
#pragma unroll
  for (int i = 1; i < P::N; i++) d[i] = subc_cc(a[i], b[i], cy);
  // Borrowed: add p back.
  const u32 mask = subc(0, 0, cy);
  r[0] = add_cc(d[0], P::mod(0) & mask, cy);
#pragma unroll
  for (int i = 1; i < P::N - 1; i++) r[i] = addc_cc(d[i], P::mod(i) & mask, cy);
  r[P::N - 1] = addc(d[P::N - 1], P::mod(P::N - 1) & mask, cy);
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
template <class P>
__device__ __forceinline__ void fe_mul(u32* r, const u32* a, const u32* b) {
  const int N = P::N;
  static_assert(N % 2 == 0, "fe_mul: even limb count");
  u32 x[N], y[N];  // the two arrays: x is e on even rows, y on odd rows
  u32 cy = 0;
  // Row 0: t = a·b_0.
#pragma unroll
  for (int j = 0; j < N; j += 2) {
    const u64 pe = (u64)a[j] * b[0], po = (u64)a[j + 1] * b[0];
    x[j] = (u32)pe;
    x[j + 1] = (u32)(pe >> 32);
    y[j] = (u32)po;
    y[j + 1] = (u32)(po >> 32);
  }
#pragma unroll
  for (int i = 0; i < N; i++) {
    u32* e = (i & 1) ? y : x;
    u32* o = (i & 1) ? x : y;
    // t += m·p, m = e_0·(-p^{-1}) mod 2^32. The odd chain first: its carry out of position
    // N + 1 is zero; the even chain's (position N) goes into o's top limb.
    const u32 m = e[0] * P::inv();
    mad2_cc(o[0], o[1], m, P::mod(1), o[0], o[1], cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(o[j], o[j + 1], m, P::mod(j + 1), o[j], o[j + 1], cy);
    mad2_cc(e[0], e[1], m, P::mod(0), e[0], e[1], cy);
#pragma unroll
    for (int j = 2; j < N; j += 2) madc2_cc(e[j], e[j + 1], m, P::mod(j), e[j], e[j + 1], cy);
    o[N - 1] = addc(o[N - 1], 0, cy);
    if (i + 1 == N) break;
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
  // N is even, so the last row's o is x: t = x + (y_1..y_{N-1}) < 2p.
  u32 t[N];
  t[0] = add_cc(x[0], y[1], cy);
#pragma unroll
  for (int j = 1; j < N - 1; j++) t[j] = addc_cc(x[j], y[j + 1], cy);
  t[N - 1] = addc(x[N - 1], 0, cy);
  // Subtract p once if t >= p (no borrow).
  u32 d[N];
  d[0] = sub_cc(t[0], P::mod(0), cy);
#pragma unroll
  for (int j = 1; j < N; j++) d[j] = subc_cc(t[j], P::mod(j), cy);
  const u32 borrow = subc(0, 0, cy);  // all ones if t < p
#pragma unroll
  for (int j = 0; j < N; j++) r[j] = borrow ? t[j] : d[j];
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
