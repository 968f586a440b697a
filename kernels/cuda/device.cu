#include <cstdio>

#include <cuda_runtime.h>

#include "kernels/cuda/device.h"
#include "kernels/cuda/internal.h"

extern "C" int cuda_probe(int index, char *err, size_t errlen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(err, errlen, "no GPU: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device is visible");
        return -1;
    }
    if (index < 0 || index >= n) {
        snprintf(err, errlen, "cuda:%d: this machine has %d GPU%s (cuda:0..cuda:%d)", index, n,
                 n == 1 ? "" : "s", n - 1);
        return -1;
    }
    e = cudaSetDevice(index);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cuda:%d: %s", index, cudaGetErrorString(e));
        return -1;
    }
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, index);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cuda:%d: %s", index, cudaGetErrorString(e));
        return -1;
    }
    /* a setting of the attention that cannot hold stops the program here,
     * before any work */
    if (cuda_attention_setting(err, errlen) != 0)
        return -1;
    snprintf(err, errlen, "cuda:%d is %s (sm_%d%d, %.1f GiB)", index, p.name, p.major, p.minor,
             p.totalGlobalMem / 1073741824.0);
    return 0;
}

extern "C" int cuda_memory(size_t *used, size_t *total, char *err, size_t errlen)
{
    size_t free_bytes = 0;
    cudaError_t e = cudaMemGetInfo(&free_bytes, total);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaMemGetInfo: %s", cudaGetErrorString(e));
        return -1;
    }
    *used = *total - free_bytes;
    return 0;
}
