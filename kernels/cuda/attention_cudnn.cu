/* Causal attention through cuDNN's fused flash attention, forward and
 * backward, built with cuDNN's backend graph API (cudnn_graph.h): a graph
 * of matmuls, pointwise ops and reductions that cuDNN recognises as
 * scaled dot-product attention and runs as one fused kernel each way.
 * attention.cu chooses between it and cod's own kernels.
 *
 * cuDNN is opened with dlopen (libcudnn.so.9, on the loader's path or in
 * the toolkit the build used) at the first attention that may use it, so
 * the programs start where it is absent; the version is read first, and
 * 9.10.0, 9.10.1 and 9.14.0 (known attention bugs) are refused, as is any
 * library of another major version. Its runtime-compiled engines load
 * libnvrtc themselves (libnvrtc.so.N for the CUDA major version N that
 * cuDNN was built for, then libnvrtc.so); without it those engines fail to
 * build, and the shape is refused with cuDNN's words.
 *
 * Layout, as cod's other attention kernels have it (attention.cu): q, k, v
 * come packed in rows [q | k | v] of 3·nh·hd (bf16); the forward first
 * writes q and k rotated (rope.cu) into the attention's state, rows of
 * 2·nh·hd, where the graphs read them in place through strides, v from
 * qkv itself; out is [B·T][nh·hd]. The softmax statistics (the logsumexp
 * of each query row, natural log, fp32) go to the state's lse, [B·nh·T],
 * which the tensor-core kernels write and read the same way: so either
 * side of a forward and backward pair may be cuDNN and the other cod's.
 * The backward writes dQ, dK and dV into the packed dqkv, then turns dQ
 * and dK back through the transposed rotation (the gradients of q and k as
 * the projection made them), and keeps rowsum(dO ⊙ O) in the state's D.
 *
 * The graphs, per shape (batch B, heads nh, sequence T, head size hd), as
 * cuDNN's own frontend lowers its SDPA node:
 *   forward   S = scale·Q·Kᵀ; rows ≥ columns kept, the rest −∞ (index
 *             generation, a comparison, a select); M = rowmax S,
 *             E = exp(S − M), Z = rowsum E; lse = M + log Z; O = (E/Z)·V
 *             with E/Z rounded to bf16
 *   backward  D = rowsum(dO ⊙ O); P = exp(scale·Q·Kᵀ − lse), masked;
 *             dV = Pᵀ·dO; dS = scale·P ⊙ (dO·Vᵀ − D); dK = dSᵀ·Q; dQ = dS·K
 * The backward's dQ is a product of its own (the "dP workspace" form, which
 * cuDNN's frontend builds when asked for a deterministic backward): its
 * other form accumulates dQ across blocks with atomic adds, and a run
 * would no longer repeat bit for bit (README, "Repeatable runs").
 * Each graph is built once per shape and device and kept (engine found by
 * cuDNN's heuristics, execution plan finalised); a shape cuDNN refuses is
 * kept as refused, with why. The plans' workspace is cod's scratch memory
 * (memory.cu), so a recorded step (graph.cu) replays cuDNN's kernels as it
 * does cod's: the plan and its workspace are fixed before the recording,
 * and a shape not yet built fails the recording rather than building
 * inside it. Every cuDNN call is checked; a failure while building is a
 * refusal naming the call, one while running a fault naming it. */
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>

#include <cudnn_graph.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/internal.h"

static_assert(CUDNN_MAJOR == 9, "the graphs are written for cuDNN 9's backend API");
#ifndef COD_CUDNN_SONAME /* the emulator names one that is never there (emu.h) */
#define COD_CUDNN_SONAME "libcudnn.so.9"
#endif

/* the entry points used, resolved from the library by name */
static struct {
    void *lib;
    int tried;
    char why[768]; /* why it cannot be used, once tried */
    size_t version;
    char name[32]; /* "cuDNN 9.19.0" */
    decltype(&cudnnGetVersion) GetVersion;
    decltype(&cudnnGetErrorString) GetErrorString;
    decltype(&cudnnGetLastErrorString) GetLastErrorString;
    decltype(&cudnnCreate) Create;
    decltype(&cudnnSetStream) SetStream;
    decltype(&cudnnBackendCreateDescriptor) CreateDescriptor;
    decltype(&cudnnBackendDestroyDescriptor) DestroyDescriptor;
    decltype(&cudnnBackendSetAttribute) SetAttribute;
    decltype(&cudnnBackendGetAttribute) GetAttribute;
    decltype(&cudnnBackendFinalize) Finalize;
    decltype(&cudnnBackendExecute) Execute;
} dn;

/* cuDNN's message about its last failure, on one line (it runs over several) */
static void last_error(char *s, size_t n)
{
    s[0] = 0;
    dn.GetLastErrorString(s, n);
    for (char *c = s; *c; c++)
        if (*c == '\n')
            *c = ' ';
}

/* "CALL: CUDNN_STATUS_…: cuDNN's own message" */
static void describe(cudnnStatus_t s, const char *call, char *why, size_t n)
{
    char detail[400];
    last_error(detail, sizeof detail);
    snprintf(why, n, "%s: %s%s%s", call, dn.GetErrorString(s), detail[0] ? ": " : "", detail);
}

