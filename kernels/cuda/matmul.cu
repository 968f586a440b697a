/* Matmuls through cuBLASLt: bf16 operands, fp32 accumulation, and the
 * epilogue doing what would otherwise take another pass over memory: the
 * residual add of the forward (D = a·A·B + b·C with C the stream), the
 * input gradient's residual term, and the weight gradients accumulating in
 * fp32 straight into the master gradients (β = 1, C = D in fp32).
 * cuBLASLt is opened with dlopen at the first matmul rather than linked,
 * so the binaries start (and say "no GPU") on machines without the CUDA
 * libraries; its absence is reported by name. Each shape's algorithm is
 * chosen once (matmul_tune.cu).
 *
 * The weight gradients can run on a second stream beside the ops after
 * them (COD_CUDA_WGRAD_STREAM, below), with a workspace of their own: the
 * weight-gradient product is as large as the input gradient's, and the
 * memory-bound kernels between the products leave the tensor cores idle.
 *
 * Row-major X[r,c] is column-major Xᵀ with ld c, so every product below is
 * written for the transposes:
 *   fwd  outᵀ[Out,N] = a·(wᵀ)ᵀ·inᵀ + b·resᵀ   A = w (T),  B = in (N)
 *   din  dinᵀ[In,N] = a·wᵀ·doutᵀ + b·resᵀ     A = w (N),  B = dout (N)
 *   dw   dwᵀ[In,Out] += a·inᵀ·dout            A = in (N), B = dout (T), fp32 C = D */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/cublaslt.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUBLASLT_SONAME "libcublasLt.so." STR(CUBLAS_VER_MAJOR)

struct cublaslt_api lt;

