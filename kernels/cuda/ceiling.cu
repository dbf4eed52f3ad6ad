// Ceilings: how fast our field products and the madd run on their own, with no memory
// traffic inside the loop, against the multiply-add rate the floors in docs/perf.md assume
// (16.7 T 32-bit multiply-adds a second: 64 a clock an SM at 1980 MHz, an IMAD.WIDE
// counting two). A step that runs near its piece's ceiling here has no loss outside the
// arithmetic left to find; one far below it loses time around the arithmetic (memory,
// sorting, launches). Launched as one full wave; the host checks every result it reads back
// against the CPU (`GpuProver::ceilings`).

// The multiplier alone: 8 independent chains a thread of acc = lo32(acc)·y + acc, one
// IMAD.WIDE.U32 each (64-bit product plus 64-bit addend), 128 a loop iteration.
extern "C" __global__ void __launch_bounds__(128, 4) ceiling_imad(u64* out, u32 y, u32 iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  u64 acc[8];
#pragma unroll
  for (int k = 0; k < 8; k++) acc[k] = (u64)t * 8 + k + 1;
  for (u32 i = 0; i < iters; i++) {
#pragma unroll
    for (int r = 0; r < 16; r++) {
#pragma unroll
      for (int k = 0; k < 8; k++) acc[k] = (u64)(u32)acc[k] * y + acc[k];
    }
  }
  u64 s = 0;
#pragma unroll
  for (int k = 0; k < 8; k++) s ^= acc[k];
  out[t] = s;
}

// x ← x·y, `iters` times (one product at a time, each waiting on the last): x·y^iters.
template <class T, T (*MUL)(T, T)>
__device__ __forceinline__ void mul_chain(const T* x0, const T* y, T* out, u32 iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  T x = x0[t];
  const T w = y[t];
  for (u32 i = 0; i < iters; i++) x = MUL(x, w);
  out[t] = x;
}

extern "C" __global__ void __launch_bounds__(128, 4) ceiling_fr_mul(const fr_t* x0, const fr_t* y, fr_t* out,
                                                                    u32 iters) {
  mul_chain<fr_t, fr_mul>(x0, y, out, iters);
}

// Two chains a thread through fr_mul2 (the NTT's pairs): x·y^iters and y·x^iters.
extern "C" __global__ void __launch_bounds__(128, 4) ceiling_fr_mul2(const fr_t* x0, const fr_t* y, fr_t* out,
                                                                     u32 iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const fr_t a = x0[t], b = y[t];
  fr2_t v = {a, b};
  for (u32 i = 0; i < iters; i++) v = fr_mul2(v.a, b, v.b, a);
  out[2 * t] = v.a;
  out[2 * t + 1] = v.b;
}

extern "C" __global__ void __launch_bounds__(128, 4) ceiling_fp_mul(const fp_t* x0, const fp_t* y, fp_t* out,
                                                                    u32 iters) {
  mul_chain<fp_t, fp_mul>(x0, y, out, iters);
}

// x ← x², `iters` times: x^(2^iters).
extern "C" __global__ void __launch_bounds__(128, 4) ceiling_fp_sqr(const fp_t* x0, fp_t* out, u32 iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  fp_t x = x0[t];
  for (u32 i = 0; i < iters; i++) x = fp_sqr(x);
  out[t] = x;
}

// The accumulation's madd (xyzz_add_affine, as msm_accumulate_wide calls it, at its
// register cap) on two points held by the thread, alternating: ceil(iters/2)·p + floor(iters/2)·q.
extern "C" __global__ void __launch_bounds__(128, 4) ceiling_g1_madd(const affine_t* pts, xyzz_t* out,
                                                                     u32 iters) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const affine_t p = ld_affine(pts + 2 * t), q = ld_affine(pts + 2 * t + 1);
  xyzz_t acc;
  xyzz_set_inf(acc);
  for (u32 i = 0; i < iters; i++) xyzz_add_affine_signed(acc, (i & 1) ? q : p, false);
  out[t] = acc;
}

// The same madd with the accumulator split (xyzz_madd_sh): X, Y in registers, ZZ, ZZZ and
// the two points in this thread's shared-memory slots, as the accumulation would hold them.
extern "C" __global__ void __launch_bounds__(128, 4) ceiling_g1_madd_sh(const affine_t* pts, xyzz_t* out,
                                                                        u32 iters) {
  __shared__ affine_t slot[2][128];
  __shared__ fp_t zz[128], zzz[128];
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  const sh_ptr s0 = sh_addr(&slot[0][threadIdx.x]), s1 = sh_addr(&slot[1][threadIdx.x]);
  sh_st(s0, ld_affine(pts + 2 * t));
  sh_st(s1, ld_affine(pts + 2 * t + 1));
  xyzz_sh<fp_t> acc;
  xyzz_sh_init(acc, &zz[threadIdx.x], &zzz[threadIdx.x]);
  for (u32 i = 0; i < iters; i++) xyzz_madd_sh(acc, (i & 1) ? s1 : s0, false);
  out[t] = xyzz_sh_get(acc);
}