extern "C" int ops_cuda_cudnn_version_refused(size_t v, char *why, size_t n)
{
    /* attention bugs in these releases: its backward (9.10.0, 9.10.1), a
     * sliding-window mask (9.14.0); cuDNN's frontend refuses them too */
    static const size_t buggy[] = {91000, 91001, 91400};
    unsigned major = (unsigned)(v / 10000), minor = (unsigned)(v / 100 % 100),
             patch = (unsigned)(v % 100);
    if (major != 9) {
        snprintf(why, n, "cuDNN version %zu: cod's graphs are written for cuDNN 9", v);
        return -1;
    }
    for (size_t i = 0; i < sizeof buggy / sizeof buggy[0]; i++)
        if (v == buggy[i]) {
            snprintf(why, n, "cuDNN %u.%u.%u has known attention bugs (refused: 9.10.0, "
                             "9.10.1, 9.14.0)",
                     major, minor, patch);
            return -1;
        }
    return 0;
}

/* 0 once cuDNN is loaded and its version accepted; -1 with why (the same
 * answer ever after: a missing library does not appear mid-run) */
static int load_cudnn(char *why, size_t n)
{
    if (!dn.tried) {
        dn.tried = 1;
        const struct cuda_symbol syms[] = {
            {(void **)&dn.GetVersion, "cudnnGetVersion"},
            {(void **)&dn.GetErrorString, "cudnnGetErrorString"},
            {(void **)&dn.GetLastErrorString, "cudnnGetLastErrorString"},
            {(void **)&dn.Create, "cudnnCreate"},
            {(void **)&dn.SetStream, "cudnnSetStream"},
            {(void **)&dn.CreateDescriptor, "cudnnBackendCreateDescriptor"},
            {(void **)&dn.DestroyDescriptor, "cudnnBackendDestroyDescriptor"},
            {(void **)&dn.SetAttribute, "cudnnBackendSetAttribute"},
            {(void **)&dn.GetAttribute, "cudnnBackendGetAttribute"},
            {(void **)&dn.Finalize, "cudnnBackendFinalize"},
            {(void **)&dn.Execute, "cudnnBackendExecute"},
        };
        dn.lib = cuda_open_library(COD_CUDNN_SONAME, "cuDNN, for attention", syms,
                                   sizeof syms / sizeof syms[0], dn.why, sizeof dn.why);
        if (dn.lib) {
            dn.version = dn.GetVersion();
            snprintf(dn.name, sizeof dn.name, "cuDNN %u.%u.%u", (unsigned)(dn.version / 10000),
                     (unsigned)(dn.version / 100 % 100), (unsigned)(dn.version % 100));
            if (ops_cuda_cudnn_version_refused(dn.version, dn.why, sizeof dn.why) != 0) {
                dlclose(dn.lib);
                dn.lib = NULL;
            }
        }
    }
    if (!dn.lib)
        snprintf(why, n, "%s", dn.why);
    return dn.lib ? 0 : -1;
}

const char *cuda_cudnn_name(void) { return dn.lib ? dn.name : "cuDNN"; }

/* ---- a graph and the descriptors it holds ---- */

enum { MAX_DESCS = 96, MAX_DEVICES = 16, MAX_SHAPES = 32 };

struct graph {
    cudnnBackendDescriptor_t plan;
    int64_t workspace;
    cudnnBackendDescriptor_t held[MAX_DESCS]; /* everything the plan was made of */
    int n_held;
};

