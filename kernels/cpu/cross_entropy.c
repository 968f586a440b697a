#include <math.h>

#include "kernels/cpu/cpu.h"
#include "kernels/cpu/fast_exp.h"

/* One exponential per logit: the row's maximum first, then exp(x − max)
 * summed (written into the row when the gradient is wanted, which then
 * scales it into the softmax gradient); the loops vectorise. At
 * vocabularies of 32k–50k this op otherwise costs as much as the lm_head
 * matmul. */
void cpu_cross_entropy(real *loss, act *logits, const int32_t *tgt, int N, int V,
                       real grad_scale)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        real *row = A(logits) + (size_t)n * V;
        if (tgt[n] < 0) {
            loss[n] = 0;
            if (grad_scale != 0)
                for (int j = 0; j < V; j++)
                    row[j] = 0;
            continue;
        }
        real mx = row[0];
#pragma omp simd reduction(max : mx)
        for (int j = 1; j < V; j++)
            mx = row[j] > mx ? row[j] : mx;
        real target = row[tgt[n]], z = 0;
        if (grad_scale == 0) {
#pragma omp simd reduction(+ : z)
            for (int j = 0; j < V; j++)
                z += fast_exp(row[j] - mx);
            loss[n] = (real)(mx + log((double)z) - target);
            continue;
        }
#pragma omp simd reduction(+ : z)
        for (int j = 0; j < V; j++) {
            row[j] = fast_exp(row[j] - mx);
            z += row[j];
        }
        loss[n] = (real)(mx + log((double)z) - target);
        real scale = grad_scale / z;
#pragma omp simd
        for (int j = 0; j < V; j++)
            row[j] *= scale;
        row[tgt[n]] -= grad_scale;
    }
}
