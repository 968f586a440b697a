/* Matmuls through cuBLASLt: bf16 operands, fp32 accumulation, and the
 * epilogue doing what would otherwise take another pass over memory: the
 * residual add of the forward (D = a·A·B + b·C with C the stream), the
 * input gradient's residual term, and the weight gradients accumulating in
 * fp32 straight into the master gradients (β = 1, C = D in fp32).
 * cuBLASLt is opened with dlopen at the first matmul rather than linked,
 * so the binaries start (and say "no GPU") on machines without the CUDA
 * libraries; its absence is reported by name.
 *
 * Row-major X[r,c] is column-major Xᵀ with ld c, so every product below is
 * written for the transposes:
 *   fwd  outᵀ[Out,N] = a·(wᵀ)ᵀ·inᵀ + b·resᵀ   A = w (T),  B = in (N)
 *   din  dinᵀ[In,N] = a·wᵀ·doutᵀ + b·resᵀ     A = w (N),  B = dout (N)
 *   dw   dwᵀ[In,Out] += a·inᵀ·dout            A = in (N), B = dout (T), fp32 C = D */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <cublasLt.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUBLASLT_SONAME "libcublasLt.so." STR(CUBLAS_VER_MAJOR)

/* the entry points used, resolved from the library by name */
static struct {
    void *lib;
    int tried;
    decltype(&cublasLtCreate) Create;
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
} lt;