/* its descriptors destroyed: 0, or -1 with why naming the failed call */
static int drop_graph(struct graph *g, char *why, size_t n)
{
    cudnnStatus_t first = CUDNN_STATUS_SUCCESS;
    for (int i = g->n_held - 1; i >= 0; i--) {
        cudnnStatus_t s = dn.DestroyDescriptor(g->held[i]);
        if (first == CUDNN_STATUS_SUCCESS && s != CUDNN_STATUS_SUCCESS) {
            first = s;
            describe(s, "cudnnBackendDestroyDescriptor", why, n);
        }
    }
    memset(g, 0, sizeof *g);
    return first == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

/* Building one graph: the first failure is kept, naming the call, and
 * every later step does nothing. */
struct builder {
    struct graph *g;
    cudnnHandle_t handle;
    cudnnBackendDescriptor_t device; /* or a described device's properties */
    char *why;
    size_t whylen;
    bool failed;
};

static bool ok(struct builder &b, cudnnStatus_t s, const char *call, const char *what)
{
    if (b.failed)
        return false;
    if (s == CUDNN_STATUS_SUCCESS)
        return true;
    char named[160];
    snprintf(named, sizeof named, "%s (%s)", call, what);
    describe(s, named, b.why, b.whylen);
    b.failed = true;
    return false;
}

static cudnnBackendDescriptor_t make(struct builder &b, cudnnBackendDescriptorType_t type,
                                     const char *what)
{
    cudnnBackendDescriptor_t d = NULL;
    if (b.failed)
        return NULL;
    if (b.g->n_held == MAX_DESCS) {
        snprintf(b.why, b.whylen, "more than %d cuDNN descriptors in one graph", (int)MAX_DESCS);
        b.failed = true;
        return NULL;
    }
    if (!ok(b, dn.CreateDescriptor(type, &d), "cudnnBackendCreateDescriptor", what))
        return NULL;
    b.g->held[b.g->n_held++] = d;
    return d;
}

static void set(struct builder &b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr,
                cudnnBackendAttributeType_t type, int64_t count, const void *value,
                const char *what)
{
    if (!b.failed)
        ok(b, dn.SetAttribute(d, attr, type, count, value), "cudnnBackendSetAttribute", what);
}

static void finish(struct builder &b, cudnnBackendDescriptor_t d, const char *what)
{
    if (!b.failed)
        ok(b, dn.Finalize(d), "cudnnBackendFinalize", what);
}

/* a descriptor the graph does not keep, destroyed (a failure fails the
 * graph, unless it has failed already) */
static void discard(struct builder &b, cudnnBackendDescriptor_t d, const char *what)
{
    cudnnStatus_t s = dn.DestroyDescriptor(d);
    if (!b.failed)
        ok(b, s, "cudnnBackendDestroyDescriptor", what);
}

/* 4-d tensors only: [batch, head, rows, columns] */
struct tdesc {
    int64_t uid;
    cudnnDataType_t type;
    int64_t dim[4], stride[4];
    bool is_virtual, by_value;
};

static cudnnBackendDescriptor_t tensor(struct builder &b, const struct tdesc &t, const char *what)
{
    cudnnBackendDescriptor_t d = make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
    const int64_t align = 16;
    set(b, d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &t.type, what);
    set(b, d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, t.dim, what);
    set(b, d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, t.stride, what);
    set(b, d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid, what);
    set(b, d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, what);
    if (t.is_virtual)
        set(b, d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &t.is_virtual, what);
    if (t.by_value)
        set(b, d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &t.by_value, what);
    finish(b, d, what);
    return d;
}

/* An operation: its descriptor of type with each (attribute, descriptor)
 * of links set, the absent (NULL) left out, then finalised. */
struct link {
    cudnnBackendAttributeName_t attr;
    cudnnBackendDescriptor_t d;
};

static cudnnBackendDescriptor_t operation(struct builder &b, cudnnBackendDescriptorType_t type,
                                          const struct link *links, int n, const char *what)
{
    cudnnBackendDescriptor_t op = make(b, type, what);
    for (int i = 0; i < n; i++)
        if (links[i].d)
            set(b, op, links[i].attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &links[i].d, what);
    return op;
}

/* y = mode(x[, in1[, in2]]): in1 is the second operand (b), in2 the
 * select's condition (t); axis for index generation */
static cudnnBackendDescriptor_t pointwise(struct builder &b, cudnnPointwiseMode_t mode,
                                          cudnnDataType_t prec, cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t in1,
                                          cudnnBackendDescriptor_t in2,
                                          cudnnBackendDescriptor_t y, const char *what,
                                          int64_t axis = -1)
{
    cudnnBackendDescriptor_t pw = make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
    set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
    set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, what);
    if (axis >= 0)
        set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
    finish(b, pw, what);
    const struct link links[] = {{CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw},
                                 {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x},
                                 {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, in1},
                                 {CUDNN_ATTR_OPERATION_POINTWISE_TDESC, in2},
                                 {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y}};
    cudnnBackendDescriptor_t op =
        operation(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, links, 5, what);
    const float one = 1.0f;
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one, what);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one, what);
    finish(b, op, what);
    return op;
}

/* c = a·b over the last two dimensions, fp32 accumulation */
static cudnnBackendDescriptor_t matmul(struct builder &b, cudnnBackendDescriptor_t a,
                                       cudnnBackendDescriptor_t bm, cudnnBackendDescriptor_t c,
                                       const char *what)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = make(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
    set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, what);
    finish(b, mm, what);
    const struct link links[] = {{CUDNN_ATTR_OPERATION_MATMUL_ADESC, a},
                                 {CUDNN_ATTR_OPERATION_MATMUL_BDESC, bm},
                                 {CUDNN_ATTR_OPERATION_MATMUL_CDESC, c},
                                 {CUDNN_ATTR_OPERATION_MATMUL_DESC, mm}};
    cudnnBackendDescriptor_t op =
        operation(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, links, 4, what);
    finish(b, op, what);
    return op;
}

/* y = reduce(x) over the dimensions where y has 1 */
static cudnnBackendDescriptor_t reduction(struct builder &b, cudnnReduceTensorOp_t mode,
                                          cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                                          const char *what)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = make(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
    set(b, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32, what);
    set(b, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, what);
    finish(b, rd, what);
    const struct link links[] = {{CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd},
                                 {CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x},
                                 {CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y}};
    cudnnBackendDescriptor_t op =
        operation(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, links, 3, what);
    finish(b, op, what);
    return op;
}

/* y: x seen through other dimensions and strides (a transpose) */
static cudnnBackendDescriptor_t reshape(struct builder &b, cudnnBackendDescriptor_t x,
                                        cudnnBackendDescriptor_t y, const char *what)
{
    const struct link links[] = {{CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x},
                                 {CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y}};
    cudnnBackendDescriptor_t op =
        operation(b, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, links, 2, what);
    finish(b, op, what);
    return op;
}

/* An execution plan of one engine configuration, on the handle, or for
 * the device that b.device describes (the check without a GPU, where it is
 * not kept); its status. */
static cudnnStatus_t try_plan(struct builder &b, cudnnBackendDescriptor_t cfg,
                              cudnnBackendDescriptor_t *plan, int64_t *workspace)
{
    cudnnBackendDescriptor_t p = NULL;
    int64_t n = 0;
    cudnnStatus_t s = dn.CreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p);
    if (s == CUDNN_STATUS_SUCCESS)
        s = b.device ? dn.SetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b.device)
                     : dn.SetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                       &b.handle);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dn.SetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dn.Finalize(p);
    if (s == CUDNN_STATUS_SUCCESS && !b.device)
        s = dn.GetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                            workspace);
    if (s == CUDNN_STATUS_SUCCESS && !b.device) {
        *plan = p;
        return s;
    }
    if (p)
        discard(b, p, "an execution plan not kept");
    return s;
}

