// Layer 3: H's MSM with its bases in Lagrange form (docs/gpu.md "H in Lagrange form"), the
// two per-partition kernels. With A_c, B_c the values of A and B on the coset gH (after
// ntt.cu's transforms) and c_j C's values on the domain:
//   Σ_{i<n−1} h_i·H_i = Σ_j (A_c·B_c)_j/(g^n − 1)·LC_j − Σ_j c_j·LD'_j
// (CPU reference and the derivation: groth16/lagrange.rs). The first sum is a dense MSM
// over LC with the scalars h_coset_scalars writes; the second goes by c's kinds, which
// h_c_kinds sorts out: zero (nothing), one, minus one and two (batch additions), the rest
// (Pippenger).

// out[i] = a[i]·b[i]·k with a, b Montgomery and k = (g^n − 1)^{-1} plain: the Montgomery
// products (aR·bR)/R = abR, then abR·k/R = ab·k leave it canonical (an MSM scalar). `out`
// may be `a` (the prover writes in place: a's loads are plain, not read-only).
extern "C" __global__ void h_coset_scalars(fr_t* out, const fr_t* a, const fr_t* b, const fr_t k, u32 n) {
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    st_fr(out + i, fr_mul(fr_mul(ld_fr_rw(a + i), ld_fr(b + i)), k));
}

// The kinds of c's values besides zero, and where h_c_kinds lists them. A real PoRep
// witness's c (2 KiB, 2^22 rows, `cuzk bench witness`): 79.9 % zero, 12.5 % two, 3.0 % one,
// 3.0 % minus one, the other 1.7 % some 15 000 distinct values (none more than 60 times).
// The three repeated values go to batch additions (a sum of bases, then doubled or
// negated): in Pippenger each would pile its hundreds of thousands of terms into one
// bucket, whose partial sums the fixup adds one after the other.
#define C_ONE 0
#define C_NEG_ONE 1
#define C_TWO 2
#define C_OTHER 3

// c's values, Montgomery → canonical in place (the MSM's scalars), each non-zero one listed
// by kind: ones[], neg_ones[] and twos[] its index, other[] a Pippenger term [j, j] (base j,
// scalar j). counts[k]: how many of kind k (zeroed by the caller). Lists are filled a warp
// at a time (one atomic a warp and kind); their order varies from run to run, which the
// sums do not see (the group is commutative and every addition exact).
extern "C" __global__ void h_c_kinds(fr_t* c, u32 n, u32* ones, u32* neg_ones, u32* twos, uint2* other,
                                     u32* counts) {
  const fr_t one_plain = {{1, 0, 0, 0, 0, 0, 0, 0}};
  // r − 1, little-endian limbs.
  const u32 r_minus_1[8] = {0x00000000u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                            0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
  const u32 lane = threadIdx.x & 31;
  const u32 stride = gridDim.x * blockDim.x;
  // Every lane of a warp runs the same number of rounds (the ballots need them all).
  const u32 rounds = (n + stride - 1) / stride;
  for (u32 r = 0; r < rounds; r++) {
    const u32 i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
    int kind = -1;
    if (i < n) {
      const fr_t x = fr_mul(ld_fr_rw(c + i), one_plain);
      st_fr(c + i, x);
      u32 high = 0, neg = 0;
      for (int l = 1; l < 8; l++) high |= x.v[l];
      for (int l = 0; l < 8; l++) neg |= x.v[l] ^ r_minus_1[l];
      if (high == 0 && x.v[0] == 1) kind = C_ONE;
      else if (high == 0 && x.v[0] == 2) kind = C_TWO;
      else if (neg == 0) kind = C_NEG_ONE;
      else if (high != 0 || x.v[0] != 0) kind = C_OTHER;
    }
    for (int k = 0; k < 4; k++) {
      const u32 mask = __ballot_sync(0xffffffffu, kind == k);
      if (mask == 0) continue;
      u32 base = 0;
      if (lane == __ffs(mask) - 1) base = atomicAdd(counts + k, __popc(mask));
      base = __shfl_sync(0xffffffffu, base, __ffs(mask) - 1);
      if (kind == k) {
        const u32 at = base + __popc(mask & ((1u << lane) - 1));
        if (k == C_OTHER) other[at] = make_uint2(i, i);
        else (k == C_ONE ? ones : k == C_NEG_ONE ? neg_ones : twos)[at] = i;
      }
    }
  }
}
