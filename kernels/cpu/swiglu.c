#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/fast_exp.h"

void cpu_swiglu_fwd(real *out, const real *gate, const real *up, size_t n)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) {
        real g = gate[i];
        out[i] = g / (1 + fast_exp(-g)) * up[i];
    }
}

/* silu'(g) = σ(g)·(1 + g·(1 − σ(g))) */
void cpu_swiglu_bwd(real *dgate, real *dup, const real *dout, const real *gate, const real *up,
                    size_t n)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) {
        real g = gate[i], sg = 1 / (1 + fast_exp(-g));
        dup[i] = dout[i] * g * sg;
        dgate[i] = dout[i] * up[i] * sg * (1 + g * (1 - sg));
    }
}
