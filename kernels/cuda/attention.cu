/* Causal softmax attention on CUDA cores: the fallback for head sizes the
 * tensor-core kernels (attention_mma.cu) do not take, and the reference
 * they are checked against on the GPU. Flash style: the T×T scores never
 * reach device memory. The forward keeps an online max and sum per query
 * row and stores only the row's logsumexp; the backward recomputes the
 * probabilities from it. The state is [lse | D], B·nh·T each, where D =
 * rowsum(P ⊙ dP) = rowsum(dO ⊙ O) is the backward's.
 *
 * q, k and v are read from the packed rows [q | k | v] of 3·nh·hd (bf16)
 * into fp32 shared-memory tiles. Layout of the work: a warp owns a few
 * query (or key) rows; the 32 lanes take 32 keys (or queries) of a tile at
 * a time for the scores, then hold hd/32 columns each of the accumulators.
 * hd ≤ 128. They read q and k rotated: a copy in the scratch memory,
 * turned by rope.cu, and the gradients of q and k are turned back in place.
 * The tensor-core kernels keep their rotated copy in the state, after lse
 * and D, from the forward to the backward. This file also chooses between
 * the two implementations. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

enum {
    HD_MAX = 128,
    TILE = 32,          /* keys (forward, dQ) or queries (dK, dV) per shared tile */
    WARPS = 4,
    FWD_RPW = 4,        /* query rows per warp in the forward */
    BWD_RPW = 2,        /* rows per warp in the backward (two more tiles in shared memory) */
    COLS = HD_MAX / 32, /* accumulator columns per lane */
};
static const unsigned FULL = 0xffffffffu;

/* where the tensor-core kernels' rotated q and k start in the state: after
 * lse and D, on a 16-byte boundary for their copies into shared memory */
static size_t rotated_at(int B, int T, int nh) { return ((size_t)2 * B * nh * T + 3) / 4 * 4; }

/* [lse | D], and where the tensor-core kernels may take this head size, the
 * rotated q and k, [B·T][2·nh·hd] bf16 (nh·hd floats a row), which the
 * forward and both backward kernels read (attention_mma.cu says why), for a
 * fraction of the memory of the activations around it */
size_t cuda_attn_state_size(int B, int T, int nh, int hd)
{
    size_t n = (size_t)2 * B * nh * T;
    return cuda_attention_mma_takes(hd) ? rotated_at(B, T, nh) + (size_t)B * T * nh * hd : n;
}

int cuda_attention_fallback;

extern "C" void ops_cuda_fallback_attention(int on) { cuda_attention_fallback = on != 0; }

/* Whether head size hd goes to the tensor-core kernels: those that take it
 * unless the tests asked for these, or COD_CUDA_ATTENTION=cores puts every
 * head size on these (slower, to tell a fault of the tensor-core kernels
 * from the rest's, or to run on when they are found wrong). */
static bool on_tensor_cores(int hd, const char *op)
{
    static int env = -1;
    if (env < 0) {
        const char *v = getenv("COD_CUDA_ATTENTION");
        env = v && strcmp(v, "cores") == 0;
        if (v && !env && *v) {
            char why[160];
            snprintf(why, sizeof why, "COD_CUDA_ATTENTION must be \"cores\" or unset, not \"%.80s\"", v);
            cuda_fail(__FILE__, __LINE__, op, why);
        }
    }
    return !env && !cuda_attention_fallback && cuda_attention_mma_takes(hd);
}

static __device__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(FULL, v, o);
    return v;
}

static __device__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

/* rows t0.. of one (batch, head) into a [rows][stride] shared tile, zero
 * past T; ld is the source's row stride in elements */
static __device__ void load_rows(float *dst, int stride, const bf16 *src, size_t ld, int t0,
                                 int rows, int T, int hd)
{
    for (int idx = threadIdx.x; idx < rows * hd; idx += blockDim.x) {
        int r = idx / hd, c = idx % hd, t = t0 + r;
        dst[r * stride + c] = t < T ? __bfloat162float(src[(size_t)t * ld + c]) : 0.0f;
    }
}

