/* The PTX instructions the tensor-core attention issues, each behind a
 * function: ldmatrix, mma.sync m16n8k16 (bf16 in, fp32 accumulate),
 * cp.async with its wait, ex2 on the special-function unit. Built for the
 * emulator (COD_CUDA_EMU, kernels/cuda/emu/), the same functions come from
 * emu/ptx.h, which does what the PTX ISA says each instruction does, so the
 * kernels that use them run unchanged on a CPU. */
#ifndef COD_CUDA_PTX_CUH
#define COD_CUDA_PTX_CUH

#include <cstdint>

#include <cuda_bf16.h>

#ifdef COD_CUDA_EMU
#include "kernels/cuda/emu/ptx.h"
#else

namespace ptx {

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* four 8×8 b16 matrices: lanes 8i..8i+7 give the row addresses of matrix
 * i, and register i of lane l gets row l/4, columns 2(l%4) and 2(l%4)+1 */
__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const __nv_bfloat16 *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* the same, each matrix transposed */
__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], const __nv_bfloat16 *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* c[16×8] += a[16×16] · b[16×8], a warp together */
__device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* 2^x, flushing denormals; −inf gives 0 */
__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* 16 bytes from global to shared memory, of which the first src_bytes are
 * read and the rest written as zeros; lands by cp_async_wait_all */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(src_bytes));
}

/* this thread's copies have landed (not the block's: a barrier after it) */
__device__ __forceinline__ void cp_async_wait_all()
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

} /* namespace ptx */

#endif
#endif
