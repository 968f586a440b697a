/* Error checking for the CUDA backend. The ops table returns no status, so
 * the first failure is kept (file, line, op, CUDA's words), printed once to
 * stderr, and read back with ops_cuda_error(); reductions then return NaN,
 * which the trainer already stops on. After a failed launch or an illegal
 * address the context is unusable, so later failures are only counted. */
#ifndef COD_CUDA_CHECK_H
#define COD_CUDA_CHECK_H

#include <cuda_runtime.h>

void cuda_fail(const char *file, int line, const char *op, const char *what);
/* nonzero once any failure was recorded */
int cuda_failed(void);

#define CUDA_CHECK(op, call)                                                                   \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            cuda_fail(__FILE__, __LINE__, op, cudaGetErrorString(e_));                         \
    } while (0)

/* after every <<<>>>: a bad configuration is reported here, a fault inside
 * the kernel at the next synchronising call (download, reductions) */
#define LAUNCH_CHECK(op) CUDA_CHECK(op, cudaGetLastError())

/* threads per block of the elementwise kernels, and their grid for n items */
enum { CUDA_THREADS = 256 };
static inline unsigned cuda_blocks(size_t n)
{
    size_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    /* grid-stride loops cover the rest past 2^20 blocks */
    return (unsigned)(b == 0 ? 1 : b > (1u << 20) ? (1u << 20) : b);
}

#endif
