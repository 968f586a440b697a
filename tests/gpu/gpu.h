/* What the GPU check programs share: cuda:0 selected before any op, or one
 * FAIL line saying why there is no GPU to check on. */
#ifndef COD_TESTS_GPU_H
#define COD_TESTS_GPU_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/ops_cuda.h"

static int gpu_start(void)
{
    char why[256];
    if (cuda_probe(0, why, sizeof why) != 0) {
        printf("FAIL cuda_probe: %s\n", why);
        return -1;
    }
    fprintf(stderr, "%s\n", why);
    return 0;
}

/* host round-to-nearest-even to bf16, as the device rounds: inputs made
 * exact in bf16 reach both backends as the same numbers */
static inline real bf16_round(real x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    if ((b & 0x7f800000u) != 0x7f800000u) {
        b += 0x7fffu + ((b >> 16) & 1u);
        b &= 0xffff0000u;
    }
    memcpy(&x, &b, 4);
    return x;
}

#endif
