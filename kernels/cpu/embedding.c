#include <omp.h>
#include <string.h>

#include "kernels/cpu/cpu.h"

void cpu_embedding_fwd(real *out, const int32_t *tok, const real *table, int N, int d)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        memcpy(out + (size_t)n * d, table + (size_t)tok[n] * d, (size_t)d * sizeof(real));
}

/* Rows that share a token would race, so threads split the columns instead:
 * each owns a column range over all rows, in row order, which also keeps the
 * sum order fixed. */
void cpu_embedding_bwd(real *dtable, const real *dout, const int32_t *tok, int N, int d)
{
#pragma omp parallel
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int lo = (int)((long)d * t / nt), hi = (int)((long)d * (t + 1) / nt);
        for (int n = 0; n < N; n++) {
            real *dst = dtable + (size_t)tok[n] * d;
            const real *src = dout + (size_t)n * d;
            for (int j = lo; j < hi; j++)
                dst[j] += src[j];
        }
    }
}
