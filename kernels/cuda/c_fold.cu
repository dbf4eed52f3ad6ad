// Layer 3: the circuit's C folded into L (docs/gpu.md "C folded into L"; CPU reference
// witness/c_matrix.rs `ByVar::q` and groth16/folded.rs `fold_c_into_l`), once per proving
// key, after LD' is made (ec_dft.cu):
//   Q_k = Σ_j C_jk·LD'_j,   out_k = Q_k (inputs, k < n_in),   out_k = L_{k−n_in} − Q_k (aux).
// The host grouped the entries by variable and cut each variable's into chunks of bounded
// cost (c_fold.rs `fold_chunks`): the ONE variable alone has ~10^4 entries at 2 KiB, each
// with a full-width coefficient (round constants), which one thread a variable ran for
// 37 s on an H200. c_fold_chunks sums a chunk a thread; c_fold_sum adds a variable's chunk
// sums and subtracts from L. Coefficients come as magnitude and sign (the smaller of c and
// r − c: −1 is one addition, not 255 bits of double-and-add).

// partial[i] = Σ over entries cstart[i]..cstart[i + 1] of ±mag·LD'_row (XYZZ).
extern "C" __global__ void __launch_bounds__(128)
    c_fold_chunks(xyzz_t* partial, const affine_t* ld, const u32* cstart, const u32* rows,
                  const u32* coeff_of, const fr_t* mags, const u32* negs, u32 chunks) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= chunks) return;
  xyzz_t acc;
  xyzz_set_inf(acc);
  for (u32 e = cstart[i]; e < cstart[i + 1]; e++) {
    const affine_t a = ld[rows[e]];
    const u32 c = coeff_of[e];
    const fr_t m = mags[c];
    const bool neg = negs[c] != 0;
    bool one = m.v[0] == 1;
    for (int j = 1; j < 8; j++) one = one && m.v[j] == 0;
    if (one) {
      xyzz_add_affine_signed(acc, a, neg);
      continue;
    }
    if (affine_is_inf(a)) continue;
    xyzz_t p;
    p.X = a.x;
    p.Y = neg ? f_neg(a.y) : a.y;
    p.ZZ = f_one<fp_t>();
    p.ZZZ = f_one<fp_t>();
    xyzz_mul_fr(p, m);
    xyzz_add(acc, p);
  }
  partial[i] = acc;
}

// out[k] = Q_k (k < n_in) or L_{k−n_in} − Q_k, Q_k the sum of partial[vstart[k]..vstart[k + 1]].
extern "C" __global__ void __launch_bounds__(128)
    c_fold_sum(affine_t* out, const affine_t* l, const xyzz_t* partial, const u32* vstart, u32 vars,
               u32 n_in) {
  const u32 k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= vars) return;
  xyzz_t acc;
  xyzz_set_inf(acc);
  for (u32 i = vstart[k]; i < vstart[k + 1]; i++) xyzz_add(acc, partial[i]);
  if (k >= n_in) {
    // L_k − Q_k
    acc.Y = f_neg(acc.Y);
    xyzz_add_affine_signed(acc, l[k - n_in], false);
  }
  out[k] = xyzz_to_affine(acc);
}
