/* Causal attention on the tensor cores, forward and backward, in the
 * manner of FlashAttention-2: the T×T scores never reach device memory.
 * Head sizes that are multiples of 16 up to 128 (every preset's); others go
 * to the CUDA-core kernels of attention.cu.
 *
 * A block of 4 warps takes a tile of 64 rows of one (batch, head); each
 * warp owns 16 of them and multiplies with mma.sync m16n8k16 (bf16 in,
 * fp32 accumulators), its operands loaded from shared memory with
 * ldmatrix; tiles come into shared memory by cp.async, two buffers of
 * each tile that a loop walks over, so that the next tile's copies are in
 * flight while the present one is multiplied (a block otherwise waits a
 * trip to memory every turn, and at the three or four blocks an SM holds,
 * the other blocks' work does not cover it). Tiles are stored with rows
 * padded by 16 bytes, so that the eight rows an ldmatrix reads fall in
 * different banks. Scores are scaled into log2 units, so the
 * softmax takes exp2.
 *   forward   per query tile, over the key tiles up to the diagonal: S = QKᵀ,
 *             an online max and sum per row, O += P·V; stores O and the
 *             row's logsumexp
 *   backward  two kernels, so that no output is written by more than one
 *             block (no atomics: a run repeats bit for bit): per query tile,
 *             D = rowsum(dO ⊙ O) and, over the key tiles up to the
 *             diagonal, dQ += dS·K; then per key tile, over the query tiles
 *             from the diagonal on, dV += Pᵀ·dO and dK += dSᵀ·Q; both
 *             recompute P from the logsumexp, with dS = P ⊙ (dP − D).
 * Only the diagonal tile (and one reaching past T) is masked.
 *
 * RoPE: qkv holds q and k as the projection made them. Before the forward
 * kernel, one pass (rope.cu) writes them rotated into the attention's
 * state, where the forward and both backward kernels read them; dQ and dK
 * are turned back by the transposed rotation in registers, before their
 * one rounding. Rotating each tile in shared memory as it landed (the
 * kernels before) cost no pass, but the forward rotated every K tile once
 * for each query tile after it: about a fifth of its instructions (the
 * H200's counts), in a loop that waited on its table loads between
 * two barriers.
 *
 * Fragment layouts (PTX ISA, mma.m16n8k16 with .bf16): with g = lane/4
 * and t = lane%4, A holds rows g and g+8, columns 2t, 2t+1 and 2t+8,
 * 2t+9; B holds rows (k) 2t, 2t+1, 2t+8, 2t+9 of column (n) g; C holds
 * rows g and g+8, columns 2t and 2t+1. A C tile of scores is therefore
 * already an A fragment of P for the next product, once packed to bf16. */
#include <cmath>
#include <cstdint>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/ptx.cuh"
#include "kernels/cuda/vec.cuh"