static __device__ float row_dot(const float *a, const float *b, int hd)
{
    float s = 0;
    for (int c = 0; c < hd; c++)
        s += a[c] * b[c];
    return s;
}

static __global__ void __launch_bounds__(WARPS * 32)
    attn_fwd_kernel(bf16 *out, float *lse, const bf16 *qkv, int T, int nh, int hd, float scale)
{
    const int BR = WARPS * FWD_RPW;
    __shared__ float Qs[BR][HD_MAX];
    __shared__ float Ks[TILE][HD_MAX + 1];
    __shared__ float Vs[TILE][HD_MAX];
    int bh = blockIdx.y, b = bh / nh, h = bh % nh, warp = threadIdx.x / 32,
        lane = threadIdx.x % 32;
    size_t d = (size_t)nh * hd, ld = 3 * d, base = (size_t)b * T * d + (size_t)h * hd;
    const bf16 *q = qkv + (size_t)b * T * ld + (size_t)h * hd, *k = q + d, *v = q + 2 * d;
    int r0 = blockIdx.x * BR, last = min(T - 1, r0 + BR - 1);
    load_rows(&Qs[0][0], HD_MAX, q, ld, r0, BR, T, hd);
    float m[FWD_RPW], l[FWD_RPW], acc[FWD_RPW][COLS];
#pragma unroll
    for (int rr = 0; rr < FWD_RPW; rr++) {
        m[rr] = -INFINITY;
        l[rr] = 0;
#pragma unroll
        for (int e = 0; e < COLS; e++)
            acc[rr][e] = 0;
    }
    for (int j0 = 0; j0 <= last; j0 += TILE) {
        __syncthreads(); /* the previous tile is consumed */
        load_rows(&Ks[0][0], HD_MAX + 1, k, ld, j0, TILE, T, hd);
        load_rows(&Vs[0][0], HD_MAX, v, ld, j0, TILE, T, hd);
        __syncthreads();
#pragma unroll
        for (int rr = 0; rr < FWD_RPW; rr++) {
            int r = warp + WARPS * rr, i = r0 + r, j = j0 + lane;
            if (i >= T || j0 > i) /* warp-uniform */
                continue;
            float s = j <= i ? scale * row_dot(Qs[r], Ks[lane], hd) : -INFINITY;
            float mnew = fmaxf(m[rr], warp_max(s)); /* finite: key j0 ≤ i is in the tile */
            float p = j <= i ? expf(s - mnew) : 0.0f, corr = expf(m[rr] - mnew);
            l[rr] = l[rr] * corr + warp_sum(p);
            m[rr] = mnew;
#pragma unroll
            for (int e = 0; e < COLS; e++)
                acc[rr][e] *= corr;
            int keys = min(TILE, i - j0 + 1);
            for (int jj = 0; jj < keys; jj++) {
                float pj = __shfl_sync(FULL, p, jj);
#pragma unroll
                for (int e = 0; e < COLS; e++)
                    if (lane + 32 * e < hd)
                        acc[rr][e] += pj * Vs[jj][lane + 32 * e];
            }
        }
    }
#pragma unroll
    for (int rr = 0; rr < FWD_RPW; rr++) {
        int i = r0 + warp + WARPS * rr;
        if (i >= T)
            continue;
        float inv = 1 / l[rr];
#pragma unroll
        for (int e = 0; e < COLS; e++)
            if (lane + 32 * e < hd)
                out[base + (size_t)i * d + lane + 32 * e] = __float2bfloat16_rn(acc[rr][e] * inv);
        if (lane == 0)
            lse[(size_t)bh * T + i] = m[rr] + logf(l[rr]);
    }
}

