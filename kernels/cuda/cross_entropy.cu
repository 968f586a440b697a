/* Cross-entropy fused over the vocabulary, in place as
 * kernels/cpu/cross_entropy.c: one block per row reads the logits once for
 * an online max and sum of exponentials, then overwrites them with
 * grad_scale·(softmax − onehot). No second copy of the logits exists. */
#include <cmath>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

enum { ROW_THREADS = 512 };

static __global__ void cross_entropy_kernel(float *loss, float *logits, const int32_t *tgt, int V,
                                            float grad_scale)
{
    float *row = logits + (size_t)blockIdx.x * V;
    int t = tgt[blockIdx.x];
    if (t < 0) {
        for (int j = threadIdx.x; j < V; j += blockDim.x)
            row[j] = 0;
        if (threadIdx.x == 0)
            loss[blockIdx.x] = 0;
        return;
    }
    float target = row[t]; /* read before any thread overwrites the row */
    float m = -INFINITY, z = 0;
    for (int j = threadIdx.x; j < V; j += blockDim.x) {
        float x = row[j];
        if (x > m) {
            z *= expf(m - x);
            m = x;
        }
        z += expf(x - m);
    }
    float mx = block_all(m, op_max());
    z = block_all(m == -INFINITY ? 0.0f : z * expf(m - mx), op_add());
    if (threadIdx.x == 0)
        loss[blockIdx.x] = (float)(mx + log((double)z) - target);
    float scale = grad_scale / z;
    for (int j = threadIdx.x; j < V; j += blockDim.x)
        row[j] = expf(row[j] - mx) * scale - (j == t ? grad_scale : 0.0f);
}

void cuda_cross_entropy(real *loss, real *logits, const int32_t *tgt, int N, int V,
                        real grad_scale)
{
    if (N <= 0)
        return;
    cross_entropy_kernel<<<N, ROW_THREADS>>>(loss, logits, tgt, V, grad_scale);
    LAUNCH_CHECK("cross_entropy");
}
