/* cuDNN's attention graphs (attention_cudnn.cu says what they compute):
 * each graph built from its descriptors, step by step, the first failure
 * kept naming the call; the forward and backward graphs of a shape; what
 * cod asks of a shape first; and the check that a described device
 * compiles them (ops_cuda_cudnn_compiles). */
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kernels/cuda/cudnn.cuh"
#include "kernels/cuda/internal.h"

/* its descriptors destroyed: 0, or -1 with why naming the failed call */
int cudnn_drop_graph(struct cudnn_graph *g, char *why, size_t n)
{
    cudnnStatus_t first = CUDNN_STATUS_SUCCESS;
    for (int i = g->n_held - 1; i >= 0; i--) {
        cudnnStatus_t s = cudnn_lib.DestroyDescriptor(g->held[i]);
        if (first == CUDNN_STATUS_SUCCESS && s != CUDNN_STATUS_SUCCESS) {
            first = s;
            cudnn_describe(s, "cudnnBackendDestroyDescriptor", why, n);
        }
    }
    memset(g, 0, sizeof *g);
    return first == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static bool ok(struct cudnn_builder &b, cudnnStatus_t s, const char *call, const char *what)
{
    if (b.failed)
        return false;
    if (s == CUDNN_STATUS_SUCCESS)
        return true;
    char named[160];
    snprintf(named, sizeof named, "%s (%s)", call, what);
    cudnn_describe(s, named, b.why, b.whylen);
    b.failed = true;
    return false;
}

static cudnnBackendDescriptor_t make(struct cudnn_builder &b, cudnnBackendDescriptorType_t type,
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
    if (!ok(b, cudnn_lib.CreateDescriptor(type, &d), "cudnnBackendCreateDescriptor", what))
        return NULL;
    b.g->held[b.g->n_held++] = d;
    return d;
}

static void set(struct cudnn_builder &b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr,
                cudnnBackendAttributeType_t type, int64_t count, const void *value,
                const char *what)
{
    if (!b.failed)
        ok(b, cudnn_lib.SetAttribute(d, attr, type, count, value), "cudnnBackendSetAttribute", what);
}

static void finish(struct cudnn_builder &b, cudnnBackendDescriptor_t d, const char *what)
{
    if (!b.failed)
        ok(b, cudnn_lib.Finalize(d), "cudnnBackendFinalize", what);
}

/* a descriptor the graph does not keep, destroyed (a failure fails the
 * graph, unless it has failed already) */
static void discard(struct cudnn_builder &b, cudnnBackendDescriptor_t d, const char *what)
{
    cudnnStatus_t s = cudnn_lib.DestroyDescriptor(d);
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

static cudnnBackendDescriptor_t tensor(struct cudnn_builder &b, const struct tdesc &t, const char *what)
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

static cudnnBackendDescriptor_t operation(struct cudnn_builder &b, cudnnBackendDescriptorType_t type,
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
static cudnnBackendDescriptor_t pointwise(struct cudnn_builder &b, cudnnPointwiseMode_t mode,
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
static cudnnBackendDescriptor_t matmul(struct cudnn_builder &b, cudnnBackendDescriptor_t a,
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
static cudnnBackendDescriptor_t reduction(struct cudnn_builder &b, cudnnReduceTensorOp_t mode,
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
static cudnnBackendDescriptor_t reshape(struct cudnn_builder &b, cudnnBackendDescriptor_t x,
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
static cudnnStatus_t try_plan(struct cudnn_builder &b, cudnnBackendDescriptor_t cfg,
                              cudnnBackendDescriptor_t *plan, int64_t *workspace)
{
    cudnnBackendDescriptor_t p = NULL;
    int64_t n = 0;
    cudnnStatus_t s = cudnn_lib.CreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p);
    if (s == CUDNN_STATUS_SUCCESS)
        s = b.device ? cudnn_lib.SetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b.device)
                     : cudnn_lib.SetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                       &b.handle);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnn_lib.SetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnn_lib.Finalize(p);
    if (s == CUDNN_STATUS_SUCCESS && !b.device)
        s = cudnn_lib.GetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
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
static void plan(struct cudnn_builder &b, cudnnBackendDescriptor_t *ops, int n_ops, const char *what)
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
            ok(b, cudnn_lib.GetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL),
               "cudnnBackendGetAttribute", "the heuristics' count");
        const int64_t MAX_CONFIGS = 16;
        cudnnBackendDescriptor_t cfg[MAX_CONFIGS];
        int made = 0;
        while (!b.failed && made < count && made < MAX_CONFIGS &&
               ok(b, cudnn_lib.CreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[made]),
                  "cudnnBackendCreateDescriptor", "an engine configuration"))
            made++;
        if (!b.failed)
            ok(b, cudnn_lib.GetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &got, cfg),
               "cudnnBackendGetAttribute", "the heuristics' engine configurations");
        if (!b.failed && got == 0 && count > 0) {
            /* cuDNN's own checks turned every engine down: its last words say why */
            char detail[400];
            cudnn_last_error(detail, sizeof detail);
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
                cudnn_describe(s, call, last, sizeof last);
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
static cudnnBackendDescriptor_t between(struct cudnn_builder &b, struct shape_desc &sd,
                                        cudnnDataType_t type, int64_t cols, const char *what)
{
    struct tdesc t = {sd.uid++, type, {sd.B, sd.nh, sd.T, cols},
                      {sd.nh * sd.T * cols, sd.T * cols, cols, 1}, true, false};
    return tensor(b, t, what);
}

/* scores with the causal mask: entries of a column past the row −∞ */
static cudnnBackendDescriptor_t causal(struct cudnn_builder &b, struct shape_desc &sd,
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

void cudnn_build_forward(struct cudnn_builder &b, int B, int T, int nh, int hd)
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

void cudnn_build_backward(struct cudnn_builder &b, int B, int T, int nh, int hd)
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

/* What cod asks of a shape before cuDNN's engines see it: the head sizes
 * its fused kernels take on every GPU, and a sequence its backward takes
 * without the padding mask that cuDNN's frontend adds before 9.16 for a
 * length that is no multiple of 128 (cod builds none). */
int cudnn_shape_allowed(int T, int hd, char *why, size_t n)
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
    if (T % 128 != 0 && cudnn_lib.version < 91600) {
        snprintf(why, n, "sequence length %d: %s's backward needs a padding mask unless it is a "
                         "multiple of 128 (9.16 and later do not)",
                 T, cudnn_lib.name);
        return 0;
    }
    return 1;
}

extern "C" int ops_cuda_cudnn_compiles(const char *device_json, int B, int T, int nh, int hd,
                                       char *why, size_t n)
{
    if (cudnn_load(why, n) != 0)
        return 0;
    if (cudnn_lib.version < 90800) {
        snprintf(why, n, "%s describes no device without one (9.8 and later do)", cudnn_lib.name);
        return 0;
    }
    if (!cudnn_shape_allowed(T, hd, why, n))
        return 0;
    struct cudnn_graph dev = {}, fwd = {}, bwd = {};
    struct cudnn_builder d = {&dev, NULL, NULL, why, n, false};
    cudnnBackendDescriptor_t props = make(d, CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, "the device");
    set(d, props, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
        (int64_t)strlen(device_json), device_json, "the device");
    finish(d, props, "the device");
    struct cudnn_builder f = {&fwd, NULL, props, why, n, d.failed},
                   g = {&bwd, NULL, props, why, n, false};
    if (!f.failed)
        cudnn_build_forward(f, B, T, nh, hd);
    g.failed = f.failed;
    if (!g.failed)
        cudnn_build_backward(g, B, T, nh, hd);
    /* the graphs are not kept: a failure to destroy them fails the check */
    char dropped[300];
    if ((cudnn_drop_graph(&fwd, dropped, sizeof dropped) | cudnn_drop_graph(&bwd, dropped, sizeof dropped) |
         cudnn_drop_graph(&dev, dropped, sizeof dropped)) != 0 &&
        !g.failed) {
        snprintf(why, n, "%s", dropped);
        return 0;
    }
    return !g.failed;
}
