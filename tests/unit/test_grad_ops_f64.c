/* Every CPU op's backward against central finite differences, in double.
 * Each check builds L = Σ w ⊙ op(inputs) with random w, takes the analytic
 * gradient from the op's backward, and compares it with (L(x+h) − L(x−h))/2h
 * on every input element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops.h"
#include "tests/check.h"
#include "trainer/rng.h"

static const struct ops *o = &ops_cpu;
static struct rng R;

static real *randn(size_t n, double scale)
{
    real *p = o->alloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = scale * rng_normal(&R);
    return p;
}

static double weighted(const real *out, const real *w, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += out[i] * w[i];
    return s;
}

typedef double (*loss_fn)(void *ctx);

/* Largest relative error between analytic grad and finite differences of f over x. */
static double fd_check(loss_fn f, void *ctx, real *x, const real *grad, size_t n)
{
    double worst = 0, h = 1e-6;
    for (size_t i = 0; i < n; i++) {
        real keep = x[i];
        x[i] = keep + h;
        double lp = f(ctx);
        x[i] = keep - h;
        double lm = f(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2 * h);
        double err = fabs(num - grad[i]) / fmax(1e-4, fabs(num) + fabs(grad[i]));
        if (err > worst)
            worst = err;
    }
    return worst;
}

#define TOL 1e-6

/* ---- matmul ---- */
struct mm { int N, In, Out; real *in, *w, *out, *wt; };
static double mm_loss(void *c)
{
    struct mm *m = c;
    o->matmul_fwd(m->out, m->in, m->w, m->N, m->In, m->Out);
    return weighted(m->out, m->wt, (size_t)m->N * m->Out);
}
static void test_matmul(void)
{
    struct mm m = {5, 7, 3, NULL, NULL, NULL, NULL};
    m.in = randn(35, 1); m.w = randn(21, 1); m.out = o->alloc(15); m.wt = randn(15, 1);
    real *din = o->alloc(35), *dw = o->alloc(21);
    o->matmul_bwd(din, dw, m.wt, m.in, m.w, m.N, m.In, m.Out);
    double e1 = fd_check(mm_loss, &m, m.in, din, 35), e2 = fd_check(mm_loss, &m, m.w, dw, 21);
    CHECK(e1 < TOL && e2 < TOL, "din %g dw %g", e1, e2);
    /* accumulation: a second backward doubles both */
    o->matmul_bwd(din, dw, m.wt, m.in, m.w, m.N, m.In, m.Out);
    real *din2 = o->alloc(35), *dw2 = o->alloc(21);
    o->matmul_bwd(din2, dw2, m.wt, m.in, m.w, m.N, m.In, m.Out);
    double acc = 0;
    for (int i = 0; i < 21; i++) acc = fmax(acc, fabs(dw[i] - 2 * dw2[i]));
    for (int i = 0; i < 35; i++) acc = fmax(acc, fabs(din[i] - 2 * din2[i]));
    CHECK(acc < 1e-12, "backward must accumulate: %g", acc);
    o->free(m.in); o->free(m.w); o->free(m.out); o->free(m.wt); o->free(din); o->free(dw);
    o->free(din2); o->free(dw2);
}

/* ---- embedding ---- */
struct emb { int N, d; int32_t tok[6]; real *table, *out, *wt; };
static double emb_loss(void *c)
{
    struct emb *e = c;
    o->embedding_fwd(e->out, e->tok, e->table, e->N, e->d);
    return weighted(e->out, e->wt, (size_t)e->N * e->d);
}
static void test_embedding(void)
{
    struct emb e = {6, 4, {1, 3, 1, 0, 4, 1}, NULL, NULL, NULL};
    e.table = randn(20, 1); e.out = o->alloc(24); e.wt = randn(24, 1);
    real *dt = o->alloc(20);
    o->embedding_bwd(dt, e.wt, e.tok, e.N, e.d);
    double err = fd_check(emb_loss, &e, e.table, dt, 20);
    CHECK(err < TOL, "dtable %g", err);
    CHECK(dt[2 * 4] == 0, "an unused row has no gradient");
    o->free(e.table); o->free(e.out); o->free(e.wt); o->free(dt);
}

