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
