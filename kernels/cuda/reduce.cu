/* Reductions for the per-layer statistics, the gradient norm and the small
 * parameter gradients. Whole-tensor sums go in double: each block sums a
 * fixed grid-stride share, and the block partials are added in block order,
 * so a result repeats exactly on a given GPU. Column sums (the gains'
 * gradients) go in two passes, row chunks then the chunks, each in a fixed
 * order: no atomics. */
#include <cmath>
#include <cstdio>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

enum { MAX_BLOCKS = 1024 };
enum kind { K_SUM, K_SUMSQ, K_DIST2, K_DOT };

template <class T> static __device__ __forceinline__ double val(const T *p, size_t i);
template <> __device__ __forceinline__ double val<float>(const float *p, size_t i) { return p[i]; }
template <> __device__ __forceinline__ double val<bf16>(const bf16 *p, size_t i)
{
    return __bfloat162float(p[i]);
}

template <class T>
static __global__ void reduce_kernel(double *part, const T *x, const T *y, size_t n, int kind)
{
    double acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double a = val(x, i);
        if (kind == K_SUM)
            acc += a;
        else if (kind == K_SUMSQ)
            acc += a * a;
        else if (kind == K_DIST2)
            acc += (a - val(y, i)) * (a - val(y, i));
        else
            acc += a * val(y, i);
    }
    acc = block_all(acc, op_add());
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