static int load_cublaslt(const char *op)
{
    if (lt.lib)
        return 0;
    if (lt.tried)
        return -1;
    lt.tried = 1;
    const struct cuda_symbol syms[] = {
        {(void **)&lt.Create, "cublasLtCreate"},
        {(void **)&lt.GetVersion, "cublasLtGetVersion"},
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
        {(void **)&lt.MatmulAlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute"},
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

enum { MAX_DEVICES = 16, MAX_PLANS = 256, MARKS = 8 };

/* One handle, workspace and table of plans per device, created at its
 * first matmul; the second stream with its own workspace and the events
 * that order it, where it is on. When the plan table is full (a process
 * that builds many models), the oldest plan makes room. */
static struct device_ctx {
    cublasLtHandle_t handle;
    void *workspace;
    struct lt_plan plans[MAX_PLANS];
    int n_plans, oldest;
    cudaStream_t side;
    void *side_workspace;
    cudaEvent_t fork, marks[MARKS];
    long n_marks;
} devices[MAX_DEVICES];

/* COD_CUDA_WGRAD_STREAM: 1 or unset, the weight gradients on the second
 * stream; 0, on the stream of the rest. The debugging modes keep them on
 * the one stream, whose order they read (a synchronisation after every
 * launch, an event after every op). */
int cuda_wgrad_beside(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("COD_CUDA_WGRAD_STREAM");
        on = !(v && strcmp(v, "0") == 0) && !cuda_sync_mode() && !cuda_profile_mode();
        if (v && *v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
            fprintf(stderr, "cuda: COD_CUDA_WGRAD_STREAM must be 0 or 1 (or unset), not \"%.60s\": "
                            "the weight gradients stay on the one stream\n", v);
            on = 0;
        }
    }
    return on;
}

static void drop_plan(struct lt_plan *p)
{
    if (p->desc)
        lt.MatmulDescDestroy(p->desc);
    cublasLtMatrixLayout_t layouts[3] = {p->a, p->b, p->c};
    for (int i = 0; i < 3; i++)
        if (layouts[i])
            lt.MatrixLayoutDestroy(layouts[i]);
    memset(p, 0, sizeof *p);
}

static int make_side(struct device_ctx *c, const char *op)
{
    cudaError_t e = cudaStreamCreateWithFlags(&c->side, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&c->fork, cudaEventDisableTiming);
    for (int i = 0; i < MARKS && e == cudaSuccess; i++)
        e = cudaEventCreateWithFlags(&c->marks[i], cudaEventDisableTiming);
    if (e != cudaSuccess) {
        cuda_fail(__FILE__, __LINE__, op, cudaGetErrorString(e));
        return -1;
    }
    c->side_workspace = cuda_malloc_tracked(LT_WORKSPACE_BYTES, op);
    if (!c->side_workspace) {
        cuda_fail(__FILE__, __LINE__, op, "out of device memory for the second stream's workspace");
        return -1;
    }
    return 0;
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
    c->workspace = cuda_malloc_tracked(LT_WORKSPACE_BYTES, op);
    if (!c->workspace) {
        cuda_fail(__FILE__, __LINE__, op, "out of device memory for cuBLASLt's workspace");
        return NULL;
    }
    if (cuda_wgrad_beside() && make_side(c, op) != 0)
        return NULL;
    return c;
}

void lt_shape_text(const struct lt_shape *s, char *buf, size_t len)
{
    snprintf(buf, len, "m=%d n=%d k=%d op(A)=%c op(B)=%c ld %d %d %d, %s output, aligned %u %u %u",
             s->m, s->n, s->k, s->ta ? 'T' : 'N', s->tb ? 'T' : 'N', s->lda, s->ldb, s->ldc,
             s->c32 ? "fp32" : "bf16", s->align_a, s->align_b, s->align_c);
}

static int make_plan(struct lt_plan *p, const char *op)
{
    const struct lt_shape *s = &p->s;
    cublasOperation_t ta = s->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t ct = s->c32 ? CUDA_R_32F : CUDA_R_16BF;
    LT_CHECK(op, lt.MatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_CHECK(op, lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(op, lt.MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    /* stored shapes: A is m×k (k×m when transposed), B k×n (n×k), C m×n */
    LT_CHECK(op, lt.MatrixLayoutCreate(&p->a, CUDA_R_16BF, s->ta ? s->k : s->m,
                                       s->ta ? s->m : s->k, s->lda));
    LT_CHECK(op, lt.MatrixLayoutCreate(&p->b, CUDA_R_16BF, s->tb ? s->n : s->k,
                                       s->tb ? s->k : s->n, s->ldb));
    LT_CHECK(op, lt.MatrixLayoutCreate(&p->c, ct, s->m, s->n, s->ldc));
    return 0;
}

int lt_candidates(cublasLtHandle_t h, struct lt_plan *p, int want,
                  cublasLtMatmulHeuristicResult_t *out, int *n, const char *op)
{
    cublasLtMatmulPreference_t pref;
    LT_CHECK(op, lt.MatmulPreferenceCreate(&pref));
    cublasStatus_t s = lt.MatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &LT_WORKSPACE_BYTES, sizeof LT_WORKSPACE_BYTES);
    const struct {
        cublasLtMatmulPreferenceAttributes_t attr;
        const uint32_t *bytes;
    } aligns[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &p->s.align_a},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &p->s.align_b},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &p->s.align_c},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &p->s.align_c}};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0] && s == CUBLAS_STATUS_SUCCESS; i++)
        s = lt.MatmulPreferenceSetAttribute(pref, aligns[i].attr, aligns[i].bytes,
                                            sizeof(uint32_t));
    /* a bf16 output's split-K partials reduced in fp32 (or no split): the
     * schemes that reduce in the output's type would round it once a
     * split, not once; an fp32 output may take any (INPLACE orders its
     * partials with counters, so it repeats too) */
    const uint32_t schemes = p->s.c32 ? (uint32_t)CUBLASLT_REDUCTION_SCHEME_MASK
                                      : (uint32_t)(CUBLASLT_REDUCTION_SCHEME_NONE |
                                                   CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                            &schemes, sizeof schemes);
    *n = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.MatmulAlgoGetHeuristic(h, p->desc, p->a, p->b, p->c, p->c, pref,
                                      want < LT_CANDIDATES ? want : LT_CANDIDATES, out, n);
    lt.MatmulPreferenceDestroy(pref);
    LT_CHECK(op, s);
    int kept = 0; /* only those the heuristic says it can run */
    for (int i = 0; i < *n; i++)
        if (out[i].state == CUBLAS_STATUS_SUCCESS)
            out[kept++] = out[i];
    *n = kept;
    if (*n == 0) {
        char shape[200], why[300];
        lt_shape_text(&p->s, shape, sizeof shape);
        snprintf(why, sizeof why, "cuBLASLt has no algorithm for %s", shape);
        cuda_fail(__FILE__, __LINE__, op, why);
        return -1;
    }
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
 * are fp32 (else bf16); side: on the second stream, after everything
 * issued to the first so far */
