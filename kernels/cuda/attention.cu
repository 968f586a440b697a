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
 * The tensor-core kernels and cuDNN keep their rotated copy in the state,
 * after lse and D, from the forward to the backward. This file also
 * chooses between the three implementations, at every call:
 *   cuDNN's fused flash attention (attention_cudnn.cu), where cuDNN is
 *     present and takes the shape (its graphs build);
 *   else cod's tensor-core kernels (attention_mma.cu), for the head sizes
 *     they take (multiples of 16 up to 128: every preset's);
 *   else these.
 * COD_ATTENTION=own keeps cuDNN out; COD_ATTENTION=cudnn makes a call
 * that cuDNN cannot run an error saying why, never a quiet fallback;
 * COD_CUDA_ATTENTION=cores puts every call on these kernels (slower: to
 * tell a fault of the others from the rest's, or to run on when they are
 * found wrong). All three keep the same state (lse, D, the rotated q and
 * k), so a forward of one and a backward of another agree. */
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

/* Where D and the rotated q and k start in the state: after lse and after
 * D, each on a 16-byte boundary (cuDNN's graphs assume it of every
 * buffer; the tensor-core kernels copy the rotated rows into shared memory
 * 16 bytes at a time). */
static size_t d_at(int B, int T, int nh) { return ((size_t)B * nh * T + 3) / 4 * 4; }
static size_t rotated_at(int B, int T, int nh) { return 2 * d_at(B, T, nh); }

/* whether an implementation that reads q and k rotated from the state may
 * run at this head size */
static bool keeps_rotated(int hd)
{
    return cuda_attention_mma_takes(hd) || (hd % 8 == 0 && hd <= HD_MAX);
}

/* [lse | D], and where the tensor-core kernels or cuDNN may take this head
 * size, the rotated q and k, [B·T][2·nh·hd] bf16 (nh·hd floats a row),
 * which the forward and the backward read (attention_mma.cu says why),
 * for a fraction of the memory of the activations around it */
size_t cuda_attn_state_size(int B, int T, int nh, int hd)
{
    size_t lse_d = rotated_at(B, T, nh);
    return keeps_rotated(hd) ? lse_d + (size_t)B * T * nh * hd : lse_d;
}

int cuda_attention_fallback;

extern "C" void ops_cuda_fallback_attention(int on) { cuda_attention_fallback = on != 0; }

enum impl { NONE, CORES, MMA, CUDNN };

static enum ops_cuda_attention asked = OPS_CUDA_ATTENTION_ENV; /* by the tests */

extern "C" void ops_cuda_set_attention(enum ops_cuda_attention which) { asked = which; }

/* COD_ATTENTION (mode: ENV when unset, cuDNN's where it takes the call)
 * and COD_CUDA_ATTENTION, read once; bad: why they cannot hold (a value
 * neither knows, or cudnn with cores) */
static struct {
    int read, cores;
    enum ops_cuda_attention mode;
    char bad[200];
} env;

static void read_env(void)
{
    if (env.read)
        return;
    env.read = 1;
    const char *c = getenv("COD_CUDA_ATTENTION"), *a = getenv("COD_ATTENTION");
    env.cores = c && strcmp(c, "cores") == 0;
    env.mode = !a || !*a                ? OPS_CUDA_ATTENTION_ENV
               : strcmp(a, "own") == 0   ? OPS_CUDA_ATTENTION_OWN
               : strcmp(a, "cudnn") == 0 ? OPS_CUDA_ATTENTION_CUDNN
                                         : OPS_CUDA_ATTENTION_ENV;
    if (c && *c && !env.cores)
        snprintf(env.bad, sizeof env.bad,
                 "COD_CUDA_ATTENTION must be \"cores\" or unset, not \"%.60s\"", c);
    else if (a && *a && env.mode == OPS_CUDA_ATTENTION_ENV)
        snprintf(env.bad, sizeof env.bad,
                 "COD_ATTENTION must be \"own\" or \"cudnn\" (or unset), not \"%.60s\"", a);
    else if (env.cores && env.mode == OPS_CUDA_ATTENTION_CUDNN)
        snprintf(env.bad, sizeof env.bad,
                 "COD_ATTENTION=cudnn and COD_CUDA_ATTENTION=cores ask for two attentions");
}

int cuda_attention_setting(char *err, size_t len)
{
    read_env();
    char why[600];
    if (env.bad[0])
        snprintf(err, len, "%s", env.bad);
    else if (env.mode == OPS_CUDA_ATTENTION_CUDNN && cuda_cudnn_usable(why, sizeof why) != 0)
        snprintf(err, len, "COD_ATTENTION=cudnn, but cuDNN cannot be used: %s", why);
    else
        return 0;
    return -1;
}

/* what the last call ran, and why: the run's log says it (ops.h) */
static char choice[720];

const char *cuda_attention_choice(void) { return choice[0] ? choice : NULL; }

/* the setting in force: the tests' (ops_cuda_set_attention), else the
 * environment's; source names it for the messages */
static enum ops_cuda_attention setting(const char **source)
{
    *source = asked == OPS_CUDA_ATTENTION_ENV ? "COD_ATTENTION" : "the caller";
    return asked == OPS_CUDA_ATTENTION_ENV ? env.mode : asked;
}

/* cod's own kernels for this head size, said in choice with why */
static enum impl own(int hd, const char *why)
{
    bool mma = cuda_attention_mma_takes(hd);
    snprintf(choice, sizeof choice, "cod's %s kernels (%s)", mma ? "tensor-core" : "CUDA-core",
             why);
    return mma ? MMA : CORES;
}

/* cuDNN does not run this call (why): cod's own kernels, or, where cuDNN
 * was asked for, an error */
static enum impl without_cudnn(int hd, const char *why, const char *op)
{
    const char *source;
    if (setting(&source) == OPS_CUDA_ATTENTION_CUDNN) {
        char said[760];
        snprintf(said, sizeof said, "cuDNN's attention, asked for by %s, cannot run: %s", source,
                 why);
        cuda_fail(__FILE__, __LINE__, op, said);
        return NONE;
    }
    char note[680];
    snprintf(note, sizeof note, "cuDNN not used: %s", why);
    return own(hd, note);
}

/* The implementation for this call, said in choice; NONE after a failure
 * it recorded (a setting that cannot hold, cuDNN asked for where it
 * cannot run, a recording before cuDNN is set up for the shape). */
static enum impl choose(int B, int T, int nh, int hd, const char *op)
{
    read_env();
    if (env.bad[0]) {
        cuda_fail(__FILE__, __LINE__, op, env.bad);
        return NONE;
    }
    const char *source;
    enum ops_cuda_attention mode = setting(&source);
    if (cuda_attention_fallback || env.cores) {
        const char *who =
            cuda_attention_fallback ? "asked for by the caller" : "COD_CUDA_ATTENTION=cores";
        if (mode == OPS_CUDA_ATTENTION_CUDNN) {
            char why[200];
            snprintf(why, sizeof why,
                     "cuDNN's attention, asked for by %s, and the CUDA-core kernels, %s", source,
                     who);
            cuda_fail(__FILE__, __LINE__, op, why);
            return NONE;
        }
        snprintf(choice, sizeof choice, "cod's CUDA-core kernels (%s)", who);
        return CORES;
    }
    if (mode == OPS_CUDA_ATTENTION_OWN)
        return own(hd, asked == OPS_CUDA_ATTENTION_ENV ? "COD_ATTENTION=own"
                                                       : "asked for by the caller");
    char why[600];
    int takes = cuda_cudnn_takes(B, T, nh, hd, why, sizeof why);
    if (takes < 0)
        return NONE;
    if (!takes)
        return without_cudnn(hd, why, op);
    snprintf(choice, sizeof choice, "%s's fused flash attention", cuda_cudnn_name());
    return CUDNN;
}

extern "C" int ops_cuda_cudnn_usable(char *why, size_t len)
{
    return cuda_cudnn_usable(why, len);
}

extern "C" int ops_cuda_cudnn_takes(int B, int T, int nh, int hd, char *why, size_t len)
{
    return cuda_cudnn_takes(B, T, nh, hd, why, len) > 0;
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
    const char *op = "attention_fwd";
    bf16 *rot = (bf16 *)(state + rotated_at(B, T, nh));
    char why[600];
    enum impl impl = choose(B, T, nh, hd, op);
    if (impl == CUDNN && cuda_cudnn_attention_fwd(BF(out), state, rot, BFC(qkv), cos, sin, B, T,
                                                  nh, hd, why, sizeof why) != 0)
        impl = without_cudnn(hd, why, op);
    if (impl == MMA)
        cuda_attention_mma_fwd(BF(out), state, rot, BFC(qkv), cos, sin, B, T, nh, hd);
    if (impl != CORES || !head_dim_ok(hd, op))
        return;
    const bf16 *r = rotated(qkv, cos, sin, B, T, nh, hd, op);
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
    const char *op = "attention_bwd";
    const float *lse = state;
    float *D = (float *)state + d_at(B, T, nh); /* the backward's part of the state */
    const bf16 *rot = (const bf16 *)(state + rotated_at(B, T, nh));
    char why[600];
    enum impl impl = choose(B, T, nh, hd, op);
    if (impl == CUDNN && cuda_cudnn_attention_bwd(BF(dqkv), BFC(dout), BFC(out), lse, D, rot,
                                                  BFC(qkv), cos, sin, B, T, nh, hd, why,
                                                  sizeof why) != 0)
        impl = without_cudnn(hd, why, op);
    if (impl == MMA)
        cuda_attention_mma_bwd(BF(dqkv), BFC(dout), BFC(out), lse, D, rot, BFC(qkv), cos, sin, B,
                               T, nh, hd);
    if (impl != CORES || !head_dim_ok(hd, op))
        return;
    const bf16 *r = rotated(qkv, cos, sin, B, T, nh, hd, op);
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
