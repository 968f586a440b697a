/* RMSNorm with the variant's scales, one warp per row: u = s_in·x,
 * r = 1/sqrt(mean(u²) + eps), out = s_out·g ⊙ u·r (+ b·res, the residual
 * add that sandwich placement fuses in). Statistics in fp32; rows move 16
 * bytes at a time where they can. The backward computes the input gradient
 * and, from the same loads, the gain's gradient: each warp adds its rows
 * into its own slice of shared memory, the block's slices are added in warp
 * order into one partial row per block, and the partials in a fixed order
 * into dg (reduce.cu) — no atomics. */
#include <cmath>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

enum { ROWS_PER_BLOCK = 8 };

/* rstd_in != NULL: the recompute of the backward, r taken from it */
template <bool VEC>
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_fwd_kernel(bf16 *out, float *rstd, const float *rstd_in, const bf16 *x,
                       const float *g, int N, int d, float s_in, float s_out, float eps,
                       const bf16 *res, float b)
{
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    size_t off = (size_t)row * d;
    const bf16 *xr = x + off;
    float r;
    if (rstd_in) {
        r = rstd_in[row];
    } else {
        float ss = 0;
        if (VEC) {
            for (int j = lane * 8; j < d; j += 256) {
                vec8 v = load8(xr + j);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    ss += v.v[i] * v.v[i];
            }
        } else {
            for (int j = lane; j < d; j += 32) {
                float v = __bfloat162float(xr[j]);
                ss += v * v;
            }
        }
        ss = warp_all(ss, op_add());
        r = rsqrtf(s_in * s_in * ss / d + eps);
        if (lane == 0)
            rstd[row] = r;
    }
    float sr = s_out * s_in * r;
    if (VEC) {
        for (int j = lane * 8; j < d; j += 256) {
            vec8 v = load8(xr + j), rv = {};
            if (res)
                rv = load8(res + off + j);
#pragma unroll
            for (int i = 0; i < 8; i++)
                v.v[i] = sr * g[j + i] * v.v[i] + (res ? b * rv.v[i] : 0.0f);
            store8(out + off + j, v);
        }
    } else {
        for (int j = lane; j < d; j += 32) {
            float v = sr * g[j] * __bfloat162float(xr[j]);
            if (res)
                v += b * __bfloat162float(res[off + j]);
            out[off + j] = __float2bfloat16_rn(v);
        }
    }
}