namespace {

using ptx::cp_async16;
using ptx::cp_async_wait_all;
using ptx::ex2;
using ptx::ldsm_x4;
using ptx::ldsm_x4_t;
using ptx::mma;

constexpr int TILE = 64;  /* rows of queries or keys per tile */
constexpr int WARPS = 4;  /* 16 rows each */
constexpr unsigned FULL = 0xffffffffu;
constexpr float LOG2E = 1.4426950408889634f, LN2 = 0.6931471805599453f;

/* A block's (batch·head) and tile. The tiles of one head are neighbours in
 * the grid, so that the blocks that share its K and V (or Q and dO) run
 * together and read them from L2 rather than each from HBM. At T = 256 the
 * kernels do about 80 FLOP a byte of Q, K, V and O read once, under an
 * H100's ~300, so the bytes bound them, and a head's tiles read in
 * different waves (the order before) nearly doubled them. Within a head
 * the longest tile goes first: the last query tile, the first key tile. */
struct Place {
    int bh, tile;
};

__device__ __forceinline__ Place place(int T, bool from_last)
{
    const int n = (T + TILE - 1) / TILE, i = blockIdx.x % n;
    return {(int)(blockIdx.x / n), from_last ? n - 1 - i : i};
}

/* two fp32 → bf16x2, the first in the low half (the lower address) */
__device__ __forceinline__ uint32_t pack(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* A fragment: rows r0..r0+15, k-step kk of a row-major [m][k] tile */
template <int LDS>
__device__ __forceinline__ void frag_a(uint32_t a[4], const bf16 *X, int r0, int kk, int lane)
{
    ldsm_x4(a, X + (r0 + (lane & 15)) * LDS + kk * 16 + (lane >> 4) * 8);
}

/* B fragments of n-tiles n0 and n0+8 at k-step kk, from a [n][k] tile */
template <int LDS>
__device__ __forceinline__ void frag_b(uint32_t b[4], const bf16 *Y, int n0, int kk, int lane)
{
    ldsm_x4(b, Y + (n0 + (lane & 7) + ((lane >> 4) << 3)) * LDS + kk * 16 + ((lane >> 3) & 1) * 8);
}

/* B fragments of n-tiles n0 and n0+8 at k-step kk, from a [k][n] tile */
template <int LDS>
__device__ __forceinline__ void frag_bt(uint32_t b[4], const bf16 *Z, int n0, int kk, int lane)
{
    ldsm_x4_t(b, Z + (kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3)) * LDS + n0 +
                     (lane >> 4) * 8);
}

/* the A fragment of k-step kk of a product whose left factor is a 16×64
 * accumulator tile c (columns nt·8 …) */
__device__ __forceinline__ void c_to_a(uint32_t a[4], const float (*c)[4], int kk)
{
    a[0] = pack(c[2 * kk][0], c[2 * kk][1]);
    a[1] = pack(c[2 * kk][2], c[2 * kk][3]);
    a[2] = pack(c[2 * kk + 1][0], c[2 * kk + 1][1]);
    a[3] = pack(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

/* acc[16×N] = X[rows r0.., HD] · Y[N rows, HD]ᵀ, both row-major tiles;
 * columns from 16·live on are left 0 (live, warp-uniform: the diagonal
 * tile's columns past every row of the warp, which the mask hides) */
template <int HD, int N = TILE>
__device__ __forceinline__ void product_abt(float (*acc)[4], const bf16 *X, int r0, const bf16 *Y,
                                            int lane, int live = N / 16)
{
    constexpr int LDS = HD + 8;
#pragma unroll
    for (int nt = 0; nt < N / 8; nt++)
        acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0;
#pragma unroll
    for (int kk = 0; kk < HD / 16; kk++) {
        uint32_t a[4];
        frag_a<LDS>(a, X, r0, kk, lane);
#pragma unroll
        for (int np = 0; np < N / 16; np++) {
            if (np >= live)
                break;
            uint32_t b[4];
            frag_b<LDS>(b, Y, np * 16, kk, lane);
            mma(acc[2 * np], a, b[0], b[1]);
            mma(acc[2 * np + 1], a, b[2], b[3]);
        }
    }
}

/* out[16×HD] += c[16×K] · Z[K rows, HD] with Z a row-major tile, over the
 * first 16·live of c's columns (the rest 0) */
template <int HD, int K = TILE>
__device__ __forceinline__ void product_cb(float (*out)[4], const float (*c)[4], const bf16 *Z,
                                           int lane, int live = K / 16)
{
    constexpr int LDS = HD + 8;
#pragma unroll
    for (int kk = 0; kk < K / 16; kk++) {
        if (kk >= live)
            break;
        uint32_t a[4];
        c_to_a(a, c, kk);
#pragma unroll
        for (int np = 0; np < HD / 16; np++) {
            uint32_t b[4];
            frag_bt<LDS>(b, Z, np * 16, kk, lane);
            mma(out[2 * np], a, b[0], b[1]);
            mma(out[2 * np + 1], a, b[2], b[3]);
        }
    }
}

/* rows r0.. of a [T][HD] slice with row stride ld into a padded tile, zeros
 * past T, by cp.async straight into shared memory: the block's copies are
 * all in flight at once, and the tiles land after one trip to memory
 * (tiles_landed()). A loop of load-then-store waited a trip for
 * every 16 bytes a thread moved, 8 trips for a K and V tile at HD = 64,
 * which is what the 52 TFLOP/s of the first H100 profile looks like. */
template <int HD>
__device__ __forceinline__ void load_tile(bf16 *dst, const bf16 *src, size_t ld, int r0, int T)
{
    constexpr int CH = HD / 8, LDS = HD + 8, THREADS = WARPS * 32;
    static_assert(TILE * CH % THREADS == 0, "whole turns");
    /* Not unrolled: unrolled, the copy loops took the kernels from 102-134
     * registers a thread to 158-248. Rows past T read 0 bytes from row r0,
     * which exists, and write 16 zeros. */
    if constexpr (THREADS % CH == 0) {
        /* a thread keeps its column and steps down the rows, its pointers
         * worked out once: the integer pipe was the kernels' busiest, and
         * the index arithmetic of the loop below (a division and a 64-bit
         * product a copy) was most of its work in the kernels' loops */
        constexpr int STEP = THREADS / CH;
        const int c = (int)threadIdx.x % CH, r = (int)threadIdx.x / CH;
        const bf16 *from = src + (size_t)(r0 + r) * ld + c * 8;
        const bf16 *row0 = src + (size_t)r0 * ld + c * 8;
        bf16 *to = dst + r * LDS + c * 8;
        const size_t step = (size_t)STEP * ld;
#pragma unroll 1
        for (int rr = r0 + r; rr < r0 + TILE; rr += STEP, from += step, to += STEP * LDS) {
            bool in = rr < T;
            cp_async16(to, in ? from : row0, in ? 16 : 0);
        }
    } else {
#pragma unroll 1
        for (int idx = threadIdx.x; idx < TILE * CH; idx += THREADS) {
            int r = idx / CH, c = idx % CH;
            bool in = r0 + r < T;
            const bf16 *from = src + (size_t)(in ? r0 + r : r0) * ld + c * 8;
            cp_async16(dst + r * LDS + c * 8, from, in ? 16 : 0);
        }
    }
}

/* The end of a turn of the kernels' loops: every copy issued so far has
 * landed and is seen by the block. The barrier also keeps every warp from
 * issuing the turn after's copies, over the buffers this turn read, until
 * all are done with them. */
__device__ __forceinline__ void tiles_landed()
{
    cp_async_wait_all();
    __syncthreads();
}

/* The start of a loop over key tiles: the Q tile of rows q0.. and the first
 * K and V tiles (with any copies the caller issued before) landed. q and k
 * come from the rotated copy (rows of ldr), v from qkv (rows of ld). */
template <int HD>
__device__ __forceinline__ void first_tiles(bf16 *Qs, bf16 *Ks, bf16 *Vs, const bf16 *qb,
                                            const bf16 *kb, size_t ldr, const bf16 *vb, size_t ld,
                                            int q0, int T)
{
    load_tile<HD>(Qs, qb, ldr, q0, T);
    load_tile<HD>(Ks, kb, ldr, 0, T);
    load_tile<HD>(Vs, vb, ld, 0, T);
    tiles_landed();
}

/* a 16×HD accumulator's rows (row0, row0+8) times f into a [T][HD] slice */
template <int HD>
__device__ __forceinline__ void store_rows(bf16 *dst, size_t ld, const float (*acc)[4], int row0,
                                           int T, float f0, float f1, int t)
{
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++) {
        int col = nt * 8 + 2 * t;
        if (row0 < T)
            *reinterpret_cast<__nv_bfloat162 *>(dst + (size_t)row0 * ld + col) =
                __floats2bfloat162_rn(acc[nt][0] * f0, acc[nt][1] * f0);
        if (row0 + 8 < T)
            *reinterpret_cast<__nv_bfloat162 *>(dst + (size_t)(row0 + 8) * ld + col) =
                __floats2bfloat162_rn(acc[nt][2] * f1, acc[nt][3] * f1);
    }
}

/* store_rows of the gradient of a rotated q or k (times f), turned back by
 * the transposed rotation of each row's position: column c of the first
 * half pairs with c + HD/2, which this lane holds in n-tile nt + HD/16 */
template <int HD>
__device__ __forceinline__ void store_rows_unrotated(bf16 *dst, size_t ld, const float (*acc)[4],
                                                     int row0, int T, float f, int t,
                                                     const float *cosv, const float *sinv)
{
    constexpr int H2 = HD / 2, HALF = HD / 16;
#pragma unroll
    for (int nt = 0; nt < HALF; nt++) {
        const int col = nt * 8 + 2 * t;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = row0 + 8 * h;
            if (row >= T)
                continue;
            const float2 c = *reinterpret_cast<const float2 *>(cosv + (size_t)row * H2 + col),
                         sn = *reinterpret_cast<const float2 *>(sinv + (size_t)row * H2 + col);
            const float a0 = acc[nt][2 * h] * f, a1 = acc[nt][2 * h + 1] * f;
            const float b0 = acc[nt + HALF][2 * h] * f, b1 = acc[nt + HALF][2 * h + 1] * f;
            bf16 *p = dst + (size_t)row * ld + col;
            *reinterpret_cast<__nv_bfloat162 *>(p) =
                __floats2bfloat162_rn(a0 * c.x + b0 * sn.x, a1 * c.y + b1 * sn.y);
            *reinterpret_cast<__nv_bfloat162 *>(p + H2) =
                __floats2bfloat162_rn(b0 * c.x - a0 * sn.x, b1 * c.y - a1 * sn.y);
        }
    }
}

template <int HD>
__global__ void __launch_bounds__(WARPS * 32)
    fa_fwd_kernel(bf16 *out, float *lse, const bf16 *rot, const bf16 *qkv, int T, int nh,
                  float sl2)
{
    constexpr int TS = TILE * (HD + 8);
    extern __shared__ __align__(16) unsigned char smem[];
    /* Q, two K tiles, two V tiles: the next key tile's pair comes in while
     * this one's is multiplied */
    bf16 *Qs = reinterpret_cast<bf16 *>(smem), *Ks = Qs + TS, *Vs = Ks + 2 * TS;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const Place at = place(T, true);
    const int bh = at.bh, b = bh / nh, h = bh % nh, qt = at.tile, q0 = qt * TILE;
    const size_t d = (size_t)nh * HD, ld = 3 * d, ldr = 2 * d;
    const bf16 *qb = rot + (size_t)b * T * ldr + (size_t)h * HD, *kb = qb + d;
    const bf16 *vb = qkv + (size_t)b * T * ld + (size_t)h * HD + 2 * d;
    first_tiles<HD>(Qs, Ks, Vs, qb, kb, ldr, vb, ld, q0, T);
    float o[HD / 8][4], s[TILE / 8][4];
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++)
        o[nt][0] = o[nt][1] = o[nt][2] = o[nt][3] = 0;
    float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0, 0};
    const int r0 = q0 + warp * 16 + g;
    for (int kt = 0; kt <= qt; kt++) {
        const int k0 = kt * TILE, now = kt & 1, next = now ^ 1;
        if (kt < qt) { /* over the previous pair, which every warp is done with */
            load_tile<HD>(Ks + next * TS, kb, ldr, k0 + TILE, T);
            load_tile<HD>(Vs + next * TS, vb, ld, k0 + TILE, T);
        }
        /* on the diagonal, the key columns this warp's rows can see: the
         * last turn, which ends with no barrier, so a warp that skips the
         * rest frees its issue slots to the SM's other blocks (dQ's loop
         * ends the same way, but there the skip took it from 128 registers
         * to 141, a block an SM fewer) */
        const int live = kt == qt ? warp + 1 : TILE / 16;
        product_abt<HD>(s, Qs, warp * 16, Ks + now * TS, lane, live);
        if (kt == qt) /* the diagonal tile: keys after the row, and keys past T */
#pragma unroll
            for (int nt = 0; nt < TILE / 8; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    int col = k0 + nt * 8 + 2 * t + (e & 1), row = r0 + (e >> 1) * 8;
                    if (col > row || col >= T)
                        s[nt][e] = -INFINITY;
                }
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int nt = 0; nt < TILE / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                mx[e >> 1] = fmaxf(mx[e >> 1], s[nt][e]);
        /* finite: key k0 ≤ every row of the tile is in it */
#pragma unroll
        for (int i = 0; i < 2; i++) {
            mx[i] = fmaxf(mx[i], __shfl_xor_sync(FULL, mx[i], 1));
            mx[i] = fmaxf(mx[i], __shfl_xor_sync(FULL, mx[i], 2));
            mx[i] = fmaxf(mrow[i], mx[i] * sl2); /* sl2 > 0: the maximum commutes with it */
        }
        float corr[2] = {ex2(mrow[0] - mx[0]), ex2(mrow[1] - mx[1])}, sum[2] = {0, 0};
        mrow[0] = mx[0];
        mrow[1] = mx[1];
#pragma unroll
        for (int nt = 0; nt < TILE / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float p = ex2(fmaf(s[nt][e], sl2, -mx[e >> 1]));
                s[nt][e] = p;
                sum[e >> 1] += p;
            }
        lrow[0] = lrow[0] * corr[0] + sum[0];
        lrow[1] = lrow[1] * corr[1] + sum[1];
#pragma unroll
        for (int nt = 0; nt < HD / 8; nt++) {
            o[nt][0] *= corr[0];
            o[nt][1] *= corr[0];
            o[nt][2] *= corr[1];
            o[nt][3] *= corr[1];
        }
        product_cb<HD>(o, s, Vs + now * TS, lane, live);
        if (kt < qt)
            tiles_landed();
    }
