#include <math.h>

#include "kernels/cpu/cpu.h"

void cpu_cross_entropy(real *loss, real *logits, const int32_t *tgt, int N, int V,
                       real grad_scale)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        real *row = logits + (size_t)n * V;
        if (tgt[n] < 0) {
            loss[n] = 0;
            if (grad_scale != 0)
                for (int j = 0; j < V; j++)
                    row[j] = 0;
            continue;
        }
        real mx = row[0];
        for (int j = 1; j < V; j++)
            mx = row[j] > mx ? row[j] : mx;
        double z = 0;
        for (int j = 0; j < V; j++)
            z += exp((double)(row[j] - mx));
        double lse = mx + log(z);
        loss[n] = (real)(lse - row[tgt[n]]);
        if (grad_scale != 0) {
            for (int j = 0; j < V; j++)
                row[j] = grad_scale * (real)exp((double)row[j] - lse);
            row[tgt[n]] -= grad_scale;
        }
    }
}
