/* exp for the CPU kernels' hot loops (softmax, SiLU). In the float build it
 * is Cephes' expf polynomial (within 2 ulp on the range used), written
 * inline so that loops over it vectorise; libm's expf is a call per element
 * and costs as much as the small models' matmuls. The double build keeps
 * libm's exp so that gradient checks see exact values. */
#ifndef COD_FAST_EXP_H
#define COD_FAST_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/real.h"

#ifdef COD_REAL_DOUBLE
static inline real fast_exp(real x) { return exp(x); }
#else
static inline real fast_exp(real x)
{
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    float k = floorf(x * 1.44269504088896341f + 0.5f);
    float r = fmaf(k, -0.693359375f, x);
    r = fmaf(k, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r * r, r) + 1.0f;
    int32_t bits = ((int32_t)k + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}
#endif

#endif
