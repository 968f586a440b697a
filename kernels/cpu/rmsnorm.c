#include <math.h>
#include <omp.h>

#include "kernels/cpu/cpu.h"

void cpu_rmsnorm_fwd(real *out, real *rstd, const real *x, const real *g, int N, int d, real s,
                     real eps)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *xr = x + (size_t)n * d;
        real *o = out + (size_t)n * d;
        double ss = 0;
        for (int j = 0; j < d; j++)
            ss += (double)xr[j] * xr[j];
        real r = (real)(1.0 / sqrt(ss / d + eps));
        rstd[n] = r;
        real sr = s * r;
        for (int j = 0; j < d; j++)
            o[j] = sr * g[j] * xr[j];
    }
}

/* y_j = s·g_j·x_j·r with r = (mean(x²)+eps)^-½, so with h_j = dy_j·s·g_j:
 * dx_j = r·h_j − r³·x_j·(Σ_k h_k·x_k)/d  and  dg_j = Σ_n dy_j·s·x_j·r.
 * dg is summed by column ranges, one per thread, in row order: no scratch
 * and a fixed summation order. */
void cpu_rmsnorm_bwd(real *dx, real *dg, const real *dout, const real *x, const real *g,
                     const real *rstd, int N, int d, real s)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *xr = x + (size_t)n * d, *dy = dout + (size_t)n * d;
        real *dxr = dx + (size_t)n * d;
        double r = rstd[n], dot = 0;
        for (int j = 0; j < d; j++)
            dot += (double)dy[j] * s * g[j] * xr[j];
        real c = (real)(r * r * r * dot / d), rr = (real)r;
        for (int j = 0; j < d; j++)
            dxr[j] += rr * dy[j] * s * g[j] - c * xr[j];
    }
#pragma omp parallel
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int lo = (int)((long)d * t / nt), hi = (int)((long)d * (t + 1) / nt);
        for (int n = 0; n < N; n++) {
            const real *xr = x + (size_t)n * d, *dy = dout + (size_t)n * d;
            real sr = s * rstd[n];
            for (int j = lo; j < hi; j++)
                dg[j] += dy[j] * sr * xr[j];
        }
    }
}