/* Two passes over the keys of query rows, recomputing P from the lse: the
 * first sums D = rowsum(P ⊙ dP) with dP = dO·Vᵀ (the CPU's rowsum, without
 * the forward's output, which the op is not given), the second accumulates
 * dQ = scale·dS·K with dS = P ⊙ (dP − D). */
static __global__ void __launch_bounds__(WARPS * 32)
    attn_dq_kernel(bf16 *dqkv, float *Dst, const float *lse, const bf16 *dout, const bf16 *qkv,
                   int T, int nh, int hd, float scale)
{
    const int BR = WARPS * BWD_RPW;
    __shared__ float Qs[BR][HD_MAX];
    __shared__ float dOs[BR][HD_MAX];
    __shared__ float Ks[TILE][HD_MAX + 1];
    __shared__ float Vs[TILE][HD_MAX + 1];
    int bh = blockIdx.y, b = bh / nh, h = bh % nh, warp = threadIdx.x / 32,
        lane = threadIdx.x % 32;
    size_t d = (size_t)nh * hd, ld = 3 * d, base = (size_t)b * T * d + (size_t)h * hd;
    const bf16 *q = qkv + (size_t)b * T * ld + (size_t)h * hd, *k = q + d, *v = q + 2 * d;
    bf16 *dq = dqkv + (size_t)b * T * ld + (size_t)h * hd;
    int r0 = blockIdx.x * BR, last = min(T - 1, r0 + BR - 1);
    load_rows(&Qs[0][0], HD_MAX, q, ld, r0, BR, T, hd);
    load_rows(&dOs[0][0], HD_MAX, dout + base, d, r0, BR, T, hd);
    float L[BWD_RPW], D[BWD_RPW], acc[BWD_RPW][COLS];
#pragma unroll
    for (int rr = 0; rr < BWD_RPW; rr++) {
        int i = r0 + warp + WARPS * rr;
        L[rr] = i < T ? lse[(size_t)bh * T + i] : 0;
        D[rr] = 0;
#pragma unroll
        for (int e = 0; e < COLS; e++)
            acc[rr][e] = 0;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int j0 = 0; j0 <= last; j0 += TILE) {
            __syncthreads();
            load_rows(&Ks[0][0], HD_MAX + 1, k, ld, j0, TILE, T, hd);
            load_rows(&Vs[0][0], HD_MAX + 1, v, ld, j0, TILE, T, hd);
            __syncthreads();
#pragma unroll
            for (int rr = 0; rr < BWD_RPW; rr++) {
                int r = warp + WARPS * rr, i = r0 + r, j = j0 + lane;
                if (i >= T || j0 > i)
                    continue;
                float p = 0, dp = 0;
                if (j <= i) {
                    p = expf(scale * row_dot(Qs[r], Ks[lane], hd) - L[rr]);
                    dp = row_dot(dOs[r], Vs[lane], hd);
                }
                if (pass == 0) {
                    D[rr] += p * dp; /* lane partials, summed after the pass */
                    continue;
                }
                float ds = p * (dp - D[rr]);
                int keys = min(TILE, i - j0 + 1);
                for (int jj = 0; jj < keys; jj++) {
                    float dsj = __shfl_sync(FULL, ds, jj);
#pragma unroll
                    for (int e = 0; e < COLS; e++)
                        if (lane + 32 * e < hd)
                            acc[rr][e] += dsj * Ks[jj][lane + 32 * e];
                }
            }
        }
        if (pass == 0)
#pragma unroll
            for (int rr = 0; rr < BWD_RPW; rr++)
                D[rr] = warp_sum(D[rr]);
    }
#pragma unroll
    for (int rr = 0; rr < BWD_RPW; rr++) {
        int i = r0 + warp + WARPS * rr;
        if (i >= T)
            continue;
#pragma unroll
        for (int e = 0; e < COLS; e++)
            if (lane + 32 * e < hd)
                dq[(size_t)i * ld + lane + 32 * e] = __float2bfloat16_rn(scale * acc[rr][e]);
        if (lane == 0)
            Dst[(size_t)bh * T + i] = D[rr];
    }
}

