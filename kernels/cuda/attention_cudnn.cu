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
 * would no longer repeat bit for bit (docs/gpu.md, "Repeatable runs").
 * Each graph is built once per shape and device and kept (engine found by
 * cuDNN's heuristics, execution plan finalised); a shape cuDNN refuses is
 * kept as refused, with why. The plans' workspace is cod's scratch memory
 * (memory.cu), so a recorded step (graph.cu) replays cuDNN's kernels as it
 * does cod's: the plan and its workspace are fixed before the recording,
 * and a shape not yet built fails the recording rather than building
 * inside it. Every cuDNN call is checked; a failure while building is a
 * refusal naming the call, one while running a fault naming it.
 *
 * This file loads cuDNN and runs the graphs, per device and shape;
 * attention_cudnn_graph.cu builds them. */
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/cudnn.cuh"
#include "kernels/cuda/internal.h"

static_assert(CUDNN_MAJOR == 9, "the graphs are written for cuDNN 9's backend API");
#ifndef COD_CUDNN_SONAME /* the emulator names one that is never there (emu.h) */
#define COD_CUDNN_SONAME "libcudnn.so.9"
#endif
struct cudnn_library cudnn_lib;

/* cuDNN's message about its last failure, on one line (it runs over several) */
void cudnn_last_error(char *s, size_t n)
{
    s[0] = 0;
    cudnn_lib.GetLastErrorString(s, n);
    for (char *c = s; *c; c++)
        if (*c == '\n')
            *c = ' ';
}

/* "CALL: CUDNN_STATUS_…: cuDNN's own message" */
void cudnn_describe(cudnnStatus_t s, const char *call, char *why, size_t n)
{
    char detail[400];
    cudnn_last_error(detail, sizeof detail);
    snprintf(why, n, "%s: %s%s%s", call, cudnn_lib.GetErrorString(s), detail[0] ? ": " : "", detail);
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
int cudnn_load(char *why, size_t n)
{
    struct cudnn_library &dn = cudnn_lib;
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

const char *cuda_cudnn_name(void) { return cudnn_lib.lib ? cudnn_lib.name : "cuDNN"; }

/* ---- per device: the handle and the shapes built ---- */

struct shape {
    int B, T, nh, hd;
    int taken;
    char why[600];
    struct cudnn_graph fwd, bwd;
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
    if (cudnn_load(why, n) != 0)
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
        cudnnStatus_t s = cudnn_lib.Create(&c->handle);
        if (s != CUDNN_STATUS_SUCCESS) {
            cudnn_describe(s, "cudnnCreate", c->why, sizeof c->why);
            c->handle = NULL;
        } else if ((s = cudnn_lib.SetStream(c->handle, cudaStreamPerThread)) != CUDNN_STATUS_SUCCESS) {
            cudnn_describe(s, "cudnnSetStream", c->why, sizeof c->why);
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
    if (!cudnn_lib.tried || !cudnn_lib.lib)
        return cudnn_lib.tried;
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
    if (!cudnn_shape_allowed(T, hd, why, n))
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
    struct cudnn_builder f = {&s->fwd, c->handle, NULL, s->why, sizeof s->why, false};
    cudnn_build_forward(f, B, T, nh, hd);
    if (!f.failed) {
        struct cudnn_builder g = {&s->bwd, c->handle, NULL, s->why, sizeof s->why, false};
        cudnn_build_backward(g, B, T, nh, hd);
        s->taken = !g.failed;
    }
    if (!s->taken) {
        /* refused, and kept so with why; its descriptors go */
        char dropped[300];
        if ((cudnn_drop_graph(&s->fwd, dropped, sizeof dropped) |
             cudnn_drop_graph(&s->bwd, dropped, sizeof dropped)) != 0) {
            size_t k = strlen(s->why);
            snprintf(s->why + k, sizeof s->why - k, "; %s", dropped);
        }
        snprintf(why, n, "%s", s->why);
    }
    return s->taken;
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
static float masked(void) { return cudnn_lib.version < 91000 ? -FLT_MAX : -INFINITY; }

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
static void run(struct device_ctx *c, struct cudnn_graph *g, int n, const int64_t *uids, void **ptrs,
                const char *op)
{
    void *ws = NULL;
    if (g->workspace > 0 && !(ws = cuda_scratch((size_t)g->workspace, op)))
        return; /* the scratch's failure is recorded */
    cudnnBackendDescriptor_t vp = NULL;
    char why[600];
    const char *call = "cudnnBackendCreateDescriptor (variant pack)";
    cudnnStatus_t s = cudnn_lib.CreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    if (s == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendSetAttribute (variant pack)";
        s = cudnn_lib.SetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    }
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnn_lib.SetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                            ptrs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnn_lib.SetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    if (s == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendFinalize (variant pack)";
        s = cudnn_lib.Finalize(vp);
    }
    if (s == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendExecute";
        s = cudnn_lib.Execute(c->handle, g->plan, vp);
    }
    if (s != CUDNN_STATUS_SUCCESS) {
        cudnn_describe(s, call, why, sizeof why);
        cuda_fail(__FILE__, __LINE__, op, why);
    }
    if (vp && (s = cudnn_lib.DestroyDescriptor(vp)) != CUDNN_STATUS_SUCCESS) {
        cudnn_describe(s, "cudnnBackendDestroyDescriptor (variant pack)", why, sizeof why);
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
