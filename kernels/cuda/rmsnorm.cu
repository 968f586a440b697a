/* RMSNorm with the variant's scales, one warp per row: u = s_in·x,
 * r = 1/sqrt(mean(u²) + eps), out = s_out·g ⊙ u·r (+ b·res, the residual
 * add that sandwich placement fuses in). Statistics in fp32.
 *
 * Rows of up to 2,048 columns in 16-byte pieces (the models' widths): a
 * lane holds its pieces of a row (8·lane + 256·m) in registers from one
 * read, all of them issued before the first is used, so that a row costs
 * one trip to memory; the gains are staged in shared memory once per block,
 * whose warps then take row after row (as many blocks as fit on the GPU at
 * once). The backward computes the input gradient and, from the same
 * loads, the gain's gradient: each lane adds its columns of its warp's rows
 * in registers, the block's warps are added in warp order into one partial
 * row per block, and the partials in a fixed order into dg (reduce.cu): no
 * atomics. Wider or unaligned rows take the plain kernels below, which
 * read x twice and the gains from global memory.
 *
 * COD_CUDA_NORM_ROWS=0 runs the kernels of before (8 rows a block, x read
 * twice in the forward, the gains read where used), for measuring what
 * the staged kernels buy (bench/gpu/run.sh's switches). */
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

enum { ROWS_PER_BLOCK = 8, MAX_PIECES = 8 };

static bool staged_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("COD_CUDA_NORM_ROWS");
        on = !(v && strcmp(v, "0") == 0);
    }
    return on;
}

/* ---- the plain kernels: any width, any alignment ---- */

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

/* ---- rows of up to 256·M columns in 16-byte pieces ---- */

/* the 8 gains of columns j..j+7: staged (shared memory, 16-byte aligned)
 * or where they are */
template <bool STAGED>
static __device__ __forceinline__ void gains8(float gv[8], const float *gs, const float *g, int j)
{
    if (STAGED) {
        float4 a = *reinterpret_cast<const float4 *>(gs + j),
               c = *reinterpret_cast<const float4 *>(gs + j + 4);
        gv[0] = a.x, gv[1] = a.y, gv[2] = a.z, gv[3] = a.w;
        gv[4] = c.x, gv[5] = c.y, gv[6] = c.z, gv[7] = c.w;
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++)
            gv[i] = g[j + i];
    }
}

/* A lane's pieces of a row (8·lane + 256·m), zeros past its end or for
 * no row: loaded all before any is used, so that a row costs one trip to
 * memory; packed (4 registers a piece, not 8) until used. */
template <int M>
static __device__ __forceinline__ void pieces(uint4 (&v)[M], const bf16 *row, int d, int lane)
{
#pragma unroll
    for (int m = 0; m < M; m++) {
        int j = lane * 8 + 256 * m;
        v[m] = row && j < d ? raw8(row + j) : make_uint4(0, 0, 0, 0);
    }
}

/* the gains into shared memory, once a block */
static __device__ __forceinline__ void stage_gains(float *gs, const float *g, int d)
{
    for (int j = threadIdx.x; j < d; j += blockDim.x)
        gs[j] = g[j];
    __syncthreads();
}

template <int M>
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_fwd_rows(bf16 *out, float *rstd, const bf16 *x, const float *g, int N, int d,
                     float s_in, float s_out, float eps, const bf16 *res, float b)
{
    extern __shared__ __align__(16) float gs[]; /* [d] */
    stage_gains(gs, g, d);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int row = blockIdx.x * ROWS_PER_BLOCK + warp; row < N; row += gridDim.x * ROWS_PER_BLOCK) {
        size_t off = (size_t)row * d;
        uint4 xs[M], rs[M];
        pieces<M>(xs, x + off, d, lane);
        pieces<M>(rs, res ? res + off : NULL, d, lane);
        float ss = 0;
#pragma unroll
        for (int m = 0; m < M; m++) {
            vec8 v = unpack8(xs[m]); /* zeros past the row */
#pragma unroll
            for (int i = 0; i < 8; i++)
                ss += v.v[i] * v.v[i];
        }
        ss = warp_all(ss, op_add());
        float r = rsqrtf(s_in * s_in * ss / d + eps);
        if (lane == 0)
            rstd[row] = r;
        float sr = s_out * s_in * r;
#pragma unroll
        for (int m = 0; m < M; m++) {
            int j = lane * 8 + 256 * m;
            if (j < d) {
                vec8 v = unpack8(xs[m]), rv = unpack8(rs[m]);
                float gv[8];
                gains8<true>(gv, gs, g, j);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    v.v[i] = sr * gv[i] * v.v[i] + (res ? b * rv.v[i] : 0.0f);
                store8(out + off + j, v);
            }
        }
    }
}

