#include <omp.h>

#include "kernels/cpu/cpu.h"

void cpu_axpby(real *y, real a, const real *x, real b, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        y[i] = a * x[i] + b * y[i];
}

void cpu_chscale_fwd(real *out, const real *in, const real *lam, int N, int d, int c)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        for (int j = 0; j < d; j++)
            out[(size_t)n * d + j] = lam[c == 1 ? 0 : j] * in[(size_t)n * d + j];
}

/* dlam is summed by column ranges in row order (a scalar by cpu_dot's
 * per-thread partials), so its order never depends on scheduling. */
void cpu_chscale_bwd(real *din, real *dlam, const real *dout, const real *in, const real *lam,
                     int N, int d, int c)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        for (int j = 0; j < d; j++)
            din[(size_t)n * d + j] += lam[c == 1 ? 0 : j] * dout[(size_t)n * d + j];
    if (c == 1) {
        dlam[0] += (real)cpu_dot(dout, in, (size_t)N * d);
        return;
    }
#pragma omp parallel
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int lo = (int)((long)d * t / nt), hi = (int)((long)d * (t + 1) / nt);
        for (int n = 0; n < N; n++)
            for (int j = lo; j < hi; j++)
                dlam[j] += dout[(size_t)n * d + j] * in[(size_t)n * d + j];
    }
}
