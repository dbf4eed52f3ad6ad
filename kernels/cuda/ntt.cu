// Layer 3: NTT over Fr. Knows Fr, nothing of curves or Groth16.
//
// Stockham radix-2^k passes, natural order in and out, out of place (ping-pong buffers).
// A pass with radix R = 2^log_r after sub-transforms of size Ns = 2^log_ns does, for each
// j < n/R with k = j mod Ns:
//   u_t = x[j + t·n/R] · w_{Ns·R}^{t·k}          (t < R; w_m = w_n^{n/m})
//   v_q = Σ_t u_t · w_R^{t·q}                      (R-point DFT, radix-2 DIF in shared memory)
//   y[(j/Ns)·Ns·R + k + q·Ns] = v_q
// and after all passes (Π R = n) y_k = Σ_j x_j·w_n^{jk}. The inverse uses w^{-1} (or, with
// the full tables below, runs forward on its input read backwards).
//
// A pass's twiddles are w_m^{t·k} with m = Ns·R and t·k < m. For m ≤ 2^direct_log they are
// read from one direct table of w_M^e, e < M = 2^direct_log (2^18 entries, 8 MiB, in L2), at
// e·M/m: one load. Otherwise w_n^e for any e < n is looked up as lo[e mod 2^b] · hi[e >> b]
// (two tables of 2^b, b = ceil(log n / 2), resident in L2): two loads and a product. At
// 2^27 (passes 9 + 9 + 9) the first pass has no twiddles (k = 0), the second reads the
// direct table and the third the two-level one. The same two-table trick scales by c·g^i: a pass can
// multiply its input x[i] (PRE_SCALE) or its output y[i] (post scale) by lo[i]·hi[i], with
// c folded into hi (so hi[0] = c). PRE_AB reads a[i]·b[i] instead of x[i] (the quotient's
// pointwise product, fused into the first pass of the last inverse transform); a post scale
// with post_sub subtracts c·post_sub[i] after it (the quotient's C coefficients, fused into
// that transform's last pass: y[i]·c·g^{-i} − c·n·c_i, see ntt.rs `quotient`).
//
// Full tables (ntt.rs `FullTables`, when the prover's memory plan has room): n-entry tables
// laid out like the data they scale, so one coalesced load replaces a lo·hi product. The
// last pass's twiddles full_tw[j + t·n/R] = w_n^{t·k} (its k = j), the coset pre-scale
// pre_full[i] = n^{-1}·g^i and the quotient's post scale post_full[i] = c·g^{-i}. There is
// one twiddle table, the forward one: an inverse transform runs forward on its input read
// backwards (rev_in, first pass), INTT(x)_k = Σ_j x_j·w^{-jk} = Σ_j x_{-j mod n}·w^{jk}.
//
// One block handles G = ELEMS/R consecutive j (coalesced loads), ELEMS elements in shared
// memory, limb-major (s[limb·E + e]) so a warp's accesses fall in distinct banks. The
// in-block twiddles w_R^i are read from global memory (`small`, a few KiB: L1 hits).

#define NTT_THREADS 128  // ntt.rs THREADS (the launch), with ELEMS_LOG = 10: see there

// w^e = lo[e & mask]·hi[e >> bits]; hi[0] = c, so e = 0 gives c (1 for the twiddles).
__device__ __forceinline__ fr_t table_pow(const fr_t* lo, const fr_t* hi, u32 bits, u32 e) {
  return fr_mul(ld_fr(lo + (e & ((1u << bits) - 1))), ld_fr(hi + (e >> bits)));
}

#define PRE_NONE 0
#define PRE_SCALE 1
#define PRE_AB 2

struct NttPass {
  const fr_t* in;
  const fr_t* in_b;      // PRE_AB only
  const fr_t* post_sub;  // with a post scale: subtracted, times hi[0], after it
  fr_t* out;
  const fr_t* tw_lo; const fr_t* tw_hi;   // w_n^{±e}
  const fr_t* small;                      // w_R^{±i}, i < R/2
  const fr_t* pre_lo; const fr_t* pre_hi; // PRE_SCALE
  const fr_t* post_lo; const fr_t* post_hi; // post scale, if post_lo != 0
  const fr_t* direct;                     // w_M^e, e < M = 2^direct_log
  u32 log_n, log_r, log_ns, log_g, tw_bits, pre_mode, direct_log;
};

