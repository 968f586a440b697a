/* cuBLASLt for the emulator: the entry points kernels/cuda/matmul.cu opens,
 * built as a library of the same name (libcublasLt.so.13) that the
 * emulated programs find first. D = α·op(A)·op(B) + β·C in column-major
 * order, bf16 or fp32 matrices, fp32 arithmetic (OpenBLAS's sgemm on the
 * operands widened to fp32), one rounding into D's type. What the real
 * library refuses is refused: layouts that do not fit the product,
 * leading dimensions below the rows, operands less aligned than the
 * preference promised, matrices or a workspace outside device memory, a
 * workspace smaller than the algorithm asks. The product runs through the
 * emulated runtime's stream (emu_enqueue), so a stream capture records it,
 * and a second stream's products run when that stream does. C is not read
 * when β is 0, as cuBLAS promises.
 *
 * Its heuristic offers several algorithms, as the real one does, each
 * computing the same product in another order, so that a choice between
 * them changes the bits and a test can tell which ran: no split of k; k
 * split in 2 or 4 with the partials in the workspace in fp32 (reduction
 * scheme COMPUTE_TYPE); split in 3 with the partials rounded to the
 * output's type (OUTPUT_TYPE); split in 2 accumulated in the output
 * itself (INPLACE). The last two round a bf16 output once a split, as the
 * real library's would; the preference's reduction-scheme mask keeps them
 * out, as the real heuristic's does. Each algorithm repeats its bits. */
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
    uint32_t schemes;  /* the reduction schemes allowed */
};
/* an algorithm: what it may assume, and how it splits k */
struct Algo {
    Pref promised;
    int32_t id, splitk;
    uint32_t scheme;
    uint64_t workspace; /* what it needs */
};

static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t), "a descriptor fits its opaque type");
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "a layout fits its opaque type");
static_assert(sizeof(Pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "a preference fits its opaque type");
static_assert(sizeof(Algo) <= sizeof(cublasLtMatmulAlgo_t), "an algorithm fits its opaque type");

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
    Algo algo;
    void *workspace;
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

float round_to(float v, cudaDataType_t t)
{
    return t == CUDA_R_32F ? v : __bfloat162float(__float2bfloat16_rn(v));
}

float load(const void *p, size_t at, cudaDataType_t t)
{
    return t == CUDA_R_32F ? static_cast<const float *>(p)[at]
                           : __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[at]);
}

void store(void *p, size_t at, cudaDataType_t t, float v)
{
    if (t == CUDA_R_32F)
        static_cast<float *>(p)[at] = v;
    else
        static_cast<__nv_bfloat16 *>(p)[at] = __float2bfloat16_rn(v);
}

/* op(A)·op(B) over k in [k0, k1), column-major m×n into out */
void partial(const Product &p, const std::vector<float> &A, const std::vector<float> &B, int k0,
             int k1, float *out)
{
    const float *a = A.data() + (p.ta ? k0 : (size_t)k0 * p.a.ld);
    const float *b = B.data() + (p.tb ? (size_t)k0 * p.b.ld : k0);
    cblas_sgemm(CblasColMajor, p.ta ? CblasTrans : CblasNoTrans, p.tb ? CblasTrans : CblasNoTrans,
                p.m, p.n, k1 - k0, 1.0f, a, (int)p.a.ld, b, (int)p.b.ld, 0.0f, out, p.m);
}

