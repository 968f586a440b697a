/* Elementwise ops on bf16 with fp32 arithmetic: axpby, the master weights'
 * bf16 copy, and the channel scales of LayerScale and SkipInit, the q/k/v biases and
 * grouped-query attention's repeated K and V heads. Grid-stride
 * loops, eight elements per step where rows allow (vec.cuh). */
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

#define GRID_STRIDE(i, n)                                                                      \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                    \
         i += (size_t)gridDim.x * blockDim.x)

static __global__ void axpby_kernel(bf16 *y, float a, const bf16 *x, float b, size_t n)
{
    GRID_STRIDE(i, n) y[i] = __float2bfloat16_rn(a * __bfloat162float(x[i]) + b * __bfloat162float(y[i]));
}

static __global__ void axpby8_kernel(bf16 *y, float a, const bf16 *x, float b, size_t n8)
{
    GRID_STRIDE(i, n8)
    {
        vec8 xv = load8(x + 8 * i), yv = load8(y + 8 * i);
#pragma unroll
        for (int k = 0; k < 8; k++)
            yv.v[k] = a * xv.v[k] + b * yv.v[k];
        store8(y + 8 * i, yv);
    }
}

void cuda_axpby(act *y, real a, const act *x, real b, size_t n)
{
    if (vec_ok(y, n) && vec_ok(x, n))
        axpby8_kernel<<<cuda_blocks(n / 8), CUDA_THREADS>>>(BF(y), a, BFC(x), b, n / 8);
    else
        axpby_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(BF(y), a, BFC(x), b, n);
    LAUNCH_CHECK("axpby");
}

static __global__ void to_act_kernel(bf16 *dst, const float *src, size_t n)
{
    GRID_STRIDE(i, n) dst[i] = __float2bfloat16_rn(src[i]);
}

void cuda_to_act(act *dst, const real *src, size_t n)
{
    to_act_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(BF(dst), src, n);
    LAUNCH_CHECK("to_act");
}

static __global__ void chscale_kernel(bf16 *out, const bf16 *in, const float *lam, int d, int c,
                                      size_t n)
{
    GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(lam[c == 1 ? 0 : i % d] * __bfloat162float(in[i]));
}

void cuda_chscale_fwd(act *out, const act *in, const real *lam, int N, int d, int c)
{
    size_t n = (size_t)N * d;
    chscale_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(BF(out), BFC(in), lam, d, c, n);
    LAUNCH_CHECK("chscale_fwd");
}

void cuda_chscale_bwd(act *din, real *dlam, const act *dout, const act *in, const real *lam,
                      int N, int d, int c)
{
    size_t n = (size_t)N * d;
    chscale_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(BF(din), BFC(dout), lam, d, c, n);
    LAUNCH_CHECK("chscale_bwd");
    if (c == 1)
        cuda_dot_accumulate(dlam, BFC(dout), BFC(in), n, "chscale_bwd");
    else
        cuda_colsum_accumulate(dlam, BFC(dout), BFC(in), NULL, 1, N, d, "chscale_bwd");
}

static __global__ void bias_add_kernel(bf16 *y, const float *bias, int d, size_t n)
{
    GRID_STRIDE(i, n) y[i] = __float2bfloat16_rn(__bfloat162float(y[i]) + bias[i % d]);
}

void cuda_bias_add(act *y, const real *bias, int N, int d)
{
    size_t n = (size_t)N * d;
    bias_add_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(BF(y), bias, d, n);
    LAUNCH_CHECK("bias_add");
}

/* one thread an element of out's rows [q | k | v], nh heads each */
static __global__ void repeat_kv_kernel(bf16 *out, const bf16 *in, int nh, int nkv, int hd,
                                        size_t n)
{
    size_t qd = (size_t)nh * hd, kvd = (size_t)nkv * hd, win = qd + 2 * kvd;
    int rep = nh / nkv;
    GRID_STRIDE(i, n)
    {
        size_t row = i / (3 * qd), col = i % (3 * qd), part = col / qd, c = col % qd, src;
        if (part == 0)
            src = c;
        else
            src = qd + (part - 1) * kvd + (c / hd / rep) * hd + c % hd;
        out[i] = in[row * win + src];
    }
}

void cuda_repeat_kv(act *out, const act *in, int N, int nh, int nkv, int hd)
{
    size_t n = (size_t)N * 3 * nh * hd;
    repeat_kv_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(BF(out), BFC(in), nh, nkv, hd, n);
    LAUNCH_CHECK("repeat_kv");
}
