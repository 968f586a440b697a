#include <string.h>

#include "kernels/cpu/cpu.h"

void cpu_embedding_fwd(act *out, const int32_t *tok, const act *table, int N, int d)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++)
        memcpy(A(out) + (size_t)n * d, AC(table) + (size_t)tok[n] * d, (size_t)d * sizeof(real));
}

/* One token's rows at a time, in the order pos lists them: each table row
 * is written by one thread, and its sum order never depends on scheduling. */
void cpu_embedding_bwd(real *dtable, const act *dout, const int32_t *tok, const int32_t *pos,
                       const int32_t *start, int n_groups, int d)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (int k = 0; k < n_groups; k++) {
        if (start[k] == start[k + 1])
            continue;
        real *dst = dtable + (size_t)tok[pos[start[k]]] * d;
        for (int i = start[k]; i < start[k + 1]; i++) {
            const real *src = AC(dout) + (size_t)pos[i] * d;
            for (int j = 0; j < d; j++)
                dst[j] += src[j];
        }
    }
}
