/* Every op of the CUDA backend against the CPU backend (kernels/cpu/, the
 * reference) on fresh random inputs. Outputs an op overwrites are filled
 * with NaN first, on both sides, so an element the kernel never writes
 * fails the comparison; outputs it accumulates into (+=) start from the
 * same random values. ‖cuda − cpu‖/‖cpu‖ must be under 1e-2 for the bf16
 * matmul path and 1e-5 for the fp32 ones. Needs a GPU: tests/gpu/run.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "trainer/rng.h"

static const struct ops *G = &ops_cuda, *C = &ops_cpu;
static const double TOL_BF16 = 1e-2, TOL_FP32 = 1e-5;
static struct rng R;

/* a host, a CPU and a CUDA copy of one tensor */
struct t3 {
    size_t n;
    real *h, *c, *g;
};

static struct t3 make(size_t n, double scale)
{
    struct t3 t = {n, malloc(n * sizeof(real)), C->alloc(n), G->alloc(n)};
    if (!t.h || !t.c || !t.g) {
        fprintf(stderr, "out of memory for %zu elements\n", n);
        abort();
    }
    for (size_t i = 0; i < n; i++)
        t.h[i] = (real)(scale * (2 * rng_uniform(&R) - 1));
    C->upload(t.c, t.h, n);
    G->upload(t.g, t.h, n);
    return t;
}

/* an output the op overwrites: NaN on both sides */
static struct t3 poisoned(size_t n)
{
    struct t3 t = make(n, 1);
    for (size_t i = 0; i < n; i++)
        t.h[i] = NAN;
    C->upload(t.c, t.h, n);
    G->upload(t.g, t.h, n);
    return t;
}

static void drop(struct t3 *t)
{
    free(t->h);
    C->free(t->c);
    G->free(t->g);
}

static int32_t *tokens_dev(const int32_t *host, size_t n)
{
    int32_t *p = G->alloc_i32(n);
    G->upload_i32(p, host, n);
    return p;
}