/* The operation graph of ops, then the first engine configuration cuDNN's
 * heuristics offer (mode A, then its fallback list) that finalises as an
 * execution plan: that plan and its workspace size are kept. For a
 * described device, the first whose kernels cuDNN compiles: without a
 * driver, loading them is where its plan fails. */
static void plan(struct builder &b, cudnnBackendDescriptor_t *ops, int n_ops, const char *what)
{
    cudnnBackendDescriptor_t og = make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what);
    if (!b.device)
        set(b, og, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &b.handle, what);
    set(b, og, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops, what);
    finish(b, og, what);
    const cudnnBackendHeurMode_t modes[] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    char last[600] = "";
    bool done = false;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0] && !b.failed && !done; m++) {
        cudnnBackendDescriptor_t heur = make(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what);
        set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &og,
            what);
        set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[m], what);
        if (b.device)
            set(b, heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                &b.device, what);
        finish(b, heur, what);
        int64_t count = 0, got = 0;
        if (!b.failed)
            ok(b, dn.GetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL),
               "cudnnBackendGetAttribute", "the heuristics' count");
        const int64_t MAX_CONFIGS = 16;
        cudnnBackendDescriptor_t cfg[MAX_CONFIGS];
        int made = 0;
        while (!b.failed && made < count && made < MAX_CONFIGS &&
               ok(b, dn.CreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[made]),
                  "cudnnBackendCreateDescriptor", "an engine configuration"))
            made++;
        if (!b.failed)
            ok(b, dn.GetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &got, cfg),
               "cudnnBackendGetAttribute", "the heuristics' engine configurations");
        if (!b.failed && got == 0 && count > 0) {
            /* cuDNN's own checks turned every engine down: its last words say why */
            char detail[400];
            last_error(detail, sizeof detail);
            snprintf(last, sizeof last,
                     "the heuristics' %lld engine configurations fail cuDNN's checks: %s",
                     (long long)count, detail);
        }
        int kept = -1;
        for (int i = 0; !b.failed && i < got && !done; i++) {
            cudnnBackendDescriptor_t p = NULL;
            int64_t ws = 0;
            cudnnStatus_t s = try_plan(b, cfg[i], &p, &ws);
            done = s == CUDNN_STATUS_SUCCESS ||
                   (b.device && s == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER);
            if (p && b.g->n_held + 2 <= MAX_DESCS) {
                kept = i;
                b.g->held[b.g->n_held++] = cfg[i];
                b.g->held[b.g->n_held++] = b.g->plan = p;
                b.g->workspace = ws;
            } else if (p) {
                discard(b, p, "an execution plan not kept");
                if (!b.failed)
                    snprintf(b.why, b.whylen, "more than %d cuDNN descriptors in one graph",
                             (int)MAX_DESCS);
                b.failed = true;
            } else if (!done) {
                /* this engine cannot run the graph here: the next may */
                char call[96];
                snprintf(call, sizeof call, "execution plan of engine configuration %d", i);
                describe(s, call, last, sizeof last);
            }
        }
        for (int i = 0; i < made; i++)
            if (i != kept)
                discard(b, cfg[i], "an engine configuration not kept");
    }
    if (!b.failed && !done) {
        snprintf(b.why, b.whylen, "no cuDNN engine runs the %s graph%s%s", what,
                 last[0] ? ": " : "", last);
        b.failed = true;
    }
}

/* tensor ids of the graphs' inputs and outputs (the variant packs') */
enum {
    U_Q = 1, U_K, U_V, U_O, U_STATS, U_DO, U_DQ, U_DK, U_DV, U_SUM, U_SCALE, U_NEG_INF, U_ONE,
    U_VIRTUAL = 100, /* and up: tensors between the ops */
};

/* what both graphs share: shapes and strides in the packed buffers */
struct shape_desc {
    int64_t B, T, nh, hd;
    struct tdesc q, kt, v, vt, o, stats, scale, neg_inf;
    int64_t uid; /* the next virtual tensor's */
};

static struct shape_desc describe_shape(int B, int T, int nh, int hd)
{
    const cudnnDataType_t bf = CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT;
    int64_t b = B, s = T, h = nh, d = hd, rot = 2 * h * d, pk = 3 * h * d;
    struct shape_desc sd = {};
    sd.B = b, sd.T = s, sd.nh = h, sd.hd = d;
    /* q and k rotated in the state, rows of 2·nh·hd; Kᵀ: k with its last two
     * dimensions swapped */
    sd.q = {U_Q, bf, {b, h, s, d}, {s * rot, d, rot, 1}, false, false};
    sd.kt = {U_K, bf, {b, h, d, s}, {s * rot, d, 1, rot}, false, false};
    /* v in the packed qkv, rows of 3·nh·hd */
    sd.v = {U_V, bf, {b, h, s, d}, {s * pk, d, pk, 1}, false, false};
    sd.vt = {U_V, bf, {b, h, d, s}, {s * pk, d, 1, pk}, false, false};
    sd.o = {U_O, bf, {b, h, s, d}, {s * h * d, d, h * d, 1}, false, false};
    sd.stats = {U_STATS, f32, {b, h, s, 1}, {h * s, s, 1, 1}, false, false};
    sd.scale = {U_SCALE, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true};
    sd.neg_inf = {U_NEG_INF, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true};
    sd.uid = U_VIRTUAL;
    return sd;
}

