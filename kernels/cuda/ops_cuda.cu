/* The ops table, device memory and the error record of check.h. */
#include <cstdio>
#include <cstring>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

static char first_error[512];
static long n_errors;

void cuda_fail(const char *file, int line, const char *op, const char *what)
{
    if (n_errors++ == 0) {
        snprintf(first_error, sizeof first_error, "%s:%d: %s: %s", file, line, op, what);
        fprintf(stderr, "cuda: %s\n", first_error);
    }
}

int cuda_failed(void) { return n_errors != 0; }

extern "C" int ops_cuda_error(char *err, size_t errlen)
{
    if (!n_errors)
        return 0;
    snprintf(err, errlen, "%s%s", first_error, n_errors > 1 ? " (and later errors)" : "");
    return -1;
}

/* Out of memory is not an error of the backend but a NULL for the caller,
 * who knows the model and batch behind the request and says so. */
static void *device_zeroed(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 16);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* not sticky: clear it so later checks do not see it */
        return NULL;
    }
    CUDA_CHECK("alloc", e);
    if (e != cudaSuccess)
        return NULL;
    CUDA_CHECK("alloc", cudaMemset(p, 0, bytes));
    return p;
}

real *cuda_alloc(size_t n) { return (real *)device_zeroed(n * sizeof(real)); }
int32_t *cuda_alloc_i32(size_t n) { return (int32_t *)device_zeroed(n * sizeof(int32_t)); }

void cuda_free(void *p)
{
    if (p)
        CUDA_CHECK("free", cudaFree(p));
}

void cuda_zero(real *p, size_t n) { CUDA_CHECK("zero", cudaMemsetAsync(p, 0, n * sizeof(real))); }

void cuda_copy(real *dst, const real *src, size_t n)
{
    if (dst != src)
        CUDA_CHECK("copy", cudaMemcpyAsync(dst, src, n * sizeof(real), cudaMemcpyDeviceToDevice));
}

void cuda_upload(real *dst, const real *host, size_t n)
{
    CUDA_CHECK("upload", cudaMemcpy(dst, host, n * sizeof(real), cudaMemcpyHostToDevice));
}

void cuda_download(real *host, const real *src, size_t n)
{
    CUDA_CHECK("download", cudaMemcpy(host, src, n * sizeof(real), cudaMemcpyDeviceToHost));
}

void cuda_upload_i32(int32_t *dst, const int32_t *host, size_t n)
{
    CUDA_CHECK("upload_i32", cudaMemcpy(dst, host, n * sizeof(int32_t), cudaMemcpyHostToDevice));
}

/* designated, in the order of struct ops as C++ requires */
extern "C" const struct ops ops_cuda = {
    .name = "cuda",
    .alloc = cuda_alloc,
    .alloc_i32 = cuda_alloc_i32,
    .free = cuda_free,
    .zero = cuda_zero,
    .copy = cuda_copy,
    .upload = cuda_upload,
    .download = cuda_download,
    .upload_i32 = cuda_upload_i32,
    .matmul_fwd = cuda_matmul_fwd,
    .matmul_bwd = cuda_matmul_bwd,
    .embedding_fwd = cuda_embedding_fwd,
    .embedding_bwd = cuda_embedding_bwd,
    .rmsnorm_fwd = cuda_rmsnorm_fwd,
    .rmsnorm_bwd = cuda_rmsnorm_bwd,
    .rope = cuda_rope,
    .attn_state_size = cuda_attn_state_size,
    .attention_fwd = cuda_attention_fwd,
    .attention_bwd = cuda_attention_bwd,
    .swiglu_fwd = cuda_swiglu_fwd,
    .swiglu_bwd = cuda_swiglu_bwd,
    .axpby = cuda_axpby,
    .chscale_fwd = cuda_chscale_fwd,
    .chscale_bwd = cuda_chscale_bwd,
    .cross_entropy = cuda_cross_entropy,
    .adam = cuda_adam,
    .sum = cuda_sum,
    .sumsq = cuda_sumsq,
    .dot = cuda_dot,
    .angular_sum = cuda_angular_sum,
};
