/* The probes of probes.h. Built by nvcc for a GPU (build/gpu/test_emu) and
 * for the emulator (build/emu/bin/test_emu) from this one source. */
#include <cstdint>
#include <cstdlib>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/cuda/emu/probes.h"
#include "kernels/cuda/ptx.cuh"

namespace {

constexpr unsigned FULL = 0xffffffffu;

/* the launch's error, once the device has finished it */
int finish()
{
    cudaError_t e = cudaDeviceSynchronize();
    cudaError_t l = cudaGetLastError();
    return (int)(e != cudaSuccess ? e : l);
}

template <class T> T *on_device(const T *host, size_t n)
{
    T *p = nullptr;
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess)
        return nullptr;
    if (host && cudaMemcpy(p, host, n * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(p);
        return nullptr;
    }
    return p;
}

__device__ uint32_t pack_dev(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* fragments by the PTX ISA (g = lane/4, t = lane%4): A rows g, g+8 and
 * columns 2t, 2t+1, 2t+8, 2t+9; B rows 2t, 2t+1, 2t+8, 2t+9 of column g;
 * C rows g, g+8 and columns 2t, 2t+1 */
__global__ void mma_kernel(const float *A, const float *B, const float *C, float *D)
{
    const int l = threadIdx.x, g = l / 4, t = l % 4;
    uint32_t a[4] = {pack_dev(A[g * 16 + 2 * t], A[g * 16 + 2 * t + 1]),
                     pack_dev(A[(g + 8) * 16 + 2 * t], A[(g + 8) * 16 + 2 * t + 1]),
                     pack_dev(A[g * 16 + 2 * t + 8], A[g * 16 + 2 * t + 9]),
                     pack_dev(A[(g + 8) * 16 + 2 * t + 8], A[(g + 8) * 16 + 2 * t + 9])};
    uint32_t b0 = pack_dev(B[(2 * t) * 8 + g], B[(2 * t + 1) * 8 + g]),
             b1 = pack_dev(B[(2 * t + 8) * 8 + g], B[(2 * t + 9) * 8 + g]);
    float c[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t],
                  C[(g + 8) * 8 + 2 * t + 1]};
    ptx::mma(c, a, b0, b1);
    D[g * 8 + 2 * t] = c[0];
    D[g * 8 + 2 * t + 1] = c[1];
    D[(g + 8) * 8 + 2 * t] = c[2];
    D[(g + 8) * 8 + 2 * t + 1] = c[3];
}

/* rows padded to 16 bytes more, as the attention's tiles are */
constexpr int LDS = 16;

__global__ void ldmatrix_kernel(const __nv_bfloat16 *m, uint32_t *out)
{
    __shared__ __align__(16) __nv_bfloat16 s[4 * 8 * LDS];
    const int l = threadIdx.x;
    for (int i = l; i < 256; i += 32)
        s[(i / 64) * 8 * LDS + (i % 64) / 8 * LDS + i % 8] = m[i];
    __syncthreads();
    /* lanes 8i..8i+7 give the rows of matrix i */
    const __nv_bfloat16 *row = s + (l / 8) * 8 * LDS + (l % 8) * LDS;
    uint32_t r[4], rt[4];
    ptx::ldsm_x4(r, row);
    ptx::ldsm_x4_t(rt, row);
    for (int i = 0; i < 4; i++) {
        out[l * 8 + i] = r[i];
        out[l * 8 + 4 + i] = rt[i];
    }
}

__global__ void shuffle_kernel(int32_t *out)
{
    const int l = threadIdx.x, v = l * 10 + 7;
    out[0 * 32 + l] = __shfl_xor_sync(FULL, v, 1);
    out[1 * 32 + l] = __shfl_xor_sync(FULL, v, 16);
    out[2 * 32 + l] = __shfl_xor_sync(FULL, v, 3, 8);
    out[3 * 32 + l] = __shfl_sync(FULL, v, 5);
    out[4 * 32 + l] = __shfl_sync(FULL, v, 3, 16);
}

__global__ void cp_async_kernel(const uint8_t *src, uint8_t *out)
{
    __shared__ __align__(16) uint8_t s[48];
    const int l = threadIdx.x;
    if (l < 48)
        s[l] = 0xee;
    __syncthreads();
    if (l < 3)
        ptx::cp_async16(s + 16 * l, src + 16 * l, l == 0 ? 16 : l == 1 ? 8 : 0);
    ptx::cp_async_wait_all();
    __syncthreads();
    if (l < 48)
        out[l] = s[l];
}

__global__ void deadlock_kernel(int *out)
{
    if (threadIdx.x == 0) {
        __syncthreads();
    } else {
        *out = __shfl_xor_sync(FULL, (int)threadIdx.x, 1);
    }
}

__global__ void race_kernel(float *out)
{
    __shared__ float s[64];
    const int i = threadIdx.x;
    s[i] = (float)i;
    out[i] = s[(i + 1) % 64]; /* no barrier between the write and the read */
}

__global__ void unwaited_kernel(const __nv_bfloat16 *src, uint16_t *out)
{
    extern __shared__ __align__(16) unsigned char smem[];
    if (threadIdx.x == 0) {
        ptx::cp_async16(smem, src, 16);
        out[0] = *reinterpret_cast<const uint16_t *>(smem); /* before the wait */
        ptx::cp_async_wait_all();
        out[1] = *reinterpret_cast<const uint16_t *>(smem);
    }
}

/* warp 0 copies a new tile over one that warp 1 may still be reading: the
 * barrier that should come between the reads and the copies is missing */
__global__ void copy_over_read_kernel(const float *src, float *out)
{
    __shared__ __align__(16) float s[64];
    const int i = threadIdx.x;
    if (i < 16)
        ptx::cp_async16(s + 4 * i, src + 4 * i, 16);
    ptx::cp_async_wait_all();
    __syncthreads();
    if (i < 16)
        ptx::cp_async16(s + 4 * i, src + 64 + 4 * i, 16);
    const float v = s[63 - i];
    __syncthreads();
    ptx::cp_async_wait_all();
    out[i] = v;
}

/* each warp reads the other's writes with only a warp instruction, not a
 * barrier, between: warps kept in step by it happen to see the writes */
__global__ void warp_ahead_kernel(float *out)
{
    extern __shared__ float w[];
    const int i = threadIdx.x;
    w[i] = (float)i;
    const int v = __shfl_xor_sync(FULL, i, 1);
    out[i] = w[(i + 32) % 64] + (float)v;
}

__global__ void trap_kernel() { __trap(); }

__global__ void write_kernel(float *x) { x[threadIdx.x] = 1; }

__global__ void big_smem_kernel(float *x)
{
    extern __shared__ __align__(16) float big[];
    big[threadIdx.x] = 2;
    __syncthreads();
    x[threadIdx.x] = big[(threadIdx.x + 1) % blockDim.x];
}

__global__ void add_kernel(int *x) { *x += 1; }

} /* namespace */

