/* Warp- and block-wide reductions for the row kernels (RMSNorm, cross-
 * entropy, reductions). Every thread gets the result, and the warp
 * partials are combined in warp order, so a result repeats exactly. */
#ifndef COD_CUDA_BLOCK_CUH
#define COD_CUDA_BLOCK_CUH

#include <cuda_runtime.h>

struct op_add {
    template <class T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct op_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class T, class Op> __device__ T warp_all(T v, Op op)
{
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* blockDim.x a multiple of 32 and every thread of the block calling */
template <class T, class Op> __device__ T block_all(T v, Op op)
{
    __shared__ T part[32];
    v = warp_all(v, op);
    __syncthreads(); /* the previous call's readers are done with part */
    if (threadIdx.x % 32 == 0)
        part[threadIdx.x / 32] = v;
    __syncthreads();
    T r = part[0];
    for (int w = 1; w < (int)blockDim.x / 32; w++)
        r = op(r, part[w]);
    return r;
}

#endif
