// Layer 2: G1 of BLS12-381 (y^2 = x^3 + 4 over Fp). Knows Fp, nothing of MSM.
//
// Inputs are affine (x, y) in Montgomery form, 96 bytes: blst's `blst_p1_affine`, so
// blstrs `G1Affine` slices upload as they lie. The point at infinity is (0, 0).
// Accumulators are XYZZ: x = X/ZZ, y = Y/ZZZ with ZZ^3 = ZZZ^2; infinity is ZZ = 0.
// Formulas: the "xyzz" family for a = 0 (Sutherland; explicit-formulas database
// add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1).

struct affine_t { fp_t x, y; };
struct xyzz_t { fp_t X, Y, ZZ, ZZZ; };

__device__ __forceinline__ bool affine_is_inf(const affine_t& p) {
  return fp_is_zero(p.x) && fp_is_zero(p.y);
}

__device__ __forceinline__ void xyzz_set_inf(xyzz_t& p) {
  p.X = fp_zero(); p.Y = fp_zero(); p.ZZ = fp_zero(); p.ZZZ = fp_zero();
}

__device__ __forceinline__ bool xyzz_is_inf(const xyzz_t& p) { return fp_is_zero(p.ZZ); }

// dbl-2008-s-1: U = 2Y, V = U^2, W = U·V, S = X·V, M = 3X^2,
// X3 = M^2 - 2S, Y3 = M(S - X3) - W·Y, ZZ3 = V·ZZ, ZZZ3 = W·ZZZ.
__device__ __noinline__ void xyzz_dbl(xyzz_t& p) {
  if (xyzz_is_inf(p)) return;
  fp_t U = fp_add(p.Y, p.Y);
  fp_t V = fp_sqr(U);
  fp_t W = fp_mul(U, V);
  fp_t S = fp_mul(p.X, V);
  fp_t X2 = fp_sqr(p.X);
  fp_t M = fp_add(fp_add(X2, X2), X2);
  fp_t X3 = fp_sub(fp_sub(fp_sqr(M), S), S);
  p.Y = fp_sub(fp_mul(M, fp_sub(S, X3)), fp_mul(W, p.Y));
  p.X = X3;
  p.ZZ = fp_mul(V, p.ZZ);
  p.ZZZ = fp_mul(W, p.ZZZ);
}

// mdbl-2008-s-1 for an affine input: as dbl with ZZ = ZZZ = 1.
__device__ __forceinline__ void xyzz_set_dbl_affine(xyzz_t& r, const fp_t& x, const fp_t& y) {
  fp_t U = fp_add(y, y);
  fp_t V = fp_sqr(U);
  fp_t W = fp_mul(U, V);
  fp_t S = fp_mul(x, V);
  fp_t X2 = fp_sqr(x);
  fp_t M = fp_add(fp_add(X2, X2), X2);
  fp_t X3 = fp_sub(fp_sub(fp_sqr(M), S), S);
  r.Y = fp_sub(fp_mul(M, fp_sub(S, X3)), fp_mul(W, y));
  r.X = X3;
  r.ZZ = V;
  r.ZZZ = W;
}

__device__ __noinline__ void xyzz_dbl_affine_ni(xyzz_t& r, const fp_t& x, const fp_t& y) {
  xyzz_set_dbl_affine(r, x, y);
}

