/* The CUDA backend's ops table, callable from C. Storage is fp32 in device
 * memory, as the ops interface passes `real *` (float) buffers that the
 * model offsets into; tensor-core speed comes from cuBLASLt running the
 * matmuls on fp32 buffers with bf16 compute (CUBLAS_COMPUTE_32F_FAST_16BF:
 * inputs rounded to bf16, fp32 accumulation). This is the step before bf16
 * activations and weights in memory, which needs the ops interface to carry
 * an element type. Every other op computes in fp32, as the CPU backend. */
#ifndef COD_OPS_CUDA_H
#define COD_OPS_CUDA_H

#if defined(COD_HAVE_CUDA) || defined(__CUDACC__)

#include <stddef.h>

#include "kernels/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs on the device selected with cudaSetDevice (cuda_probe does it). */
extern const struct ops ops_cuda;

/* 0 while no CUDA, cuBLASLt or launch error has happened; otherwise -1 with
 * err naming the first one: "file:line: op: what". */
int ops_cuda_error(char *err, size_t errlen);

/* 1: matmuls in plain fp32 (CUBLAS_COMPUTE_32F), for checks against the
 * CPU at fp32 tolerance; 0 (the default): bf16 tensor-core compute. */
void ops_cuda_exact_matmul(int on);

#ifdef __cplusplus
}
#endif

#endif
#endif
