// Layer 1 (Fr): products by a constant known ahead, the NTT's in-block twiddles, by
// Shoup's method: with w' = floor(w·2^288/r) stored beside w, x·w mod r needs
// q = floor(x·w'/2^288) (the high half of a product, of which the low columns barely
// matter) and x·w − q·r mod 2^256 (two low halves), where a Montgomery product needs a
// whole a·b and a whole m·r. Multiplies (32-bit multiply-adds, a wide pair counting one):
// 44 for q, 28 + 8 low halves for x·w, 15 + 6 for q·r (r's low limbs make q·r_0 and
// q·r_1 additions), 87 wide and 14 single, against fe_mul's 112 wide.
//
// Bounds. w' = w·2^288/r − ε (0 ≤ ε < 1), so for any x < 2^256
//   x·w'/2^288 = x·w/r − x·ε/2^288 > x·w/r − 2^{-32} ≥ Q − 2^{-32},  Q = floor(x·w/r).
// The products of the high half's columns below 7 are left out: less than 2^259, so the
// computed value is short of x·w'/2^288 by under 2^{-29}, still above Q − 1, and
//   q = floor(computed) ∈ {Q − 1, Q},  x·w − q·r = (x·w mod r) + (Q − q)·r < 2r < 2^256:
// its value mod 2^256 is the value itself, and one conditional subtraction leaves it below
// r (the host test fails with column 7 left out). x may be any value below 2^256:
// the NTT's unreduced differences (< 2r) go in as they are. With x in Montgomery form and
// w the twiddle's plain value, x·w mod r is the product's Montgomery form.

// A twiddle and its quotient, 80 bytes (five 16-byte loads): ntt.rs `ShoupTwiddle`.
struct fr_tw_t { fr_t w; u32 q[9]; u32 pad[3]; };