/* The input gradient as rmsnorm_dx_kernel, and with DG the gain's
 * gradient from the same loads: partial[block][j] = Σ over the block's
 * rows of dy_j·x_j·r·s_in·s_out. The block's rows are a run of whole
 * warps' rows (rows of them); STAGED: the gains from shared memory. */
template <int M, bool DG, bool STAGED>
static __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
    rmsnorm_bwd_rows(bf16 *dx, float *partial, const bf16 *dout, const bf16 *x, const float *g,
                     const float *rstd, int N, int d, int rows, float s_in, float s_out,
                     const bf16 *res, float b)
{
    extern __shared__ __align__(16) float smem[]; /* gains [d] where staged, then [warps][d] */
    float *gs = smem, *slice = smem + (STAGED ? d : 0);
    if (STAGED)
        stage_gains(gs, g, d);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float acc[DG ? M : 1][8] = {};
    int r0 = blockIdx.x * rows, r1 = min(N, r0 + rows);
    for (int row = r0 + warp; row < r1; row += ROWS_PER_BLOCK) {
        size_t off = (size_t)row * d;
        uint4 xs[M], ys[M], rs[M];
        pieces<M>(xs, x + off, d, lane);
        pieces<M>(ys, dout + off, d, lane);
        pieces<M>(rs, res ? res + off : NULL, d, lane);
        float dot = 0;
#pragma unroll
        for (int m = 0; m < M; m++) {
            int j = lane * 8 + 256 * m;
            if (j < d) {
                vec8 xv = unpack8(xs[m]), yv = unpack8(ys[m]);
                float gv[8];
                gains8<STAGED>(gv, gs, g, j);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    dot += yv.v[i] * gv[i] * xv.v[i];
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
                float gv[8];
                gains8<STAGED>(gv, gs, g, j);
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    out.v[i] = rr * yv.v[i] * gv[i] - c * xv.v[i] + (res ? b * rv.v[i] : 0.0f);
                    if (DG)
                        acc[DG ? m : 0][i] += yv.v[i] * xv.v[i] * rr;
                }
                store8(dx + off + j, out);
            }
        }
    }
    if (!DG)
        return;
    float *mine = slice + (size_t)warp * d;
#pragma unroll
    for (int m = 0; m < M; m++) {
        int j = lane * 8 + 256 * m;
        if (j < d)
#pragma unroll
            for (int i = 0; i < 8; i++)
                mine[j + i] = acc[DG ? m : 0][i];
    }
    __syncthreads();
    for (int k = threadIdx.x; k < d; k += blockDim.x) {
        float t = 0;
        for (int w = 0; w < ROWS_PER_BLOCK; w++)
            t += slice[(size_t)w * d + k];
        partial[(size_t)blockIdx.x * d + k] = t;
    }
}

/* How many blocks of fn (8 warps, smem bytes of dynamic shared memory, its
 * limit raised past 48 KiB where needed) the current GPU holds at once:
 * asked of the runtime once for each kernel, device and size (a model's
 * norms all have one width); 0 with the failure recorded. */
static int resident_blocks(const void *fn, size_t smem, const char *op)
{
    enum { KNOWN = 64 };
    static struct {
        const void *fn;
        int dev;
        size_t smem;
        int blocks;
    } known[KNOWN];
    static int n_known;
    int dev = 0;
    CUDA_CHECK(op, cudaGetDevice(&dev));
    for (int i = 0; i < n_known; i++)
        if (known[i].fn == fn && known[i].dev == dev && known[i].smem == smem)
            return known[i].blocks;
    int sms = 0, per_sm = 0;
    cudaError_t e = smem > 48 * 1024
                        ? cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem)
                        : cudaSuccess;
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, ROWS_PER_BLOCK * 32, smem);
    if (e != cudaSuccess) {
        cuda_fail(__FILE__, __LINE__, op, cudaGetErrorString(e));
        return 0;
    }
    int blocks = (per_sm > 0 ? per_sm : 1) * sms;
    if (n_known < KNOWN)
        known[n_known++] = {fn, dev, smem, blocks};
    return blocks;
}

