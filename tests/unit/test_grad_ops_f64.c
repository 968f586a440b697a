/* Every CPU op's backward against central finite differences, in double.
 * Each check builds L = Σ w ⊙ op(inputs) with random w, takes the analytic
 * gradient from the op's backward, and compares it with (L(x+h) − L(x−h))/2h
 * on every input element. The CPU backend's act is real, so act buffers
 * are used here as the reals they hold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu.h"
#include "kernels/ops.h"
#include "tests/check.h"
#include "trainer/rng.h"

static const struct ops *o = &ops_cpu;
static struct rng R;

#define AS(p) ((act *)(p))

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

static double max_diff(const real *a, const real *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

#define TOL 1e-6

/* ---- matmul: out = a·(in·wᵀ) + b·res ---- */
struct mm { int N, In, Out; real a, b; real *in, *w, *out, *wt, *res; };
static double mm_loss(void *c)
{
    struct mm *m = c;
    o->matmul_fwd(AS(m->out), AS(m->in), AS(m->w), m->N, m->In, m->Out, m->a, AS(m->res), m->b);
    return weighted(m->out, m->wt, (size_t)m->N * m->Out);
}
static void test_matmul(void)
{
    struct mm m = {5, 7, 3, 0.7, -1.3, NULL, NULL, NULL, NULL, NULL};
    m.in = randn(35, 1); m.w = randn(21, 1); m.out = o->alloc(15); m.wt = randn(15, 1);
    m.res = randn(15, 1);
    real *din = o->alloc(35), *dw = o->alloc(21), *dres = o->alloc(15);
    o->matmul_bwd(AS(din), dw, AS(m.wt), AS(m.in), AS(m.w), m.N, m.In, m.Out, m.a, NULL, 0);
    double e1 = fd_check(mm_loss, &m, m.in, din, 35), e2 = fd_check(mm_loss, &m, m.w, dw, 21);
    for (int i = 0; i < 15; i++)
        dres[i] = m.b * m.wt[i];
    double e3 = fd_check(mm_loss, &m, m.res, dres, 15);
    CHECK(e1 < TOL && e2 < TOL && e3 < TOL, "din %g dw %g dres %g", e1, e2, e3);
    /* dw accumulates; din is overwritten, with b·res added */
    real *din2 = o->alloc(35), *r2 = randn(35, 1);
    o->matmul_bwd(AS(din2), dw, AS(m.wt), AS(m.in), AS(m.w), m.N, m.In, m.Out, m.a, AS(r2), 2);
    real *dw1 = o->alloc(21);
    o->matmul_bwd(NULL, dw1, AS(m.wt), AS(m.in), AS(m.w), m.N, m.In, m.Out, m.a, NULL, 0);
    double acc = 0;
    for (int i = 0; i < 21; i++) acc = fmax(acc, fabs(dw[i] - 2 * dw1[i]));
    for (int i = 0; i < 35; i++) acc = fmax(acc, fabs(din2[i] - (din[i] + 2 * r2[i])));
    CHECK(acc < 1e-12, "dw must accumulate and din take b·res: %g", acc);
    /* in place: res == din */
    memcpy(din2, r2, 35 * sizeof(real));
    o->matmul_bwd(AS(din2), NULL, AS(m.wt), NULL, AS(m.w), m.N, m.In, m.Out, m.a, AS(din2), 2);
    acc = 0;
    for (int i = 0; i < 35; i++) acc = fmax(acc, fabs(din2[i] - (din[i] + 2 * r2[i])));
    CHECK(acc < 1e-12, "din with res in place: %g", acc);
    o->free(m.in); o->free(m.w); o->free(m.out); o->free(m.wt); o->free(m.res); o->free(din);
    o->free(dw); o->free(dres); o->free(din2); o->free(r2); o->free(dw1);
}