#pragma unroll
    for (int i = 0; i < 2; i++) {
        lrow[i] += __shfl_xor_sync(FULL, lrow[i], 1);
        lrow[i] += __shfl_xor_sync(FULL, lrow[i], 2);
    }
    store_rows<HD>(out + (size_t)b * T * d + (size_t)h * HD, d, o, r0, T, 1.0f / lrow[0],
                   1.0f / lrow[1], t);
    if (t == 0) {
        if (r0 < T)
            lse[(size_t)bh * T + r0] = (mrow[0] + log2f(lrow[0])) * LN2;
        if (r0 + 8 < T)
            lse[(size_t)bh * T + r0 + 8] = (mrow[1] + log2f(lrow[1])) * LN2;
    }
}

/* row q0 + threadIdx.x's logsumexp (in log2 units) and D, zeros past T:
 * read into registers a tile ahead, and put into shared memory
 * (put_row_stats) once the present tile is done with its own */
__device__ __forceinline__ float2 row_stats(const float *lse, const float *D, size_t bh, int q0,
                                            int T)
{
    static_assert(WARPS * 32 >= TILE, "a thread a row");
    const int r = q0 + (int)threadIdx.x;
    if (threadIdx.x >= TILE || r >= T)
        return {0.0f, 0.0f};
    return {lse[bh * T + r] * LOG2E, D[bh * T + r]};
}