/* ---- rmsnorm ---- */
struct rn { int N, d; real s; real *x, *g, *out, *rstd, *wt; };
static double rn_loss(void *c)
{
    struct rn *r = c;
    o->rmsnorm_fwd(r->out, r->rstd, r->x, r->g, r->N, r->d, r->s, 1e-6);
    return weighted(r->out, r->wt, (size_t)r->N * r->d);
}
static void test_rmsnorm(void)
{
    for (int k = 0; k < 2; k++) {
        struct rn r = {4, 8, k ? (real)(1 / sqrt(3.0)) : 1, NULL, NULL, NULL, NULL, NULL};
        r.x = randn(32, 2); r.g = randn(8, 1); r.out = o->alloc(32); r.rstd = o->alloc(4);
        r.wt = randn(32, 1);
        real *dx = o->alloc(32), *dg = o->alloc(8);
        rn_loss(&r);
        o->rmsnorm_bwd(dx, dg, r.wt, r.x, r.g, r.rstd, r.N, r.d, r.s);
        double e1 = fd_check(rn_loss, &r, r.x, dx, 32), e2 = fd_check(rn_loss, &r, r.g, dg, 8);
        CHECK(e1 < TOL && e2 < TOL, "s=%g dx %g dg %g", (double)r.s, e1, e2);
        /* the forward is the formula: s·g·x/√(mean x² + eps) */
        rn_loss(&r);
        double ms = 0;
        for (int j = 0; j < 8; j++) ms += r.x[j] * r.x[j];
        ms /= 8;
        CHECK(fabs(r.out[3] - r.s * r.g[3] * r.x[3] / sqrt(ms + 1e-6)) < 1e-12, "forward formula");
        o->free(r.x); o->free(r.g); o->free(r.out); o->free(r.rstd); o->free(r.wt); o->free(dx);
        o->free(dg);
    }
}

/* ---- rope ---- */
struct rp { int B, T, nh, hd; real *in, *out, *wt; };
static double rp_loss(void *c)
{
    struct rp *r = c;
    o->rope(r->out, r->in, r->B, r->T, r->nh, r->hd, 10000, 1);
    return weighted(r->out, r->wt, (size_t)r->B * r->T * r->nh * r->hd);
}
static void test_rope(void)
{
    struct rp r = {2, 5, 2, 6, NULL, NULL, NULL};
    size_t n = 2 * 5 * 2 * 6;
    r.in = randn(n, 1); r.out = o->alloc(n); r.wt = randn(n, 1);
    real *din = o->alloc(n);
    o->rope(din, r.wt, r.B, r.T, r.nh, r.hd, 10000, -1);
    double err = fd_check(rp_loss, &r, r.in, din, n);
    CHECK(err < TOL, "din %g", err);
    /* rotate_half convention: position 0 is the identity; at position t the
     * pair (i, i+hd/2) turns by t·θ^(−2i/hd) */
    rp_loss(&r);
    CHECK(r.out[0] == r.in[0] && r.out[5] == r.in[5], "position 0 unchanged");
    size_t off = (size_t)(3 * 2 + 1) * 6; /* b 0, t 3, head 1 */
    double a = 3 * pow(10000, -2.0 * 1 / 6);
    double want = r.in[off + 1] * cos(a) - r.in[off + 4] * sin(a);
    CHECK(fabs(r.out[off + 1] - want) < 1e-12, "rotation of pair (1,4) at t=3: %g vs %g",
          (double)r.out[off + 1], want);
    o->free(r.in); o->free(r.out); o->free(r.wt); o->free(din);
}