static void launch_fwd(const char *op, bf16 *out, float *rstd, const float *rstd_in,
                       const bf16 *x, const float *g, int N, int d, float s_in, float s_out,
                       float eps, const bf16 *res, float b)
{
    if (N <= 0)
        return;
    unsigned grid = (unsigned)((N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    bool vec = vec_ok(x, d) && vec_ok(out, d) && (!res || vec_ok(res, d));
    if (vec)
        rmsnorm_fwd_kernel<true><<<grid, ROWS_PER_BLOCK * 32>>>(out, rstd, rstd_in, x, g, N, d,
                                                                 s_in, s_out, eps, res, b);
    else
        rmsnorm_fwd_kernel<false><<<grid, ROWS_PER_BLOCK * 32>>>(out, rstd, rstd_in, x, g, N, d,
                                                                  s_in, s_out, eps, res, b);
    LAUNCH_CHECK(op);
}

void cuda_rmsnorm_fwd(act *out, real *rstd, const act *x, const real *g, int N, int d, real s_in,
                      real s_out, real eps, const act *res, real b)
{
    launch_fwd("rmsnorm_fwd", BF(out), rstd, NULL, BFC(x), g, N, d, s_in, s_out, eps, BFC(res), b);
}

void cuda_rmsnorm_apply(act *out, const act *x, const real *g, const real *rstd, int N, int d,
                        real s_in, real s_out)
{
    launch_fwd("rmsnorm_apply", BF(out), NULL, rstd, BFC(x), g, N, d, s_in, s_out, 0, NULL, 0);
}

/* With h = dy·s_out·g and u = s_in·x:
 * dx_j = s_in·(r·h_j − r³·u_j·Σ_k h_k·u_k / d) + b·res_j */
template <bool VEC>
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_dx_kernel(bf16 *dx, const bf16 *dout, const bf16 *x, const float *g,
                      const float *rstd, int N, int d, float s_in, float s_out, const bf16 *res,
                      float b)
{
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    size_t off = (size_t)row * d;
    const bf16 *xr = x + off, *dy = dout + off;
    float dot = 0;
    if (VEC) {
        for (int j = lane * 8; j < d; j += 256) {
            vec8 xv = load8(xr + j), yv = load8(dy + j);
#pragma unroll
            for (int i = 0; i < 8; i++)
                dot += yv.v[i] * g[j + i] * xv.v[i];
        }
    } else {
        for (int j = lane; j < d; j += 32)
            dot += __bfloat162float(dy[j]) * g[j] * __bfloat162float(xr[j]);
    }
    dot = warp_all(dot, op_add());
    float r = rstd[row];
    float c = s_in * s_in * s_in * s_out * r * r * r * dot / d, rr = s_in * s_out * r;
    if (VEC) {
        for (int j = lane * 8; j < d; j += 256) {
            vec8 xv = load8(xr + j), yv = load8(dy + j), rv = {};
            if (res)
                rv = load8(res + off + j);
#pragma unroll
            for (int i = 0; i < 8; i++)
                xv.v[i] = rr * yv.v[i] * g[j + i] - c * xv.v[i] + (res ? b * rv.v[i] : 0.0f);
            store8(dx + off + j, xv);
        }
    } else {
        for (int j = lane; j < d; j += 32) {
            float v = rr * __bfloat162float(dy[j]) * g[j] - c * __bfloat162float(xr[j]);
            if (res)
                v += b * __bfloat162float(res[off + j]);
            dx[off + j] = __float2bfloat16_rn(v);
        }
    }
}

/* The input gradient as rmsnorm_dx_kernel, and the gain's gradient from
 * the same loads: partial[block][j] = Σ over the block's rows of
 * dy_j·x_j·r. Rows of 8-element chunks only. A warp's slice holds column
 * 8c + i at i·(d/8) + c: a lane owns the chunks c ≡ lane (mod 32), so the
 * warp's 32 adds of one i fall in 32 banks (column order put 4 lanes in each
 * bank, 8-way conflicts on every add). */
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_bwd_fused_kernel(bf16 *dx, float *partial, const bf16 *dout, const bf16 *x,
                             const float *g, const float *rstd, int N, int d, int rows,
                             float s_in, float s_out, const bf16 *res, float b)
{
    extern __shared__ __align__(16) float slice[]; /* [warps][8][d / 8] */
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, chunks = d / 8;
    float *acc = slice + (size_t)warp * d;
    for (int k = lane; k < d; k += 32)
        acc[k] = 0;
    int r0 = blockIdx.x * rows, r1 = min(N, r0 + rows);
    for (int row = r0 + warp; row < r1; row += ROWS_PER_BLOCK) {
        size_t off = (size_t)row * d;
        const bf16 *xr = x + off, *dy = dout + off;
        float dot = 0;
        for (int j = lane * 8; j < d; j += 256) {
            vec8 xv = load8(xr + j), yv = load8(dy + j);
#pragma unroll
            for (int i = 0; i < 8; i++)
                dot += yv.v[i] * g[j + i] * xv.v[i];
        }
        dot = warp_all(dot, op_add());
        float r = rstd[row];
        float c = s_in * s_in * s_in * s_out * r * r * r * dot / d, rr = s_in * s_out * r;
        for (int j = lane * 8; j < d; j += 256) {
            vec8 xv = load8(xr + j), yv = load8(dy + j), rv = {}, out;
            if (res)
                rv = load8(res + off + j);
#pragma unroll
            for (int i = 0; i < 8; i++) {
                out.v[i] = rr * yv.v[i] * g[j + i] - c * xv.v[i] + (res ? b * rv.v[i] : 0.0f);
                acc[i * chunks + j / 8] += yv.v[i] * xv.v[i] * rr;
            }
            store8(dx + off + j, out);
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < d; k += blockDim.x) {
        float t = 0;
        for (int w = 0; w < ROWS_PER_BLOCK; w++)
            t += slice[(size_t)w * d + k];
        partial[(size_t)blockIdx.x * d + k % chunks * 8 + k / chunks] = t;
    }
}

void cuda_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                      const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                      real b)
{
    if (N <= 0)
        return;
    bool vec = vec_ok(x, d) && vec_ok(dx, d) && vec_ok(dout, d) && (!res || vec_ok(res, d));
    size_t smem = (size_t)ROWS_PER_BLOCK * d * sizeof(float);
    if (vec && smem <= 160 * 1024) {
        /* a few blocks per multiprocessor, each a run of whole warps' rows */
        int dev = 0, sms = 132;
        CUDA_CHECK("rmsnorm_bwd", cudaGetDevice(&dev));
        CUDA_CHECK("rmsnorm_bwd",
                   cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        int blocks = 2 * sms, rows = (N + blocks - 1) / blocks;
        rows = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK * ROWS_PER_BLOCK;
        blocks = (N + rows - 1) / rows;
        float *partial = (float *)cuda_scratch((size_t)blocks * d * sizeof(float), "rmsnorm_bwd");
        if (!partial)
            return;
        if (smem > 48 * 1024)
            CUDA_CHECK("rmsnorm_bwd",
                       cudaFuncSetAttribute(rmsnorm_bwd_fused_kernel,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)smem));
        rmsnorm_bwd_fused_kernel<<<blocks, ROWS_PER_BLOCK * 32, smem>>>(
            BF(dx), partial, BFC(dout), BFC(x), g, rstd, N, d, rows, s_in, s_out, BFC(res), b);
        LAUNCH_CHECK("rmsnorm_bwd");
        cuda_colsum_finish(dg, partial, blocks, d, 1, "rmsnorm_bwd");
        return;
    }
    unsigned grid = (unsigned)((N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    if (vec)
        rmsnorm_dx_kernel<true><<<grid, ROWS_PER_BLOCK * 32>>>(
            BF(dx), BFC(dout), BFC(x), g, rstd, N, d, s_in, s_out, BFC(res), b);
    else
        rmsnorm_dx_kernel<false><<<grid, ROWS_PER_BLOCK * 32>>>(
            BF(dx), BFC(dout), BFC(x), g, rstd, N, d, s_in, s_out, BFC(res), b);
    LAUNCH_CHECK("rmsnorm_bwd");
    cuda_colsum_accumulate(dg, BFC(dout), BFC(x), rstd, s_out * s_in, N, d, "rmsnorm_bwd");
}
