// Layer 1: Montgomery arithmetic over a prime field, 32-bit limbs, little-endian.
// A field is a parameter struct P with N (limbs), INV = -p^{-1} mod 2^32 and mod(i), the
// i-th limb of p. Elements are kept fully reduced (< p), in Montgomery form x·R mod p,
// R = 2^{32N}: the same bits blst/blstrs keep in memory, so buffers are shared as they lie.
// Knows nothing of curves.

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

// r = a + b mod p. a, b < p and p < 2^{32N-1}, so a + b < 2^{32N} never carries out.
template <class P>
__device__ __forceinline__ void fe_add(u32* r, const u32* a, const u32* b) {
  u32 s[P::N];
  u64 c = 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) {
    c = (u64)a[i] + b[i] + (c >> 32);
    s[i] = (u32)c;
  }
  // s - p; keep s if it borrows (s < p).
  u32 d[P::N];
  long long br = 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) {
    long long x = (long long)s[i] - P::mod(i) + br;
    d[i] = (u32)x;
    br = x >> 32;
  }
  const bool keep = br != 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) r[i] = keep ? s[i] : d[i];
}

// r = a - b mod p.
template <class P>
__device__ __forceinline__ void fe_sub(u32* r, const u32* a, const u32* b) {
  u32 d[P::N];
  long long br = 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) {
    long long x = (long long)a[i] - b[i] + br;
    d[i] = (u32)x;
    br = x >> 32;
  }
  // Borrowed: add p back.
  const u32 mask = br ? 0xffffffffu : 0u;
  u64 c = 0;
#pragma unroll
  for (int i = 0; i < P::N; i++) {
    c = (u64)d[i] + (P::mod(i) & mask) + (c >> 32);
    r[i] = (u32)c;
  }
}

// r = a·b·R^{-1} mod p (CIOS). Plain C with 64-bit products: ptxas maps them to IMAD.WIDE
// with IADD3 carries. Tried and measured worse on sm_90 (docs/gpu.md): a PTX
// mad.lo.cc/madc.hi.cc version (more SASS: 630 IMAD + 612 IADD3 against 521 + 443 for Fp)
// and two interleaved products per call (more registers, fewer warps: MSM 14 % slower). p's top limb is below 2^31, so the running value t stays
// below 2p < 2^{32N} plus one spare limb t[N] that never overflows ("no-carry" CIOS).
template <class P>
__device__ __forceinline__ void fe_mul(u32* r, const u32* a, const u32* b) {
  const int N = P::N;
  u32 t[N + 1];
#pragma unroll
  for (int i = 0; i <= N; i++) t[i] = 0;
#pragma unroll
  for (int i = 0; i < N; i++) {
    // t += a·b_i
    u64 c = 0;
#pragma unroll
    for (int j = 0; j < N; j++) {
      c = (u64)a[j] * b[i] + t[j] + (c >> 32);
      t[j] = (u32)c;
    }
    u64 top = (u64)t[N] + (c >> 32);
    // t = (t + m·p) / 2^32 with m = t_0·(-p^{-1}) mod 2^32, so the low limb cancels.
    const u32 m = t[0] * P::INV;
    c = (u64)m * P::mod(0) + t[0];
#pragma unroll
    for (int j = 1; j < N; j++) {
      c = (u64)m * P::mod(j) + t[j] + (c >> 32);
      t[j - 1] = (u32)c;
    }
    c = top + (c >> 32);
    t[N - 1] = (u32)c;
    t[N] = (u32)(c >> 32);
  }
  // t < 2p: subtract p once if t >= p.
  u32 d[N];
  long long br = 0;
#pragma unroll
  for (int i = 0; i < N; i++) {
    long long x = (long long)t[i] - P::mod(i) + br;
    d[i] = (u32)x;
    br = x >> 32;
  }
  br += t[N];
  const bool keep = br < 0;
#pragma unroll
  for (int i = 0; i < N; i++) r[i] = keep ? t[i] : d[i];
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
