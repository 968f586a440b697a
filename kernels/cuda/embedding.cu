/* The embedding lookup and its backward. The backward adds each token's
 * rows in the order the model grouped them (ops.h): one block per token,
 * so a table row is written by one block, in a fixed order, with no
 * atomics. The model passes as many groups as a batch can have, the
 * unused ones empty, so that a recorded step launches the same grid for
 * every batch. */
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

static __global__ void embedding_fwd_kernel(bf16 *out, const int32_t *tok, const bf16 *table,
                                            int d, size_t n, bool vec)
{
    size_t step = vec ? 8 : 1;
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * step; i < n;
         i += (size_t)gridDim.x * blockDim.x * step) {
        size_t row = i / d, col = i % d;
        const bf16 *src = table + (size_t)tok[row] * d + col;
        if (vec)
            *reinterpret_cast<uint4 *>(out + i) = *reinterpret_cast<const uint4 *>(src);
        else
            out[i] = *src;
    }
}

void cuda_embedding_fwd(act *out, const int32_t *tok, const act *table, int N, int d)
{
    size_t n = (size_t)N * d;
    bool vec = vec_ok(out, d) && vec_ok(table, d);
    embedding_fwd_kernel<<<cuda_blocks(vec ? n / 8 : n), CUDA_THREADS>>>(BF(out), tok, BFC(table),
                                                                          d, n, vec);
    LAUNCH_CHECK("embedding_fwd");
}

static __global__ void embedding_bwd_kernel(float *dtable, const bf16 *dout, const int32_t *tok,
                                            const int32_t *pos, const int32_t *start, int d)
{
    int k = blockIdx.x, first = start[k], last = start[k + 1];
    if (first == last)
        return;
    float *dst = dtable + (size_t)tok[pos[first]] * d;
    for (int j = threadIdx.x; j < d; j += blockDim.x) {
        float acc = 0;
        for (int i = first; i < last; i++)
            acc += __bfloat162float(dout[(size_t)pos[i] * d + j]);
        dst[j] += acc;
    }
}

void cuda_embedding_bwd(real *dtable, const act *dout, const int32_t *tok, const int32_t *pos,
                        const int32_t *start, int n_groups, int d)
{
    if (n_groups <= 0)
        return;
    embedding_bwd_kernel<<<n_groups, d < 256 ? 32 * ((d + 31) / 32) : 256>>>(dtable, BFC(dout), tok,
                                                                             pos, start, d);
    LAUNCH_CHECK("embedding_bwd");
}