#ifdef __CUDA_ARCH__
// lo(a·b) + y + carry in, no carry out (the top limb of a value kept mod 2^256).
__device__ __forceinline__ u32 madc_lo(u32 a, u32 b, u32 y, u32& cy) {
  (void)cy;
  u32 r;
  asm volatile("madc.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(y));
  return r;
}
#else
__device__ __forceinline__ u32 madc_lo(u32 a, u32 b, u32 y, u32& cy) { return a * b + y + cy; }
#endif

// T[i + j], T[i + j + 1] += a_i·b for i = lo, lo + 2, ..., ≤ hi: one carry chain of
// 64-bit multiply-adds (its carry out left in cy). Whether it had a product; both are
// constants once the callers' loops are unrolled.
__device__ __forceinline__ bool mad_chain(int j, int lo, int hi, u32* T, const u32* a, u32 b, u32& cy) {
  bool first = true;
  // Constant bounds: with lo..hi as the bounds the loop stayed a loop and the arrays went to
  // local memory (71 stores in fr_mul_tw2).
#pragma unroll
  for (int i = lo & 1; i < 8; i += 2) {
    if (i < lo || i > hi) continue;
    if (first)
      mad2_cc(T[i + j], T[i + j + 1], a[i], b, T[i + j], T[i + j + 1], cy);
    else
      madc2_cc(T[i + j], T[i + j + 1], a[i], b, T[i + j], T[i + j + 1], cy);
    first = false;
  }
  return !first;
}

// Row j of T = x·w' (8 × 9 limbs, positions 0..16) where it can reach q: products at
// positions i + j ≥ 7. As in fe_mul, a product's (lo, hi) pair lands on an array of its
// own by the parity of its position (A even, B odd), so a row is two carry chains.
// Rows 2k − 1 and 2k of A (2k and 2k + 1 of B) end on the same pair, and the carry of
// each lands on the limb just above it, which no product has reached yet and which holds
// at most the other row's carry: one addc takes it. B's last row (j = 8) carries out of
// position 16, which T < 2^544 leaves zero.
__device__ __forceinline__ void shoup_q_chain(int j, int i0, u32* T, const u32* x, u32 wj) {
  const int need = 7 - j;  // the first i of this parity with i + j ≥ 7
  const int lo = need <= i0 ? i0 : need + ((need - i0) & 1);
  const int hi = i0 + 6;  // x's last limb of this parity
  u32 cy = 0;
  if (mad_chain(j, lo, hi, T, x, wj, cy) && hi + j + 2 <= 16) T[hi + j + 2] = addc(T[hi + j + 2], 0, cy);
}
__device__ __forceinline__ void shoup_q_row(int j, u32* A, u32* B, const u32* x, u32 wj) {
  shoup_q_chain(j, j & 1, A, x, wj);        // i + j even
  shoup_q_chain(j, (j + 1) & 1, B, x, wj);  // i + j odd
}

// q = (A + B) >> 288: A holds positions 8..16, B 7..16 (B[7] has nothing to add to).
__device__ __forceinline__ void shoup_q_merge(u32* q, const u32* A, const u32* B) {
  u32 cy = 0, t[17];
  t[8] = add_cc(A[8], B[8], cy);
#pragma unroll
  for (int p = 9; p < 16; p++) t[p] = addc_cc(A[p], B[p], cy);
  t[16] = addc(A[16], B[16], cy);
#pragma unroll
  for (int i = 0; i < 8; i++) q[i] = t[9 + i];
}

// Row j of a·b_j mod 2^256 into C (pairs at even positions) and D (odd), positions 0..7.
// C's pairs end at (6, 7): their carry out is 2^256's and dropped. D's end at (5, 6), and
// the low half of the position-7 product takes their carry in.
__device__ __forceinline__ void shoup_low_row(int j, u32* C, u32* D, const u32* a, u32 bj) {
  u32 cy = 0;
  mad_chain(j, j & 1, 6 - j, C, a, bj, cy);
  cy = 0;
  if (mad_chain(j, (j + 1) & 1, 5 - j, D, a, bj, cy))
    D[7] = madc_lo(a[7 - j], bj, D[7], cy);
  else
    D[7] += a[7 - j] * bj;
}

// r = C + D − q + q·2^32 (mod 2^256): the low halves of x·w and of q·(2^256 − r)'s limbs
// from 2 up, plus q·(2^32 − 1) for its limb 0 (limb 1 is 0: 2^256 − r ≡ 2^32 − 1 mod 2^64),
// i.e. x·w − q·r mod 2^256, below 2r (see the bounds at the top); then reduced below r.
__device__ __forceinline__ void shoup_finish(u32* r, const u32* C, const u32* D, const u32* q) {
  u32 cy = 0, t[8], u[8];
  t[0] = C[0];
  t[1] = add_cc(C[1], D[1], cy);
#pragma unroll
  for (int p = 2; p < 7; p++) t[p] = addc_cc(C[p], D[p], cy);
  t[7] = addc(C[7], D[7], cy);
  u[0] = sub_cc(t[0], q[0], cy);
#pragma unroll
  for (int p = 1; p < 7; p++) u[p] = subc_cc(t[p], q[p], cy);
  u[7] = subc(t[7], q[7], cy);
  t[0] = u[0];
  t[1] = add_cc(u[1], q[0], cy);
#pragma unroll
  for (int p = 2; p < 7; p++) t[p] = addc_cc(u[p], q[p - 1], cy);
  t[7] = addc(u[7], q[6], cy);
  sub_p_once<FrP>(r, t, cy);
}

// The limbs of 2^256 − r from 2 up: ~r_j.
__device__ __forceinline__ u32 fr_neg_mod(int j) { return ~FrP::mod(j); }

// The twiddle's w' for q's rows (its w, for the low rows, is read by ld_fr).
__device__ __forceinline__ void ld_tw_q(const fr_tw_t* p, u32* q) {
  const uint4* s = (const uint4*)p;
  const uint4 c = __ldg(s + 2), d = __ldg(s + 3), e = __ldg(s + 4);
  q[0] = c.x; q[1] = c.y; q[2] = c.z; q[3] = c.w; q[4] = d.x; q[5] = d.y; q[6] = d.z; q[7] = d.w;
  q[8] = e.x;
}

// x·w for the twiddle at t (read here: the call moves a pointer, not 17 words); x any
// value below 2^256.
__device__ __noinline__ fr_t fr_mul_tw(const fr_tw_t* t, fr_t x) {
  u32 A[18] = {0}, B[18] = {0}, C[8] = {0}, D[8] = {0}, q[9];
  ld_tw_q(t, q);
#pragma unroll
  for (int j = 0; j < 9; j++) shoup_q_row(j, A, B, x.v, q[j]);
  const fr_t w = ld_fr(&t->w);
  shoup_q_merge(q, A, B);
#pragma unroll
  for (int j = 0; j < 8; j++) shoup_low_row(j, C, D, x.v, w.v[j]);
#pragma unroll
  for (int j = 2; j < 8; j++) shoup_low_row(j, C, D, q, fr_neg_mod(j));
  fr_t r;
  shoup_finish(r.v, C, D, q);
  return r;
}

// Two products, their rows alternating (as fe_mul2: a second carry chain to issue while one
// waits). The radix-2^9 pass's butterflies call this: 374 SASS instructions (170 IMAD.WIDE)
// where fr_mul2 has 441 (224), and NTT 2^27 took 34.8 ms against 35.4 for fr_mul2 and
// 36.2 for two fr_mul_tw calls (H200, docs/perf.md).
__device__ __noinline__ fr2_t fr_mul_tw2(const fr_tw_t* t0, fr_t x0, const fr_tw_t* t1, fr_t x1) {
  u32 A0[18] = {0}, B0[18] = {0}, C0[8] = {0}, D0[8] = {0}, q0[9];
  u32 A1[18] = {0}, B1[18] = {0}, C1[8] = {0}, D1[8] = {0}, q1[9];
  ld_tw_q(t0, q0);
  ld_tw_q(t1, q1);
#pragma unroll
  for (int j = 0; j < 9; j++) {
    shoup_q_row(j, A0, B0, x0.v, q0[j]);
    shoup_q_row(j, A1, B1, x1.v, q1[j]);
  }
  const fr_t w0 = ld_fr(&t0->w), w1 = ld_fr(&t1->w);
  shoup_q_merge(q0, A0, B0);
  shoup_q_merge(q1, A1, B1);
#pragma unroll
  for (int j = 0; j < 8; j++) {
    shoup_low_row(j, C0, D0, x0.v, w0.v[j]);
    shoup_low_row(j, C1, D1, x1.v, w1.v[j]);
  }
#pragma unroll
  for (int j = 2; j < 8; j++) {
    shoup_low_row(j, C0, D0, q0, fr_neg_mod(j));
    shoup_low_row(j, C1, D1, q1, fr_neg_mod(j));
  }
  fr2_t r;
  shoup_finish(r.a.v, C0, D0, q0);
  shoup_finish(r.b.v, C1, D1, q1);
  return r;
}
