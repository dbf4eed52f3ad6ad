// Layer 3: a = A·z and b = B·z from a circuit's recorded R1CS (CPU reference
// witness/r1cs.rs `R1cs::evaluate_into`; docs/gpu.md "a and b from the recorded R1CS").
// Knows Fr and the recording's layout, nothing of curves.
//
// The recording is a prefix and one block (a PoRep partition: a block a challenge); row g
// of the whole circuit is recorded row g (g < prefix rows) or prefix + (g − p) mod b of
// block k = (g − p) / b, whose variables past the prefix's lie k blocks on:
//   input i → i (i < prefix inputs) or i + k·block inputs,
//   aux i   → i (i < prefix aux)    or i + k·block aux.
// z is the prover's scalars (canonical, inputs then aux: the bytes it uploads for the MSMs).
// Each row's value is Σ_e coeff_e·z_{var_e}: ±1 terms are added in the canonical domain,
// others multiplied as mont(coeff·R², z) = coeff·z·R; the canonical part joins by one
// product mont(acc, R² mod r) = acc·R, so a and b leave in Montgomery form, as synthesis
// writes them. After the recorded rows come bellperson's `input_i · 0 = 0` rows (a = the
// input, b = 0) and zeros to the domain's end.
//
// Rows are short (A ~2.4 entries on average at 8 MiB) but a few are long (bits packed into a
// number: ~1,800 rows of ~930 entries in a challenge of ~1.9 M rows), and a warp waits for
// its longest row: a thread a row spent nearly all its time on those (H100, a 2^27 layout:
// 127 ms). So a row with more than R1CS_LONG entries in any of A, B, C is left by r1cs_eval
// to r1cs_eval_long, a warp a row (the host lists them: `DeviceForm::long`).

#define R1CS_THREADS 256
#define R1CS_INPUT 0x80000000u  // witness/matrix.rs INPUT
#define R1CS_LONG 8              // device_form.rs LONG

// One matrix of the recording, as r1cs_eval.rs lays it out.
struct R1csMat {
  const u32* start;    // recorded row j's entries: start[j]..start[j + 1]
  const uint2* ent;    // (variable, coefficient index)
  const fr_t* coeff;   // coeff·R² (Montgomery limbs of coeff·R): mont(coeff', z) = coeff·z·R
  const u32* kind;     // 0: +1, 1: −1, 2: any other (multiplied)
};

struct R1csLayout {
  u32 p_rows, b_rows, blocks;
  u32 p_inputs, b_inputs, p_aux, b_aux;
  u32 n_inputs;  // the whole circuit's inputs (ONE included): where aux starts in z
  u32 rows;      // the whole circuit's recorded rows (bellperson's input rows excluded)
  u32 n;         // the domain
  fr_t r2;       // R² mod r: mont(x, r2) = x·R
};

// Entries first, first + step, … of recorded row `row` of `m` in block k: Σ coeff·z,
// Montgomery form (the row's value when step = 1 and first = 0; a lane's share otherwise).
__device__ __forceinline__ fr_t r1cs_row(const R1csMat& m, const R1csLayout& l, const fr_t* z, u32 row, u32 k,
                                         u32 first, u32 step) {
  fr_t acc_c, acc_m;
#pragma unroll
  for (int i = 0; i < 8; i++) acc_c.v[i] = acc_m.v[i] = 0;
  bool any_c = false;
  const u32 end = m.start[row + 1];
  for (u32 e = m.start[row] + first; e < end; e += step) {
    const uint2 t = __ldg(m.ent + e);
    u32 idx;
    if (t.x & R1CS_INPUT) {
      const u32 i = t.x & ~R1CS_INPUT;
      idx = i < l.p_inputs ? i : i + k * l.b_inputs;
    } else {
      idx = l.n_inputs + (t.x < l.p_aux ? t.x : t.x + k * l.b_aux);
    }
    const fr_t zv = ld_fr(z + idx);
    const u32 kind = __ldg(m.kind + t.y);
    if (kind == 0) {
      acc_c = fr_add(acc_c, zv);
      any_c = true;
    } else if (kind == 1) {
      acc_c = fr_sub(acc_c, zv);
      any_c = true;
    } else {
      acc_m = fr_add(acc_m, fr_mul(ld_fr(m.coeff + t.y), zv));
    }
  }
  return any_c ? fr_add(acc_m, fr_mul(acc_c, l.r2)) : acc_m;
}

__device__ __forceinline__ u32 r1cs_len(const R1csMat& m, u32 row) { return m.start[row + 1] - m.start[row]; }

