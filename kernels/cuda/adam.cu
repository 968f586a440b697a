/* AdamW as kernels/cpu/adam.c: bias corrections in double on the host, the
 * update in fp32 on the device, on fp32 parameters and fp32 moments. */
#include <cmath>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

static __global__ void adam_kernel(float *p, const float *g, float *m, float *v, size_t n, float b1,
                                   float b2, float eps, float decay, float step_size,
                                   float inv_sqrt_bc2)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float gi = g[i];
        float mi = b1 * m[i] + (1 - b1) * gi;
        float vi = b2 * v[i] + (1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float denom = sqrtf(vi) * inv_sqrt_bc2 + eps;
        p[i] -= decay * p[i] + step_size * mi / denom;
    }
}

void cuda_adam(real *p, const real *g, real *m, real *v, size_t n, real lr, real b1, real b2,
               real eps, real wd, long step)
{
    double bc1 = 1.0 - pow((double)b1, (double)step), bc2 = 1.0 - pow((double)b2, (double)step);
    float step_size = (float)(lr / bc1), inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    adam_kernel<<<cuda_blocks(n), CUDA_THREADS>>>(p, g, m, v, n, b1, b2, eps, lr * wd, step_size,
                                                  inv_sqrt_bc2);
    LAUNCH_CHECK("adam");
}