/* ‖cuda − cpu‖/‖cpu‖ (NaN anywhere fails) */
static double rel_err(const struct t3 *t)
{
    real *got = malloc(t->n * sizeof(real));
    G->download(got, t->g, t->n);
    double num = 0, den = 0;
    for (size_t i = 0; i < t->n; i++) {
        double e = (double)got[i] - t->c[i];
        num += e * e;
        den += (double)t->c[i] * t->c[i];
    }
    free(got);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#define SAME(t, tol, what)                                                                     \
    do {                                                                                       \
        double e_ = rel_err(&(t));                                                             \
        CHECK(e_ < (tol), "%s: relative error %.3g (limit %.0e)", what, e_, tol);             \
    } while (0)

#define SAME_D(got, ref, tol, what)                                                            \
    do {                                                                                       \
        double g_ = (got), r_ = (ref), e_ = fabs(g_ - r_) / (fabs(r_) > 0 ? fabs(r_) : 1);     \
        CHECK(e_ < (tol), "%s: %.10g vs %.10g (relative %.3g)", what, g_, r_, e_);            \
    } while (0)

/* off > 0 shifts the inputs and the accumulated gradients by that many
 * elements, as a weight that follows a SkipInit scalar in the parameter
 * buffer is shifted: 4-byte aligned only. */
static void matmul_at(int N, int In, int Out, int exact, double tol, int off)
{
    ops_cuda_exact_matmul(exact);
    struct t3 in = make((size_t)N * In + off, 1), w = make((size_t)Out * In + off, 0.1),
              out = poisoned((size_t)N * Out), dout = make((size_t)N * Out, 1),
              din = make((size_t)N * In + off, 1), dw = make((size_t)Out * In + off, 1);
    C->matmul_fwd(out.c, in.c + off, w.c + off, N, In, Out);
    G->matmul_fwd(out.g, in.g + off, w.g + off, N, In, Out);
    SAME(out, tol, "matmul_fwd out");
    C->matmul_bwd(din.c + off, dw.c + off, dout.c, in.c + off, w.c + off, N, In, Out);
    G->matmul_bwd(din.g + off, dw.g + off, dout.g, in.g + off, w.g + off, N, In, Out);
    SAME(din, tol, "matmul_bwd din");
    SAME(dw, tol, "matmul_bwd dw");
    C->matmul_bwd(NULL, dw.c + off, dout.c, in.c + off, w.c + off, N, In, Out);
    G->matmul_bwd(NULL, dw.g + off, dout.g, in.g + off, w.g + off, N, In, Out);
    SAME(dw, tol, "matmul_bwd dw without din");
    drop(&in), drop(&w), drop(&out), drop(&dout), drop(&din), drop(&dw);
    ops_cuda_exact_matmul(0);
}

static void matmul_bf16(void)
{
    matmul_at(37, 50, 29, 0, TOL_BF16, 0);
    matmul_at(512, 768, 2048, 0, TOL_BF16, 0);
    matmul_at(256, 2048, 5461, 0, TOL_BF16, 0);
    matmul_at(64, 128, 352, 0, TOL_BF16, 1);
}

static void matmul_fp32(void)
{
    matmul_at(37, 50, 29, 1, TOL_FP32, 0);
    matmul_at(512, 768, 2048, 1, TOL_FP32, 0);
    matmul_at(64, 128, 352, 1, TOL_FP32, 1);
}

static void embedding(void)
{
    int N = 777, d = 96, V = 50; /* few tokens: rows collide in the backward */
    int32_t *tok = malloc(N * sizeof(int32_t));
    for (int n = 0; n < N; n++)
        tok[n] = (int32_t)(rng_uniform(&R) * V);
    int32_t *tc = C->alloc_i32(N), *tg = tokens_dev(tok, N);
    C->upload_i32(tc, tok, N);
    struct t3 table = make((size_t)V * d, 1), out = poisoned((size_t)N * d),
              dout = make((size_t)N * d, 1), dtable = make((size_t)V * d, 1);
    C->embedding_fwd(out.c, tc, table.c, N, d);
    G->embedding_fwd(out.g, tg, table.g, N, d);
    SAME(out, TOL_FP32, "embedding_fwd");
    C->embedding_bwd(dtable.c, dout.c, tc, N, d);
    G->embedding_bwd(dtable.g, dout.g, tg, N, d);
    SAME(dtable, TOL_FP32, "embedding_bwd");
    drop(&table), drop(&out), drop(&dout), drop(&dtable);
    C->free(tc), G->free(tg), free(tok);
}

static void rmsnorm_at(int N, int d, real s)
{
    struct t3 x = make((size_t)N * d, 2), g = make(d, 1), out = poisoned((size_t)N * d),
              rstd = poisoned(N), dout = make((size_t)N * d, 1), dx = make((size_t)N * d, 1),
              dg = make(d, 1);
    C->rmsnorm_fwd(out.c, rstd.c, x.c, g.c, N, d, s, 1e-6f);
    G->rmsnorm_fwd(out.g, rstd.g, x.g, g.g, N, d, s, 1e-6f);
    SAME(out, TOL_FP32, "rmsnorm_fwd out");
    SAME(rstd, TOL_FP32, "rmsnorm_fwd rstd");
    C->rmsnorm_bwd(dx.c, dg.c, dout.c, x.c, g.c, rstd.c, N, d, s);
    G->rmsnorm_bwd(dx.g, dg.g, dout.g, x.g, g.g, rstd.g, N, d, s);
    SAME(dx, TOL_FP32, "rmsnorm_bwd dx");
    SAME(dg, TOL_FP32, "rmsnorm_bwd dg");
    drop(&x), drop(&g), drop(&out), drop(&rstd), drop(&dout), drop(&dx), drop(&dg);
}

static void rmsnorm(void)
{
    rmsnorm_at(33, 100, 1);
    rmsnorm_at(1024, 768, 0.2886751f); /* s = 1/√12 */
    rmsnorm_at(300, 2048, 0.5f);
}

static void rope_at(int B, int T, int nh, int hd)
{
    size_t n = (size_t)B * T * nh * hd;
    for (int dir = -1; dir <= 1; dir += 2) {
        struct t3 in = make(n, 1), out = poisoned(n);
        C->rope(out.c, in.c, B, T, nh, hd, 10000, dir);
        G->rope(out.g, in.g, B, T, nh, hd, 10000, dir);
        SAME(out, TOL_FP32, dir > 0 ? "rope forward" : "rope transpose");
        drop(&in), drop(&out);
    }
}

static void rope(void)
{
    rope_at(2, 37, 3, 16);
    rope_at(4, 256, 12, 64);
    rope_at(1, 256, 16, 128);
}

static void attention_at(int B, int T, int nh, int hd)
{
    size_t n = (size_t)B * T * nh * hd;
    struct t3 q = make(n, 1), k = make(n, 1), v = make(n, 1), dout = make(n, 1),
              out = poisoned(n), dq = poisoned(n), dk = poisoned(n), dv = poisoned(n);
    real *sc = C->alloc(C->attn_state_size(B, T, nh)), *sg = G->alloc(G->attn_state_size(B, T, nh));
    C->attention_fwd(out.c, sc, q.c, k.c, v.c, B, T, nh, hd);
    G->attention_fwd(out.g, sg, q.g, k.g, v.g, B, T, nh, hd);
    SAME(out, TOL_FP32, "attention_fwd");
    C->attention_bwd(dq.c, dk.c, dv.c, dout.c, sc, q.c, k.c, v.c, B, T, nh, hd);
    G->attention_bwd(dq.g, dk.g, dv.g, dout.g, sg, q.g, k.g, v.g, B, T, nh, hd);
    SAME(dq, TOL_FP32, "attention_bwd dq");
    SAME(dk, TOL_FP32, "attention_bwd dk");
    SAME(dv, TOL_FP32, "attention_bwd dv");
    C->free(sc), G->free(sg);
    drop(&q), drop(&k), drop(&v), drop(&dout), drop(&out), drop(&dq), drop(&dk), drop(&dv);
}

static void attention(void)
{
    attention_at(1, 1, 1, 32);
    attention_at(2, 37, 3, 16);  /* partial tiles, hd below a warp */
    attention_at(2, 256, 4, 48); /* hd not a multiple of 32 */
    attention_at(2, 256, 8, 64);
    attention_at(1, 300, 4, 128);
}

static void swiglu(void)
{
    size_t n = 100003;
    struct t3 gate = make(n, 4), up = make(n, 1), out = poisoned(n), dout = make(n, 1),
              dgate = poisoned(n), dup = poisoned(n);
    C->swiglu_fwd(out.c, gate.c, up.c, n);
    G->swiglu_fwd(out.g, gate.g, up.g, n);
    SAME(out, TOL_FP32, "swiglu_fwd");
    C->swiglu_bwd(dgate.c, dup.c, dout.c, gate.c, up.c, n);
    G->swiglu_bwd(dgate.g, dup.g, dout.g, gate.g, up.g, n);
    SAME(dgate, TOL_FP32, "swiglu_bwd dgate");
    SAME(dup, TOL_FP32, "swiglu_bwd dup");
    drop(&gate), drop(&up), drop(&out), drop(&dout), drop(&dgate), drop(&dup);
}

static void elementwise(void)
{
    size_t n = 70001;
    struct t3 x = make(n, 1), y = make(n, 1);
    C->axpby(y.c, 0.7f, x.c, -1.3f, n);
    G->axpby(y.g, 0.7f, x.g, -1.3f, n);
    SAME(y, TOL_FP32, "axpby");
    C->axpby(y.c, 0, y.c, 0.25f, n); /* in place, as the model scales a buffer */
    G->axpby(y.g, 0, y.g, 0.25f, n);
    SAME(y, TOL_FP32, "axpby in place");
    int N = 513, d = 96;
    for (int c = 1; c <= d; c += d - 1) {
        struct t3 in = make((size_t)N * d, 1), lam = make(c, 1), out = poisoned((size_t)N * d),
                  dout = make((size_t)N * d, 1), din = make((size_t)N * d, 1), dlam = make(c, 1);
        C->chscale_fwd(out.c, in.c, lam.c, N, d, c);
        G->chscale_fwd(out.g, in.g, lam.g, N, d, c);
        SAME(out, TOL_FP32, c == 1 ? "chscale_fwd scalar" : "chscale_fwd per channel");
        C->chscale_bwd(din.c, dlam.c, dout.c, in.c, lam.c, N, d, c);
        G->chscale_bwd(din.g, dlam.g, dout.g, in.g, lam.g, N, d, c);
        SAME(din, TOL_FP32, "chscale_bwd din");
        SAME(dlam, TOL_FP32, c == 1 ? "chscale_bwd dlam scalar" : "chscale_bwd dlam");
        drop(&in), drop(&lam), drop(&out), drop(&dout), drop(&din), drop(&dlam);
    }
    x.h[0] = 1; /* copy and zero */
    struct t3 z = poisoned(n);
    C->copy(z.c, x.c, n);
    G->copy(z.g, x.g, n);
    SAME(z, TOL_FP32, "copy");
    C->zero(z.c, n);
    G->zero(z.g, n);
    SAME(z, TOL_FP32, "zero");
    drop(&x), drop(&y), drop(&z);
}

static void cross_entropy_at(int N, int V)
{
    int32_t *tgt = malloc(N * sizeof(int32_t));
    for (int n = 0; n < N; n++)
        tgt[n] = n % 7 == 3 ? -1 : (int32_t)(rng_uniform(&R) * V);
    int32_t *tc = C->alloc_i32(N), *tg = tokens_dev(tgt, N);
    C->upload_i32(tc, tgt, N);
    struct t3 logits = make((size_t)N * V, 8), loss = poisoned(N);
    C->cross_entropy(loss.c, logits.c, tc, N, V, 1.0f / N);
    G->cross_entropy(loss.g, logits.g, tg, N, V, 1.0f / N);
    SAME(loss, TOL_FP32, "cross_entropy loss");
    SAME(logits, TOL_FP32, "cross_entropy gradient in place");
    drop(&logits), drop(&loss);
    C->free(tc), G->free(tg), free(tgt);
}

static void cross_entropy(void)
{
    cross_entropy_at(29, 300);
    cross_entropy_at(512, 32000);
    cross_entropy_at(64, 50257);
}

static void adam(void)
{
    size_t n = 123457;
    struct t3 p = make(n, 1), m = make(n, 0), v = make(n, 0);
    for (long step = 1; step <= 5; step++) {
        struct t3 g = make(n, 1);
        C->adam(p.c, g.c, m.c, v.c, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, step);
        G->adam(p.g, g.g, m.g, v.g, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, step);
        drop(&g);
    }
    SAME(p, TOL_FP32, "adam parameters");
    SAME(m, TOL_FP32, "adam first moment");
    SAME(v, TOL_FP32, "adam second moment");
    drop(&p), drop(&m), drop(&v);
}

static void reductions(void)
{
    size_t sizes[] = {1, 1000, 3000017};
    for (int i = 0; i < 3; i++) {
        size_t n = sizes[i];
        struct t3 x = make(n, 1), y = make(n, 1);
        SAME_D(G->sum(x.g, n), C->sum(x.c, n), TOL_FP32, "sum");
        SAME_D(G->sumsq(x.g, n), C->sumsq(x.c, n), TOL_FP32, "sumsq");
        SAME_D(G->dot(x.g, y.g, n), C->dot(x.c, y.c, n), TOL_FP32, "dot");
        drop(&x), drop(&y);
    }
    int N = 2049, d = 384;
    struct t3 a = make((size_t)N * d, 1), b = make((size_t)N * d, 1);
    C->axpby(b.c, 1, a.c, 0.3f, (size_t)N * d); /* correlated rows: angles away from π/2 */
    G->axpby(b.g, 1, a.g, 0.3f, (size_t)N * d);
    SAME_D(G->angular_sum(a.g, b.g, N, d), C->angular_sum(a.c, b.c, N, d), TOL_FP32,
           "angular_sum");
    drop(&a), drop(&b);
}

static void out_of_memory(void)
{
    real *p = G->alloc((size_t)1 << 42); /* 16 TiB */
    CHECK(p == NULL, "an impossible allocation must return NULL");
    real *q = G->alloc(1024);
    CHECK(q != NULL, "and leave the device usable");
    G->free(q);
}

static void no_errors(void)
{
    char err[600];
    CHECK(ops_cuda_error(err, sizeof err) == 0, "%s", err);
}

int main(void)
{
    if (gpu_start() != 0)
        return 1;
    rng_seed(&R, 20240601, 1);
    RUN(matmul_bf16);
    RUN(matmul_fp32);
    RUN(embedding);
    RUN(rmsnorm);
    RUN(rope);
    RUN(attention);
    RUN(swiglu);
    RUN(elementwise);
    RUN(cross_entropy);
    RUN(adam);
    RUN(reductions);
    RUN(out_of_memory);
    RUN(no_errors);
    CHECK_EXIT();
}
