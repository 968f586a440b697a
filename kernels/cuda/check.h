/* Error checking for the CUDA backend. The ops return no status, so the
 * first failure is kept (file, line, op, CUDA's words), printed once to
 * stderr, and read back through the table's error(); reductions then
 * return NaN. After a failed launch or an illegal address the context is
 * unusable, so later failures are only counted. With COD_CUDA_SYNC=1 in
 * the environment every launch is followed by a synchronisation, so that
 * a fault inside a kernel is charged to the op that launched it rather
 * than to the next call that waits. COD_CUDA_INJECT_FAULT=OP makes the
 * first launch of OP fault on purpose, for the tests. While a step is
 * being recorded as a CUDA graph nothing runs, so a failure then only
 * means that the step runs op by op (graph.cu). */
#ifndef COD_CUDA_CHECK_H
#define COD_CUDA_CHECK_H

#include <cuda_runtime.h>

void cuda_fail(const char *file, int line, const char *op, const char *what);
/* nonzero once any failure was recorded */
int cuda_failed(void);
/* COD_CUDA_SYNC=1 */
int cuda_sync_mode(void);
void cuda_launch_check(const char *file, int line, const char *op);
/* COD_CUDA_PROFILE=1: marks the end of an op on the stream (ops_cuda.cu) */
void cuda_profile_mark(const char *op);
int cuda_profile_mode(void);
/* graph.cu: nonzero while a step is being recorded, when a failed call
 * fails the recording (cuda_recording_fail) instead of being a fault */
int cuda_recording(void);
void cuda_recording_fail(const char *op, const char *what);

#define CUDA_CHECK(op, call)                                                                   \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            cuda_fail(__FILE__, __LINE__, op, cudaGetErrorString(e_));                         \
    } while (0)

/* after every <<<>>>: a bad configuration is reported here, a fault inside
 * the kernel at the next synchronising call (or here under COD_CUDA_SYNC) */
#define LAUNCH_CHECK(op) cuda_launch_check(__FILE__, __LINE__, op)

/* threads per block of the elementwise kernels, and their grid for n items */
enum { CUDA_THREADS = 256 };
static inline unsigned cuda_blocks(size_t n)
{
    size_t b = (n + CUDA_THREADS - 1) / CUDA_THREADS;
    /* grid-stride loops cover the rest past 2^16 blocks */
    return (unsigned)(b == 0 ? 1 : b > (1u << 16) ? (1u << 16) : b);
}

#endif