/* ---- attention ---- */
struct at { int B, T, nh, hd; real *q, *k, *v, *out, *state, *wt; };
static double at_loss(void *c)
{
    struct at *a = c;
    o->attention_fwd(a->out, a->state, a->q, a->k, a->v, a->B, a->T, a->nh, a->hd);
    return weighted(a->out, a->wt, (size_t)a->B * a->T * a->nh * a->hd);
}
static void test_attention(void)
{
    struct at a = {2, 5, 2, 3, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t n = 2 * 5 * 2 * 3;
    a.q = randn(n, 1); a.k = randn(n, 1); a.v = randn(n, 1); a.out = o->alloc(n);
    a.wt = randn(n, 1); a.state = o->alloc(o->attn_state_size(a.B, a.T, a.nh));
    real *dq = o->alloc(n), *dk = o->alloc(n), *dv = o->alloc(n);
    at_loss(&a);
    o->attention_bwd(dq, dk, dv, a.wt, a.state, a.q, a.k, a.v, a.B, a.T, a.nh, a.hd);
    double e1 = fd_check(at_loss, &a, a.q, dq, n), e2 = fd_check(at_loss, &a, a.k, dk, n),
           e3 = fd_check(at_loss, &a, a.v, dv, n);
    CHECK(e1 < TOL && e2 < TOL && e3 < TOL, "dq %g dk %g dv %g", e1, e2, e3);
    /* causal: the first position attends only to itself, so its output is its own v */
    at_loss(&a);
    CHECK(fabs(a.out[0] - a.v[0]) < 1e-14 && fabs(a.out[3] - a.v[3]) < 1e-14, "causal mask");
    o->free(a.q); o->free(a.k); o->free(a.v); o->free(a.out); o->free(a.wt); o->free(a.state);
    o->free(dq); o->free(dk); o->free(dv);
}

/* ---- swiglu ---- */
struct sw { size_t n; real *g, *u, *out, *wt; };
static double sw_loss(void *c)
{
    struct sw *s = c;
    o->swiglu_fwd(s->out, s->g, s->u, s->n);
    return weighted(s->out, s->wt, s->n);
}
static void test_swiglu(void)
{
    struct sw s = {24, NULL, NULL, NULL, NULL};
    s.g = randn(24, 2); s.u = randn(24, 1); s.out = o->alloc(24); s.wt = randn(24, 1);
    real *dg = o->alloc(24), *du = o->alloc(24);
    o->swiglu_bwd(dg, du, s.wt, s.g, s.u, s.n);
    double e1 = fd_check(sw_loss, &s, s.g, dg, 24), e2 = fd_check(sw_loss, &s, s.u, du, 24);
    CHECK(e1 < TOL && e2 < TOL, "dgate %g dup %g", e1, e2);
    o->free(s.g); o->free(s.u); o->free(s.out); o->free(s.wt); o->free(dg); o->free(du);
}

/* ---- channel scale (LayerScale, SkipInit) ---- */
struct cs { int N, d, c; real *in, *lam, *out, *wt; };
static double cs_loss(void *c)
{
    struct cs *s = c;
    o->chscale_fwd(s->out, s->in, s->lam, s->N, s->d, s->c);
    return weighted(s->out, s->wt, (size_t)s->N * s->d);
}
static void test_chscale(void)
{
    for (int c = 1; c <= 6; c += 5) {
        struct cs s = {4, 6, c, NULL, NULL, NULL, NULL};
        s.in = randn(24, 1); s.lam = randn((size_t)c, 1); s.out = o->alloc(24); s.wt = randn(24, 1);
        real *din = o->alloc(24), *dl = o->alloc((size_t)c);
        o->chscale_bwd(din, dl, s.wt, s.in, s.lam, s.N, s.d, s.c);
        double e1 = fd_check(cs_loss, &s, s.in, din, 24),
               e2 = fd_check(cs_loss, &s, s.lam, dl, (size_t)c);
        CHECK(e1 < TOL && e2 < TOL, "c=%d din %g dlam %g", c, e1, e2);
        o->free(s.in); o->free(s.lam); o->free(s.out); o->free(s.wt); o->free(din); o->free(dl);
    }
}

/* ---- cross entropy ---- */
struct ce { int N, V; int32_t tgt[4]; real *logits, *work, *loss; };
static double ce_loss(void *c)
{
    struct ce *e = c;
    o->copy(e->work, e->logits, (size_t)e->N * e->V);
    o->cross_entropy(e->loss, e->work, e->tgt, e->N, e->V, 1);
    double s = 0;
    for (int i = 0; i < e->N; i++) s += e->loss[i];
    return s;
}
static void test_cross_entropy(void)
{
    struct ce e = {4, 7, {3, -1, 0, 6}, NULL, NULL, NULL};
    e.logits = randn(28, 2); e.work = o->alloc(28); e.loss = o->alloc(4);
    real *grad = o->alloc(28);
    o->copy(grad, e.logits, 28);
    o->cross_entropy(e.loss, grad, e.tgt, e.N, e.V, 1);
    double err = fd_check(ce_loss, &e, e.logits, grad, 28);
    CHECK(err < TOL, "dlogits %g", err);
    CHECK(e.loss[1] == 0 && grad[7] == 0 && grad[13] == 0, "ignored target: no loss, no gradient");
    double lse = 0;
    for (int j = 0; j < 7; j++) lse += exp(e.logits[j]);
    CHECK(fabs(e.loss[0] - (log(lse) - e.logits[3])) < 1e-12, "loss is logsumexp − logit");
    o->free(e.logits); o->free(e.work); o->free(e.loss); o->free(grad);
}

/* ---- Adam against the textbook update ---- */
static void test_adam(void)
{
    size_t n = 10;
    real *p = randn(n, 1), *g = randn(n, 1), *m = o->alloc(n), *v = o->alloc(n);
    real p0[10], mm[10] = {0}, vv[10] = {0};
    memcpy(p0, p, sizeof(p0));
    double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
    for (long t = 1; t <= 3; t++) {
        o->adam(p, g, m, v, n, lr, b1, b2, eps, wd, t);
        for (size_t i = 0; i < n; i++) {
            mm[i] = b1 * mm[i] + (1 - b1) * g[i];
            vv[i] = b2 * vv[i] + (1 - b2) * g[i] * g[i];
            double mh = mm[i] / (1 - pow(b1, t)), vh = vv[i] / (1 - pow(b2, t));
            p0[i] = p0[i] - lr * wd * p0[i] - lr * mh / (sqrt(vh) + eps);
        }
    }
    double err = 0;
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs(p[i] - p0[i]));
    CHECK(err < 1e-12, "adam differs from the formula by %g", err);
    o->free(p); o->free(g); o->free(m); o->free(v);
}