/* a tensor between two ops: [B, nh, T, cols] in row-major order */
static cudnnBackendDescriptor_t between(struct builder &b, struct shape_desc &sd,
                                        cudnnDataType_t type, int64_t cols, const char *what)
{
    struct tdesc t = {sd.uid++, type, {sd.B, sd.nh, sd.T, cols},
                      {sd.nh * sd.T * cols, sd.T * cols, cols, 1}, true, false};
    return tensor(b, t, what);
}

/* scores with the causal mask: entries of a column past the row −∞ */
static cudnnBackendDescriptor_t causal(struct builder &b, struct shape_desc &sd,
                                       cudnnBackendDescriptor_t s, cudnnBackendDescriptor_t neg_inf,
                                       cudnnBackendDescriptor_t *ops, int &n)
{
    cudnnBackendDescriptor_t row = between(b, sd, CUDNN_DATA_INT32, sd.T, "mask: row index"),
                             col = between(b, sd, CUDNN_DATA_INT32, sd.T, "mask: column index"),
                             keep = between(b, sd, CUDNN_DATA_BOOLEAN, sd.T, "mask: row ≥ col"),
                             out = between(b, sd, CUDNN_DATA_FLOAT, sd.T, "masked scores");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, s, NULL, NULL, row,
                         "mask: row index", 2);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, s, NULL, NULL, col,
                         "mask: column index", 3);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, NULL, keep,
                         "mask: row ≥ column");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s, neg_inf, keep, out,
                         "mask: select");
    return out;
}

static void build_forward(struct builder &b, int B, int T, int nh, int hd)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, bf = CUDNN_DATA_BFLOAT16;
    struct shape_desc sd = describe_shape(B, T, nh, hd);
    cudnnBackendDescriptor_t ops[24];
    int n = 0;
    cudnnBackendDescriptor_t q = tensor(b, sd.q, "Q"), kt = tensor(b, sd.kt, "Kᵀ"),
                             v = tensor(b, sd.v, "V"), o = tensor(b, sd.o, "O"),
                             lse = tensor(b, sd.stats, "the softmax statistics"),
                             scale = tensor(b, sd.scale, "the scale"),
                             neg_inf = tensor(b, sd.neg_inf, "−∞");
    cudnnBackendDescriptor_t qk = between(b, sd, f32, sd.T, "Q·Kᵀ"),
                             s = between(b, sd, f32, sd.T, "scaled scores");
    ops[n++] = matmul(b, q, kt, qk, "Q·Kᵀ");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, qk, scale, NULL, s, "scaled scores");
    cudnnBackendDescriptor_t sm = causal(b, sd, s, neg_inf, ops, n);
    cudnnBackendDescriptor_t mx = between(b, sd, f32, 1, "row max"),
                             sub = between(b, sd, f32, sd.T, "scores − row max"),
                             e = between(b, sd, f32, sd.T, "exp"),
                             z = between(b, sd, f32, 1, "row sum"),
                             logz = between(b, sd, f32, 1, "log row sum"),
                             p = between(b, sd, bf, sd.T, "P");
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_MAX, sm, mx, "row max");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_SUB, f32, sm, mx, NULL, sub, "scores − row max");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_EXP, f32, sub, NULL, NULL, e, "exp");
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_ADD, e, z, "row sum");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_LOG, f32, z, NULL, NULL, logz, "log row sum");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_ADD, f32, mx, logz, NULL, lse, "logsumexp");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_DIV, f32, e, z, NULL, p, "P");
    ops[n++] = matmul(b, p, v, o, "P·V");
    plan(b, ops, n, "forward");
}