/* Key rows: dV = Pᵀ·dO and dK = scale·dSᵀ·Q over the queries i ≥ j. */
static __global__ void __launch_bounds__(WARPS * 32)
    attn_dkv_kernel(bf16 *dqkv, const float *lse, const float *Dst, const bf16 *dout,
                    const bf16 *qkv, int T, int nh, int hd, float scale)
{
    const int BK = WARPS * BWD_RPW;
    __shared__ float Ks[BK][HD_MAX];
    __shared__ float Vs[BK][HD_MAX];
    __shared__ float Qs[TILE][HD_MAX + 1];
    __shared__ float dOs[TILE][HD_MAX + 1];
    __shared__ float Ls[TILE];
    __shared__ float Ds[TILE];
    int bh = blockIdx.y, b = bh / nh, h = bh % nh, warp = threadIdx.x / 32,
        lane = threadIdx.x % 32;
    size_t d = (size_t)nh * hd, ld = 3 * d, base = (size_t)b * T * d + (size_t)h * hd;
    const bf16 *q = qkv + (size_t)b * T * ld + (size_t)h * hd, *k = q + d, *v = q + 2 * d;
    bf16 *dk = dqkv + (size_t)b * T * ld + (size_t)h * hd + d, *dv = dk + d;
    int k0 = blockIdx.x * BK;
    load_rows(&Ks[0][0], HD_MAX, k, ld, k0, BK, T, hd);
    load_rows(&Vs[0][0], HD_MAX, v, ld, k0, BK, T, hd);
    float gk[BWD_RPW][COLS], gv[BWD_RPW][COLS];
#pragma unroll
    for (int rr = 0; rr < BWD_RPW; rr++)
#pragma unroll
        for (int e = 0; e < COLS; e++)
            gk[rr][e] = gv[rr][e] = 0;
    for (int i0 = k0; i0 < T; i0 += TILE) {
        __syncthreads();
        load_rows(&Qs[0][0], HD_MAX + 1, q, ld, i0, TILE, T, hd);
        load_rows(&dOs[0][0], HD_MAX + 1, dout + base, d, i0, TILE, T, hd);
        if (threadIdx.x < TILE) {
            int i = i0 + threadIdx.x;
            Ls[threadIdx.x] = i < T ? lse[(size_t)bh * T + i] : 0;
            Ds[threadIdx.x] = i < T ? Dst[(size_t)bh * T + i] : 0;
        }
        __syncthreads();
#pragma unroll
        for (int rr = 0; rr < BWD_RPW; rr++) {
            int r = warp + WARPS * rr, j = k0 + r, i = i0 + lane;
            if (j >= T)
                continue;
            float p = 0, ds = 0;
            if (i >= j && i < T) {
                p = expf(scale * row_dot(Qs[lane], Ks[r], hd) - Ls[lane]);
                ds = p * (row_dot(dOs[lane], Vs[r], hd) - Ds[lane]);
            }
            for (int ii = 0; ii < TILE; ii++) {
                float pi = __shfl_sync(FULL, p, ii), dsi = __shfl_sync(FULL, ds, ii);
#pragma unroll
                for (int e = 0; e < COLS; e++)
                    if (lane + 32 * e < hd) {
                        gv[rr][e] += pi * dOs[ii][lane + 32 * e];
                        gk[rr][e] += dsi * Qs[ii][lane + 32 * e];
                    }
            }
        }
    }
#pragma unroll
    for (int rr = 0; rr < BWD_RPW; rr++) {
        int j = k0 + warp + WARPS * rr;
        if (j >= T)
            continue;
#pragma unroll
        for (int e = 0; e < COLS; e++)
            if (lane + 32 * e < hd) {
                dk[(size_t)j * ld + lane + 32 * e] = __float2bfloat16_rn(scale * gk[rr][e]);
                dv[(size_t)j * ld + lane + 32 * e] = __float2bfloat16_rn(gv[rr][e]);
            }
    }
}

