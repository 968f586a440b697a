#include "kernels/cpu/cpu.h"

void cpu_axpby(act *y, real a, const act *x, real b, size_t n)
{
    real *yy = A(y);
    const real *xx = AC(x);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        yy[i] = a * xx[i] + b * yy[i];
}

void cpu_chscale_fwd(act *out, const act *in, const real *lam, int N, int d, int c)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        for (int j = 0; j < d; j++)
            A(out)[(size_t)n * d + j] = lam[c == 1 ? 0 : j] * AC(in)[(size_t)n * d + j];
}

/* dlam is summed by column ranges in row order (a scalar by cpu_dot's
 * per-thread partials), so its order never depends on scheduling. */
void cpu_chscale_bwd(act *din, real *dlam, const act *dout, const act *in, const real *lam, int N,
                     int d, int c)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        for (int j = 0; j < d; j++)
            A(din)[(size_t)n * d + j] = lam[c == 1 ? 0 : j] * AC(dout)[(size_t)n * d + j];
    if (c == 1)
        dlam[0] += (real)cpu_dot(AC(dout), AC(in), (size_t)N * d);
    else
        cpu_colsum_accumulate(dlam, AC(dout), AC(in), NULL, 1, N, d);
}

void cpu_bias_add(act *y, const real *bias, int N, int d)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        for (int j = 0; j < d; j++)
            A(y)[(size_t)n * d + j] += bias[j];
}
