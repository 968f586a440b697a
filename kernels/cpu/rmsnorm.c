#include <math.h>

#include "kernels/cpu/cpu.h"

void cpu_rmsnorm_fwd(act *out, real *rstd, const act *x, const real *g, int N, int d, real s_in,
                     real s_out, real eps, const act *res, real b)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *xr = AC(x) + (size_t)n * d;
        real *o = A(out) + (size_t)n * d;
        double ss = 0;
        for (int j = 0; j < d; j++)
            ss += (double)xr[j] * xr[j];
        real r = (real)(1.0 / sqrt((double)s_in * s_in * ss / d + eps));
        rstd[n] = r;
        real sr = s_out * s_in * r;
        if (res) {
            const real *rr = AC(res) + (size_t)n * d;
            for (int j = 0; j < d; j++)
                o[j] = sr * g[j] * xr[j] + b * rr[j];
        } else {
            for (int j = 0; j < d; j++)
                o[j] = sr * g[j] * xr[j];
        }
    }
}

/* y_j = s_out·g_j·u_j·r with u = s_in·x and r = (mean(u²)+eps)^-½, so with
 * h_j = dy_j·s_out·g_j:  dx_j = s_in·(r·h_j − r³·u_j·(Σ_k h_k·u_k)/d)
 * and dg_j = Σ_n dy_j·s_out·u_j·r. */
void cpu_rmsnorm_bwd(act *dx, real *dg, const act *dout, const act *x, const real *g,
                     const real *rstd, int N, int d, real s_in, real s_out, const act *res, real b)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *xr = AC(x) + (size_t)n * d, *dy = AC(dout) + (size_t)n * d;
        real *dxr = A(dx) + (size_t)n * d;
        double r = rstd[n], dot = 0;
        for (int j = 0; j < d; j++)
            dot += (double)dy[j] * s_out * g[j] * s_in * xr[j];
        real c = (real)(s_in * s_in * r * r * r * dot / d), rr = (real)(s_in * r) * s_out;
        if (res) {
            const real *rs = AC(res) + (size_t)n * d;
            for (int j = 0; j < d; j++)
                dxr[j] = rr * dy[j] * g[j] - c * xr[j] + b * rs[j];
        } else {
            for (int j = 0; j < d; j++)
                dxr[j] = rr * dy[j] * g[j] - c * xr[j];
        }
    }
    if (dg)
        cpu_colsum_accumulate(dg, AC(dout), AC(x), rstd, s_out * s_in, N, d);
}