// The FULL kernels' second parameter. A parameter of its own, not more fields of NttPass:
// the other kernels' parameter block, and so their code, stay exactly as before the tables
// (a larger block gave ntt_pass_r9 96 more instructions and a 5 % slower NTT at 2^27).
struct NttFull {
  u32 rev_in;             // read x[-i mod n] for x[i] (an inverse transform run forward)
  const fr_t* full_tw;    // last pass: w_n^{t·k} at the input index (else 0)
  const fr_t* pre_full;   // PRE_SCALE from a full table (else lo·hi)
  const fr_t* post_full;  // post scale from a full table (else lo·hi)
};

__device__ __forceinline__ void sm_put(u32* s, u32 E, u32 e, const fr_t& x) {
#pragma unroll
  for (int l = 0; l < 8; l++) s[l * E + e] = x.v[l];
}
__device__ __forceinline__ fr_t sm_get(const u32* s, u32 E, u32 e) {
  fr_t x;
#pragma unroll
  for (int l = 0; l < 8; l++) x.v[l] = s[l * E + e];
  return x;
}

// A pass's input element: x[src] (PRE_AB: a[src]·b[src]), times the pre-scale lo·hi[src]
// (PRE_SCALE), times the pass twiddle w^ex (from the direct table, else lo·hi) unless
// `twiddle` is false (t = 0 or k = 0: w^0 = 1).
// FULL: the kernels that read the full tables (and rev_in); the others are the code of
// before the tables, so a device without room for them runs exactly that.
template <bool FULL>
__device__ __forceinline__ fr_t pass_input(const NttPass& p, const NttFull& f, u32 src, bool twiddle, bool direct, u32 ex) {
  fr_t x;
  if (!FULL) {
    if (p.pre_mode == PRE_AB) {
      x = fr_mul(ld_fr(p.in + src), ld_fr(p.in_b + src));
    } else {
      x = ld_fr(p.in + src);
      if (p.pre_mode == PRE_SCALE) x = fr_mul(x, table_pow(p.pre_lo, p.pre_hi, p.tw_bits, src));
    }
    if (twiddle) x = fr_mul(x, direct ? ld_fr(p.direct + ex) : table_pow(p.tw_lo, p.tw_hi, p.tw_bits, ex));
    return x;
  }
  // The element read: x[src], or x[-src mod n] when the pass runs an inverse forward.
  const u32 at = f.rev_in ? (0u - src) & ((1u << p.log_n) - 1) : src;
  if (p.pre_mode == PRE_AB) {
    x = fr_mul(ld_fr(p.in + at), ld_fr(p.in_b + at));
  } else {
    x = ld_fr(p.in + at);
    if (p.pre_mode == PRE_SCALE)
      x = fr_mul(x, f.pre_full ? ld_fr(f.pre_full + src) : table_pow(p.pre_lo, p.pre_hi, p.tw_bits, src));
  }
  if (twiddle) {
    // One load from a table that holds w^ex (the full one at the input index, else the
    // direct one), or the two-level product.
    const fr_t* w1 = f.full_tw ? f.full_tw + src : direct ? p.direct + ex : nullptr;
    x = fr_mul(x, w1 ? ld_fr(w1) : table_pow(p.tw_lo, p.tw_hi, p.tw_bits, ex));
  }
  return x;
}

// A pass's output element y[dst] = x, with the post scale (x·lo·hi[dst] − hi[0]·post_sub[dst])
// when there is one.
template <bool FULL>
__device__ __forceinline__ void pass_output(const NttPass& p, const NttFull& f, u32 dst, fr_t x) {
  if (p.post_lo) {
    x = fr_mul(x, FULL && f.post_full ? ld_fr(f.post_full + dst) : table_pow(p.post_lo, p.post_hi, p.tw_bits, dst));
    if (p.post_sub) x = fr_sub(x, fr_mul(ld_fr(p.post_sub + dst), ld_fr(p.post_hi)));
  }
  st_fr(p.out + dst, x);
}

