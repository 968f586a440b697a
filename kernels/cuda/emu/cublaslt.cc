/* cuBLASLt for the emulator: the entry points kernels/cuda/matmul.cu opens,
 * built as a library of the same name (libcublasLt.so.13) that the
 * emulated programs find first. D = α·op(A)·op(B) + β·C in column-major
 * order, bf16 or fp32 matrices, fp32 arithmetic (OpenBLAS's sgemm on the
 * operands widened to fp32), one rounding into D's type. What the real
 * library refuses is refused: layouts that do not fit the product,
 * leading dimensions below the rows, operands less aligned than the
 * preference promised, matrices outside device memory. The product runs
 * through the emulated runtime's stream (emu_enqueue), so a stream capture
 * records it. C is not read when β is 0, as cuBLAS promises. */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cblas.h>
#include <cublasLt.h>
#include <cuda_bf16.h>

/* the emulated runtime's, resolved from the program that opens this library */
extern "C" bool emu_device_span(const void *p, size_t bytes);
extern "C" int emu_enqueue(cudaStream_t stream, void (*run)(void *), void *ctx,
                           void (*release)(void *));

struct cublasLtContext {
    int unused;
};

namespace {

struct Desc {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t ta, tb;
};
struct Layout {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
};
struct Pref {
    uint64_t workspace;
    uint32_t align[4]; /* A, B, C, D */
};

static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t), "a descriptor fits its opaque type");
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "a layout fits its opaque type");
static_assert(sizeof(Pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "a preference fits its opaque type");
static_assert(sizeof(Pref) <= sizeof(cublasLtMatmulAlgo_t), "the algorithm keeps the preference");

Desc *desc(cublasLtMatmulDesc_t d) { return reinterpret_cast<Desc *>(d->data); }
Layout *layout(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout *>(l->data); }
Pref *pref(cublasLtMatmulPreference_t p) { return reinterpret_cast<Pref *>(p->data); }

size_t elem(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

bool supported(cudaDataType_t t) { return t == CUDA_R_32F || t == CUDA_R_16BF; }

cublasStatus_t refuse(const char *why)
{
    fprintf(stderr, "cuBLASLt (emulated): %s\n", why);
    return CUBLAS_STATUS_INVALID_VALUE;
}

/* the matrix's bytes from its first element to its last */
size_t span(const Layout &l) { return ((size_t)l.ld * (l.cols - 1) + l.rows) * elem(l.type); }

uint32_t alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t bytes = 1;
    while (bytes < 256 && a % (2 * bytes) == 0)
        bytes *= 2;
    return bytes;
}

/* one product, with its operands' values as they are when it runs */
struct Product {
    bool ta, tb;
    int m, n, k;
    float alpha, beta;
    const void *A, *B, *C;
    void *D;
    Layout a, b, c, d;
};

std::vector<float> widened(const void *p, const Layout &l)
{
    std::vector<float> out((size_t)l.ld * l.cols);
    for (uint64_t j = 0; j < l.cols; j++)
        for (uint64_t i = 0; i < l.rows; i++) {
            size_t at = (size_t)j * l.ld + i;
            out[at] = l.type == CUDA_R_32F ? static_cast<const float *>(p)[at]
                                           : __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[at]);
        }
    return out;
}

void run(void *ctx)
{
    const Product &p = *static_cast<Product *>(ctx);
    std::vector<float> A = widened(p.A, p.a), B = widened(p.B, p.b),
                       AB((size_t)p.m * p.n);
    cblas_sgemm(CblasColMajor, p.ta ? CblasTrans : CblasNoTrans, p.tb ? CblasTrans : CblasNoTrans,
                p.m, p.n, p.k, 1.0f, A.data(), (int)p.a.ld, B.data(), (int)p.b.ld, 0.0f, AB.data(),
                p.m);
    for (int j = 0; j < p.n; j++)
        for (int i = 0; i < p.m; i++) {
            size_t cd = (size_t)j * p.c.ld + i, dd = (size_t)j * p.d.ld + i;
            float v = p.alpha * AB[(size_t)j * p.m + i];
            if (p.beta != 0)
                v += p.beta * (p.c.type == CUDA_R_32F
                                   ? static_cast<const float *>(p.C)[cd]
                                   : __bfloat162float(static_cast<const __nv_bfloat16 *>(p.C)[cd]));
            if (p.d.type == CUDA_R_32F)
                static_cast<float *>(p.D)[dd] = v;
            else
                static_cast<__nv_bfloat16 *>(p.D)[dd] = __float2bfloat16_rn(v);
        }
}

void release(void *ctx) { delete static_cast<Product *>(ctx); }

} /* namespace */

