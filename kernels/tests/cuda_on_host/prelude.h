// The CUDA qualifiers and intrinsics the kernel sources use, defined for a host C++ compiler
// (cuda_on_host.rs puts this before the sources). One thread at a time.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static
static inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
struct dim3_ { unsigned x; };
static dim3_ blockIdx, blockDim, threadIdx, gridDim;
struct uint4 { unsigned x, y, z, w; };
static inline uint4 __ldg(const uint4* p) { return *p; }
static inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline void __syncthreads() {}
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
struct uint2 { unsigned x, y; };
static inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
static inline uint2 __ldg(const uint2* p) { return *p; }
static inline unsigned __ldg(const unsigned* p) { return *p; }
static inline unsigned atomicMin(unsigned* p, unsigned v) { unsigned o = *p; *p = o < v ? o : v; return o; }
// Warp votes and shuffles with one thread at a time: each thread is alone in its warp, so a
// ballot holds its own lane's bit and a shuffle returns its own value (h_c_kinds then takes
// one atomic a thread, the same lists in another order).
static inline unsigned __ballot_sync(unsigned, bool p) { return p ? 1u << (threadIdx.x & 31) : 0u; }
static inline unsigned __shfl_sync(unsigned, unsigned v, int) { return v; }
static inline unsigned __shfl_xor_sync(unsigned, unsigned v, int) { return v; }
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
