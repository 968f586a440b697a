/* Reductions for the per-layer statistics and the small parameter
 * gradients. Whole-tensor sums go in double: each block sums a fixed
 * grid-stride share, and the block partials are added in block order, so a
 * result repeats exactly on a given GPU (as the CPU's per-thread partials
 * do at a given thread count). */
#include <cmath>
#include <cstdio>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

enum { MAX_BLOCKS = 1024, MAX_DEVICES = 16 };
enum kind { K_SUM, K_SUMSQ, K_DOT };

static __global__ void reduce_kernel(double *part, const float *x, const float *y, size_t n,
                                     int kind)
{
    double acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double a = x[i];
        acc += kind == K_SUM ? a : kind == K_SUMSQ ? a * a : a * (double)y[i];
    }
    acc = block_all(acc, op_add());
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

static __global__ void angular_kernel(double *part, const float *a, const float *b, int N, int d)
{
    double acc = 0;
    for (int r = blockIdx.x; r < N; r += gridDim.x) {
        const float *ar = a + (size_t)r * d, *br = b + (size_t)r * d;
        double ab = 0, aa = 0, bb = 0;
        for (int j = threadIdx.x; j < d; j += blockDim.x) {
            double x = ar[j], y = br[j];
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

/* The block partials of each device, allocated at its first reduction. */
static double *partials_of(const char *op)
{
    static double *partials[MAX_DEVICES];
    int dev = 0;
    CUDA_CHECK(op, cudaGetDevice(&dev));
    if (dev < 0 || dev >= MAX_DEVICES) {
        cuda_fail(__FILE__, __LINE__, op, "device index beyond the backend's table of 16");
        return NULL;
    }
    if (!partials[dev]) {
        cudaError_t e = cudaMalloc(&partials[dev], MAX_BLOCKS * sizeof(double));
        if (e != cudaSuccess) {
            cuda_fail(__FILE__, __LINE__, op, cudaGetErrorString(e));
            partials[dev] = NULL;
        }
    }
    return partials[dev];
}

static int grid_for(size_t n)
{
    size_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    return b == 0 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : (int)b;
}

/* Copies the partials back and adds them in order; NaN after any error, so
 * that a failed step shows as a non-finite loss. */
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

static double reduce(const float *x, const float *y, size_t n, int kind, const char *op)
{
    double *part = partials_of(op);
    if (!part)
        return NAN;
    int g = grid_for(n);
    reduce_kernel<<<g, CUDA_THREADS>>>(part, x, y, n, kind);
    LAUNCH_CHECK(op);
    return finish(part, g, op);
}

double cuda_sum(const real *x, size_t n) { return reduce(x, NULL, n, K_SUM, "sum"); }
double cuda_sumsq(const real *x, size_t n) { return reduce(x, NULL, n, K_SUMSQ, "sumsq"); }
double cuda_dot(const real *x, const real *y, size_t n) { return reduce(x, y, n, K_DOT, "dot"); }

double cuda_angular_sum(const real *a, const real *b, int N, int d)
{
    double *part = partials_of("angular_sum");
    if (!part)
        return NAN;
    int g = N < 1 ? 1 : N > MAX_BLOCKS ? MAX_BLOCKS : N;
    angular_kernel<<<g, CUDA_THREADS>>>(part, a, b, N, d);
    LAUNCH_CHECK("angular_sum");
    return finish(part, g, "angular_sum");
}

void cuda_dot_accumulate(real *dst, const real *a, const real *b, size_t n, const char *op)
{
    double *part = partials_of(op);
    if (!part)
        return;
    int g = grid_for(n);
    reduce_kernel<<<g, CUDA_THREADS>>>(part, a, b, n, K_DOT);
    LAUNCH_CHECK(op);
    add_partials_kernel<<<1, 1>>>(dst, part, g);
    LAUNCH_CHECK(op);
}

/* Column sums: a block owns 32 columns and a range of rows; its 32×8
 * threads walk the rows, then add their column totals into dst with one
 * atomic per column per block. */
enum { COLS = 32, ROW_THREADS = 8, ROWS_PER_BLOCK = 256 };

static __global__ void colsum_kernel(float *dst, const float *a, const float *b, const float *rs,
                                     float s, int N, int d)
{
    __shared__ float tot[ROW_THREADS][COLS];
    int j = blockIdx.x * COLS + threadIdx.x;
    int n0 = blockIdx.y * ROWS_PER_BLOCK, n1 = min(N, n0 + ROWS_PER_BLOCK);
    float acc = 0;
    if (j < d)
        for (int n = n0 + threadIdx.y; n < n1; n += ROW_THREADS) {
            size_t i = (size_t)n * d + j;
            acc += a[i] * (rs ? s * rs[n] : s) * b[i];
        }
    tot[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < d) {
        for (int r = 1; r < ROW_THREADS; r++)
            acc += tot[r][threadIdx.x];
        atomicAdd(&dst[j], acc);
    }
}

void cuda_colsum_accumulate(real *dst, const real *a, const real *b, const real *rs, real s, int N,
                            int d, const char *op)
{
    dim3 grid((d + COLS - 1) / COLS, (N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    colsum_kernel<<<grid, dim3(COLS, ROW_THREADS)>>>(dst, a, b, rs, s, N, d);
    LAUNCH_CHECK(op);
}
