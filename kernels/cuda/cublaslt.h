/* cuBLASLt as the matmuls call it: the library, opened with dlopen at the
 * first matmul (matmul.cu), its entry points, and the per-device state the
 * matmuls keep (a handle, workspaces, the planned shapes). matmul.cu plans
 * and runs the products; matmul_tune.cu times the heuristic's candidates
 * for a shape and keeps the fastest in a file (COD_CUBLASLT_TUNE,
 * COD_CUBLASLT_CACHE); matmul.cu's second stream runs the weight gradients
 * beside the rest (COD_CUDA_WGRAD_STREAM). */
#ifndef COD_CUDA_CUBLASLT_H
#define COD_CUDA_CUBLASLT_H

#include <cstdint>

#include <cublasLt.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

struct cublaslt_api {
    void *lib;
    int tried;
    decltype(&cublasLtCreate) Create;
    decltype(&cublasLtGetVersion) GetVersion;
    decltype(&cublasLtGetStatusString) GetStatusString;
    decltype(&cublasLtMatmul) Matmul;
    decltype(&cublasLtMatmulDescCreate) MatmulDescCreate;
    decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
    decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy;
    decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
    decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy;
    decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
    decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
    decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy;
    decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
    decltype(&cublasLtMatmulAlgoConfigGetAttribute) MatmulAlgoConfigGetAttribute;
};
extern struct cublaslt_api lt;

/* the workspace each stream's products may use */
static const size_t LT_WORKSPACE_BYTES = (size_t)32 << 20;

/* A matmul shape with its descriptors and the algorithm chosen for it: a
 * training step repeats a handful of shapes, so each is planned once.
 * Alignments are part of the shape: the heuristic assumes 256 bytes
 * unless told, and a row offset into a buffer can have less. */
struct lt_shape {
    int ta, tb, m, n, k, lda, ldb, ldc, c32;
    uint32_t align_a, align_b, align_c;
};

struct lt_plan {
    struct lt_shape s;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
};

/* One product as gemm() was asked for it: D = alpha·op(A)·op(B) + beta·C
 * on stream, C = D allowed */
struct lt_call {
    const void *A, *B, *C;
    void *D;
    float alpha, beta;
    void *workspace;
    cudaStream_t stream;
};

/* The heuristic's candidates for a plan (up to LT_CANDIDATES, best
 * first, as many as it found in *n): 0, or -1 with the failure recorded */
enum { LT_CANDIDATES = 16 };
int lt_candidates(cublasLtHandle_t h, struct lt_plan *p, int want,
                  cublasLtMatmulHeuristicResult_t *out, int *n, const char *op);

/* matmul_tune.cu: the algorithm for a new plan: the heuristic's first,
 * or with COD_CUBLASLT_TUNE=1 (the default) the fastest of its first
 * COD_CUBLASLT_CANDIDATES (8) timed on the call's own operands, or the one
 * the cache file names for this device, library and shape; each choice is
 * logged once on stderr. 0 with p->algo set, or -1 with the failure
 * recorded. */
int lt_choose(cublasLtHandle_t h, struct lt_plan *p, const struct lt_call *call, const char *op);
/* the settings and the cache file read again at the next choice; forced
 * >= 0: the heuristic's candidate of that rank (the last where it offers
 * fewer), untimed, for the tests (ops_cuda_matmul_replan) */
void lt_settings_again(int forced);
/* "m=… n=… k=…" and the rest of a shape, for messages */
void lt_shape_text(const struct lt_shape *s, char *buf, size_t len);

#define LT_CHECK(op, call)                                                                     \
    do {                                                                                       \
        cublasStatus_t s_ = (call);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            cuda_fail(__FILE__, __LINE__, op, lt.GetStatusString(s_));                         \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

#endif
