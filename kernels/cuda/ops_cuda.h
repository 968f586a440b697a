/* The CUDA backend's ops table, callable from C. act is bf16 in device
 * memory; real (master weights, gradients, Adam's moments, norm and softmax
 * statistics, losses) is fp32. Matmuls run on the tensor cores through
 * cuBLASLt (bf16 inputs, fp32 accumulation and epilogue), attention through
 * cuDNN's fused flash attention where cuDNN is present and takes it
 * (attention_cudnn.cu), else on the tensor cores through cod's own
 * flash-attention kernels (attention_mma.cu), with a CUDA-core fallback
 * (attention.cu) for head sizes they do not take.
 * Reductions have a fixed order, so a run repeats bit for bit on a given
 * GPU and build (see docs/gpu.md, "Repeatable runs"). */
#ifndef COD_OPS_CUDA_H
#define COD_OPS_CUDA_H

#if defined(COD_HAVE_CUDA) || defined(__CUDACC__)

#include <stddef.h>
#include <stdio.h>

#include "kernels/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs on the device selected with cudaSetDevice (cuda_probe does it). */
extern const struct ops ops_cuda;

/* 1: attention on the CUDA-core fallback kernels even where the tensor-core
 * ones apply (for checking one against the other); 0: the default. */
void ops_cuda_fallback_attention(int on);

/* Which attention runs (docs/gpu.md, "The GPU backend"): as COD_ATTENTION says
 * (ENV, the default: cuDNN's fused attention where it takes the call, else
 * cod's own kernels), cod's own kernels, or cuDNN's, a call it cannot run
 * then being an error; for the tests. */
enum ops_cuda_attention {
    OPS_CUDA_ATTENTION_ENV,
    OPS_CUDA_ATTENTION_OWN,
    OPS_CUDA_ATTENTION_CUDNN,
};
void ops_cuda_set_attention(enum ops_cuda_attention which);
/* 0 when cuDNN can be used here (loaded, its version accepted, a handle
 * made on the current device), else -1 with why. */
int ops_cuda_cudnn_usable(char *why, size_t len);
/* 1 when cuDNN's fused attention takes this shape on the current device
 * (its graphs are built, and kept), else 0 with why (cuDNN absent or
 * refused, the shape refused). */
int ops_cuda_cudnn_takes(int B, int T, int nh, int hd, char *why, size_t len);
/* Without a GPU: 1 when cuDNN (9.8 or later) compiles the kernels of both
 * graphs of this shape for the device that device_json describes (cuDNN's
 * JSON device properties), else 0 with why. Without a driver, loading the
 * kernels fails, and that is as far as the check goes; with one, they
 * load. */
int ops_cuda_cudnn_compiles(const char *device_json, int B, int T, int nh, int hd, char *why,
                            size_t len);
/* 0 when cod uses a cuDNN of this version (cudnnGetVersion's number), else
 * -1 with why. */
int ops_cuda_cudnn_version_refused(size_t version, char *why, size_t len);

/* For the tests: every matmul shape planned again at its next product,
 * the settings (COD_CUBLASLT_*) and the cache file read again; with
 * k >= 0 each new plan takes the heuristic's candidate of rank k (the
 * last, where it offers fewer), untimed; -1: as COD_CUBLASLT_TUNE says.
 * offered: the most candidates the heuristic gave a shape planned with
 * k >= 0 since. */
void ops_cuda_matmul_replan(int k);
int ops_cuda_matmul_offered(void);

/* Device memory the backend holds now and at most so far, in bytes
 * (everything it allocated: buffers, cuBLASLt's workspace, scratch). */
void ops_cuda_memory(size_t *now, size_t *peak);
/* Starts the peak over from what is held now. */
void ops_cuda_reset_peak(void);

/* With COD_CUDA_PROFILE=1 in the environment: the device time of each op
 * since the last report (or the start), largest first, as PROFILE lines;
 * f NULL forgets them. */
void ops_cuda_profile_report(FILE *f);
/* Opens (1) and closes (0) the stretch that an outside profiler started
 * with profiling off records (Nsight Compute's --profile-from-start off:
 * bench/gpu/profile.sh); with none attached it does nothing. */
void ops_cuda_profile_range(int on);

#ifdef __cplusplus
}
#endif

#endif
#endif
