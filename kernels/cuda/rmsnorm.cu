/* RMSNorm with the depth scale s, as kernels/cpu/rmsnorm.c: one block per
 * row, the sum of squares and the backward's row dot in double as on the
 * CPU; dg by column sums (reduce.cu). */
#include <cmath>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

enum { ROW_THREADS = 256 };

static __global__ void rmsnorm_fwd_kernel(float *out, float *rstd, const float *x, const float *g,
                                          int d, float s, float eps)
{
    const float *xr = x + (size_t)blockIdx.x * d;
    float *o = out + (size_t)blockIdx.x * d;
    double ss = 0;
    for (int j = threadIdx.x; j < d; j += blockDim.x)
        ss += (double)xr[j] * xr[j];
    ss = block_all(ss, op_add());
    float r = (float)(1.0 / sqrt(ss / d + eps));
    if (threadIdx.x == 0)
        rstd[blockIdx.x] = r;
    float sr = s * r;
    for (int j = threadIdx.x; j < d; j += blockDim.x)
        o[j] = sr * g[j] * xr[j];
}

void cuda_rmsnorm_fwd(real *out, real *rstd, const real *x, const real *g, int N, int d, real s,
                      real eps)
{
    if (N <= 0)
        return;
    rmsnorm_fwd_kernel<<<N, ROW_THREADS>>>(out, rstd, x, g, d, s, eps);
    LAUNCH_CHECK("rmsnorm_fwd");
}

/* dx_j += r·dy_j·s·g_j − r³·x_j·(Σ_k dy_k·s·g_k·x_k)/d */
static __global__ void rmsnorm_dx_kernel(float *dx, const float *dout, const float *x,
                                         const float *g, const float *rstd, int d, float s)
{
    size_t off = (size_t)blockIdx.x * d;
    const float *xr = x + off, *dy = dout + off;
    float *dxr = dx + off;
    double r = rstd[blockIdx.x], dot = 0;
    for (int j = threadIdx.x; j < d; j += blockDim.x)
        dot += (double)dy[j] * s * g[j] * xr[j];
    dot = block_all(dot, op_add());
    float c = (float)(r * r * r * dot / d), rr = (float)r;
    for (int j = threadIdx.x; j < d; j += blockDim.x)
        dxr[j] += rr * dy[j] * s * g[j] - c * xr[j];
}

void cuda_rmsnorm_bwd(real *dx, real *dg, const real *dout, const real *x, const real *g,
                      const real *rstd, int N, int d, real s)
{
    if (N <= 0)
        return;
    rmsnorm_dx_kernel<<<N, ROW_THREADS>>>(dx, dout, x, g, rstd, d, s);
    LAUNCH_CHECK("rmsnorm_bwd");
    cuda_colsum_accumulate(dg, dout, x, rstd, s, N, d, "rmsnorm_bwd");
}