static void build_backward(struct builder &b, int B, int T, int nh, int hd)
{
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, bf = CUDNN_DATA_BFLOAT16;
    struct shape_desc sd = describe_shape(B, T, nh, hd);
    const int64_t bb = sd.B, h = sd.nh, s = sd.T, d = sd.hd, pk = 3 * h * d;
    cudnnBackendDescriptor_t ops[32];
    int n = 0;
    /* the gradients into the packed dqkv, as q, k and v are in qkv */
    struct tdesc dq_t = {U_DQ, bf, {bb, h, s, d}, {s * pk, d, pk, 1}, false, false},
                 dk_t = dq_t, dv_t = dq_t, do_t = sd.o, one_t = sd.scale,
                 sum_t = sd.stats;
    dk_t.uid = U_DK, dv_t.uid = U_DV, do_t.uid = U_DO, one_t.uid = U_ONE, sum_t.uid = U_SUM;
    cudnnBackendDescriptor_t q = tensor(b, sd.q, "Q"), kt = tensor(b, sd.kt, "Kᵀ"),
                             vt = tensor(b, sd.vt, "Vᵀ"), o = tensor(b, sd.o, "O"),
                             dout = tensor(b, do_t, "dO"),
                             lse = tensor(b, sd.stats, "the softmax statistics"),
                             dq = tensor(b, dq_t, "dQ"), dk = tensor(b, dk_t, "dK"),
                             dv = tensor(b, dv_t, "dV"), sum = tensor(b, sum_t, "rowsum(dO ⊙ O)"),
                             scale = tensor(b, sd.scale, "the scale"),
                             neg_inf = tensor(b, sd.neg_inf, "−∞"), one = tensor(b, one_t, "1");
    /* D = rowsum(dO ⊙ O), kept in the state */
    struct tdesc prod_t = {sd.uid++, f32, {bb, h, s, d}, {h * s * d, s * d, h * d, 1}, true, false};
    cudnnBackendDescriptor_t prod = tensor(b, prod_t, "dO ⊙ O"),
                             rsum = between(b, sd, f32, 1, "its row sum");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, dout, o, NULL, prod, "dO ⊙ O");
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_ADD, prod, rsum, "its row sum");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, rsum, one, NULL, sum, "rowsum(dO ⊙ O)");
    /* P again, from the forward's statistics */
    cudnnBackendDescriptor_t qk = between(b, sd, f32, s, "Q·Kᵀ"),
                             sc = between(b, sd, f32, s, "scaled scores"),
                             sub = between(b, sd, f32, s, "scores − lse");
    ops[n++] = matmul(b, q, kt, qk, "Q·Kᵀ");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, qk, scale, NULL, sc, "scaled scores");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_SUB, f32, sc, lse, NULL, sub, "scores − lse");
    cudnnBackendDescriptor_t sm = causal(b, sd, sub, neg_inf, ops, n);
    cudnnBackendDescriptor_t p = between(b, sd, f32, s, "P");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_EXP, f32, sm, NULL, NULL, p, "P");
    /* dV = Pᵀ·dO */
    struct tdesc pt_t = {sd.uid++, bf, {bb, h, s, s}, {h * s * s, s * s, 1, s}, true, false};
    cudnnBackendDescriptor_t pt = tensor(b, pt_t, "Pᵀ");
    ops[n++] = reshape(b, p, pt, "Pᵀ");
    ops[n++] = matmul(b, pt, dout, dv, "dV = Pᵀ·dO");
    /* dS = scale·P ⊙ (dO·Vᵀ − D) */
    cudnnBackendDescriptor_t dp = between(b, sd, f32, s, "dO·Vᵀ"),
                             dpd = between(b, sd, f32, s, "dO·Vᵀ − D"),
                             pdp = between(b, sd, f32, s, "P ⊙ (dO·Vᵀ − D)"),
                             ds = between(b, sd, f32, s, "dS");
    ops[n++] = matmul(b, dout, vt, dp, "dO·Vᵀ");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_SUB, f32, dp, sum, NULL, dpd, "dO·Vᵀ − D");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, dpd, p, NULL, pdp, "P ⊙ (dO·Vᵀ − D)");
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, f32, pdp, scale, NULL, ds, "dS");
    /* dK = dSᵀ·Q */
    struct tdesc dst_t = pt_t;
    dst_t.uid = sd.uid++;
    cudnnBackendDescriptor_t dst = tensor(b, dst_t, "dSᵀ");
    ops[n++] = reshape(b, ds, dst, "dSᵀ");
    ops[n++] = matmul(b, dst, q, dk, "dK = dSᵀ·Q");
    /* dQ = dS·K, K being Kᵀ seen back through k's own strides */
    struct tdesc k_t = {sd.uid++, f32, {bb, h, s, d}, {sd.kt.stride[0], sd.kt.stride[1],
                                                       sd.kt.stride[3], sd.kt.stride[2]},
                        true, false};
    cudnnBackendDescriptor_t k = tensor(b, k_t, "K");
    ops[n++] = reshape(b, kt, k, "K");
    ops[n++] = matmul(b, ds, k, dq, "dQ = dS·K");
    plan(b, ops, n, "backward");
}

/* ---- per device: the handle and the shapes built ---- */

struct shape {
    int B, T, nh, hd;
    int taken;
    char why[600];
    struct graph fwd, bwd;
};

static struct device_ctx {
    cudnnHandle_t handle;
    int tried;
    char why[600];
    struct shape shapes[MAX_SHAPES];
    int n_shapes;
} devices[MAX_DEVICES];

/* the current device's, with its handle; NULL with why */
static struct device_ctx *device_ctx(char *why, size_t n)
{
    if (load_cudnn(why, n) != 0)
        return NULL;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) {
        snprintf(why, n, "cudaGetDevice: %s", cudaGetErrorString(e));
        return NULL;
    }
    if (dev < 0 || dev >= MAX_DEVICES) {
        snprintf(why, n, "device index beyond the backend's table of %d", (int)MAX_DEVICES);
        return NULL;
    }
    struct device_ctx *c = &devices[dev];
    if (!c->tried) {
        c->tried = 1;
        cudnnStatus_t s = dn.Create(&c->handle);
        if (s != CUDNN_STATUS_SUCCESS) {
            describe(s, "cudnnCreate", c->why, sizeof c->why);
            c->handle = NULL;
        } else if ((s = dn.SetStream(c->handle, cudaStreamPerThread)) != CUDNN_STATUS_SUCCESS) {
            describe(s, "cudnnSetStream", c->why, sizeof c->why);
            c->handle = NULL;
        }
    }
    if (!c->handle) {
        snprintf(why, n, "%s", c->why);
        return NULL;
    }
    return c;
}

int cuda_cudnn_usable(char *why, size_t n) { return device_ctx(why, n) ? 0 : -1; }

/* What cod asks of a shape before cuDNN's engines see it: the head sizes
 * its fused kernels take on every GPU, and a sequence its backward takes
 * without the padding mask that cuDNN's frontend adds before 9.16 for a
 * length that is no multiple of 128 (cod builds none). */