template <bool FULL>
__device__ __forceinline__ void pass_shared(const NttPass& p, const NttFull& f) {
  extern __shared__ u32 smem[];
  const u32 R = 1u << p.log_r, G = 1u << p.log_g, E = R << p.log_g;
  const u32 half_n = 1u << (p.log_n - p.log_r);  // n/R
  const u32 ns_mask = (1u << p.log_ns) - 1;
  u32* s = smem;
  const u32 tid = threadIdx.x;
  const u32 j0 = blockIdx.x << p.log_g;

  // Load with twiddles w_{Ns·R}^{t·k} = w_n^{t·k·n/(Ns·R)} = w_M^{t·k·M/(Ns·R)}.
  const u32 log_m = p.log_ns + p.log_r;
  const bool direct = log_m <= p.direct_log;
  const u32 tw_shift = direct ? p.direct_log - log_m : p.log_n - log_m;
  for (u32 e = tid; e < E; e += NTT_THREADS) {
    const u32 t = e >> p.log_g, g = e & (G - 1), j = j0 + g;
    const u32 k = j & ns_mask;
    sm_put(s, E, e, pass_input<FULL>(p, f, j + t * half_n, t != 0 && k != 0, direct, (t * k) << tw_shift));
  }

  // R-point DIF per column: level l pairs q and q + R/2^{l+1} with twiddle w_R^{i·2^l}.
  for (u32 l = 0; l < p.log_r; l++) {
    __syncthreads();
    const u32 log_half = p.log_r - l - 1, half = 1u << log_half;
    // w_R^{i·2^l} = w_{R'}^i with R' = R/2^l: read from R''s own table (global, L1-resident),
    // which lies R/2 − R'/2 entries before R's. Contiguous in i, where the stride-2^l reads
    // of one table in shared memory were up to 8-way bank conflicts.
    const fr_t* tw = p.small - ((R >> 1) - (R >> (l + 1)));
    for (u32 bf = tid; bf < (E >> 1); bf += NTT_THREADS) {
      const u32 g = bf & (G - 1), b = bf >> p.log_g;
      const u32 i = b & (half - 1), blk = b >> log_half;
      const u32 ip = (blk << (log_half + 1)) + i, iq = ip + half;
      const fr_t u = sm_get(s, E, (ip << p.log_g) + g), v = sm_get(s, E, (iq << p.log_g) + g);
      // The twiddle's load is issued before the subtraction, whose latency hides it.
      fr_t w;
      if (i != 0) w = ld_fr(tw + i);
      fr_t d = fr_sub(u, v);
      if (i != 0) d = fr_mul(d, w);
      sm_put(s, E, (ip << p.log_g) + g, fr_add(u, v));
      sm_put(s, E, (iq << p.log_g) + g, d);
    }
  }
  __syncthreads();

  // v_q sits at bit-reversed q: threads walk shared memory in order (reading it at
  // bit-reversed positions was an 8-way bank conflict) and write y[(j/Ns)·Ns·R + k + q·Ns]
  // with q = brev(qr).
  for (u32 e = tid; e < E; e += NTT_THREADS) {
    const u32 qr = e >> p.log_g, g = e & (G - 1), j = j0 + g;
    const u32 q = __brev(qr) >> (32 - p.log_r);
    const u32 dst = ((j >> p.log_ns) << (p.log_ns + p.log_r)) + (j & ns_mask) + (q << p.log_ns);
    pass_output<FULL>(p, f, dst, sm_get(s, E, e));
  }
}

// The kernels without the tables pass a NttFull they never read.
extern "C" __global__ void __launch_bounds__(NTT_THREADS) ntt_pass(const NttPass p) { pass_shared<false>(p, NttFull()); }
extern "C" __global__ void __launch_bounds__(NTT_THREADS) ntt_pass_full(const NttPass p, const NttFull f) {
  pass_shared<true>(p, f);
}

// The radix-2^9 pass (log_r = 9, two columns a block: log_g = 1) with its butterflies in
// registers: each of the 64 threads of a column holds 8 of its 512 elements and runs three
// DIF levels on them (a radix-8 network), twice exchanging through shared memory, so a
// pass has 3 barriers and 2 shared-memory round trips where ntt_pass has 10 and 10. The
// rows a thread holds, q = base + s·r (r < 8), are those the next three levels pair:
//   levels 0-2: s = 64, base = t          (pairs 256, 128, 64 rows apart)
//   levels 3-5: s = 8,  base = (t mod 8) + 64·(t / 8)
//   levels 6-8: s = 1,  base = 8·t
// Level L pairs q and q + R/2^{L+1} with twiddle w_R^{i·2^L}, i = q mod R/2^{L+1}: the same
// arithmetic as ntt_pass, in another order. Shared memory is padded (a word every 16
// elements) so the exchanges' strided rows fall in distinct banks.
#define R9_PAD(e) ((e) + ((e) >> 4))
#define R9_PLANE (1024 + 1024 / 16)  // words of one limb plane: ntt.rs R9_SMEM