void run(void *ctx)
{
    const Product &p = *static_cast<Product *>(ctx);
    std::vector<float> A = widened(p.A, p.a), B = widened(p.B, p.b);
    const size_t mn = (size_t)p.m * p.n;
    const int splits = p.k < p.algo.splitk ? 1 : p.algo.splitk;
    auto cut = [&](int s) { return (int)((long)p.k * s / splits); };
    auto c_at = [&](int i, int j) {
        return p.beta != 0 ? p.beta * load(p.C, (size_t)j * p.c.ld + i, p.c.type) : 0.0f;
    };
    if (p.algo.scheme == CUBLASLT_REDUCTION_SCHEME_INPLACE) {
        /* each split added into D, rounded to D's type each time */
        std::vector<float> P(mn);
        for (int s = 0; s < splits; s++) {
            partial(p, A, B, cut(s), cut(s + 1), P.data());
            for (int j = 0; j < p.n; j++)
                for (int i = 0; i < p.m; i++) {
                    size_t dd = (size_t)j * p.d.ld + i;
                    float v = p.alpha * P[(size_t)j * p.m + i];
                    v += s == 0 ? c_at(i, j) : load(p.D, dd, p.d.type);
                    store(p.D, dd, p.d.type, v);
                }
        }
        return;
    }
    /* the partials in the workspace (fp32, or the output's type), added in order */
    float *parts = splits > 1 ? static_cast<float *>(p.workspace) : nullptr;
    std::vector<float> whole;
    if (!parts) {
        whole.resize(mn);
        parts = whole.data();
    }
    for (int s = 0; s < splits; s++) {
        float *out = parts + s * mn;
        partial(p, A, B, cut(s), cut(s + 1), out);
        if (p.algo.scheme == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE)
            for (size_t i = 0; i < mn; i++)
                out[i] = round_to(p.alpha * out[i], p.d.type);
    }
    const float scale = p.algo.scheme == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE ? 1.0f : p.alpha;
    for (int j = 0; j < p.n; j++)
        for (int i = 0; i < p.m; i++) {
            size_t at = (size_t)j * p.m + i;
            float sum = parts[at];
            for (int s = 1; s < splits; s++)
                sum += parts[s * mn + at];
            store(p.D, (size_t)j * p.d.ld + i, p.d.type, scale * sum + c_at(i, j));
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

size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }

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
    /* unless told, cuBLASLt assumes operands aligned to 256 bytes, and
     * allows every reduction scheme */
    *pref(*p) = Pref{0, {256, 256, 256, 256}, CUBLASLT_REDUCTION_SCHEME_MASK};
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
    if (attr == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK) {
        if (size != sizeof(uint32_t))
            return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&pref(p)->schemes, buf, size);
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

/* The algorithms, in the heuristic's order: what each does with k (run
 * above) and which of them the preference allows (its schemes, its
 * workspace) for a product of m×n over k. */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t dd,
                                              cublasLtMatrixLayout_t al, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t dl,
                                              cublasLtMatmulPreference_t p, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *found)
{
    if (requested < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    const Layout &a = *layout(al), &d = *layout(dl);
    const uint64_t k = desc(dd)->ta == CUBLAS_OP_T ? a.rows : a.cols, mn = d.rows * d.cols;
    static const struct {
        int32_t splitk;
        uint32_t scheme;
        uint64_t counters;
    } ALGOS[] = {{1, CUBLASLT_REDUCTION_SCHEME_NONE, 0},
                 {2, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, 0},
                 {4, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, 0},
                 {3, CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE, 0},
                 {2, CUBLASLT_REDUCTION_SCHEME_INPLACE, 256}};
    int n = 0;
    for (int i = 0; i < (int)(sizeof ALGOS / sizeof ALGOS[0]) && n < requested; i++) {
        Algo g{*pref(p), i, ALGOS[i].splitk, ALGOS[i].scheme, ALGOS[i].counters};
        if (g.splitk > 1 && g.scheme != CUBLASLT_REDUCTION_SCHEME_INPLACE)
            g.workspace = (uint64_t)g.splitk * mn * sizeof(float);
        if ((uint64_t)g.splitk > k || g.workspace > g.promised.workspace ||
            (g.scheme != CUBLASLT_REDUCTION_SCHEME_NONE && !(g.scheme & g.promised.schemes)))
            continue;
        std::memset(&results[n], 0, sizeof results[n]);
        std::memcpy(results[n].algo.data, &g, sizeof g);
        results[n].workspaceSize = g.workspace;
        results[n].state = CUBLAS_STATUS_SUCCESS;
        results[n].wavesCount = 1;
        n++;
    }
    *found = n;
    return CUBLAS_STATUS_SUCCESS;
}

/* what the real library reports of an algorithm, each at its type's size */
cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    void *buf, size_t size, size_t *written)
{
    Algo g;
    std::memcpy(&g, algo->data, sizeof g);
    int32_t i32 = 0;
    uint32_t u32 = 0;
    uint16_t u16 = 0;
    const void *v;
    size_t n;
    switch (attr) {
    case CUBLASLT_ALGO_CONFIG_ID:
        i32 = g.id;
        v = &i32, n = sizeof i32;
        break;
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
        i32 = g.splitk;
        v = &i32, n = sizeof i32;
        break;
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
        u32 = 20 + (uint32_t)g.id;
        v = &u32, n = sizeof u32;
        break;
    case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME:
        u32 = g.scheme;
        v = &u32, n = sizeof u32;
        break;
    case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
    case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
        v = &u32, n = sizeof u32;
        break;
    case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
    case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
        v = &u16, n = sizeof u16;
        break;
    default:
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (size == 0) {
        if (!written)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = n;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || size != n)
        return refuse("an algorithm's attribute asked for at another size than its type's");
    std::memcpy(buf, v, n);
    if (written)
        *written = n;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t dd, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t al, const void *B,
                              cublasLtMatrixLayout_t bl, const void *beta, const void *C,
                              cublasLtMatrixLayout_t cl, void *D, cublasLtMatrixLayout_t dl,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspace_bytes, cudaStream_t stream)
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
    std::memcpy(&p->algo, algo->data, sizeof p->algo);
    p->workspace = workspace;
    if (!bad && p->algo.workspace > workspace_bytes)
        bad = "a workspace smaller than the algorithm needs";
    else if (!bad && p->algo.workspace && !emu_device_span(workspace, p->algo.workspace))
        bad = "the workspace is not in device memory";
    if (!bad) {
        const Pref &promised = p->algo.promised;
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