/* ---- embedding ---- */
struct emb { int N, d; int32_t tok[6]; real *table, *out, *wt; };
static double emb_loss(void *c)
{
    struct emb *e = c;
    o->embedding_fwd(AS(e->out), e->tok, AS(e->table), e->N, e->d);
    return weighted(e->out, e->wt, (size_t)e->N * e->d);
}
static void test_embedding(void)
{
    struct emb e = {6, 4, {1, 3, 1, 0, 4, 1}, NULL, NULL, NULL};
    e.table = randn(20, 1); e.out = o->alloc(24); e.wt = randn(24, 1);
    real *dt = o->alloc(20);
    /* rows grouped by token: 0 {3}, 1 {0, 2, 5}, 3 {1}, 4 {4}, then two
     * empty groups, as the model pads them */
    int32_t pos[6] = {3, 0, 2, 5, 1, 4}, start[7] = {0, 1, 4, 5, 6, 6, 6};
    o->embedding_bwd(dt, AS(e.wt), e.tok, pos, start, 6, e.d);
    double err = fd_check(emb_loss, &e, e.table, dt, 20);
    CHECK(err < TOL, "dtable %g", err);
    CHECK(dt[2 * 4] == 0, "an unused row has no gradient");
    o->free(e.table); o->free(e.out); o->free(e.wt); o->free(dt);
}

/* ---- rmsnorm: out = s_out·g ⊙ u·rstd(u) + b·res, u = s_in·x ---- */
struct rn { int N, d; real s_in, s_out, b; real *x, *g, *out, *rstd, *wt, *res; };
static double rn_loss(void *c)
{
    struct rn *r = c;
    o->rmsnorm_fwd(AS(r->out), r->rstd, AS(r->x), r->g, r->N, r->d, r->s_in, r->s_out, 1e-6,
                   AS(r->res), r->b);
    return weighted(r->out, r->wt, (size_t)r->N * r->d);
}
static void test_rmsnorm(void)
{
    real scales[3][3] = {{1, 1, 0}, {1, (real)(1 / sqrt(3.0)), 0}, {(real)(1 / sqrt(5.0)), 1, 1.7}};
    for (int k = 0; k < 3; k++) {
        struct rn r = {4, 8, scales[k][0], scales[k][1], scales[k][2], NULL, NULL, NULL, NULL, NULL,
                       NULL};
        r.x = randn(32, 2); r.g = randn(8, 1); r.out = o->alloc(32); r.rstd = o->alloc(4);
        r.wt = randn(32, 1);
        r.res = k == 2 ? randn(32, 1) : NULL;
        real *dx = o->alloc(32), *dg = o->alloc(8), *dres = o->alloc(32);
        rn_loss(&r);
        o->rmsnorm_bwd(AS(dx), dg, AS(r.wt), AS(r.x), r.g, r.rstd, r.N, r.d, r.s_in, r.s_out,
                       NULL, 0);
        double e1 = fd_check(rn_loss, &r, r.x, dx, 32), e2 = fd_check(rn_loss, &r, r.g, dg, 8);
        CHECK(e1 < TOL && e2 < TOL, "s_in=%g s_out=%g dx %g dg %g", (double)r.s_in,
              (double)r.s_out, e1, e2);
        /* the residual input: dx = b·res + the norm's own gradient */
        real *res = randn(32, 1), *dx2 = o->alloc(32);
        o->rmsnorm_bwd(AS(dx2), dg, AS(r.wt), AS(r.x), r.g, r.rstd, r.N, r.d, r.s_in, r.s_out,
                       AS(res), 0.5);
        double worst = 0;
        for (int i = 0; i < 32; i++) worst = fmax(worst, fabs(dx2[i] - dx[i] - 0.5 * res[i]));
        CHECK(worst < 1e-12, "dx with res %g", worst);
        if (r.res) {
            for (int i = 0; i < 32; i++) dres[i] = r.b * r.wt[i];
            double e3 = fd_check(rn_loss, &r, r.res, dres, 32);
            CHECK(e3 < TOL, "dres %g", e3);
        }
        /* the forward is the formula */
        rn_loss(&r);
        double ms = 0;
        for (int j = 0; j < 8; j++) ms += r.s_in * r.x[j] * r.s_in * r.x[j];
        ms /= 8;
        double want = r.s_out * r.g[3] * r.s_in * r.x[3] / sqrt(ms + 1e-6) + (r.res ? r.b * r.res[3] : 0);
        CHECK(fabs(r.out[3] - want) < 1e-12, "forward formula");
        o->free(r.x); o->free(r.g); o->free(r.out); o->free(r.rstd); o->free(r.wt); o->free(dx);
        o->free(dg); o->free(dres); o->free(res); o->free(dx2);
        if (r.res) o->free(r.res);
    }
}