extern "C" {

int probe_emulated(void)
{
#ifdef COD_CUDA_EMU
    return 1;
#else
    return 0;
#endif
}

int probe_reset(void) { return (int)cudaDeviceReset(); }

const char *probe_error_name(int e) { return cudaGetErrorName((cudaError_t)e); }

int probe_mma(const float *a, const float *b, const float *c, float *d)
{
    float *A = on_device(a, 256), *B = on_device(b, 128), *C = on_device(c, 128),
          *D = on_device<float>(nullptr, 128);
    int e = A && B && C && D ? 0 : (int)cudaErrorMemoryAllocation;
    if (!e) {
        mma_kernel<<<1, 32>>>(A, B, C, D);
        e = finish();
    }
    if (!e)
        e = (int)cudaMemcpy(d, D, 128 * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(D);
    return e;
}

int probe_ldmatrix(const uint16_t *m, uint32_t *out)
{
    __nv_bfloat16 *M = on_device(reinterpret_cast<const __nv_bfloat16 *>(m), 256);
    uint32_t *O = on_device<uint32_t>(nullptr, 256);
    int e = M && O ? 0 : (int)cudaErrorMemoryAllocation;
    if (!e) {
        ldmatrix_kernel<<<1, 32>>>(M, O);
        e = finish();
    }
    if (!e)
        e = (int)cudaMemcpy(out, O, 256 * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    cudaFree(M), cudaFree(O);
    return e;
}

int probe_shuffle(int32_t *out)
{
    int32_t *O = on_device<int32_t>(nullptr, 160);
    int e = O ? 0 : (int)cudaErrorMemoryAllocation;
    if (!e) {
        shuffle_kernel<<<1, 32>>>(O);
        e = finish();
    }
    if (!e)
        e = (int)cudaMemcpy(out, O, 160 * sizeof(int32_t), cudaMemcpyDeviceToHost);
    cudaFree(O);
    return e;
}

int probe_cp_async(const uint8_t *src, uint8_t *out)
{
    uint8_t *S = on_device(src, 48), *O = on_device<uint8_t>(nullptr, 48);
    int e = S && O ? 0 : (int)cudaErrorMemoryAllocation;
    if (!e) {
        cp_async_kernel<<<1, 64>>>(S, O);
        e = finish();
    }
    if (!e)
        e = (int)cudaMemcpy(out, O, 48, cudaMemcpyDeviceToHost);
    cudaFree(S), cudaFree(O);
    return e;
}

int probe_deadlock(void)
{
    int *x = on_device<int>(nullptr, 1);
    deadlock_kernel<<<1, 32>>>(x);
    int e = finish();
    cudaFree(x);
    return e;
}

int probe_race(float *out)
{
    float *O = on_device<float>(nullptr, 64);
    race_kernel<<<1, 64>>>(O);
    int e = finish();
    if (!e)
        e = (int)cudaMemcpy(out, O, 64 * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(O);
    return e;
}

int probe_unwaited_copy(uint16_t *out)
{
    const uint16_t ones[8] = {0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80};
    __nv_bfloat16 *S = on_device(reinterpret_cast<const __nv_bfloat16 *>(ones), 8);
    uint16_t *O = on_device<uint16_t>(nullptr, 2);
    unwaited_kernel<<<1, 32, 16>>>(S, O);
    int e = finish();
    if (!e)
        e = (int)cudaMemcpy(out, O, 2 * sizeof(uint16_t), cudaMemcpyDeviceToHost);
    cudaFree(S), cudaFree(O);
    return e;
}

int probe_copy_over_read(void)
{
    float src[128];
    for (int i = 0; i < 128; i++)
        src[i] = (float)i;
    float *S = on_device(src, 128), *O = on_device<float>(nullptr, 64);
    int e = S && O ? 0 : (int)cudaErrorMemoryAllocation;
    if (!e) {
        copy_over_read_kernel<<<1, 64>>>(S, O);
        e = finish();
    }
    cudaFree(S), cudaFree(O);
    return e;
}

int probe_warp_ahead(void)
{
    float *O = on_device<float>(nullptr, 64);
    int e = O ? 0 : (int)cudaErrorMemoryAllocation;
    if (!e) {
        warp_ahead_kernel<<<1, 64, 64 * sizeof(float)>>>(O);
        e = finish();
    }
    cudaFree(O);
    return e;
}

int probe_trap(void)
{
    trap_kernel<<<1, 1>>>();
    return finish();
}

int probe_host_pointer(void)
{
    float *host = static_cast<float *>(malloc(32 * sizeof(float)));
    write_kernel<<<1, 32>>>(host);
    int e = finish();
    free(host);
    return e;
}

int probe_big_smem(int allowed)
{
    const int bytes = 64 << 10;
    float *x = on_device<float>(nullptr, 256);
    int e = 0;
    if (allowed)
        e = (int)cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      bytes);
    if (!e) {
        big_smem_kernel<<<1, 256, bytes>>>(x);
        e = finish();
    }
    cudaFree(x);
    return e;
}

int probe_graph(int *out)
{
    int *x = on_device<int>(nullptr, 1);
    int e = x ? (int)cudaMemset(x, 0, sizeof(int)) : (int)cudaErrorMemoryAllocation;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (!e)
        e = (int)cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal);
    if (!e) {
        for (int i = 0; i < 3; i++)
            add_kernel<<<1, 1, 0, cudaStreamPerThread>>>(x);
        e = (int)cudaStreamEndCapture(cudaStreamPerThread, &g);
    }
    if (!e)
        e = (int)cudaGraphInstantiate(&exec, g, 0);
    for (int i = 0; i < 2 && !e; i++)
        e = (int)cudaGraphLaunch(exec, cudaStreamPerThread);
    if (!e)
        e = finish();
    if (!e)
        e = (int)cudaMemcpy(out, x, sizeof(int), cudaMemcpyDeviceToHost);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (g)
        cudaGraphDestroy(g);
    cudaFree(x);
    return e;
}

int probe_capture_malloc(int *end_capture_error)
{
    int e = (int)cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal);
    if (e)
        return e;
    void *p = nullptr;
    e = (int)cudaMalloc(&p, 1024);
    cudaGraph_t g = nullptr;
    *end_capture_error = (int)cudaStreamEndCapture(cudaStreamPerThread, &g);
    if (g)
        cudaGraphDestroy(g);
    if (p)
        cudaFree(p);
    cudaGetLastError();
    return e;
}

} /* extern "C" */