static int load_cublaslt(const char *op)
{
    if (lt.lib)
        return 0;
    if (lt.tried)
        return -1;
    lt.tried = 1;
    const struct cuda_symbol syms[] = {
        {(void **)&lt.Create, "cublasLtCreate"},
        {(void **)&lt.GetStatusString, "cublasLtGetStatusString"},
        {(void **)&lt.Matmul, "cublasLtMatmul"},
        {(void **)&lt.MatmulDescCreate, "cublasLtMatmulDescCreate"},
        {(void **)&lt.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute"},
        {(void **)&lt.MatmulDescDestroy, "cublasLtMatmulDescDestroy"},
        {(void **)&lt.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate"},
        {(void **)&lt.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy"},
        {(void **)&lt.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate"},
        {(void **)&lt.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute"},
        {(void **)&lt.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy"},
        {(void **)&lt.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic"},
    };
    char why[1024];
    lt.lib = cuda_open_library(CUBLASLT_SONAME, "the CUDA " STR(CUBLAS_VER_MAJOR) " cuBLASLt library",
                               syms, sizeof syms / sizeof syms[0], why, sizeof why);
    if (!lt.lib) {
        cuda_fail(__FILE__, __LINE__, op, why);
        return -1;
    }
    return 0;
}

#define LT_CHECK(op, call)                                                                     \
    do {                                                                                       \
        cublasStatus_t s_ = (call);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            cuda_fail(__FILE__, __LINE__, op, lt.GetStatusString(s_));                         \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

enum { MAX_DEVICES = 16, MAX_PLANS = 256 };
static const size_t WORKSPACE_BYTES = (size_t)32 << 20;

/* A matmul shape with its descriptors and the algorithm the heuristic
 * chose: a training step repeats a handful of shapes, so each is planned
 * once. Alignments are part of the shape: the heuristic assumes 256 bytes
 * unless told, and a row offset into a buffer can have less. */
struct plan {
    int ta, tb, m, n, k, lda, ldb, ldc, c32;
    uint32_t align_a, align_b, align_c;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
};

/* One handle and workspace per device, created at its first matmul. When
 * the plan table is full (a process that builds many models), the oldest
 * plan makes room. */
static struct device_ctx {
    cublasLtHandle_t handle;
    void *workspace;
    struct plan plans[MAX_PLANS];
    int n_plans, oldest;
} devices[MAX_DEVICES];

static void drop_plan(struct plan *p)
{
    if (p->desc)
        lt.MatmulDescDestroy(p->desc);
    cublasLtMatrixLayout_t layouts[3] = {p->a, p->b, p->c};
    for (int i = 0; i < 3; i++)
        if (layouts[i])
            lt.MatrixLayoutDestroy(layouts[i]);
    memset(p, 0, sizeof *p);
}

static struct device_ctx *device_ctx(const char *op)
{
    int dev = 0;
    CUDA_CHECK(op, cudaGetDevice(&dev));
    if (dev < 0 || dev >= MAX_DEVICES) {
        cuda_fail(__FILE__, __LINE__, op, "device index beyond the backend's table of 16");
        return NULL;
    }
    struct device_ctx *c = &devices[dev];
    if (c->handle)
        return c;
    if (load_cublaslt(op) != 0)
        return NULL;
    cublasStatus_t s = lt.Create(&c->handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cuda_fail(__FILE__, __LINE__, op, lt.GetStatusString(s));
        c->handle = NULL;
        return NULL;
    }
    c->workspace = cuda_malloc_tracked(WORKSPACE_BYTES, op);
    if (!c->workspace) {
        cuda_fail(__FILE__, __LINE__, op, "out of device memory for cuBLASLt's workspace");
        return NULL;
    }
    return c;
}

static int make_plan(struct device_ctx *c, struct plan *p, const char *op)
{
    cublasOperation_t ta = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t ct = p->c32 ? CUDA_R_32F : CUDA_R_16BF;
    LT_CHECK(op, lt.MatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_CHECK(op, lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(op, lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    /* stored shapes: A is m×k (k×m when transposed), B k×n (n×k), C m×n */
    LT_CHECK(op, lt.MatrixLayoutCreate(&p->a, CUDA_R_16BF, p->ta ? p->k : p->m,
                                       p->ta ? p->m : p->k, p->lda));
    LT_CHECK(op, lt.MatrixLayoutCreate(&p->b, CUDA_R_16BF, p->tb ? p->n : p->k,
                                       p->tb ? p->k : p->n, p->ldb));
    LT_CHECK(op, lt.MatrixLayoutCreate(&p->c, ct, p->m, p->n, p->ldc));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(op, lt.MatmulPreferenceCreate(&pref));
    cublasStatus_t s = lt.MatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &WORKSPACE_BYTES, sizeof WORKSPACE_BYTES);
    const struct {
        cublasLtMatmulPreferenceAttributes_t attr;
        const uint32_t *bytes;
    } aligns[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &p->align_a},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &p->align_b},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &p->align_c},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &p->align_c}};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0] && s == CUBLAS_STATUS_SUCCESS; i++)
        s = lt.MatmulPreferenceSetAttribute(pref, aligns[i].attr, aligns[i].bytes,
                                            sizeof(uint32_t));
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.MatmulAlgoGetHeuristic(c->handle, p->desc, p->a, p->b, p->c, p->c, pref, 1, &h,
                                      &found);
    lt.MatmulPreferenceDestroy(pref);
    LT_CHECK(op, s);
    if (found == 0) {
        char why[200];
        snprintf(why, sizeof why, "cuBLASLt has no algorithm for m=%d n=%d k=%d (%s output)",
                 p->m, p->n, p->k, p->c32 ? "fp32" : "bf16");
        cuda_fail(__FILE__, __LINE__, op, why);
        return -1;
    }
    p->algo = h.algo;
    return 0;
}

static uint32_t alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t bytes = 1;
    while (bytes < 256 && a % (2 * bytes) == 0)
        bytes *= 2;
    return bytes;
}

/* D[m,n] = alpha·op(A)·op(B) + beta·C in column-major terms on the current
 * device; C is D's layout and type, D itself when C is NULL; c32: C and D
 * are fp32 (else bf16) */
static void gemm(const char *op, int ta, int tb, int m, int n, int k, const bf16 *A, int lda,
                 const bf16 *B, int ldb, const void *C, void *D, int ldc, int c32, float alpha,
                 float beta)
{
    if (cuda_failed() || m == 0 || n == 0)
        return;
    struct device_ctx *c = device_ctx(op);
    if (!c)
        return;
    if (!C)
        C = D;
    uint32_t aa = alignment(A), ab = alignment(B), ac = alignment(C) < alignment(D) ? alignment(C)
                                                                                   : alignment(D);
    struct plan *p = NULL;
    for (int i = 0; i < c->n_plans && !p; i++) {
        struct plan *q = &c->plans[i];
        if (q->ta == ta && q->tb == tb && q->m == m && q->n == n && q->k == k && q->lda == lda &&
            q->ldb == ldb && q->ldc == ldc && q->c32 == c32 && q->align_a == aa &&
            q->align_b == ab && q->align_c == ac)
            p = q;
    }
    if (!p) {
        if (c->n_plans < MAX_PLANS) {
            p = &c->plans[c->n_plans++];
        } else {
            p = &c->plans[c->oldest];
            c->oldest = (c->oldest + 1) % MAX_PLANS;
        }
        drop_plan(p);
        *p = (struct plan){ta, tb, m, n, k, lda, ldb, ldc, c32, aa, ab, ac, NULL, NULL, NULL, NULL, {}};
        if (make_plan(c, p, op) != 0) {
            drop_plan(p); /* matches no shape, so it is never used, only reused */
            return;
        }
    }
    cublasStatus_t s = lt.Matmul(c->handle, p->desc, &alpha, A, p->a, B, p->b, &beta, C, p->c, D,
                                 p->c, &p->algo, c->workspace, WORKSPACE_BYTES,
                                 cudaStreamPerThread);
    if (s != CUBLAS_STATUS_SUCCESS)
        cuda_fail(__FILE__, __LINE__, op, lt.GetStatusString(s));
    else if (cuda_sync_mode())
        CUDA_CHECK(op, cudaDeviceSynchronize());
    cuda_profile_mark(op);
}

void cuda_matmul_fwd(act *out, const act *in, const act *w, int N, int In, int Out, real a,
                     const act *res, real b)
{
    gemm("matmul_fwd", 1, 0, Out, N, In, BFC(w), In, BFC(in), In, res, out, Out, 0, a,
         res ? b : 0.0f);
}

void cuda_matmul_bwd(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                     int In, int Out, real a, const act *res, real b)
{
    if (dw)
        gemm("matmul_bwd (dw)", 0, 1, In, Out, N, BFC(in), In, BFC(dout), Out, NULL, dw, In, 1,
             a, 1.0f);
    if (din)
        gemm("matmul_bwd (din)", 0, 0, In, N, Out, BFC(w), In, BFC(dout), Out, res, din, In, 0,
             a, res ? b : 0.0f);
}
