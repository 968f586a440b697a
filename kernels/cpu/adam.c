#include <math.h>

#include "kernels/cpu/cpu.h"

/* PyTorch's AdamW: p ← p − lr·wd·p − lr·m̂/(√v̂ + eps), bias corrections in
 * double, the gradient first scaled by the clip factor. The master weights
 * are what the matmuls read here, so pact needs no writing. */
double cpu_adam(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr, real b1,
                real b2, real eps, real wd, long step, double clip)
{
    (void)pact;
    double norm = sqrt(cpu_sumsq(g, n));
    real gs = (real)(clip > 0 && norm > clip ? clip / norm : 1);
    double bc1 = 1.0 - pow((double)b1, (double)step), bc2 = 1.0 - pow((double)b2, (double)step);
    real step_size = (real)(lr / bc1), inv_sqrt_bc2 = (real)(1.0 / sqrt(bc2)), decay = lr * wd;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        real gi = g[i] * gs;
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        real denom = (real)sqrt((double)v[i]) * inv_sqrt_bc2 + eps;
        p[i] -= decay * p[i] + step_size * m[i] / denom;
    }
    return norm;
}