/* ---- reductions ---- */
static void test_reductions(void)
{
    size_t n = 1001;
    real *x = randn(n, 1), *y = randn(n, 1);
    double s = 0, ss = 0, dt = 0;
    for (size_t i = 0; i < n; i++) { s += x[i]; ss += x[i] * x[i]; dt += x[i] * y[i]; }
    CHECK(fabs(o->sum(x, n) - s) < 1e-10 && fabs(o->sumsq(x, n) - ss) < 1e-10 &&
          fabs(o->dot(x, y, n) - dt) < 1e-10, "sum/sumsq/dot");
    /* angular distance: identical rows 0, opposite rows 1, orthogonal ½ */
    real a[6] = {1, 0, 2, 0, 1, 0}, b[6] = {-1, 0, 2, 0, 0, 3};
    double ang = o->angular_sum(a, b, 3, 2);
    CHECK(fabs(ang - (1.0 + 0.0 + 0.5)) < 1e-12, "angular %g", ang);
    o->free(x); o->free(y);
}

int main(void)
{
    rng_seed(&R, 42, 0);
    RUN(test_matmul);
    RUN(test_embedding);
    RUN(test_rmsnorm);
    RUN(test_rope);
    RUN(test_attention);
    RUN(test_swiglu);
    RUN(test_chscale);
    RUN(test_cross_entropy);
    RUN(test_adam);
    RUN(test_reductions);
    CHECK_EXIT();
}