template <int M>
static void fwd_rows(bf16 *out, float *rstd, const bf16 *x, const float *g, int N, int d,
                     float s_in, float s_out, float eps, const bf16 *res, float b)
{
    size_t smem = (size_t)d * sizeof(float);
    int blocks = resident_blocks((const void *)rmsnorm_fwd_rows<M>, smem, "rmsnorm_fwd");
    if (blocks == 0)
        return;
    int need = (N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
    rmsnorm_fwd_rows<M><<<need < blocks ? need : blocks, ROWS_PER_BLOCK * 32, smem>>>(
        out, rstd, x, g, N, d, s_in, s_out, eps, res, b);
    LAUNCH_CHECK("rmsnorm_fwd");
}

void cuda_rmsnorm_fwd(act *out_, real *rstd, const act *x_, const real *g, int N, int d,
                      real s_in, real s_out, real eps, const act *res_, real b)
{
    bf16 *out = BF(out_);
    const bf16 *x = BFC(x_), *res = BFC(res_);
    if (N <= 0)
        return;
    bool vec = vec_ok(x, d) && vec_ok(out, d) && (!res || vec_ok(res, d));
    if (vec && staged_on() && d <= 256 * MAX_PIECES) {
        switch ((d + 255) / 256) {
#define CASE(M)                                                                                \
    case M:                                                                                    \
        fwd_rows<M>(out, rstd, x, g, N, d, s_in, s_out, eps, res, b);                          \
        return;
            CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
        }
    }
    unsigned grid = (unsigned)((N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    if (vec)
        rmsnorm_fwd_kernel<true><<<grid, ROWS_PER_BLOCK * 32>>>(out, rstd, x, g, N, d, s_in,
                                                                 s_out, eps, res, b);
    else
        rmsnorm_fwd_kernel<false><<<grid, ROWS_PER_BLOCK * 32>>>(out, rstd, x, g, N, d, s_in,
                                                                  s_out, eps, res, b);
    LAUNCH_CHECK("rmsnorm_fwd");
}

/* The backward for rows of up to 256·M columns: as many blocks as fit on
 * the GPU at once, each a run of whole warps' rows; with dg, their
 * partials added into it. */
template <int M, bool DG, bool STAGED>
static void bwd_rows(const char *op, bf16 *dx, float *dg, const bf16 *dout, const bf16 *x,
                     const float *g, const float *rstd, int N, int d, float s_in, float s_out,
                     const bf16 *res, float b)
{
    size_t smem = ((STAGED ? 1 : 0) + (DG ? ROWS_PER_BLOCK : 0)) * (size_t)d * sizeof(float);
    int blocks = resident_blocks((const void *)rmsnorm_bwd_rows<M, DG, STAGED>, smem, op);
    if (blocks == 0 || cuda_failed())
        return;
    int rows = (N + blocks - 1) / blocks;
    rows = (rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK * ROWS_PER_BLOCK;
    blocks = (N + rows - 1) / rows;
    float *partial = NULL;
    if (DG && !(partial = (float *)cuda_scratch((size_t)blocks * d * sizeof(float), op)))
        return;
    rmsnorm_bwd_rows<M, DG, STAGED><<<blocks, ROWS_PER_BLOCK * 32, smem>>>(
        dx, partial, dout, x, g, rstd, N, d, rows, s_in, s_out, res, b);
    LAUNCH_CHECK(op);
    if (DG)
        cuda_colsum_finish(dg, partial, blocks, d, 1, op);
}

void cuda_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                      const real *rstd, int N, int d, real s_in, real s_out, const act *res,
                      real b)
{
    if (N <= 0)
        return;
    bool vec = vec_ok(x, d) && vec_ok(dx, d) && vec_ok(dout, d) && (!res || vec_ok(res, d));
    bool staged = staged_on();
    /* without the staging, as before it: the row kernel for the gain's
     * gradient alone, the plain one for the input gradient without it */
    if (vec && d <= 256 * MAX_PIECES && (dg || staged)) {
        switch ((d + 255) / 256 + (dg ? 0 : 8) + (staged ? 0 : 16)) {
#define CASE(M, DG, STAGED, K)                                                                 \
    case K:                                                                                    \
        bwd_rows<M, DG, STAGED>("rmsnorm_bwd", BF(dx), dg, BFC(dout), BFC(x), g, rstd, N, d,   \
                                s_in, s_out, BFC(res), b);                                     \
        return;
#define PIECES(DG, STAGED, K)                                                                  \
    CASE(1, DG, STAGED, K + 1) CASE(2, DG, STAGED, K + 2) CASE(3, DG, STAGED, K + 3)             \
    CASE(4, DG, STAGED, K + 4) CASE(5, DG, STAGED, K + 5) CASE(6, DG, STAGED, K + 6)             \
    CASE(7, DG, STAGED, K + 7) CASE(8, DG, STAGED, K + 8)
            PIECES(true, true, 0) PIECES(false, true, 8) PIECES(true, false, 16)
#undef PIECES
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
