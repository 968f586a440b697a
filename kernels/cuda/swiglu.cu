/* SwiGLU on the fused gate|up output: h = silu(gate)·up with rows [gate |
 * up] of 2f, and its backward with silu'(g) = σ(g)·(1 + g·(1 − σ(g))),
 * which also writes h again for the down projection's weight gradient (the
 * forward's h is not kept). Eight elements per thread where rows allow. */
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

static __device__ __forceinline__ float sigmoid(float g) { return 1.0f / (1.0f + __expf(-g)); }

template <bool VEC>
static __global__ void swiglu_fwd_kernel(bf16 *h, const bf16 *gu, int f, size_t n)
{
    const int W = VEC ? 8 : 1;
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * W; i < n;
         i += (size_t)gridDim.x * blockDim.x * W) {
        size_t row = i / f, col = i % f;
        const bf16 *gate = gu + row * 2 * f + col, *up = gate + f;
        if (VEC) {
            vec8 g = load8(gate), u = load8(up);
#pragma unroll
            for (int k = 0; k < 8; k++)
                g.v[k] = g.v[k] * sigmoid(g.v[k]) * u.v[k];
            store8(h + i, g);
        } else {
            float g = __bfloat162float(*gate);
            h[i] = __float2bfloat16_rn(g * sigmoid(g) * __bfloat162float(*up));
        }
    }
}

void cuda_swiglu_fwd(act *h, const act *gu, int N, int f)
{
    size_t n = (size_t)N * f;
    if (vec_ok(h, f) && vec_ok(gu, f))
        swiglu_fwd_kernel<true><<<cuda_blocks(n / 8), CUDA_THREADS>>>(BF(h), BFC(gu), f, n);
    else
        swiglu_fwd_kernel<false><<<cuda_blocks(n), CUDA_THREADS>>>(BF(h), BFC(gu), f, n);
    LAUNCH_CHECK("swiglu_fwd");
}

template <bool VEC>
static __global__ void swiglu_bwd_kernel(bf16 *dgu, bf16 *h, const bf16 *dh, const bf16 *gu,
                                         int f, size_t n)
{
    const int W = VEC ? 8 : 1;
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * W; i < n;
         i += (size_t)gridDim.x * blockDim.x * W) {
        size_t row = i / f, col = i % f, o = row * 2 * f + col;
        if (VEC) {
            vec8 g = load8(gu + o), u = load8(gu + o + f), dy = load8(dh + i), dg, du, hv;
#pragma unroll
            for (int k = 0; k < 8; k++) {
                float sg = sigmoid(g.v[k]), silu = g.v[k] * sg;
                du.v[k] = dy.v[k] * silu;
                dg.v[k] = dy.v[k] * u.v[k] * sg * (1.0f + g.v[k] * (1.0f - sg));
                hv.v[k] = silu * u.v[k];
            }
            store8(dgu + o, dg);
            store8(dgu + o + f, du);
            if (h)
                store8(h + i, hv);
        } else {
            float g = __bfloat162float(gu[o]), u = __bfloat162float(gu[o + f]);
            float dy = __bfloat162float(dh[i]), sg = sigmoid(g), silu = g * sg;
            dgu[o + f] = __float2bfloat16_rn(dy * silu);
            dgu[o] = __float2bfloat16_rn(dy * u * sg * (1.0f + g * (1.0f - sg)));
            if (h)
                h[i] = __float2bfloat16_rn(silu * u);
        }
    }
}

void cuda_swiglu_bwd(act *dgu, act *h, const act *dh, const act *gu, int N, int f)
{
    size_t n = (size_t)N * f;
    if (vec_ok(dgu, f) && vec_ok(gu, f) && vec_ok(dh, f) && (!h || vec_ok(h, f)))
        swiglu_bwd_kernel<true><<<cuda_blocks(n / 8), CUDA_THREADS>>>(BF(dgu), BF(h), BFC(dh),
                                                                       BFC(gu), f, n);
    else
        swiglu_bwd_kernel<false><<<cuda_blocks(n), CUDA_THREADS>>>(BF(dgu), BF(h), BFC(dh),
                                                                    BFC(gu), f, n);
    LAUNCH_CHECK("swiglu_bwd");
}