extern "C" {

const char *cublasLtGetStatusString(cublasStatus_t s)
{
    switch (s) {
#define NAME(x)                                                                                \
    case x:                                                                                    \
        return #x;
        NAME(CUBLAS_STATUS_SUCCESS)
        NAME(CUBLAS_STATUS_INVALID_VALUE)
        NAME(CUBLAS_STATUS_NOT_SUPPORTED)
        NAME(CUBLAS_STATUS_EXECUTION_FAILED)
#undef NAME
    default:
        return "CUBLAS_STATUS_UNKNOWN (emulated cuBLASLt)";
    }
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = new cublasLtContext{0};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    if (compute != CUBLAS_COMPUTE_32F || scale != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    *d = new cublasLtMatmulDescOpaque_t{};
    *desc(*d) = Desc{compute, scale, CUBLAS_OP_N, CUBLAS_OP_N};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t size)
{
    if (!buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB: {
        int32_t v;
        if (size != sizeof v)
            return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&v, buf, sizeof v);
        if (v != CUBLAS_OP_N && v != CUBLAS_OP_T)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        (attr == CUBLASLT_MATMUL_DESC_TRANSA ? desc(d)->ta : desc(d)->tb) = (cublasOperation_t)v;
        return CUBLAS_STATUS_SUCCESS;
    }
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    delete d;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!supported(type))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (ld < (int64_t)rows || ld < 1)
        return refuse("a leading dimension below the rows");
    *l = new cublasLtMatrixLayoutOpaque_t{};
    *layout(*l) = Layout{type, rows, cols, ld};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    delete l;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    *p = new cublasLtMatmulPreferenceOpaque_t{};
    /* unless told, cuBLASLt assumes operands aligned to 256 bytes */
    *pref(*p) = Pref{0, {256, 256, 256, 256}};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size)
{
    if (!buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (size != sizeof(uint64_t))
            return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&pref(p)->workspace, buf, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    int i = attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES   ? 0
            : attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES ? 1
            : attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES ? 2
            : attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES ? 3
                                                                 : -1;
    if (i < 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (size != sizeof(uint32_t))
        return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&pref(p)->align[i], buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    delete p;
    return CUBLAS_STATUS_SUCCESS;
}

/* one "algorithm": it remembers the alignments it may assume */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatmulPreference_t p, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *found)
{
    if (requested < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    std::memset(&results[0], 0, sizeof results[0]);
    std::memcpy(results[0].algo.data, pref(p), sizeof(Pref));
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1;
    *found = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t dd, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t al, const void *B,
                              cublasLtMatrixLayout_t bl, const void *beta, const void *C,
                              cublasLtMatrixLayout_t cl, void *D, cublasLtMatrixLayout_t dl,
                              const cublasLtMatmulAlgo_t *algo, void *, size_t, cudaStream_t stream)
{
    const Desc &ds = *desc(dd);
    Product *p = new Product{};
    p->ta = ds.ta == CUBLAS_OP_T;
    p->tb = ds.tb == CUBLAS_OP_T;
    p->a = *layout(al);
    p->b = *layout(bl);
    p->c = *layout(cl);
    p->d = *layout(dl);
    p->m = (int)p->d.rows;
    p->n = (int)p->d.cols;
    p->k = (int)(p->ta ? p->a.rows : p->a.cols);
    std::memcpy(&p->alpha, alpha, sizeof(float));
    std::memcpy(&p->beta, beta, sizeof(float));
    p->A = A;
    p->B = B;
    p->C = C;
    p->D = D;
    const char *bad = nullptr;
    if ((p->ta ? p->a.cols : p->a.rows) != (uint64_t)p->m)
        bad = "op(A) has not D's rows";
    else if ((p->tb ? p->b.rows : p->b.cols) != (uint64_t)p->n)
        bad = "op(B) has not D's columns";
    else if ((p->tb ? p->b.cols : p->b.rows) != (uint64_t)p->k)
        bad = "op(A)'s columns are not op(B)'s rows";
    else if (p->c.rows != p->d.rows || p->c.cols != p->d.cols || p->c.type != p->d.type)
        bad = "C's layout is not D's";
    else if (p->a.type != CUDA_R_16BF || p->b.type != CUDA_R_16BF)
        bad = "A and B are not bf16";
    if (!bad) {
        Pref promised;
        std::memcpy(&promised, algo->data, sizeof promised);
        const void *ptr[4] = {A, B, C, D};
        const Layout *lay[4] = {&p->a, &p->b, &p->c, &p->d};
        static const char *const NAMES[4] = {"A", "B", "C", "D"};
        for (int i = 0; i < 4 && !bad; i++) {
            if (i == 2 && p->beta == 0)
                continue;
            if (alignment(ptr[i]) < promised.align[i]) {
                static char why[120];
                snprintf(why, sizeof why, "%s at %p is less aligned than the %u bytes promised",
                         NAMES[i], ptr[i], promised.align[i]);
                bad = why;
            } else if (!emu_device_span(ptr[i], span(*lay[i]))) {
                static char why[120];
                snprintf(why, sizeof why, "%s (%zu bytes at %p) is not in device memory", NAMES[i],
                         span(*lay[i]), ptr[i]);
                bad = why;
            }
        }
    }
    if (bad) {
        delete p;
        return refuse(bad);
    }
    if (emu_enqueue(stream, run, p, release) != 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

} /* extern "C" */