static int head_dim_ok(int hd, const char *op)
{
    if (hd >= 1 && hd <= HD_MAX)
        return 1;
    char why[96];
    snprintf(why, sizeof why, "head dim %d is beyond the kernel's 1..%d", hd, (int)HD_MAX);
    cuda_fail(__FILE__, __LINE__, op, why);
    return 0;
}

/* qkv with q and k rotated, in the scratch memory; NULL after a fault */
static const bf16 *rotated(const act *qkv, const float *cos, const float *sin, int B, int T,
                           int nh, int hd, const char *op)
{
    size_t n = (size_t)B * T * 3 * nh * hd;
    bf16 *r = (bf16 *)cuda_scratch(n * sizeof(bf16), op);
    if (!r)
        return NULL;
    CUDA_CHECK(op, cudaMemcpyAsync(r, qkv, n * sizeof(bf16), cudaMemcpyDeviceToDevice));
    const int ld = 3 * nh * hd;
    cuda_rope(r, ld, r, ld, B * T, T, 2 * nh, hd, cos, sin, 1);
    return r;
}

void cuda_attention_fwd(act *out, real *state, const act *qkv, const real *cos, const real *sin,
                        int B, int T, int nh, int hd)
{
    if (B * nh * T == 0)
        return;
    if (on_tensor_cores(hd, "attention_fwd")) {
        cuda_attention_mma_fwd(BF(out), state, (bf16 *)(state + rotated_at(B, T, nh)), BFC(qkv),
                               cos, sin, B, T, nh, hd);
        return;
    }
    if (!head_dim_ok(hd, "attention_fwd"))
        return;
    const bf16 *r = rotated(qkv, cos, sin, B, T, nh, hd, "attention_fwd");
    if (!r)
        return;
    const int BR = WARPS * FWD_RPW;
    dim3 grid((T + BR - 1) / BR, B * nh);
    attn_fwd_kernel<<<grid, WARPS * 32>>>(BF(out), state, r, T, nh, hd,
                                          (float)(1.0 / sqrt((double)hd)));
    LAUNCH_CHECK("attention_fwd");
}

void cuda_attention_bwd(act *dqkv, const act *dout, const act *out, real *state, const act *qkv,
                        const real *cos, const real *sin, int B, int T, int nh, int hd)
{
    if (B * nh * T == 0)
        return;
    const float *lse = state;
    float *D = (float *)state + (size_t)B * nh * T; /* the backward's half of the state */
    if (on_tensor_cores(hd, "attention_bwd")) {
        cuda_attention_mma_bwd(BF(dqkv), BFC(dout), BFC(out), lse, D,
                               (const bf16 *)(state + rotated_at(B, T, nh)), BFC(qkv), cos, sin,
                               B, T, nh, hd);
        return;
    }
    if (!head_dim_ok(hd, "attention_bwd"))
        return;
    const bf16 *r = rotated(qkv, cos, sin, B, T, nh, hd, "attention_bwd");
    if (!r)
        return;
    const int BR = WARPS * BWD_RPW;
    float scale = (float)(1.0 / sqrt((double)hd));
    dim3 grid((T + BR - 1) / BR, B * nh);
    attn_dq_kernel<<<grid, WARPS * 32>>>(BF(dqkv), D, lse, BFC(dout), r, T, nh, hd, scale);
    LAUNCH_CHECK("attention_bwd (dq)");
    attn_dkv_kernel<<<grid, WARPS * 32>>>(BF(dqkv), lse, D, BFC(dout), r, T, nh, hd, scale);
    LAUNCH_CHECK("attention_bwd (dk, dv)");
    const int ld = 3 * nh * hd;
    cuda_rope(BF(dqkv), ld, BF(dqkv), ld, B * T, T, 2 * nh, hd, cos, sin, -1);
}