// Whether recorded row `row` is one r1cs_eval_long makes (the host's `DeviceForm::long`
// lists exactly these).
__device__ __forceinline__ bool r1cs_is_long(const R1csMat& ma, const R1csMat& mb, const R1csMat& mc, u32 row) {
  return r1cs_len(ma, row) > R1CS_LONG || r1cs_len(mb, row) > R1CS_LONG || r1cs_len(mc, row) > R1CS_LONG;
}

// The recorded row and block of whole-circuit row g < l.rows.
__device__ __forceinline__ void r1cs_recorded(const R1csLayout& l, u32 g, u32& row, u32& k) {
  row = g;
  k = 0;
  if (g >= l.p_rows) {
    k = (g - l.p_rows) / l.b_rows;
    row = g - k * l.b_rows;
  }
}

__device__ __forceinline__ bool fr_equal(const fr_t& x, const fr_t& y) {
  u32 d = 0;
#pragma unroll
  for (int i = 0; i < 8; i++) d |= x.v[i] ^ y.v[i];
  return d == 0;
}

// a[g], b[g] for g < n, but for the long rows (left to r1cs_eval_long). With `check`, every
// row's a·b = C·z is checked and the first row where it fails is left in *bad (atomicMin;
// the caller sets it to ~0).
extern "C" __global__ void __launch_bounds__(R1CS_THREADS)
    r1cs_eval(const R1csMat ma, const R1csMat mb, const R1csMat mc, const R1csLayout l, const fr_t* z,
              fr_t* a, fr_t* b, u32 check, u32* bad) {
  const u32 g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= l.n) return;
  fr_t va, vb;
#pragma unroll
  for (int i = 0; i < 8; i++) va.v[i] = vb.v[i] = 0;
  if (g < l.rows) {
    u32 row, k;
    r1cs_recorded(l, g, row, k);
    if (r1cs_is_long(ma, mb, mc, row)) return;
    va = r1cs_row(ma, l, z, row, k, 0, 1);
    vb = r1cs_row(mb, l, z, row, k, 0, 1);
    if (check && !fr_equal(fr_mul(va, vb), r1cs_row(mc, l, z, row, k, 0, 1))) atomicMin(bad, g);
  } else if (g < l.rows + l.n_inputs) {
    // bellperson's input row: a = input (to Montgomery form), b = 0.
    va = fr_mul(ld_fr(z + (g - l.rows)), l.r2);
  }
  st_fr(a + g, va);
  st_fr(b + g, vb);
}

// Σ of x over the `lanes` lanes of a group (a power of two up to 32, aligned in the warp),
// every lane of it left with the sum.
__device__ __forceinline__ fr_t r1cs_lanes_sum(fr_t x, u32 lanes) {
  for (u32 off = lanes >> 1; off > 0; off >>= 1) {
    fr_t y;
#pragma unroll
    for (int i = 0; i < 8; i++) y.v[i] = __shfl_xor_sync(0xffffffffu, x.v[i], off);
    x = fr_add(x, y);
  }
  return x;
}

// The long rows: `lanes` threads (32 on the device; 1 in the host build, whose threads run
// one after another) a row instance, each summing every lanes-th entry, then their sums
// added. Instance w: the prefix's long rows long_rows[0..n_prefix] once, then the block's
// long_rows[n_prefix..n_prefix + n_block] in every block k. Same check as r1cs_eval.
extern "C" __global__ void __launch_bounds__(R1CS_THREADS)
    r1cs_eval_long(const R1csMat ma, const R1csMat mb, const R1csMat mc, const R1csLayout l, const fr_t* z,
                   fr_t* a, fr_t* b, u32 check, u32* bad, const u32* long_rows, u32 n_prefix, u32 n_block,
                   u32 lanes) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const u32 w = t / lanes, lane = t % lanes;
  const u32 instances = n_prefix + n_block * l.blocks;
  // Whole groups leave together: the shuffles below need every lane of the group.
  if (w >= instances) return;
  u32 row, k = 0;
  if (w < n_prefix) {
    row = long_rows[w];
  } else {
    k = (w - n_prefix) / n_block;
    row = long_rows[n_prefix + (w - n_prefix) - k * n_block];
  }
  const u32 g = row < l.p_rows ? row : row + k * l.b_rows;
  const fr_t va = r1cs_lanes_sum(r1cs_row(ma, l, z, row, k, lane, lanes), lanes);
  const fr_t vb = r1cs_lanes_sum(r1cs_row(mb, l, z, row, k, lane, lanes), lanes);
  fr_t vc;
  if (check) vc = r1cs_lanes_sum(r1cs_row(mc, l, z, row, k, lane, lanes), lanes);
  if (lane != 0) return;
  if (check && !fr_equal(fr_mul(va, vb), vc)) atomicMin(bad, g);
  st_fr(a + g, va);
  st_fr(b + g, vb);
}
