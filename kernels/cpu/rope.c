#include "kernels/cpu/cpu.h"

/* The tables hold cos and sin of t·θ^(−2i/hd), taken in double by the
 * model, so both backends rotate by the same values. */
void cpu_rope(act *x, int N, int T, int n_vec, int hd, int stride, const real *cos,
              const real *sin, int dir)
{
    int h2 = hd / 2;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *c = cos + (size_t)(n % T) * h2, *s = sin + (size_t)(n % T) * h2;
        for (int v = 0; v < n_vec; v++) {
            real *p = A(x) + (size_t)n * stride + (size_t)v * hd;
            for (int i = 0; i < h2; i++) {
                real x1 = p[i], x2 = p[i + h2], sn = dir * s[i];
                p[i] = x1 * c[i] - x2 * sn;
                p[i + h2] = x2 * c[i] + x1 * sn;
            }
        }
    }
}