__device__ __forceinline__ void put_row_stats(float *Ls, float *Ds, float2 st)
{
    if (threadIdx.x < TILE) {
        Ls[threadIdx.x] = st.x;
        Ds[threadIdx.x] = st.y;
    }
}

/* dQ, and first D = rowsum(dO ⊙ O) of the tile's rows (two threads a
 * row), which it also leaves in D for the dK, dV kernel that follows */
template <int HD>
__global__ void __launch_bounds__(WARPS * 32)
    fa_bwd_dq_kernel(bf16 *dqkv, float *D, const bf16 *dout, const bf16 *out, const float *lse,
                     const bf16 *rot, const bf16 *qkv, const float *cosv, const float *sinv, int T,
                     int nh, float sl2, float scale)
{
    constexpr int LDS = HD + 8, TS = TILE * LDS;
    extern __shared__ __align__(16) unsigned char smem[];
    /* Q, dO, two K tiles, two V tiles (the next key tile's in flight) */
    bf16 *Qs = reinterpret_cast<bf16 *>(smem), *dOs = Qs + TS, *Ks = dOs + TS, *Vs = Ks + 2 * TS;
    float *Ls = reinterpret_cast<float *>(Vs + 2 * TS), *Ds = Ls + TILE;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const Place at = place(T, true);
    const int bh = at.bh, b = bh / nh, h = bh % nh, qt = at.tile, q0 = qt * TILE;
    const size_t d = (size_t)nh * HD, ld = 3 * d, ldr = 2 * d;
    const bf16 *qb = rot + (size_t)b * T * ldr + (size_t)h * HD, *kb = qb + d;
    const bf16 *vb = qkv + (size_t)b * T * ld + (size_t)h * HD + 2 * d;
    const bf16 *dob = dout + (size_t)b * T * d + (size_t)h * HD;
    const bf16 *ob = out + (size_t)b * T * d + (size_t)h * HD;
    load_tile<HD>(dOs, dob, d, q0, T);
    first_tiles<HD>(Qs, Ks, Vs, qb, kb, ldr, vb, ld, q0, T);
    {
        int r = threadIdx.x >> 1, half = threadIdx.x & 1;
        float acc = 0;
        if (q0 + r < T)
            for (int c = half * (HD / 2); c < (half + 1) * (HD / 2); c += 8) {
                vec8 o = load8(ob + (size_t)(q0 + r) * d + c), gv = load8(dOs + r * LDS + c);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc += o.v[i] * gv.v[i];
            }
        acc += __shfl_xor_sync(FULL, acc, 1);
        if (half == 0) {
            bool in = q0 + r < T;
            Ds[r] = acc;
            Ls[r] = in ? lse[(size_t)bh * T + q0 + r] * LOG2E : 0.0f;
            if (in)
                D[(size_t)bh * T + q0 + r] = acc;
        }
    }
    __syncthreads();
    float dq[HD / 8][4], s[TILE / 8][4], dp[TILE / 8][4];
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++)
        dq[nt][0] = dq[nt][1] = dq[nt][2] = dq[nt][3] = 0;
    const int rl = warp * 16 + g, r0 = q0 + rl;
    const float L[2] = {Ls[rl], Ls[rl + 8]}, Dr[2] = {Ds[rl], Ds[rl + 8]};
    for (int kt = 0; kt <= qt; kt++) {
        const int k0 = kt * TILE, now = kt & 1, next = now ^ 1;
        const bf16 *K = Ks + now * TS;
        if (kt < qt) {
            load_tile<HD>(Ks + next * TS, kb, ldr, k0 + TILE, T);
            load_tile<HD>(Vs + next * TS, vb, ld, k0 + TILE, T);
        }
        product_abt<HD>(s, Qs, warp * 16, K, lane);
        product_abt<HD>(dp, dOs, warp * 16, Vs + now * TS, lane);
        const bool diag = kt == qt;
#pragma unroll
        for (int nt = 0; nt < TILE / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float p = ex2(fmaf(s[nt][e], sl2, -L[e >> 1]));
                if (diag) {
                    int col = k0 + nt * 8 + 2 * t + (e & 1), row = r0 + (e >> 1) * 8;
                    if (col > row || col >= T)
                        p = 0;
                }
                s[nt][e] = p * (dp[nt][e] - Dr[e >> 1]);
            }
        product_cb<HD>(dq, s, K, lane);
        if (kt < qt)
            tiles_landed();
    }
    store_rows_unrotated<HD>(dqkv + (size_t)b * T * ld + (size_t)h * HD, ld, dq, r0, T, scale, t,
                             cosv, sinv);
}

