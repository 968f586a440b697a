/* RMSNorm with the variant's scales, one warp per row: u = s_in·x,
 * r = 1/sqrt(mean(u²) + eps), out = s_out·g ⊙ u·r (+ b·res, the residual
 * add that sandwich placement fuses in). Statistics in fp32; rows move 16
 * bytes at a time where they can. The backward computes the input gradient
 * and, from the same loads, the gain's gradient: each lane adds its columns
 * of its warp's rows in registers, the block's warps are added in warp
 * order into one partial row per block, and the partials in a fixed order
 * into dg (reduce.cu) — no atomics. */
#include <cmath>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

enum { ROWS_PER_BLOCK = 8 };

template <bool VEC>
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_fwd_kernel(bf16 *out, float *rstd, const bf16 *x, const float *g, int N, int d,
                       float s_in, float s_out, float eps, const bf16 *res, float b)
{
    int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    size_t off = (size_t)row * d;
    const bf16 *xr = x + off;
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
    float r = rsqrtf(s_in * s_in * ss / d + eps);
    if (lane == 0)
        rstd[row] = r;
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

void cuda_rmsnorm_fwd(act *out_, real *rstd, const act *x_, const real *g, int N, int d,
                      real s_in, real s_out, real eps, const act *res_, real b)
{
    bf16 *out = BF(out_);
    const bf16 *x = BFC(x_), *res = BFC(res_);
    if (N <= 0)
        return;
    unsigned grid = (unsigned)((N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    bool vec = vec_ok(x, d) && vec_ok(out, d) && (!res || vec_ok(res, d));
    if (vec)
        rmsnorm_fwd_kernel<true><<<grid, ROWS_PER_BLOCK * 32>>>(out, rstd, x, g, N, d, s_in,
                                                                 s_out, eps, res, b);
    else
        rmsnorm_fwd_kernel<false><<<grid, ROWS_PER_BLOCK * 32>>>(out, rstd, x, g, N, d, s_in,
                                                                  s_out, eps, res, b);
    LAUNCH_CHECK("rmsnorm_fwd");
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
 * dy_j·x_j·r. Rows of 8-element chunks, at most M of them a lane
 * (d ≤ 256·M). A lane's columns (8·lane + 256·m) are the same in every
 * row, so it keeps their sums in registers; and it issues all of a row's
 * loads before it uses the first, so that a row costs one trip to memory,
 * not one per 256 columns. The warps' sums meet in shared memory at the
 * end, added in warp order. */
template <int M>
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_bwd_fused_kernel(bf16 *dx, float *partial, const bf16 *dout, const bf16 *x,
                             const float *g, const float *rstd, int N, int d, int rows,
                             float s_in, float s_out, const bf16 *res, float b)
{
    extern __shared__ __align__(16) float slice[]; /* [warps][d] */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float acc[M][8] = {};
    int r0 = blockIdx.x * rows, r1 = min(N, r0 + rows);
    for (int row = r0 + warp; row < r1; row += ROWS_PER_BLOCK) {
        size_t off = (size_t)row * d;
        uint4 xs[M], ys[M], rs[M];
#pragma unroll
        for (int m = 0; m < M; m++) {
            int j = lane * 8 + 256 * m;
            xs[m] = ys[m] = rs[m] = make_uint4(0, 0, 0, 0);
            if (j < d) {
                xs[m] = raw8(x + off + j);
                ys[m] = raw8(dout + off + j);
                if (res)
                    rs[m] = raw8(res + off + j);
            }
        }
        float dot = 0;
#pragma unroll
        for (int m = 0; m < M; m++) {
            int j = lane * 8 + 256 * m;
            if (j < d) {
                vec8 xv = unpack8(xs[m]), yv = unpack8(ys[m]);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    dot += yv.v[i] * g[j + i] * xv.v[i];
            }
        }
        dot = warp_all(dot, op_add());
        float r = rstd[row];
        float c = s_in * s_in * s_in * s_out * r * r * r * dot / d, rr = s_in * s_out * r;
#pragma unroll
        for (int m = 0; m < M; m++) {
            int j = lane * 8 + 256 * m;
            if (j < d) {
                vec8 xv = unpack8(xs[m]), yv = unpack8(ys[m]), rv = unpack8(rs[m]), out;
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    out.v[i] = rr * yv.v[i] * g[j + i] - c * xv.v[i] + (res ? b * rv.v[i] : 0.0f);
                    acc[m][i] += yv.v[i] * xv.v[i] * rr;
                }
                store8(dx + off + j, out);
            }
        }
    }
    float *mine = slice + (size_t)warp * d;
#pragma unroll
    for (int m = 0; m < M; m++) {
        int j = lane * 8 + 256 * m;
        if (j < d)
#pragma unroll
            for (int i = 0; i < 8; i++)
                mine[j + i] = acc[m][i];
    }
    __syncthreads();
    for (int k = threadIdx.x; k < d; k += blockDim.x) {
        float t = 0;
        for (int w = 0; w < ROWS_PER_BLOCK; w++)
            t += slice[(size_t)w * d + k];
        partial[(size_t)blockIdx.x * d + k] = t;
    }
}

/* The fused backward for rows of up to 256·M columns: as many blocks as fit
 * on the GPU at once, each a run of whole warps' rows. */
template <int M>
static void bwd_fused(const char *op, bf16 *dx, float *dg, const bf16 *dout, const bf16 *x,
                      const float *g, const float *rstd, int N, int d, float s_in, float s_out,
                      const bf16 *res, float b)
{
    size_t smem = (size_t)ROWS_PER_BLOCK * d * sizeof(float);
    /* the grid depends on the device and the width alone: the runtime is
     * asked once for each (a model's norms all have one width) */
    static int known_dev = -1, sms, per_sm;
    static size_t known_smem;
    int dev = 0;
    CUDA_CHECK(op, cudaGetDevice(&dev));
    if (dev != known_dev || smem != known_smem) {
        cudaError_t e = smem > 48 * 1024
                            ? cudaFuncSetAttribute(rmsnorm_bwd_fused_kernel<M>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)smem)
                            : cudaSuccess;
        if (e == cudaSuccess)
            e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e == cudaSuccess)
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rmsnorm_bwd_fused_kernel<M>,
                                                              ROWS_PER_BLOCK * 32, smem);
        if (e != cudaSuccess) {
            cuda_fail(__FILE__, __LINE__, op, cudaGetErrorString(e));
            return;
        }
        known_dev = dev;
        known_smem = smem;
    }
    if (cuda_failed())
        return;
    int blocks = (per_sm > 0 ? per_sm : 1) * sms, rows = (N + blocks - 1) / blocks;
    rows = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK * ROWS_PER_BLOCK;
    blocks = (N + rows - 1) / rows;
    float *partial = (float *)cuda_scratch((size_t)blocks * d * sizeof(float), op);
    if (!partial)
        return;
    rmsnorm_bwd_fused_kernel<M><<<blocks, ROWS_PER_BLOCK * 32, smem>>>(
        dx, partial, dout, x, g, rstd, N, d, rows, s_in, s_out, res, b);
    LAUNCH_CHECK(op);
    cuda_colsum_finish(dg, partial, blocks, d, 1, op);
}

