/* Rotary embedding as kernels/cpu/rope.c (non-interleaved, rotate_half):
 * each thread rotates one pair; the angle and its sine and cosine are taken
 * in double, as on the CPU, so both backends rotate by the same floats. */
#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

static __global__ void rope_kernel(float *out, const float *in, int T, int nh, int hd,
                                   double theta, int dir, size_t pairs)
{
    int h2 = hd / 2;
    for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < pairs;
         p += (size_t)gridDim.x * blockDim.x) {
        int i = (int)(p % h2);
        size_t row = p / h2; /* (b·T + t)·nh + h */
        int t = (int)(row / nh % T);
        double a = t * pow(theta, -2.0 * i / hd), sn, cs;
        sincos(a, &sn, &cs);
        float c = (float)cs, s = (float)(dir * sn);
        size_t o = row * hd;
        float x1 = in[o + i], x2 = in[o + i + h2];
        out[o + i] = x1 * c - x2 * s;
        out[o + i + h2] = x2 * c + x1 * s;
    }
}

void cuda_rope(real *out, const real *in, int B, int T, int nh, int hd, real theta, int dir)
{
    size_t pairs = (size_t)B * T * nh * (hd / 2);
    rope_kernel<<<cuda_blocks(pairs), CUDA_THREADS>>>(out, in, T, nh, hd, theta, dir, pairs);
    LAUNCH_CHECK("rope");
}