// p += (x, y) affine, (x, y) not infinity. madd-2008-s:
// P = x·ZZ - X, R = y·ZZZ - Y, PP = P^2, PPP = P·PP, Q = X·PP,
// X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - Y·PPP, ZZ3 = ZZ·PP, ZZZ3 = ZZZ·PPP.
// P = 0 means equal x: doubling if R = 0 too, else p = -(x, y) and the sum is infinity.
__device__ __forceinline__ void xyzz_add_affine_inl(xyzz_t& p, const fp_t& x, const fp_t& y) {
  if (xyzz_is_inf(p)) {
    p.X = x; p.Y = y; p.ZZ = fp_one(); p.ZZZ = fp_one();
    return;
  }
  fp_t P = fp_sub(fp_mul(x, p.ZZ), p.X);
  fp_t R = fp_sub(fp_mul(y, p.ZZZ), p.Y);
  if (fp_is_zero(P)) {
    if (fp_is_zero(R)) xyzz_dbl_affine_ni(p, x, y);
    else xyzz_set_inf(p);
    return;
  }
  fp_t PP = fp_sqr(P);
  fp_t PPP = fp_mul(P, PP);
  fp_t Q = fp_mul(p.X, PP);
  fp_t X3 = fp_sub(fp_sub(fp_sqr(R), PPP), fp_add(Q, Q));
  p.Y = fp_sub(fp_mul(R, fp_sub(Q, X3)), fp_mul(p.Y, PPP));
  p.X = X3;
  p.ZZ = fp_mul(p.ZZ, PP);
  p.ZZZ = fp_mul(p.ZZZ, PPP);
}

// The same as a call (smaller code, the accumulator goes through local memory).
__device__ __noinline__ void xyzz_add_affine(xyzz_t& p, const fp_t& x, const fp_t& y) {
  xyzz_add_affine_inl(p, x, y);
}

// p += q, both XYZZ. add-2008-s:
// U1 = X1·ZZ2, U2 = X2·ZZ1, S1 = Y1·ZZZ2, S2 = Y2·ZZZ1, P = U2 - U1, R = S2 - S1,
// PP = P^2, PPP = P·PP, Q = U1·PP, X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - S1·PPP,
// ZZ3 = ZZ1·ZZ2·PP, ZZZ3 = ZZZ1·ZZZ2·PPP.
__device__ __noinline__ void xyzz_add(xyzz_t& p, const xyzz_t& q) {
  if (xyzz_is_inf(q)) return;
  if (xyzz_is_inf(p)) { p = q; return; }
  fp_t U1 = fp_mul(p.X, q.ZZ);
  fp_t U2 = fp_mul(q.X, p.ZZ);
  fp_t S1 = fp_mul(p.Y, q.ZZZ);
  fp_t S2 = fp_mul(q.Y, p.ZZZ);
  fp_t P = fp_sub(U2, U1);
  fp_t R = fp_sub(S2, S1);
  if (fp_is_zero(P)) {
    if (fp_is_zero(R)) xyzz_dbl(p);
    else xyzz_set_inf(p);
    return;
  }
  fp_t PP = fp_sqr(P);
  fp_t PPP = fp_mul(P, PP);
  fp_t Q = fp_mul(U1, PP);
  fp_t X3 = fp_sub(fp_sub(fp_sqr(R), PPP), fp_add(Q, Q));
  p.Y = fp_sub(fp_mul(R, fp_sub(Q, X3)), fp_mul(S1, PPP));
  p.X = X3;
  p.ZZ = fp_mul(fp_mul(p.ZZ, q.ZZ), PP);
  p.ZZZ = fp_mul(fp_mul(p.ZZZ, q.ZZZ), PPP);
}

// p += ±a for an affine point that may be infinity (SRS entries never are; tests use it).
__device__ __forceinline__ void xyzz_add_affine_signed(xyzz_t& p, const affine_t& a, bool neg) {
  if (affine_is_inf(a)) return;
  xyzz_add_affine(p, a.x, neg ? fp_neg(a.y) : a.y);
}

// p = k·p for a small non-negative k (double-and-add from the top bit).
__device__ void xyzz_mul_small(xyzz_t& p, u32 k) {
  xyzz_t base = p;
  xyzz_set_inf(p);
  if (k == 0) return;
  for (int bit = 31 - __clz(k); bit >= 0; bit--) {
    xyzz_dbl(p);
    if ((k >> bit) & 1) xyzz_add(p, base);
  }
}