__device__ __forceinline__ void r9_put(u32* s, u32 q, u32 g, const fr_t& x) {
  const u32 e = R9_PAD(2 * q + g);
#pragma unroll
  for (int l = 0; l < 8; l++) s[l * R9_PLANE + e] = x.v[l];
}
__device__ __forceinline__ fr_t r9_get(const u32* s, u32 q, u32 g) {
  const u32 e = R9_PAD(2 * q + g);
  fr_t x;
#pragma unroll
  for (int l = 0; l < 8; l++) x.v[l] = s[l * R9_PLANE + e];
  return x;
}

// Levels L0, L0 + 1, L0 + 2 on rows base + s·r: r and r + h pair, h = 4, 2, 1. A level's
// four butterflies go two at a time, their products in one fr_mul_tw2 (shoup.cuh: the
// twiddle is a constant known ahead, so its table holds w and floor(w·2^288/r) and a
// product takes 87 wide multiply-adds instead of a Montgomery product's 112). Twiddles with
// i = 0 (w = 1) are skipped where every thread has them (s = 1: base is a multiple of 8, so
// i = r mod half), else multiplied (the table's w^0 is 1).
__device__ __forceinline__ void r9_pair(fr_t (&x)[8], const fr_tw_t* tw, u32 base, u32 s, u32 half,
                                        int r0, int r1, int h) {
  const bool skip0 = s == 1 && (r0 & (half - 1)) == 0, skip1 = s == 1 && (r1 & (half - 1)) == 0;
  const fr_tw_t* t0 = tw + ((base + s * r0) & (half - 1));
  const fr_tw_t* t1 = tw + ((base + s * r1) & (half - 1));
  // A difference that is multiplied is left unreduced (a − b + r < 2r): the Shoup product
  // takes any x below 2^256. One kept as it is is reduced. skip0 and skip1 are constants
  // once r9_stage is unrolled.
  const fr_t d0 = skip0 ? fr_sub(x[r0], x[r0 + h]) : fr_sub_lazy(x[r0], x[r0 + h]);
  const fr_t d1 = skip1 ? fr_sub(x[r1], x[r1 + h]) : fr_sub_lazy(x[r1], x[r1 + h]);
  x[r0] = fr_add(x[r0], x[r0 + h]);
  x[r1] = fr_add(x[r1], x[r1 + h]);
  if (skip0 && skip1) {
    x[r0 + h] = d0;
    x[r1 + h] = d1;
  } else if (skip0) {
    x[r0 + h] = d0;
    x[r1 + h] = fr_mul_tw(t1, d1);
  } else if (skip1) {
    x[r0 + h] = fr_mul_tw(t0, d0);
    x[r1 + h] = d1;
  } else {
    const fr2_t y = fr_mul_tw2(t0, d0, t1, d1);
    x[r0 + h] = y.a;
    x[r1 + h] = y.b;
  }
}

// small: the Shoup twiddle tables (ntt.rs passes them to the radix-2^9 kernels as p.small).
__device__ __forceinline__ void r9_stage(fr_t (&x)[8], const fr_tw_t* small, u32 L0, u32 base, u32 s) {
#pragma unroll
  for (int m = 0; m < 3; m++) {
    const u32 L = L0 + m, half = 256u >> L;
    const int h = 4 >> m;
    const fr_tw_t* tw = small - (256u - half);  // w_{R'}^i, R' = R/2^L (see ntt_pass)
    // The rows r with r & h = 0, in order: h = 4: 0 1 2 3; h = 2: 0 1 4 5; h = 1: 0 2 4 6.
    const int r0 = 0, r1 = h == 1 ? 2 : 1, r2 = h == 4 ? 2 : 4, r3 = h == 4 ? 3 : (h == 2 ? 5 : 6);
    if (s == 1) {
      // i = r mod half: pair the rows whose twiddles are not 1 (h = 4: rows 1, 2, 3;
      // h = 2: rows 1, 5; h = 1: none).
      if (h == 4) {
        r9_pair(x, tw, base, s, half, r1, r2, h);
        r9_pair(x, tw, base, s, half, r0, r3, h);
      } else {
        r9_pair(x, tw, base, s, half, r1, r3, h);
        r9_pair(x, tw, base, s, half, r0, r2, h);
      }
    } else {
      r9_pair(x, tw, base, s, half, r0, r1, h);
      r9_pair(x, tw, base, s, half, r2, r3, h);
    }
  }
}