static int shape_allowed(int T, int hd, char *why, size_t n)
{
    if (hd % 8 != 0 || hd > 128) {
        snprintf(why, n, "head size %d: cuDNN's fused attention takes multiples of 8 up to 128",
                 hd);
        return 0;
    }
    if (T < 2) {
        snprintf(why, n, "sequence length %d: cuDNN's fused attention needs 2 or more", T);
        return 0;
    }
    if (T % 128 != 0 && dn.version < 91600) {
        snprintf(why, n, "sequence length %d: %s's backward needs a padding mask unless it is a "
                         "multiple of 128 (9.16 and later do not)",
                 T, dn.name);
        return 0;
    }
    return 1;
}

/* the shape's entry on the current device, or NULL (not built yet) */
static struct shape *known(struct device_ctx *c, int B, int T, int nh, int hd)
{
    for (int i = 0; i < c->n_shapes; i++) {
        struct shape *s = &c->shapes[i];
        if (s->B == B && s->T == T && s->nh == nh && s->hd == hd)
            return s;
    }
    return NULL;
}

/* whether everything the call needs is settled: the library tried, the
 * device's handle made or refused, the shape's graphs built or refused */
static bool settled(int B, int T, int nh, int hd)
{
    int dev = 0;
    if (!dn.tried || !dn.lib)
        return dn.tried;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MAX_DEVICES)
        return true; /* device_ctx says what is wrong */
    struct device_ctx *c = &devices[dev];
    return c->tried && (!c->handle || known(c, B, T, nh, hd));
}

int cuda_cudnn_takes(int B, int T, int nh, int hd, char *why, size_t n)
{
    if (cuda_recording() && !settled(B, T, nh, hd)) {
        /* making a handle or finalising a plan may allocate, compile and
         * load kernels: not inside a capture (graph.cu), and not the own
         * kernels in its place either (the replay would not be the step
         * run op by op); the step runs op by op first */
        cuda_recording_fail("attention (cuDNN)", "cuDNN is not set up for this shape yet");
        snprintf(why, n, "not set up while a step is being recorded");
        return -1;
    }
    struct device_ctx *c = device_ctx(why, n);
    if (!c)
        return 0;
    struct shape *s = known(c, B, T, nh, hd);
    if (s) {
        if (!s->taken)
            snprintf(why, n, "%s", s->why);
        return s->taken;
    }
    if (!shape_allowed(T, hd, why, n))
        return 0;
    /* a shape's plans stay while a recording may launch their kernels: a
     * full table takes no more */
    if (c->n_shapes == MAX_SHAPES) {
        snprintf(why, n, "%d shapes have cuDNN graphs already, the most kept", (int)MAX_SHAPES);
        return 0;
    }
    s = &c->shapes[c->n_shapes++];
    memset(s, 0, sizeof *s);
    s->B = B, s->T = T, s->nh = nh, s->hd = hd;
    struct builder f = {&s->fwd, c->handle, NULL, s->why, sizeof s->why, false};
    build_forward(f, B, T, nh, hd);
    if (!f.failed) {
        struct builder g = {&s->bwd, c->handle, NULL, s->why, sizeof s->why, false};
        build_backward(g, B, T, nh, hd);
        s->taken = !g.failed;
    }
    if (!s->taken) {
        /* refused, and kept so with why; its descriptors go */
        char dropped[300];
        if ((drop_graph(&s->fwd, dropped, sizeof dropped) |
             drop_graph(&s->bwd, dropped, sizeof dropped)) != 0) {
            size_t k = strlen(s->why);
            snprintf(s->why + k, sizeof s->why - k, "; %s", dropped);
        }
        snprintf(why, n, "%s", s->why);
    }
    return s->taken;
}

extern "C" int ops_cuda_cudnn_compiles(const char *device_json, int B, int T, int nh, int hd,
                                       char *why, size_t n)
{
    if (load_cudnn(why, n) != 0)
        return 0;
    if (dn.version < 90800) {
        snprintf(why, n, "%s describes no device without one (9.8 and later do)", dn.name);
        return 0;
    }
    if (!shape_allowed(T, hd, why, n))
        return 0;
    struct graph dev = {}, fwd = {}, bwd = {};
    struct builder d = {&dev, NULL, NULL, why, n, false};
    cudnnBackendDescriptor_t props = make(d, CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, "the device");
    set(d, props, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
        (int64_t)strlen(device_json), device_json, "the device");
    finish(d, props, "the device");
    struct builder f = {&fwd, NULL, props, why, n, d.failed},
                   g = {&bwd, NULL, props, why, n, false};
    if (!f.failed)
        build_forward(f, B, T, nh, hd);
    g.failed = f.failed;
    if (!g.failed)
        build_backward(g, B, T, nh, hd);
    /* the graphs are not kept: a failure to destroy them fails the check */
    char dropped[300];
    if ((drop_graph(&fwd, dropped, sizeof dropped) | drop_graph(&bwd, dropped, sizeof dropped) |
         drop_graph(&dev, dropped, sizeof dropped)) != 0 &&
        !g.failed) {
        snprintf(why, n, "%s", dropped);
        return 0;
    }
    return !g.failed;
}

/* the shape's graphs, built and taken, or NULL */
static struct shape *built(int B, int T, int nh, int hd, struct device_ctx **ctx)
{
    char why[8];
    struct shape *s = (*ctx = device_ctx(why, sizeof why)) ? known(*ctx, B, T, nh, hd) : NULL;
    return s && s->taken ? s : NULL;
}

