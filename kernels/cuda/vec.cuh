/* Eight bf16 in one 16-byte access, the width at which the memory-bound
 * kernels move data, with their fp32 values for the arithmetic. A kernel
 * takes this path when its rows are multiples of 8 elements on 16-byte
 * boundaries (vec_ok) and an element at a time otherwise. */
#ifndef COD_CUDA_VEC_CUH
#define COD_CUDA_VEC_CUH

#include <cstdint>

#include <cuda_bf16.h>

struct vec8 {
    float v[8];
};

/* the eight bf16 of one 16-byte load, as fp32 */
static __device__ __forceinline__ vec8 unpack8(uint4 raw)
{
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&raw);
    vec8 r;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float2 f = __bfloat1622float2(h[i]);
        r.v[2 * i] = f.x;
        r.v[2 * i + 1] = f.y;
    }
    return r;
}

/* Kept packed (4 registers, not 8) where a kernel holds many before it
 * uses them. */
static __device__ __forceinline__ uint4 raw8(const __nv_bfloat16 *p)
{
    return *reinterpret_cast<const uint4 *>(p);
}

static __device__ __forceinline__ vec8 load8(const __nv_bfloat16 *p) { return unpack8(raw8(p)); }

static __device__ __forceinline__ void store8(__nv_bfloat16 *p, const vec8 &x)
{
    uint4 raw;
    __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&raw);
#pragma unroll
    for (int i = 0; i < 4; i++)
        h[i] = __floats2bfloat162_rn(x.v[2 * i], x.v[2 * i + 1]);
    *reinterpret_cast<uint4 *>(p) = raw;
}

static inline bool vec_ok(const void *p, size_t elems)
{
    return elems % 8 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

#endif
