/* SwiGLU, as kernels/cpu/swiglu.c: out = silu(gate)·up, and its backward
 * with silu'(g) = σ(g)·(1 + g·(1 − σ(g))). */
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

static __global__ void swiglu_fwd_kernel(float *out, const float *gate, const float *up, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = gate[i];
        out[i] = g / (1 + expf(-g)) * up[i];
    }
}

void cuda_swiglu_fwd(real *out, const real *gate, const real *up, size_t n)
{
    swiglu_fwd_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(out, gate, up, n);
    LAUNCH_CHECK("swiglu_fwd");
}

static __global__ void swiglu_bwd_kernel(float *dgate, float *dup, const float *dout,
                                         const float *gate, const float *up, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = gate[i], sg = 1 / (1 + expf(-g)), dy = dout[i];
        dup[i] = dy * g * sg;
        dgate[i] = dy * up[i] * sg * (1 + g * (1 - sg));
    }
}

void cuda_swiglu_bwd(real *dgate, real *dup, const real *dout, const real *gate, const real *up,
                     size_t n)
{
    swiglu_bwd_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(dgate, dup, dout, gate, up, n);
    LAUNCH_CHECK("swiglu_bwd");
}
