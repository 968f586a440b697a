/* Elementwise ops and the embedding, as kernels/cpu/elementwise.c and
 * embedding.c. Grid-stride loops, so any n fits the capped grid. */
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

#define GRID_STRIDE(i, n)                                                                      \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                    \
         i += (size_t)gridDim.x * blockDim.x)

static __global__ void axpby_kernel(float *y, float a, const float *x, float b, size_t n)
{
    GRID_STRIDE(i, n) y[i] = a * x[i] + b * y[i];
}

void cuda_axpby(real *y, real a, const real *x, real b, size_t n)
{
    axpby_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(y, a, x, b, n);
    LAUNCH_CHECK("axpby");
}

static __global__ void chscale_fwd_kernel(float *out, const float *in, const float *lam, int d,
                                          int c, size_t n)
{
    GRID_STRIDE(i, n) out[i] = lam[c == 1 ? 0 : i % d] * in[i];
}

void cuda_chscale_fwd(real *out, const real *in, const real *lam, int N, int d, int c)
{
    size_t n = (size_t)N * d;
    chscale_fwd_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(out, in, lam, d, c, n);
    LAUNCH_CHECK("chscale_fwd");
}

static __global__ void chscale_din_kernel(float *din, const float *dout, const float *lam, int d,
                                          int c, size_t n)
{
    GRID_STRIDE(i, n) din[i] += lam[c == 1 ? 0 : i % d] * dout[i];
}

void cuda_chscale_bwd(real *din, real *dlam, const real *dout, const real *in, const real *lam,
                      int N, int d, int c)
{
    size_t n = (size_t)N * d;
    chscale_din_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(din, dout, lam, d, c, n);
    LAUNCH_CHECK("chscale_bwd");
    if (c == 1)
        cuda_dot_accumulate(dlam, dout, in, n, "chscale_bwd");
    else
        cuda_colsum_accumulate(dlam, dout, in, NULL, 1, N, d, "chscale_bwd");
}

static __global__ void embedding_fwd_kernel(float *out, const int32_t *tok, const float *table,
                                            int d, size_t n)
{
    GRID_STRIDE(i, n) out[i] = table[(size_t)tok[i / d] * d + i % d];
}

void cuda_embedding_fwd(real *out, const int32_t *tok, const real *table, int N, int d)
{
    size_t n = (size_t)N * d;
    embedding_fwd_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(out, tok, table, d, n);
    LAUNCH_CHECK("embedding_fwd");
}

/* Rows that share a token add into the same table row: atomics, so the sum
 * order (unlike the CPU's fixed one) varies in the last bits from run to run. */
static __global__ void embedding_bwd_kernel(float *dtable, const float *dout, const int32_t *tok,
                                            int d, size_t n)
{
    GRID_STRIDE(i, n) atomicAdd(&dtable[(size_t)tok[i / d] * d + i % d], dout[i]);
}

void cuda_embedding_bwd(real *dtable, const real *dout, const int32_t *tok, int N, int d)
{
    size_t n = (size_t)N * d;
    embedding_bwd_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(dtable, dout, tok, d, n);
    LAUNCH_CHECK("embedding_bwd");
}