template <int HD>
__global__ void __launch_bounds__(WARPS * 32)
    fa_bwd_dkv_kernel(bf16 *dqkv, const bf16 *dout, const float *lse, const float *D,
                      const bf16 *rot, const bf16 *qkv, const float *cosv, const float *sinv,
                      int T, int nh, float sl2, float scale)
{
    constexpr int TS = TILE * (HD + 8);
    extern __shared__ __align__(16) unsigned char smem[];
    /* K, V, two Q tiles, two dO tiles and two of each row statistic (the
     * next query tile's in flight) */
    bf16 *Ks = reinterpret_cast<bf16 *>(smem), *Vs = Ks + TS, *Qs = Vs + TS, *dOs = Qs + 2 * TS;
    float *Ls = reinterpret_cast<float *>(dOs + 2 * TS), *Ds = Ls + 2 * TILE;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const Place at = place(T, false);
    const int bh = at.bh, b = bh / nh, h = bh % nh, kt = at.tile, k0 = kt * TILE;
    const size_t d = (size_t)nh * HD, ld = 3 * d, ldr = 2 * d;
    const bf16 *qb = rot + (size_t)b * T * ldr + (size_t)h * HD, *kb = qb + d;
    const bf16 *vb = qkv + (size_t)b * T * ld + (size_t)h * HD + 2 * d;
    const bf16 *dob = dout + (size_t)b * T * d + (size_t)h * HD;
    load_tile<HD>(Ks, kb, ldr, k0, T);
    load_tile<HD>(Vs, vb, ld, k0, T);
    load_tile<HD>(Qs, qb, ldr, k0, T);
    load_tile<HD>(dOs, dob, d, k0, T);
    put_row_stats(Ls, Ds, row_stats(lse, D, (size_t)bh, k0, T));
    tiles_landed();
    float dk[HD / 8][4], dv[HD / 8][4], p[TILE / 16][4], ds[TILE / 16][4];
#pragma unroll
    for (int nt = 0; nt < HD / 8; nt++) {
        dk[nt][0] = dk[nt][1] = dk[nt][2] = dk[nt][3] = 0;
        dv[nt][0] = dv[nt][1] = dv[nt][2] = dv[nt][3] = 0;
    }
    const int j0 = k0 + warp * 16 + g, n_qt = (T + TILE - 1) / TILE;
    for (int qt = kt; qt < n_qt; qt++) {
        const int q0 = qt * TILE, now = (qt - kt) & 1, next = now ^ 1;
        const bool more = qt + 1 < n_qt;
        const bf16 *Q = Qs + now * TS, *dO = dOs + now * TS;
        const float *Lt = Ls + now * TILE, *Dt = Ds + now * TILE;
        float2 ahead = {0.0f, 0.0f};
        if (more) {
            load_tile<HD>(Qs + next * TS, qb, ldr, q0 + TILE, T);
            load_tile<HD>(dOs + next * TS, dob, d, q0 + TILE, T);
            ahead = row_stats(lse, D, (size_t)bh, q0 + TILE, T);
        }
        /* transposed: rows are this warp's keys, columns the tile's queries,
         * half the tile's at a time (the scores of a whole tile beside dK
         * and dV took 178 registers a thread, two blocks an SM) */
#pragma unroll
        for (int part = 0; part < 2; part++) {
            constexpr int HALF = TILE / 2;
            const int c0 = part * HALF, LDS = HD + 8;
            product_abt<HD, HALF>(p, Ks, warp * 16, Q + c0 * LDS, lane);
            product_abt<HD, HALF>(ds, Vs, warp * 16, dO + c0 * LDS, lane);
            const bool edge = qt == kt || q0 + c0 + HALF > T;
#pragma unroll
            for (int nt = 0; nt < HALF / 8; nt++) {
                int c = c0 + nt * 8 + 2 * t;
                float2 l2 = *reinterpret_cast<const float2 *>(Lt + c),
                       d2 = *reinterpret_cast<const float2 *>(Dt + c);
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float pv = ex2(fmaf(p[nt][e], sl2, -(e & 1 ? l2.y : l2.x)));
                    if (edge) {
                        int col = q0 + c + (e & 1), key = j0 + (e >> 1) * 8;
                        if (col < key || col >= T)
                            pv = 0;
                    }
                    p[nt][e] = pv;
                    ds[nt][e] = pv * (ds[nt][e] - (e & 1 ? d2.y : d2.x));
                }
            }
            product_cb<HD, HALF>(dv, p, dO + c0 * LDS, lane);
            product_cb<HD, HALF>(dk, ds, Q + c0 * LDS, lane);
        }
        if (more) {
            put_row_stats(Ls + next * TILE, Ds + next * TILE, ahead);
            tiles_landed();
        }
    }
    bf16 *dkb = dqkv + (size_t)b * T * ld + (size_t)h * HD + d;
    store_rows_unrotated<HD>(dkb, ld, dk, j0, T, scale, t, cosv, sinv);
    store_rows<HD>(dkb + d, ld, dv, j0, T, 1.0f, 1.0f, t);
}