void cuda_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                      const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                      real b)
{
    if (N <= 0)
        return;
    bool vec = vec_ok(x, d) && vec_ok(dx, d) && vec_ok(dout, d) && (!res || vec_ok(res, d));
    /* the fused kernel's point is the gain's gradient: without one (frozen
     * gains) the input gradient alone, below */
    if (vec && d <= 8 * 256 && dg) {
        switch ((d + 255) / 256) {
#define CASE(M)                                                                                \
    case M:                                                                                    \
        bwd_fused<M>("rmsnorm_bwd", BF(dx), dg, BFC(dout), BFC(x), g, rstd, N, d, s_in, s_out, \
                     BFC(res), b);                                                             \
        return;
            CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
        }
    }
    /* wider rows (llama-7b's), or unaligned: the input gradient, then the
     * gain's from a second pass */
    unsigned grid = (unsigned)((N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    if (vec)
        rmsnorm_dx_kernel<true><<<grid, ROWS_PER_BLOCK * 32>>>(
            BF(dx), BFC(dout), BFC(x), g, rstd, N, d, s_in, s_out, BFC(res), b);
    else
        rmsnorm_dx_kernel<false><<<grid, ROWS_PER_BLOCK * 32>>>(
            BF(dx), BFC(dout), BFC(x), g, rstd, N, d, s_in, s_out, BFC(res), b);
    LAUNCH_CHECK("rmsnorm_bwd");
    if (dg)
        cuda_colsum_accumulate(dg, BFC(dout), BFC(x), rstd, s_out * s_in, N, d, "rmsnorm_bwd");
}
