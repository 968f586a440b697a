/* What the GPU check programs share: cuda:0 selected before any op, or one
 * FAIL line saying why there is no GPU to check on. */
#ifndef COD_TESTS_GPU_H
#define COD_TESTS_GPU_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* bf16_round: inputs made exact in bf16 reach both backends as the same numbers */
#include "kernels/bf16.h"
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

#endif