/* Whether this head size's kernels were allowed their shared memory on the
 * current device yet (past 48 KiB it must be asked for): asked once, at a
 * shape's first micro-batch, which runs before any recording (graph.cu),
 * so a recorded step holds launches only. */
static bool smem_allowed(int *known_dev, const char *op)
{
    int dev = 0;
    CUDA_CHECK(op, cudaGetDevice(&dev));
    if (*known_dev == dev)
        return true;
    *known_dev = dev;
    return false;
}

template <int HD>
void fwd(bf16 *out, float *lse, bf16 *rot, const bf16 *qkv, const float *cosv, const float *sinv,
         int B, int T, int nh)
{
    static int known_dev = -1;
    size_t smem = 5 * TILE * (HD + 8) * sizeof(bf16);
    if (smem > 48 * 1024 && !smem_allowed(&known_dev, "attention_fwd"))
        CUDA_CHECK("attention_fwd",
                   cudaFuncSetAttribute(fa_fwd_kernel<HD>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const int ld = 3 * nh * HD;
    cuda_rope(rot, 2 * nh * HD, qkv, ld, B * T, T, 2 * nh, HD, cosv, sinv, 1);
    const unsigned grid = (unsigned)(B * nh * ((T + TILE - 1) / TILE));
    fa_fwd_kernel<HD><<<grid, WARPS * 32, smem>>>(out, lse, rot, qkv, T, nh,
                                                  (float)(LOG2E / sqrt((double)HD)));
    LAUNCH_CHECK("attention_fwd");
}

template <int HD>
void bwd(bf16 *dqkv, const bf16 *dout, const bf16 *out, const float *lse, float *D,
         const bf16 *rot, const bf16 *qkv, const float *cosv, const float *sinv, int B, int T,
         int nh)
{
    static int known_dev = -1;
    const size_t tiles = 6 * TILE * (HD + 8) * sizeof(bf16),
                 smem_dq = tiles + 2 * TILE * sizeof(float),
                 smem_dkv = tiles + 4 * TILE * sizeof(float);
    if (smem_dkv > 48 * 1024 && !smem_allowed(&known_dev, "attention_bwd")) {
        CUDA_CHECK("attention_bwd",
                   cudaFuncSetAttribute(fa_bwd_dq_kernel<HD>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_dq));
        CUDA_CHECK("attention_bwd", cudaFuncSetAttribute(fa_bwd_dkv_kernel<HD>,
                                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                         (int)smem_dkv));
    }
    const unsigned grid = (unsigned)(B * nh * ((T + TILE - 1) / TILE));
    float scale = (float)(1.0 / sqrt((double)HD)), sl2 = scale * LOG2E;
    fa_bwd_dq_kernel<HD><<<grid, WARPS * 32, smem_dq>>>(dqkv, D, dout, out, lse, rot, qkv, cosv,
                                                        sinv, T, nh, sl2, scale);
    LAUNCH_CHECK("attention_bwd (dq)");
    fa_bwd_dkv_kernel<HD><<<grid, WARPS * 32, smem_dkv>>>(dqkv, dout, lse, D, rot, qkv, cosv,
                                                          sinv, T, nh, sl2, scale);
    LAUNCH_CHECK("attention_bwd (dk, dv)");
}

} /* namespace */

int cuda_attention_mma_takes(int hd) { return hd % 16 == 0 && hd >= 16 && hd <= 128; }

#define HEAD_SIZES(X) X(16) X(32) X(48) X(64) X(80) X(96) X(112) X(128)

void cuda_attention_mma_fwd(bf16 *out, float *lse, bf16 *rot, const bf16 *qkv, const float *cos,
                            const float *sin, int B, int T, int nh, int hd)
{
    switch (hd) {
#define CASE(H)                                                                                \
    case H:                                                                                    \
        fwd<H>(out, lse, rot, qkv, cos, sin, B, T, nh);                                             \
        break;
        HEAD_SIZES(CASE)
#undef CASE
    default:
        cuda_fail(__FILE__, __LINE__, "attention_fwd", "head size the tensor-core kernels lack");
    }
}

void cuda_attention_mma_bwd(bf16 *dqkv, const bf16 *dout, const bf16 *out, const float *lse,
                            float *D, const bf16 *rot, const bf16 *qkv, const float *cos,
                            const float *sin, int B, int T, int nh, int hd)
{
    switch (hd) {
#define CASE(H)                                                                                \
    case H:                                                                                    \
        bwd<H>(dqkv, dout, out, lse, D, rot, qkv, cos, sin, B, T, nh);                              \
        break;
        HEAD_SIZES(CASE)
#undef CASE
    default:
        cuda_fail(__FILE__, __LINE__, "attention_bwd", "head size the tensor-core kernels lack");
    }
}
