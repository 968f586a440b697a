#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/fast_exp.h"

void cpu_swiglu_fwd(act *h, const act *gu, int N, int f)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *gate = AC(gu) + (size_t)n * 2 * f, *up = gate + f;
        real *o = A(h) + (size_t)n * f;
#pragma omp simd
        for (int j = 0; j < f; j++) {
            real g = gate[j];
            o[j] = g / (1 + fast_exp(-g)) * up[j];
        }
    }
}

/* silu'(g) = σ(g)·(1 + g·(1 − σ(g))) */
void cpu_swiglu_bwd(act *dgu, act *h, const act *dh, const act *gu, int N, int f)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const real *gate = AC(gu) + (size_t)n * 2 * f, *up = gate + f;
        const real *dy = AC(dh) + (size_t)n * f;
        real *dgate = A(dgu) + (size_t)n * 2 * f, *dup = dgate + f;
        real *o = h ? A(h) + (size_t)n * f : NULL;
#pragma omp simd
        for (int j = 0; j < f; j++) {
            real g = gate[j], sg = 1 / (1 + fast_exp(-g));
            dup[j] = dy[j] * g * sg;
            dgate[j] = dy[j] * up[j] * sg * (1 + g * (1 - sg));
        }
        if (o)
            for (int j = 0; j < f; j++)
                o[j] = gate[j] / (1 + fast_exp(-gate[j])) * up[j];
    }
}
