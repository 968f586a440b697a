#include <math.h>

#include "kernels/bf16.h"
#include "kernels/cpu/cpu.h"

/* PyTorch's AdamW: p ← p − lr·wd·p − lr·m̂/(√v̂ + eps), bias corrections in
 * double, the gradient first scaled by the clip factor. The master weights
 * are what the matmuls read here, so pact needs no writing. */
double cpu_adam(real *p, act *pact, const real *g, real *m, real *v, size_t n, real lr, real b1,
                real b2, real eps, real wd, long step, double clip, const struct adam_extra *x)
{
    (void)pact;
    double scale = x ? x->grad_scale : 1;
    double norm = scale * sqrt(cpu_sumsq(g, n));
    real gs = (real)(scale * (clip > 0 && norm > clip ? clip / norm : 1));
    double bc1 = 1.0 - pow((double)b1, (double)step), bc2 = 1.0 - pow((double)b2, (double)step);
    real step_size = (real)(lr / bc1), inv_sqrt_bc2 = (real)(1.0 / sqrt(bc2)), decay = lr * wd;
    size_t whole[2] = {0, n};
    const size_t *r = x && x->ranges ? x->ranges : whole;
    int n_ranges = x && x->ranges ? x->n_ranges : 1, bf16 = x && x->bf16;
    for (int k = 0; k < n_ranges; k++) {
#pragma omp parallel for schedule(static)
        for (size_t i = r[2 * k]; i < r[2 * k + 1]; i++) {
            real gi = g[i] * gs;
            real mi = b1 * m[i] + (1 - b1) * gi;
            real vi = b2 * v[i] + (1 - b2) * gi * gi;
            real denom = (real)sqrt((double)vi) * inv_sqrt_bc2 + eps;
            real pi = p[i] - (decay * p[i] + step_size * mi / denom);
            if (bf16) {
                mi = real_bf16(mi);
                vi = real_bf16(vi);
                pi = real_bf16(pi);
            }
            m[i] = mi;
            v[i] = vi;
            p[i] = pi;
        }
    }
    return norm;
}
