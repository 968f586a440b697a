/* Rounding to bf16 on the host: the CPU backend's train.precision "bf16"
 * (ops.h's adam_extra) and the initial weights of such a run. bf16 is the
 * top half of an fp32, so rounding is integer arithmetic on the bits; it
 * rounds to nearest with ties to even, subnormals included (bf16 has fp32's
 * exponent range), as CUDA's __float2bfloat16_rn does. */
#ifndef COD_BF16_H
#define COD_BF16_H

#include <stdint.h>
#include <string.h>

#include "kernels/real.h"

static inline float bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        u |= 0x00400000u; /* a NaN stays one (quiet) whatever its payload's low bits */
    else
        u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* In the double build (gradient checks, which bf16 runs are not) this
 * rounds through float: a double within one float ulp of a tie may round
 * the other way. */
static inline real real_bf16(real x)
{
    return (real)bf16_round((float)x);
}

#endif