/* ---- rope (attention's helper): one head's rows, strided ---- */
enum { RP_T = 5, RP_HD = 6, RP_LD = 20 };
static void rope_tables(real *cs, real *sn, int T, int hd)
{
    for (int t = 0; t < T; t++)
        for (int i = 0; i < hd / 2; i++) {
            double a = t * pow(10000, -2.0 * i / hd);
            cs[t * hd / 2 + i] = cos(a);
            sn[t * hd / 2 + i] = sin(a);
        }
}
struct rp { real *in, *work, *wt, *cos, *sin; };
static double rp_loss(void *c)
{
    struct rp *r = c;
    cpu_rope_head(r->work, RP_HD, r->in, RP_LD, RP_T, RP_HD, r->cos, r->sin, 1);
    return weighted(r->work, r->wt, RP_T * RP_HD);
}
static void test_rope(void)
{
    struct rp r;
    size_t n = RP_T * RP_LD;
    r.in = randn(n, 1); r.work = o->alloc(RP_T * RP_HD); r.wt = randn(RP_T * RP_HD, 1);
    r.cos = o->alloc(RP_T * RP_HD / 2); r.sin = o->alloc(RP_T * RP_HD / 2);
    rope_tables(r.cos, r.sin, RP_T, RP_HD);
    /* the transpose, from the packed weights back into the strided rows */
    real *din = o->alloc(n);
    memset(din, 0, n * sizeof(real));
    cpu_rope_head(din, RP_LD, r.wt, RP_HD, RP_T, RP_HD, r.cos, r.sin, -1);
    double err = fd_check(rp_loss, &r, r.in, din, n);
    CHECK(err < TOL, "din %g", err);
    /* rotate_half convention: position 0 is the identity; at position t the
     * pair (i, i+hd/2) turns by t·θ^(−2i/hd) */
    rp_loss(&r);
    CHECK(r.work[0] == r.in[0] && r.work[5] == r.in[5], "position 0 unchanged");
    double a = 3 * pow(10000, -2.0 * 1 / RP_HD);
    double want = r.in[3 * RP_LD + 1] * cos(a) - r.in[3 * RP_LD + 4] * sin(a);
    CHECK(fabs(r.work[3 * RP_HD + 1] - want) < 1e-12, "rotation of pair (1,4) at t=3: %g vs %g",
          (double)r.work[3 * RP_HD + 1], want);
    o->free(r.in); o->free(r.work); o->free(r.wt); o->free(r.cos); o->free(r.sin); o->free(din);
}

