/* Cross-entropy fused over the vocabulary, in place on bf16 logits: one
 * block per row reads them once for an online max and sum of exponentials
 * (fp32), then, when a gradient is wanted, overwrites them with
 * grad_scale·(softmax − onehot). The model hands it a chunk of rows at a
 * time (model.c), so the whole batch's logits never exist at once. */
#include <cmath>

#include "kernels/cuda/block.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

enum { ROW_THREADS = 512 };

static __device__ __forceinline__ void online(float x, float &m, float &z)
{
    if (x > m) {
        z *= __expf(m - x);
        m = x;
    }
    z += __expf(x - m);
}

template <bool VEC>
static __global__ void __launch_bounds__(ROW_THREADS)
    cross_entropy_kernel(float *loss, bf16 *logits, const int32_t *tgt, int V, float grad_scale)
{
    bf16 *row = logits + (size_t)blockIdx.x * V;
    int t = tgt[blockIdx.x];
    if (t < 0) {
        if (grad_scale != 0)
            for (int j = threadIdx.x; j < V; j += blockDim.x)
                row[j] = __float2bfloat16_rn(0.0f);
        if (threadIdx.x == 0)
            loss[blockIdx.x] = 0;
        return;
    }
    float target = __bfloat162float(row[t]); /* read before any thread overwrites the row */
    float m = -INFINITY, z = 0;
    if (VEC) {
        for (int j = threadIdx.x * 8; j < V; j += blockDim.x * 8) {
            vec8 v = load8(row + j);
#pragma unroll
            for (int k = 0; k < 8; k++)
                online(v.v[k], m, z);
        }
    } else {
        for (int j = threadIdx.x; j < V; j += blockDim.x)
            online(__bfloat162float(row[j]), m, z);
    }
    float mx = block_all(m, op_max());
    z = block_all(m == -INFINITY ? 0.0f : z * __expf(m - mx), op_add());
    if (threadIdx.x == 0)
        loss[blockIdx.x] = mx + logf(z) - target;
    if (grad_scale == 0)
        return;
    float scale = grad_scale / z;
    if (VEC) {
        for (int j = threadIdx.x * 8; j < V; j += blockDim.x * 8) {
            vec8 v = load8(row + j);
#pragma unroll
            for (int k = 0; k < 8; k++)
                v.v[k] = __expf(v.v[k] - mx) * scale - (j + k == t ? grad_scale : 0.0f);
            store8(row + j, v);
        }
    } else {
        for (int j = threadIdx.x; j < V; j += blockDim.x)
            row[j] = __float2bfloat16_rn(__expf(__bfloat162float(row[j]) - mx) * scale -
                                         (j == t ? grad_scale : 0.0f));
    }
}

void cuda_cross_entropy(real *loss, act *logits, const int32_t *tgt, int N, int V,
                        real grad_scale)
{
    if (N <= 0)
        return;
    if (vec_ok(logits, V))
        cross_entropy_kernel<true><<<N, ROW_THREADS>>>(loss, BF(logits), tgt, V, grad_scale);
    else
        cross_entropy_kernel<false><<<N, ROW_THREADS>>>(loss, BF(logits), tgt, V, grad_scale);
    LAUNCH_CHECK("cross_entropy");
}