static __global__ void angular_kernel(double *part, const bf16 *a, const bf16 *b, int N, int d)
{
    double acc = 0;
    for (int r = blockIdx.x; r < N; r += gridDim.x) {
        const bf16 *ar = a + (size_t)r * d, *br = b + (size_t)r * d;
        double ab = 0, aa = 0, bb = 0;
        for (int j = threadIdx.x; j < d; j += blockDim.x) {
            double x = __bfloat162float(ar[j]), y = __bfloat162float(br[j]);
            ab += x * y;
            aa += x * x;
            bb += y * y;
        }
        ab = block_all(ab, op_add());
        aa = block_all(aa, op_add());
        bb = block_all(bb, op_add());
        if (threadIdx.x == 0) {
            double c = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 1.0;
            c = c > 1 ? 1 : c < -1 ? -1 : c;
            acc += acos(c) / M_PI;
        }
    }
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

/* dst[0] += Σ part, summed in block order on the device */
static __global__ void add_partials_kernel(float *dst, const double *part, int blocks)
{
    double s = 0;
    for (int i = 0; i < blocks; i++)
        s += part[i];
    dst[0] += (float)s;
}

static int grid_for(size_t n)
{
    size_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    return b == 0 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : (int)b;
}

/* Copies the partials back and adds them in order; NaN after any error, so
 * that a failed step can never pass for a number. */
static double finish(const double *part, int blocks, const char *op)
{
    double host[MAX_BLOCKS];
    CUDA_CHECK(op, cudaMemcpy(host, part, blocks * sizeof(double), cudaMemcpyDeviceToHost));
    if (cuda_failed())
        return NAN;
    double s = 0;
    for (int i = 0; i < blocks; i++)
        s += host[i];
    return s;
}

template <class T> static double reduce(const T *x, const T *y, size_t n, int kind, const char *op)
{
    double *part = (double *)cuda_scratch(MAX_BLOCKS * sizeof(double), op);
    if (!part)
        return NAN;
    int g = grid_for(n);
    reduce_kernel<T><<<g, CUDA_THREADS>>>(part, x, y, n, kind);
    LAUNCH_CHECK(op);
    return finish(part, g, op);
}

double cuda_sum(const real *x, size_t n) { return reduce(x, (const float *)NULL, n, K_SUM, "sum"); }
double cuda_sumsq(const real *x, size_t n)
{
    return reduce(x, (const float *)NULL, n, K_SUMSQ, "sumsq");
}
double cuda_dist2(const real *x, const real *y, size_t n) { return reduce(x, y, n, K_DIST2, "dist2"); }
double cuda_act_sum(const act *x, size_t n)
{
    return reduce(BFC(x), (const bf16 *)NULL, n, K_SUM, "act_sum");
}
double cuda_act_sumsq(const act *x, size_t n)
{
    return reduce(BFC(x), (const bf16 *)NULL, n, K_SUMSQ, "act_sumsq");
}

double cuda_angular_sum(const act *a, const act *b, int N, int d)
{
    double *part = (double *)cuda_scratch(MAX_BLOCKS * sizeof(double), "angular_sum");
    if (!part)
        return NAN;
    int g = N < 1 ? 1 : N > MAX_BLOCKS ? MAX_BLOCKS : N;
    angular_kernel<<<g, CUDA_THREADS>>>(part, BFC(a), BFC(b), N, d);
    LAUNCH_CHECK("angular_sum");
    return finish(part, g, "angular_sum");
}

void cuda_dot_accumulate(real *dst, const bf16 *a, const bf16 *b, size_t n, const char *op)
{
    double *part = (double *)cuda_scratch(MAX_BLOCKS * sizeof(double), op);
    if (!part)
        return;
    int g = grid_for(n);
    reduce_kernel<bf16><<<g, CUDA_THREADS>>>(part, a, b, n, K_DOT);
    LAUNCH_CHECK(op);
    add_partials_kernel<<<1, 1>>>(dst, part, g);
    LAUNCH_CHECK(op);
}

/* Column sums in two passes. Pass 1: a block owns COLS columns and a chunk
 * of CHUNK rows; its ROW_LANES rows of threads walk the chunk and their
 * totals are added in row-lane order into partial[chunk][column]. Pass 2:
 * each column's partials in chunk order, into dst. */
enum { COLS = 32, ROW_LANES = 8, CHUNK = 128 };

static __global__ void colsum_partial_kernel(float *partial, const bf16 *a, const bf16 *b,
                                             const float *rs, int N, int d)
{
    __shared__ float tot[ROW_LANES][COLS];
    int j = blockIdx.x * COLS + threadIdx.x;
    int n0 = blockIdx.y * CHUNK, n1 = min(N, n0 + CHUNK);
    float acc = 0;
    if (j < d)
        for (int n = n0 + threadIdx.y; n < n1; n += ROW_LANES) {
            size_t i = (size_t)n * d + j;
            acc += __bfloat162float(a[i]) * __bfloat162float(b[i]) * (rs ? rs[n] : 1.0f);
        }
    tot[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < d) {
        for (int r = 1; r < ROW_LANES; r++)
            acc += tot[r][threadIdx.x];
        partial[(size_t)blockIdx.y * d + j] = acc;
    }
}

/* As the partial kernel, over the chunks: chunk lane y adds chunks y,
 * y + FINISH_LANES, … in order, then the lanes in order. A thread a column
 * walking all the chunks (a few hundred dependent loads, on d threads: a
 * handful of warps for the whole GPU) was latency, not work. */
enum { FINISH_LANES = 32 };

static __global__ void colsum_finish_kernel(float *dst, const float *partial, int chunks, int d,
                                            float s)
{
    __shared__ float tot[FINISH_LANES][COLS];
    int j = blockIdx.x * COLS + threadIdx.x;
    float acc = 0;
    if (j < d)
        for (int c = threadIdx.y; c < chunks; c += FINISH_LANES)
            acc += partial[(size_t)c * d + j];
    tot[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < d) {
        for (int r = 1; r < FINISH_LANES; r++)
            acc += tot[r][threadIdx.x];
        dst[j] += s * acc;
    }
}

void cuda_colsum_accumulate(real *dst, const bf16 *a, const bf16 *b, const real *rs, real s,
                            int N, int d, const char *op)
{
    if (N <= 0 || d <= 0)
        return;
    int chunks = (N + CHUNK - 1) / CHUNK;
    float *partial = (float *)cuda_scratch((size_t)chunks * d * sizeof(float), op);
    if (!partial)
        return;
    dim3 grid((d + COLS - 1) / COLS, chunks);
    colsum_partial_kernel<<<grid, dim3(COLS, ROW_LANES)>>>(partial, a, b, rs, N, d);
    LAUNCH_CHECK(op);
    cuda_colsum_finish(dst, partial, chunks, d, s, op);
}

void cuda_colsum_finish(real *dst, const real *partial, int chunks, int d, real s, const char *op)
{
    colsum_finish_kernel<<<(d + COLS - 1) / COLS, dim3(COLS, FINISH_LANES)>>>(dst, partial,
                                                                              chunks, d, s);
    LAUNCH_CHECK(op);
}
