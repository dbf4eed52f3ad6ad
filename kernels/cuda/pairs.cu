// Layer 3: the ones' batch addition with bases summed in pairs ahead. About half of a
// partition's L, A and B scalars are 1 (docs/gpu.md "The scalar mix"), and many of those
// ones have a neighbour that is 1 too. With the proving key's pair sums on the device (made
// once, when the bases are uploaded: S_i = P_{2i} + P_{2i+1}, the aligned ones, and
// T_i = P_{2i+1} + P_{2i+2}, the odd ones), two neighbouring ones cost one mixed addition
// instead of two: a real 2 KiB witness's 1.269 M ones of L take 0.954 M madds with the
// aligned sums, 0.847 M with both. The batch addition is msm.cu's loop (batch_add_units)
// over the units PairUnits gives.

// Field inversion for the pair sums' conversion to affine: Fp by Fermat (fp_inv); Fp2 by
// its norm, (c0 + c1·u)^{-1} = (c0 − c1·u)/(c0² + c1²) (u² = −1).
__device__ __forceinline__ fp_t f_inv(const fp_t& a) { return fp_inv(a); }
__device__ __forceinline__ fp2_t f_inv(const fp2_t& a) {
  const fp_t n = fp_inv(fp_add(fp_sqr(a.c0), fp_sqr(a.c1)));
  fp2_t r;
  r.c0 = fp_mul(a.c0, n);
  r.c1 = fp_neg(fp_mul(a.c1, n));
  return r;
}

// P_{2i} + P_{2i+1} as XYZZ (either may be infinity; equal points double, opposite ones give
// infinity: xyzz_add_affine handles every case).
template <class F>
__device__ __forceinline__ xyzz_p<F> pair_xyzz(const affine_p<F>* bases, u32 i) {
  xyzz_p<F> r;
  xyzz_set_inf(r);
  xyzz_add_affine_signed(r, ld_affine(bases + 2 * i), false);
  xyzz_add_affine_signed(r, ld_affine(bases + 2 * i + 1), false);
  return r;
}

// Thread t makes pair sums [t·S, t·S + S) of `npairs` in affine coordinates (the odd ones:
// the same kernel on the bases from P_1 on), with one inversion for its S sums (Montgomery's
// trick, as srs_synthetic): d_i = ZZ_i·ZZZ_i (1 for infinity), prefix products parked in the
// output's x slots, one inversion, then walked back with each sum made again (two madds,
// cheaper than keeping 192 bytes a sum):
// 1/ZZ = ZZZ·d^{-1}, 1/ZZZ = ZZ·d^{-1}, so x = X·ZZZ·d^{-1}, y = Y·ZZ·d^{-1}. Infinity is
// written as all zeros (the affine layout's infinity, which the madd skips).
template <class F>
__device__ __forceinline__ void pair_sums(const affine_p<F>* bases, u32 npairs, u32 S, affine_p<F>* out) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 lo = t * S;
  if (lo >= npairs) return;
  const u32 hi = min(npairs, lo + S);
  F acc = f_one<F>();
  for (u32 i = lo; i < hi; i++) {
    out[i].x = acc;
    const xyzz_p<F> r = pair_xyzz(bases, i);
    if (!xyzz_is_inf(r)) acc = f_mul(acc, f_mul(r.ZZ, r.ZZZ));
  }
  F inv = f_inv(acc);
  for (u32 i = hi; i-- > lo;) {
    const xyzz_p<F> r = pair_xyzz(bases, i);
    if (xyzz_is_inf(r)) {
      out[i].x = f_zero<F>();
      out[i].y = f_zero<F>();
      continue;
    }
    const F d_inv = f_mul(inv, out[i].x);
    inv = f_mul(inv, f_mul(r.ZZ, r.ZZZ));
    out[i].x = f_mul(r.X, f_mul(r.ZZZ, d_inv));
    out[i].y = f_mul(r.Y, f_mul(r.ZZ, d_inv));
  }
}

extern "C" __global__ void pair_sums_g1(const affine_t* bases, u32 npairs, u32 S, affine_t* out) {
  pair_sums<fp_t>(bases, npairs, S, out);
}
extern "C" __global__ void pair_sums_g2(const g2_affine_t* bases, u32 npairs, u32 S, g2_affine_t* out) {
  pair_sums<fp2_t>(bases, npairs, S, out);
}

// The units of the ones' list for batch_add_units (msm.cu): from entry i (< hi) two entries
// when the next one of the chunk is idx[i] + 1 and its pair sum is held (idx[i] even:
// pairs[idx[i]/2]; odd: odd[(idx[i] − 1)/2], the sums P_{2i+1} + P_{2i+2}, when the prover
// holds them, else odd = nullptr), else one base (one entry). Any list sums correctly: a pair
// sum stands exactly for the two entries it replaces, whatever the order (the lists are
// ascending, which is where pairs are found). A chunk edge may cut a pair: its two entries
// are then added one by one, by the two threads. With the odd sums too, any two neighbours
// pair (greedily from the chunk's start): a real witness's ones take 0.668 units each
// instead of 0.752 with the aligned sums alone.
template <class F> struct PairUnits {
  const affine_p<F>* bases;
  const affine_p<F>* pairs;
  const affine_p<F>* odd;
  const u32* idx;
  __device__ __forceinline__ u32 next(u32 i, u32 hi, const affine_p<F>*& at) const {
    const u32 e = idx[i];
    if (i + 1 < hi && idx[i + 1] == e + 1) {
      if ((e & 1) == 0) {
        at = pairs + (e >> 1);
        return 2;
      }
      if (odd) {
        at = odd + (e >> 1);
        return 2;
      }
    }
    at = bases + e;
    return 1;
  }
};

extern "C" __global__ void __launch_bounds__(ACC_BLOCK, 4) batch_add_pairs(const affine_t* bases, const affine_t* pairs,
                                                                           const affine_t* odd, const u32* idx, u32 n,
                                                                           u32 S, xyzz_t* out) {
  batch_add_units<fp_t, ACC_BLOCK>(PairUnits<fp_t>{bases, pairs, odd, idx}, n, S, out);
}
extern "C" __global__ void __launch_bounds__(ACC_BLOCK_G2) batch_add_pairs_g2(const g2_affine_t* bases,
                                                                              const g2_affine_t* pairs,
                                                                              const g2_affine_t* odd, const u32* idx,
                                                                              u32 n, u32 S, g2_xyzz_t* out) {
  batch_add_units<fp2_t, ACC_BLOCK_G2>(PairUnits<fp2_t>{bases, pairs, odd, idx}, n, S, out);
}