template <bool FULL>
__device__ __forceinline__ void pass_r9(const NttPass& p, const NttFull& f) {
  extern __shared__ u32 smem[];
  const u32 tid = threadIdx.x, g = tid & 1, t = tid >> 1;
  const u32 j = (blockIdx.x << 1) + g;
  const u32 half_n = 1u << (p.log_n - 9);
  const u32 ns_mask = (1u << p.log_ns) - 1, k = j & ns_mask;
  const u32 log_m = p.log_ns + 9;
  const bool direct = log_m <= p.direct_log;
  const u32 tw_shift = direct ? p.direct_log - log_m : p.log_n - log_m;
  fr_t x[8];
#pragma unroll
  for (int r = 0; r < 8; r++) {
    const u32 q = t + 64 * r;
    x[r] = pass_input<FULL>(p, f, j + q * half_n, q != 0 && k != 0, direct, (q * k) << tw_shift);
  }
  r9_stage(x, (const fr_tw_t*)p.small, 0, t, 64);
#pragma unroll
  for (int r = 0; r < 8; r++) r9_put(smem, t + 64 * r, g, x[r]);
  __syncthreads();
  const u32 b1 = (t & 7) + 64 * (t >> 3);
#pragma unroll
  for (int r = 0; r < 8; r++) x[r] = r9_get(smem, b1 + 8 * r, g);
  r9_stage(x, (const fr_tw_t*)p.small, 3, b1, 8);
  __syncthreads();  // every thread has read the first layout
#pragma unroll
  for (int r = 0; r < 8; r++) r9_put(smem, b1 + 8 * r, g, x[r]);
  __syncthreads();
#pragma unroll
  for (int r = 0; r < 8; r++) x[r] = r9_get(smem, 8 * t + r, g);
  r9_stage(x, (const fr_tw_t*)p.small, 6, 8 * t, 1);
  // Row qr = 8t + r holds v_q, q = brev(qr): y[(j/Ns)·Ns·R + k + q·Ns].
#pragma unroll
  for (int r = 0; r < 8; r++) {
    const u32 q = __brev(8 * t + r) >> 23;
    pass_output<FULL>(p, f, ((j >> p.log_ns) << (p.log_ns + 9)) + k + (q << p.log_ns), x[r]);
  }
}

// Builds (ntt.rs `PassBuild`): at most 128 registers (4 blocks, 16 warps an SM), with and
// without the full tables, and uncapped (3 blocks; a measuring aid, which reads the full
// tables where a pass has them).
extern "C" __global__ void __launch_bounds__(NTT_THREADS, 4) ntt_pass_r9(const NttPass p) { pass_r9<false>(p, NttFull()); }
extern "C" __global__ void __launch_bounds__(NTT_THREADS, 4) ntt_pass_r9_full(const NttPass p, const NttFull f) {
  pass_r9<true>(p, f);
}
extern "C" __global__ void __launch_bounds__(NTT_THREADS) ntt_pass_r9u(const NttPass p, const NttFull f) { pass_r9<true>(p, f); }

// Fills a full table (see the top of this file): out[i] = lo[e]·hi[e] (= c·x^e) for i < n,
// with e = i (a scale table) or, for the last pass's twiddles (log_r > 0), e = t·j for
// i = j + t·n/R (t < R = 2^log_r, j < n/R; t·j < n). Once per prover and domain size.
extern "C" __global__ void ntt_full_table(fr_t* out, const fr_t* lo, const fr_t* hi, u32 bits, u32 log_n,
                                          u32 log_r) {
  const u32 n = 1u << log_n;
  for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const u32 shift = log_n - log_r;
    const u32 e = log_r == 0 ? i : (i >> shift) * (i & ((1u << shift) - 1));
    st_fr(out + i, table_pow(lo, hi, bits, e));
  }
}