static void gemm(const char *op, int ta, int tb, int m, int n, int k, const bf16 *A, int lda,
                 const bf16 *B, int ldb, const void *C, void *D, int ldc, int c32, float alpha,
                 float beta, int side)
{
    if (cuda_failed() || m == 0 || n == 0)
        return;
    struct device_ctx *c = device_ctx(op);
    if (!c)
        return;
    if (!C)
        C = D;
    uint32_t ac = alignment(C) < alignment(D) ? alignment(C) : alignment(D);
    const struct lt_shape s = {ta, tb, m, n, k, lda, ldb, ldc, c32, alignment(A), alignment(B), ac};
    struct lt_call call = {A, B, C, D, alpha, beta, c->workspace, cudaStreamPerThread};
    if (side) {
        call.workspace = c->side_workspace;
        call.stream = c->side;
        CUDA_CHECK(op, cudaEventRecord(c->fork, cudaStreamPerThread));
        CUDA_CHECK(op, cudaStreamWaitEvent(c->side, c->fork, 0));
    }
    struct lt_plan *p = NULL;
    for (int i = 0; i < c->n_plans && !p; i++)
        if (memcmp(&c->plans[i].s, &s, sizeof s) == 0)
            p = &c->plans[i];
    if (!p) {
        if (c->n_plans < MAX_PLANS) {
            p = &c->plans[c->n_plans++];
        } else {
            p = &c->plans[c->oldest];
            c->oldest = (c->oldest + 1) % MAX_PLANS;
        }
        drop_plan(p);
        p->s = s;
        if (make_plan(p, op) != 0 || lt_choose(c->handle, p, &call, op) != 0) {
            drop_plan(p); /* matches no shape, so it is never used, only reused */
            return;
        }
    }
    cublasStatus_t st = lt.Matmul(c->handle, p->desc, &alpha, A, p->a, B, p->b, &beta, C, p->c, D,
                                  p->c, &p->algo, call.workspace, LT_WORKSPACE_BYTES, call.stream);
    if (st != CUBLAS_STATUS_SUCCESS)
        cuda_fail(__FILE__, __LINE__, op, lt.GetStatusString(st));
    else if (cuda_sync_mode())
        CUDA_CHECK(op, cudaDeviceSynchronize());
    cuda_profile_mark(op);
}

void cuda_matmul_fwd(act *out, const act *in, const act *w, int N, int In, int Out, real a,
                     const act *res, real b)
{
    gemm("matmul_fwd", 1, 0, Out, N, In, BFC(w), In, BFC(in), In, res, out, Out, 0, a,
         res ? b : 0.0f, 0);
}

void cuda_matmul_bwd(act *din, real *dw, const act *dout, const act *in, const act *w, int N,
                     int In, int Out, real a, const act *res, real b)
{
    /* a din that overwrites in waits for dw's read of it: both on one stream */
    if (dw)
        gemm("matmul_bwd (dw)", 0, 1, In, Out, N, BFC(in), In, BFC(dout), Out, NULL, dw, In, 1,
             a, 1.0f, cuda_wgrad_beside() && (const act *)din != in);
    if (din)
        gemm("matmul_bwd (din)", 0, 0, In, N, Out, BFC(w), In, BFC(dout), Out, res, din, In, 0,
             a, res ? b : 0.0f, 0);
}

/* A mark after the weight gradients issued so far on the current device's
 * second stream (ops.h: wgrad_mark); -1 where there is none yet. */
long cuda_wgrad_mark(void)
{
    struct device_ctx *c = cuda_wgrad_beside() ? device_ctx("wgrad_mark") : NULL;
    if (!c || cuda_failed())
        return -1;
    CUDA_CHECK("wgrad_mark", cudaEventRecord(c->marks[c->n_marks % MARKS], c->side));
    return c->n_marks++;
}

/* The ops issued next wait for the weight gradients before mark; a mark
 * older than the ring's last MARKS has been recorded again since, later,
 * so waiting on its slot waits longer, never less. -1: all of them. */
void cuda_wgrad_join(long mark)
{
    if (!cuda_wgrad_beside() || cuda_failed())
        return;
    if (mark < 0)
        mark = cuda_wgrad_mark();
    if (mark < 0)
        return;
    struct device_ctx *c = device_ctx("wgrad_join");
    if (c)
        CUDA_CHECK("wgrad_join",
                   cudaStreamWaitEvent(cudaStreamPerThread, c->marks[mark % MARKS], 0));
}

extern "C" void ops_cuda_matmul_replan(int k)
{
    for (int d = 0; d < MAX_DEVICES; d++) {
        for (int i = 0; i < devices[d].n_plans; i++)
            drop_plan(&devices[d].plans[i]);
        devices[d].n_plans = devices[d].oldest = 0;
    }
    lt_settings_again(k);
}
