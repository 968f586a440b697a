/* Rotary embedding, non-interleaved (rotate_half), from the model's cos/sin
 * tables [T, hd/2] (computed once in double on the host, so both backends
 * rotate by the same values): no transcendental per element. A thread
 * turns eight pairs (i, i + hd/2) where the head allows. On the first n_vec
 * vectors of hd in each of N rows, read from src (row stride ss) and
 * written to dst (row stride ds), which may be src; row n is position
 * n % T; dir = −1 is the transpose (the backward). The tensor-core
 * attention keeps such a rotated copy of q and k in its state, where the
 * forward and both backward kernels read it; the CUDA-core attention turns
 * a copy in the scratch memory, and the gradients in place. */
#include <cstdint>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"
#include "kernels/cuda/vec.cuh"

/* I: the index type, 32 bits wherever the items fit (every preset's), as
 * a 64-bit division costs several times a 32-bit one, three of them an
 * item of 32 bytes each way: the pass runs before every tensor-core
 * attention forward now, not only on the CUDA-core path */
template <bool VEC, typename I>
static __global__ void rope_kernel(bf16 *dst, int ds, const bf16 *src, int ss, int T, int n_vec,
                                   int hd, const float *cosv, const float *sinv, float dir,
                                   I items)
{
    const int W = VEC ? 8 : 1;
    const I h2 = (I)hd / 2, per_vec = h2 / W;
    for (I it = blockIdx.x * (I)blockDim.x + threadIdx.x; it < items;
         it += (I)gridDim.x * blockDim.x) {
        I i = it % per_vec * W;
        I rv = it / per_vec; /* row·n_vec + vector */
        I row = rv / (I)n_vec;
        I v = rv % (I)n_vec, t = row % (I)T;
        const bf16 *p = src + (size_t)row * ss + (size_t)v * hd;
        bf16 *q = dst + (size_t)row * ds + (size_t)v * hd;
        const float *c = cosv + (size_t)t * h2 + i, *s = sinv + (size_t)t * h2 + i;
        if (VEC) {
            vec8 a = load8(p + i), b = load8(p + i + h2);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                float x1 = a.v[k], x2 = b.v[k], sn = dir * s[k];
                a.v[k] = x1 * c[k] - x2 * sn;
                b.v[k] = x2 * c[k] + x1 * sn;
            }
            store8(q + i, a);
            store8(q + i + h2, b);
        } else {
            float x1 = __bfloat162float(p[i]), x2 = __bfloat162float(p[i + h2]), sn = dir * s[0];
            q[i] = __float2bfloat16_rn(x1 * c[0] - x2 * sn);
            q[i + h2] = __float2bfloat16_rn(x2 * c[0] + x1 * sn);
        }
    }
}

void cuda_rope(bf16 *dst, int ds, const bf16 *src, int ss, int N, int T, int n_vec, int hd,
               const float *cos, const float *sin, int dir)
{
    int h2 = hd / 2;
    bool vec = h2 % 8 == 0 && ds % 8 == 0 && ss % 8 == 0 && vec_ok(dst, 8) && vec_ok(src, 8);
    size_t items = (size_t)N * n_vec * (vec ? h2 / 8 : h2);
    if (items == 0)
        return;
    /* the grid-stride loop's last step must not wrap the index either */
    const bool narrow = items + (size_t)cuda_blocks(items) * CUDA_THREADS <= UINT32_MAX;
    const unsigned grid = cuda_blocks(items);
    if (vec && narrow)
        rope_kernel<true, unsigned><<<grid, CUDA_THREADS>>>(dst, ds, src, ss, T, n_vec, hd, cos,
                                                            sin, (float)dir, (unsigned)items);
    else if (vec)
        rope_kernel<true, size_t><<<grid, CUDA_THREADS>>>(dst, ds, src, ss, T, n_vec, hd, cos,
                                                          sin, (float)dir, items);
    else if (narrow)
        rope_kernel<false, unsigned><<<grid, CUDA_THREADS>>>(dst, ds, src, ss, T, n_vec, hd, cos,
                                                             sin, (float)dir, (unsigned)items);
    else
        rope_kernel<false, size_t><<<grid, CUDA_THREADS>>>(dst, ds, src, ss, T, n_vec, hd, cos,
                                                           sin, (float)dir, items);
    LAUNCH_CHECK("rope");
}
