/* AdamW as kernels/cpu/adam.c, fused with the gradient norm and the clip:
 * the norm's block partials (double, fixed order), then one block turns
 * them into ‖g‖ and the clip factor on the device, then the update reads
 * that factor and writes the fp32 master weights, both moments and the
 * bf16 copy the matmuls read, in one pass (a pass a range of adam_extra's).
 * The host waits only to learn the norm it reports. Bias corrections in
 * double on the host. In bf16 precision the master weights and moments are
 * rounded as the copy is, so that they hold what the copy holds. */
#include <cmath>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

enum { NORM_BLOCKS = 1024 };

static __global__ void sumsq_partial_kernel(double *part, const float *g, size_t n)
{
    double acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        acc += (double)g[i] * g[i];
    acc = block_all(acc, op_add());
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

/* out[0] = ‖g‖ of g·grad_scale, scale[0] = grad_scale times the clip factor; one block */
static __global__ void clip_kernel(double *out, float *scale, const double *part, int blocks,
                                   double clip, double grad_scale)
{
    if (threadIdx.x != 0)
        return;
    double s = 0;
    for (int i = 0; i < blocks; i++)
        s += part[i];
    double norm = grad_scale * sqrt(s);
    out[0] = norm;
    scale[0] = (float)(grad_scale * (clip > 0 && norm > clip ? clip / norm : 1.0));
}

static __device__ float round_bf16(float x)
{
    return __bfloat162float(__float2bfloat16_rn(x));
}

static __global__ void adam_kernel(float *p, bf16 *pact, const float *g, float *m, float *v,
                                   size_t n, const float *gscale, float b1, float b2, float eps,
                                   float decay, float step_size, float inv_sqrt_bc2, bool bf16)
{
    float gs = gscale[0];
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float gi = g[i] * gs;
        float mi = b1 * m[i] + (1 - b1) * gi;
        float vi = b2 * v[i] + (1 - b2) * gi * gi;
        float denom = sqrtf(vi) * inv_sqrt_bc2 + eps;
        float pi = p[i] - (decay * p[i] + step_size * mi / denom);
        if (bf16) {
            mi = round_bf16(mi);
            vi = round_bf16(vi);
            pi = round_bf16(pi);
        }
        m[i] = mi;
        v[i] = vi;
        p[i] = pi;
        if (pact)
            pact[i] = __float2bfloat16_rn(pi);
    }
}

double cuda_adam(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr, real b1,
                 real b2, real eps, real wd, long step, double clip,
                 const struct adam_extra *x)
{
    char *scratch = (char *)cuda_scratch(NORM_BLOCKS * sizeof(double) + 16, "adam");
    if (!scratch)
        return NAN;
    double *part = (double *)scratch, *norm = part + NORM_BLOCKS - 1;
    float *gscale = (float *)(scratch + NORM_BLOCKS * sizeof(double));
    size_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    int blocks = b == 0 ? 1 : b > NORM_BLOCKS - 1 ? NORM_BLOCKS - 1 : (int)b;
    sumsq_partial_kernel<<<blocks, CUDA_THREADS>>>(part, g, n);
    LAUNCH_CHECK("adam (gradient norm)");
    clip_kernel<<<1, 32>>>(norm, gscale, part, blocks, clip, x ? x->grad_scale : 1.0);
    LAUNCH_CHECK("adam (clip)");
    double bc1 = 1.0 - pow((double)b1, (double)step), bc2 = 1.0 - pow((double)b2, (double)step);
    float step_size = (float)(lr / bc1), inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    size_t whole[2] = {0, n};
    const size_t *r = x && x->ranges ? x->ranges : whole;
    int n_ranges = x && x->ranges ? x->n_ranges : 1;
    for (int k = 0; k < n_ranges; k++) {
        size_t lo = r[2 * k], len = r[2 * k + 1] - lo;
        if (len == 0)
            continue;
        adam_kernel<<<cuda_blocks(len), CUDA_THREADS>>>(
            p + lo, pact ? BF(pact) + lo : NULL, g + lo, m + lo, v + lo, len, gscale, b1, b2, eps,
            lr * wd, step_size, inv_sqrt_bc2, x && x->bf16);
        LAUNCH_CHECK("adam");
    }
    double host = NAN;
    CUDA_CHECK("adam", cudaMemcpy(&host, norm, sizeof host, cudaMemcpyDeviceToHost));
    return cuda_failed() ? NAN : host;
}