/* ---- attention on packed [q | k | v] rows, q and k rotated inside ---- */
struct at { int B, T, nh, hd; real *qkv, *out, *state, *wt, *cos, *sin; };
static double at_loss(void *c)
{
    struct at *a = c;
    o->attention_fwd(AS(a->out), a->state, AS(a->qkv), a->cos, a->sin, a->B, a->T, a->nh, a->hd);
    return weighted(a->out, a->wt, (size_t)a->B * a->T * a->nh * a->hd);
}
static void test_attention(void)
{
    struct at a = {2, 5, 2, 4, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t n = 2 * 5 * 2 * 4;
    a.qkv = randn(3 * n, 1); a.out = o->alloc(n);
    a.wt = randn(n, 1); a.state = o->alloc(o->attn_state_size(a.B, a.T, a.nh, a.hd));
    a.cos = o->alloc(a.T * a.hd / 2); a.sin = o->alloc(a.T * a.hd / 2);
    rope_tables(a.cos, a.sin, a.T, a.hd);
    real *dqkv = o->alloc(3 * n);
    at_loss(&a);
    o->attention_bwd(AS(dqkv), AS(a.wt), AS(a.out), a.state, AS(a.qkv), a.cos, a.sin, a.B, a.T,
                     a.nh, a.hd);
    double err = fd_check(at_loss, &a, a.qkv, dqkv, 3 * n);
    CHECK(err < TOL, "dqkv %g", err);
    /* causal: the first position attends only to itself, so its output is its own v */
    at_loss(&a);
    int d = a.nh * a.hd;
    CHECK(fabs(a.out[0] - a.qkv[2 * d]) < 1e-14 && fabs(a.out[3] - a.qkv[2 * d + 3]) < 1e-14,
          "causal mask");
    /* the rotation reaches the scores: with the tables of position 0 at
     * every position (no rotation) the output differs */
    real *keep = o->alloc(n);
    memcpy(keep, a.out, n * sizeof(real));
    for (int t = 1; t < a.T; t++)
        for (int i = 0; i < a.hd / 2; i++) {
            a.cos[t * a.hd / 2 + i] = 1;
            a.sin[t * a.hd / 2 + i] = 0;
        }
    at_loss(&a);
    CHECK(max_diff(keep, a.out, n) > 1e-3, "rotation changes the output: %g",
          max_diff(keep, a.out, n));
    o->free(a.qkv); o->free(a.out); o->free(a.wt); o->free(a.state); o->free(dqkv);
    o->free(a.cos); o->free(a.sin); o->free(keep);
}

/* ---- swiglu on [gate | up] rows ---- */
enum { SW_N = 4, SW_F = 6 };
struct sw { real *gu, *h, *wt; };
static double sw_loss(void *c)
{
    struct sw *s = c;
    o->swiglu_fwd(AS(s->h), AS(s->gu), SW_N, SW_F);
    return weighted(s->h, s->wt, SW_N * SW_F);
}
static void test_swiglu(void)
{
    struct sw s;
    s.gu = randn(2 * SW_N * SW_F, 2); s.h = o->alloc(SW_N * SW_F); s.wt = randn(SW_N * SW_F, 1);
    real *dgu = o->alloc(2 * SW_N * SW_F), *h2 = o->alloc(SW_N * SW_F);
    o->swiglu_bwd(AS(dgu), AS(h2), AS(s.wt), AS(s.gu), SW_N, SW_F);
    double err = fd_check(sw_loss, &s, s.gu, dgu, 2 * SW_N * SW_F);
    CHECK(err < TOL, "dgu %g", err);
    sw_loss(&s);
    CHECK(max_diff(h2, s.h, SW_N * SW_F) < 1e-14, "the backward's h is the forward's");
    double g = s.gu[2 * SW_F + 2], u = s.gu[2 * SW_F + SW_F + 2];
    CHECK(fabs(s.h[SW_F + 2] - g / (1 + exp(-g)) * u) < 1e-14, "row 1 reads its own gate and up");
    o->free(s.gu); o->free(s.h); o->free(s.wt); o->free(dgu); o->free(h2);
}

/* ---- channel scale (LayerScale, SkipInit) ---- */
struct cs { int N, d, c; real *in, *lam, *out, *wt; };
static double cs_loss(void *c)
{
    struct cs *s = c;
    o->chscale_fwd(AS(s->out), AS(s->in), s->lam, s->N, s->d, s->c);
    return weighted(s->out, s->wt, (size_t)s->N * s->d);
}
static void test_chscale(void)
{
    for (int c = 1; c <= 6; c += 5) {
        struct cs s = {4, 6, c, NULL, NULL, NULL, NULL};
        s.in = randn(24, 1); s.lam = randn((size_t)c, 1); s.out = o->alloc(24); s.wt = randn(24, 1);
        real *din = randn(24, 1), *dl = o->alloc((size_t)c);
        o->chscale_bwd(AS(din), dl, AS(s.wt), AS(s.in), s.lam, s.N, s.d, s.c);
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
    o->cross_entropy(e->loss, AS(e->work), e->tgt, e->N, e->V, 1);
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
    o->cross_entropy(e.loss, AS(grad), e.tgt, e.N, e.V, 1);
    double err = fd_check(ce_loss, &e, e.logits, grad, 28);
    CHECK(err < TOL, "dlogits %g", err);
    CHECK(e.loss[1] == 0 && grad[7] == 0 && grad[13] == 0, "ignored target: no loss, no gradient");
    double lse = 0;
    for (int j = 0; j < 7; j++) lse += exp(e.logits[j]);
    CHECK(fabs(e.loss[0] - (log(lse) - e.logits[3])) < 1e-12, "loss is logsumexp − logit");
    /* without a gradient the logits stay, and the loss is the same */
    real l0 = e.loss[0];
    o->copy(grad, e.logits, 28);
    o->cross_entropy(e.loss, AS(grad), e.tgt, e.N, e.V, 0);
    CHECK(max_diff(grad, e.logits, 28) == 0 && fabs(e.loss[0] - l0) < 1e-14,
          "grad_scale 0 leaves the logits");
    o->free(e.logits); o->free(e.work); o->free(e.loss); o->free(grad);
}

/* ---- Adam against the textbook update, with and without the clip ---- */
static void test_adam(void)
{
    size_t n = 10;
    for (int clipped = 0; clipped < 2; clipped++) {
        real *p = randn(n, 1), *g = randn(n, 1), *m = o->alloc(n), *v = o->alloc(n);
        real p0[10], mm[10] = {0}, vv[10] = {0};
        memcpy(p0, p, sizeof(p0));
        double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1, norm = 0;
        for (size_t i = 0; i < n; i++) norm += g[i] * g[i];
        norm = sqrt(norm);
        double clip = clipped ? norm / 4 : 0, gs = clipped ? 0.25 : 1;
        for (long t = 1; t <= 3; t++) {
            double got = o->adam(p, AS(p), g, m, v, n, lr, b1, b2, eps, wd, t, clip, NULL);
            CHECK(fabs(got - norm) < 1e-12, "adam returns ‖g‖ %g, not %g", got, norm);
            for (size_t i = 0; i < n; i++) {
                double gi = gs * g[i];
                mm[i] = b1 * mm[i] + (1 - b1) * gi;
                vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
                double mh = mm[i] / (1 - pow(b1, t)), vh = vv[i] / (1 - pow(b2, t));
                p0[i] = p0[i] - lr * wd * p0[i] - lr * mh / (sqrt(vh) + eps);
            }
        }
        double err = max_diff(p, p0, n);
        CHECK(err < 1e-12, "adam (clip %g) differs from the formula by %g", clip, err);
        o->free(p); o->free(g); o->free(m); o->free(v);
    }
}

/* ---- reductions ---- */
static void test_reductions(void)
{
    size_t n = 1001;
    real *x = randn(n, 1), *y = randn(n, 1);
    double s = 0, ss = 0, dd = 0;
    for (size_t i = 0; i < n; i++) { s += x[i]; ss += x[i] * x[i]; dd += (x[i] - y[i]) * (x[i] - y[i]); }
    CHECK(fabs(o->sum(x, n) - s) < 1e-10 && fabs(o->sumsq(x, n) - ss) < 1e-10 &&
          fabs(o->dist2(x, y, n) - dd) < 1e-10 && fabs(o->act_sum(AS(x), n) - s) < 1e-10 &&
          fabs(o->act_sumsq(AS(x), n) - ss) < 1e-10, "sum/sumsq/dist2");
    /* angular distance: identical rows 0, opposite rows 1, orthogonal ½ */
    real a[6] = {1, 0, 2, 0, 1, 0}, b[6] = {-1, 0, 2, 0, 0, 3};
    double ang = o->angular_sum(AS(a), AS(b), 3, 2);
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