/* what the mask puts in place of a score: −∞, but before 9.10 the lowest
 * float, as cuDNN's frontend has it */
static float masked(void) { return dn.version < 91000 ? -FLT_MAX : -INFINITY; }

/* the graphs assume 16-byte alignment of every buffer they read or write */
static int aligned(const void *const *p, int n, char *why, size_t len)
{
    for (int i = 0; i < n; i++)
        if ((uintptr_t)p[i] % 16 != 0) {
            snprintf(why, len, "a buffer at %p is not 16-byte aligned", p[i]);
            return 0;
        }
    return 1;
}

/* one run of a graph's plan with these buffers, on the stream */
static void run(struct device_ctx *c, struct graph *g, int n, const int64_t *uids, void **ptrs,
                const char *op)
{
    void *ws = NULL;
    if (g->workspace > 0 && !(ws = cuda_scratch((size_t)g->workspace, op)))
        return; /* the scratch's failure is recorded */
    cudnnBackendDescriptor_t vp = NULL;
    char why[600];
    const char *call = "cudnnBackendCreateDescriptor (variant pack)";
    cudnnStatus_t s = dn.CreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    if (s == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute (variant pack)";
        s = dn.SetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    }
    if (s == CUDNN_STATUS_SUCCESS)
        s = dn.SetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                            ptrs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = dn.SetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    if (s == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendFinalize (variant pack)";
        s = dn.Finalize(vp);
    }
    if (s == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendExecute";
        s = dn.Execute(c->handle, g->plan, vp);
    }
    if (s != CUDNN_STATUS_SUCCESS) {
        describe(s, call, why, sizeof why);
        cuda_fail(__FILE__, __LINE__, op, why);
    }
    if (vp && (s = dn.DestroyDescriptor(vp)) != CUDNN_STATUS_SUCCESS) {
        describe(s, "cudnnBackendDestroyDescriptor (variant pack)", why, sizeof why);
        cuda_fail(__FILE__, __LINE__, op, why);
    }
    /* as after a launch: a fault injected for the op, COD_CUDA_SYNC's wait,
     * the profile's mark */
    cuda_launch_check(__FILE__, __LINE__, op);
}

int cuda_cudnn_attention_fwd(bf16 *out, float *lse, bf16 *rot, const bf16 *qkv, const float *cos,
                             const float *sin, int B, int T, int nh, int hd, char *why, size_t n)
{
    struct device_ctx *c = NULL;
    struct shape *s = built(B, T, nh, hd, &c);
    const int64_t d = (int64_t)nh * hd;
    const bf16 *k = rot + d, *v = qkv + 2 * d;
    const void *bufs[] = {out, lse, rot, k, v};
    if (!s) {
        snprintf(why, n, "its graphs for B %d, T %d, %d heads of %d are not built", B, T, nh, hd);
        return -1;
    }
    if (!aligned(bufs, 5, why, n))
        return -1;
    cuda_rope(rot, (int)(2 * d), qkv, (int)(3 * d), B * T, T, 2 * nh, hd, cos, sin, 1);
    float scale = (float)(1.0 / sqrt((double)hd)), neg_inf = masked();
    const int64_t uids[] = {U_Q, U_K, U_V, U_O, U_STATS, U_SCALE, U_NEG_INF};
    void *ptrs[] = {rot, (void *)k, (void *)v, out, lse, &scale, &neg_inf};
    run(c, &s->fwd, 7, uids, ptrs, "attention_fwd");
    return 0;
}

int cuda_cudnn_attention_bwd(bf16 *dqkv, const bf16 *dout, const bf16 *out, const float *lse,
                             float *D, const bf16 *rot, const bf16 *qkv, const float *cos,
                             const float *sin, int B, int T, int nh, int hd, char *why, size_t n)
{
    struct device_ctx *c = NULL;
    struct shape *s = built(B, T, nh, hd, &c);
    const int64_t d = (int64_t)nh * hd;
    const bf16 *k = rot + d, *v = qkv + 2 * d;
    bf16 *dk = dqkv + d, *dv = dqkv + 2 * d;
    const void *bufs[] = {dqkv, dout, out, lse, D, rot, k, v, dk, dv};
    if (!s) {
        snprintf(why, n, "its graphs for B %d, T %d, %d heads of %d are not built", B, T, nh, hd);
        return -1;
    }
    if (!aligned(bufs, 10, why, n))
        return -1;
    float scale = (float)(1.0 / sqrt((double)hd)), one = 1.0f, neg_inf = masked();
    const int64_t uids[] = {U_Q,  U_K,  U_V,  U_O,   U_DO,    U_STATS,  U_DQ,
                            U_DK, U_DV, U_SUM, U_SCALE, U_NEG_INF, U_ONE};
    void *ptrs[] = {(void *)rot, (void *)k, (void *)v,  (void *)out, (void *)dout,
                    (void *)lse, dqkv,      dk,         dv,          D,
                    &scale,      &neg_inf,  &one};
    run(c, &s->bwd, 13, uids, ptrs, "attention_bwd");
    /* the gradients of q and k as the projection made them */
    cuda_rope(dqkv, (int)(3 * d), dqkv, (int)(3 * d), B * T, T, 2 * nh, hd, cos, sin, -1);
    return 0;
}
