// Layer 3: the circuit's C folded into L (docs/gpu.md "C folded into L"; CPU reference
// witness/c_matrix.rs `ByVar::q` and groth16/folded.rs `fold_c_into_l`), once per proving
// key, after LD' is made (ec_dft.cu):
//   Q_k = Σ_j C_jk·LD'_j,   out_k = Q_k (inputs, k < n_in),   out_k = L_{k−n_in} − Q_k (aux).
// One thread a variable over its entries, which the host grouped by variable
// (start[k]..start[k + 1] index rows[] and coeff_of[]). Coefficients come as magnitude and
// sign (the smaller of c and r − c: −1 is one addition, not 255 bits of double-and-add).

extern "C" __global__ void __launch_bounds__(128)
    c_fold(affine_t* out, const affine_t* l, const affine_t* ld, const u32* start, const u32* rows,
           const u32* coeff_of, const fr_t* mags, const u32* negs, u32 vars, u32 n_in) {
  const u32 k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= vars) return;
  xyzz_t acc;
  xyzz_set_inf(acc);
  for (u32 e = start[k]; e < start[k + 1]; e++) {
    const affine_t a = ld[rows[e]];
    const u32 c = coeff_of[e];
    const fr_t m = mags[c];
    const bool neg = negs[c] != 0;
    bool one = m.v[0] == 1;
    for (int i = 1; i < 8; i++) one = one && m.v[i] == 0;
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
  if (k >= n_in) {
    // L_k − Q_k
    acc.Y = f_neg(acc.Y);
    xyzz_add_affine_signed(acc, l[k - n_in], false);
  }
  out[k] = xyzz_to_affine(acc);
}
