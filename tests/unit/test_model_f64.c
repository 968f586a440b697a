/* The whole model in double: (1) the gradient of every preset and of the
 * LNS position ablations against central finite differences; (2) the
 * forward of each placement against a naive, independent implementation of
 * the paper's block formulas (docs/variants.md), block output by block output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "trainer/model.h"
#include "trainer/rng.h"

enum { D = 16, H = 2, F = 24, V = 11, T = 8, B = 2 };

static int32_t tok[B * T], tgt[B * T];

static void make_batch(void)
{
    struct rng r;
    rng_seed(&r, 7, 1);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int32_t)(rng_next(&r) % V);
        tgt[i] = i % 5 == 4 ? -1 : (int32_t)(rng_next(&r) % V);
    }
}

static int build(struct model *m, const struct norm_variant *v, int L)
{
    struct model_config c = {.dim = D, .n_layers = L, .n_heads = H, .ffn_dim = F, .vocab = V,
                             .seq_len = T, .norm = *v, .rope_theta = 10000, .norm_eps = 1e-6,
                             .embed_std = 0.02};
    char err[256];
    if (model_create(m, &ops_cpu, &c, B, err, sizeof(err)) || model_init_weights(m, 3, err, sizeof(err))) {
        CHECK(0, "model: %s", err);
        return -1;
    }
    /* move gains and branch scales off their initial constants so that a
     * gradient which ignored them would show */
    struct rng r;
    rng_seed(&r, 11, 2);
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        if (p->ndim == 1)
            for (size_t i = 0; i < p->n; i++)
                m->params[param_index(p, i)] += 0.3 * rng_normal(&r);
    }
    return 0;
}

static double loss(struct model *m) { return model_forward(m, tok, tgt, B, 0); }

static void grad_check(const struct norm_variant *v, const char *what)
{
    struct model m;
    if (build(&m, v, 4))
        return;
    memset(m.grads, 0, m.n_params * sizeof(real));
    model_forward(&m, tok, tgt, B, 1);
    model_backward(&m);
    /* every tensor, a spread of its elements */
    double worst = 0;
    const char *worst_name = "";
    for (int t = 0; t < m.n_tensors; t++) {
        const struct param_info *p = &m.info[t];
        size_t stride = p->n > 12 ? p->n / 12 : 1;
        for (size_t i = t % 3; i < p->n; i += stride) {
            real *x = &m.params[param_index(p, i)];
            real keep = *x, h = 1e-5;
            *x = keep + h;
            double lp = loss(&m);
            *x = keep - h;
            double lm = loss(&m);
            *x = keep;
            double num = (lp - lm) / (2 * h), an = m.grads[param_index(p, i)];
            /* the floor absorbs round-off in the difference of two losses of ~60
             * (≈1e-10 here), well below any gradient a bug would leave */
            double err = fabs(num - an) / fmax(1e-4, fabs(num) + fabs(an));
            if (err > worst) {
                worst = err;
                worst_name = p->name;
            }
        }
    }
    CHECK(worst < 1e-5, "%s: worst relative error %g in %s", what, worst, worst_name);
    model_destroy(&m);
}

static void test_gradients_every_preset(void)
{
    const char *presets[] = {"pre", "lns", "post", "deepnorm", "mixln", "scaled_init",
                             "lns_scaled_init", "sandwich", "layerscale", "skipinit",
                             "depth_scaled_init"};
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        struct norm_variant v;
        CHECK(variant_preset(presets[i], &v) == 0, "preset %s", presets[i]);
        grad_check(&v, presets[i]);
    }
}

static void test_gradients_lns_positions(void)
{
    int positions[] = {LNS_BEFORE_LN, LNS_AFTER_SUBLAYER, LNS_AFTER_RESIDUAL};
    for (int i = 0; i < 3; i++) {
        struct norm_variant v;
        variant_preset("lns", &v);
        v.lns_position = positions[i];
        grad_check(&v, variant_enum_name("lns_position", positions[i]));
        v.placement = PLACE_POST;
        grad_check(&v, "post with lns position");
    }
    struct norm_variant v;
    variant_preset("lns", &v);
    v.lns_sublayers = LNS_ATTN;
    grad_check(&v, "lns attn only");
    v.lns_sublayers = LNS_FFN;
    v.placement = PLACE_SANDWICH;
    grad_check(&v, "lns ffn only, sandwich");
}

/* ---- the naive reference ---- */

static const real *P(struct model *m, int layer, enum param_kind k)
{
    const struct param_info *p = model_param(m, layer, k);
    return p ? m->params + p->offset : NULL;
}

static void ref_norm(double *y, const double *x, const real *g, double s)
{
    for (int t = 0; t < B * T; t++) {
        double ms = 0;
        for (int j = 0; j < D; j++) ms += x[t * D + j] * x[t * D + j];
        double r = 1 / sqrt(ms / D + 1e-6);
        for (int j = 0; j < D; j++) y[t * D + j] = s * g[j] * x[t * D + j] * r;
    }
}

static void ref_linear(double *y, const double *x, const real *w, int in, int out)
{
    for (int t = 0; t < B * T; t++)
        for (int o = 0; o < out; o++) {
            double a = 0;
            for (int i = 0; i < in; i++) a += x[t * in + i] * w[o * in + i];
            y[t * out + o] = a;
        }
}

static void ref_rope(double *x)
{
    int hd = D / H;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++) {
                double *v = x + ((b * T + t) * H + h) * hd;
                for (int i = 0; i < hd / 2; i++) {
                    double a = t / pow(10000.0, 2.0 * i / hd), x1 = v[i], x2 = v[i + hd / 2];
                    v[i] = x1 * cos(a) - x2 * sin(a);
                    v[i + hd / 2] = x2 * cos(a) + x1 * sin(a);
                }
            }
}

static void ref_attn(double *out, struct model *m, int l, const double *x)
{
    int hd = D / H;
    double q[B * T * D], k[B * T * D], v[B * T * D], a[B * T * D];
    ref_linear(q, x, P(m, l, P_Q), D, D);
    ref_linear(k, x, P(m, l, P_K), D, D);
    ref_linear(v, x, P(m, l, P_V), D, D);
    ref_rope(q);
    ref_rope(k);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double sc[T], mx = -1e300, z = 0;
                for (int j = 0; j <= i; j++) {
                    sc[j] = 0;
                    for (int e = 0; e < hd; e++)
                        sc[j] += q[(b * T + i) * D + h * hd + e] * k[(b * T + j) * D + h * hd + e];
                    sc[j] /= sqrt(hd);
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j <= i; j++) z += (sc[j] = exp(sc[j] - mx));
                for (int e = 0; e < hd; e++) {
                    double acc = 0;
                    for (int j = 0; j <= i; j++) acc += sc[j] / z * v[(b * T + j) * D + h * hd + e];
                    a[(b * T + i) * D + h * hd + e] = acc;
                }
            }
    ref_linear(out, a, P(m, l, P_O), D, D);
}

static void ref_mlp(double *out, struct model *m, int l, const double *x)
{
    double g[B * T * F], u[B * T * F];
    ref_linear(g, x, P(m, l, P_GATE), D, F);
    ref_linear(u, x, P(m, l, P_UP), D, F);
    for (int i = 0; i < B * T * F; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
    ref_linear(out, g, P(m, l, P_DOWN), F, D);
}

enum form { PRE, POST, SANDWICH };

/* One block as docs/variants.md writes it. s: the LNS scale; alpha: DeepNorm's. */
static void ref_block(double *y, struct model *m, int l, const double *x, enum form f, double s,
                      double alpha)
{
    int n = B * T * D;
    double *t1 = malloc(n * sizeof(double)), *t2 = malloc(n * sizeof(double)),
           *h = malloc(n * sizeof(double));
    if (f == PRE) {            /* h = x + Attn(s·N1(x)); y = h + MLP(s·N2(h)) */
        ref_norm(t1, x, P(m, l, P_NORM_IN_ATTN), s);
        ref_attn(t2, m, l, t1);
        for (int i = 0; i < n; i++) h[i] = x[i] + t2[i];
        ref_norm(t1, h, P(m, l, P_NORM_IN_FFN), s);
        ref_mlp(t2, m, l, t1);
        for (int i = 0; i < n; i++) y[i] = h[i] + t2[i];
    } else if (f == POST) {    /* h = N1(α·x + Attn(x)); y = N2(α·h + MLP(h)) */
        ref_attn(t2, m, l, x);
        for (int i = 0; i < n; i++) t1[i] = alpha * x[i] + t2[i];
        ref_norm(h, t1, P(m, l, P_NORM_IN_ATTN), 1);
        ref_mlp(t2, m, l, h);
        for (int i = 0; i < n; i++) t1[i] = alpha * h[i] + t2[i];
        ref_norm(y, t1, P(m, l, P_NORM_IN_FFN), 1);
    } else {                   /* h = x + N2(Attn(N1 x)); y = h + N4(MLP(N3 h)) */
        ref_norm(t1, x, P(m, l, P_NORM_IN_ATTN), 1);
        ref_attn(t2, m, l, t1);
        ref_norm(t1, t2, P(m, l, P_NORM_OUT_ATTN), 1);
        for (int i = 0; i < n; i++) h[i] = x[i] + t1[i];
        ref_norm(t1, h, P(m, l, P_NORM_IN_FFN), 1);
        ref_mlp(t2, m, l, t1);
        ref_norm(t1, t2, P(m, l, P_NORM_OUT_FFN), 1);
        for (int i = 0; i < n; i++) y[i] = h[i] + t1[i];
    }
    free(t1); free(t2); free(h);
}

/* Runs the model and the reference block by block; the worst relative
 * difference of any block output. form_of(l) and s_of(l) give the recipe. */
static double compare(const char *preset, int L, enum form (*form_of)(int l, int L),
                      double (*s_of)(int l), double alpha)
{
    struct norm_variant v;
    variant_preset(preset, &v);
    struct model m;
    if (build(&m, &v, L))
        return 1;
    model_forward(&m, tok, tgt, B, 0);
    int n = B * T * D;
    double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double)), worst = 0;
    const real *emb = P(&m, 0, P_EMBED);
    for (int t = 0; t < B * T; t++)
        for (int j = 0; j < D; j++) x[t * D + j] = emb[tok[t] * D + j];
    for (int l = 1; l <= L; l++) {
        ref_block(y, &m, l, x, form_of(l, L), s_of(l), alpha);
        double num = 0, den = 0;
        for (int i = 0; i < n; i++) {
            const real *out = (const real *)m.stream[l];
            num += (y[i] - out[i]) * (y[i] - out[i]);
            den += y[i] * y[i];
        }
        worst = fmax(worst, sqrt(num / den));
        memcpy(x, y, n * sizeof(double));
    }
    free(x); free(y);
    model_destroy(&m);
    return worst;
}

static enum form always_pre(int l, int L) { (void)l; (void)L; return PRE; }
static enum form always_post(int l, int L) { (void)l; (void)L; return POST; }
static enum form always_sandwich(int l, int L) { (void)l; (void)L; return SANDWICH; }
static enum form mix(int l, int L) { return l <= L / 4 ? POST : PRE; }
static double one(int l) { (void)l; return 1; }
static double inv_sqrt(int l) { return 1 / sqrt((double)l); }

static void test_pre_matches_formula(void)
{
    double e = compare("pre", 3, always_pre, one, 1);
    CHECK(e < 1e-12, "pre differs by %g", e);
}

static void test_lns_is_pre_scaled_by_inv_sqrt_depth(void)
{
    double e = compare("lns", 3, always_pre, inv_sqrt, 1);
    CHECK(e < 1e-12, "lns differs from the 1/sqrt(l) formula by %g", e);
    /* and it is not Pre-LN: the scale must matter */
    double e2 = compare("lns", 3, always_pre, one, 1);
    CHECK(e2 > 1e-3, "lns equals unscaled pre (%g): the scale is not applied", e2);
    /* ℓ is 1-based: scaling with 1/√(ℓ+1) must not match */
    struct norm_variant v;
    variant_preset("lns", &v);
    struct block_cfg b;
    variant_block(&v, 1, 3, &b);
    CHECK(b.s_attn == 1.0 && b.s_ffn == 1.0, "layer 1 scale is 1");
    variant_block(&v, 12, 12, &b);
    CHECK(fabs(b.s_attn - 0.28867513459) < 1e-10, "layer 12 scale %g", b.s_attn);
}

static void test_lns_final_norm_unscaled(void)
{
    struct norm_variant v;
    variant_preset("lns", &v);
    struct model m;
    if (build(&m, &v, 3))
        return;
    model_forward(&m, tok, tgt, B, 0);
    const real *g = P(&m, 4, P_FINAL_NORM);
    double worst = 0;
    for (int t = 0; t < B * T; t++) {
        const real *x = (const real *)m.stream[3] + t * D;
        double ms = 0;
        for (int j = 0; j < D; j++) ms += x[j] * x[j];
        double r = 1 / sqrt(ms / D + 1e-6);
        for (int j = 0; j < D; j++) worst = fmax(worst, fabs(((const real *)m.xf)[t * D + j] - g[j] * x[j] * r));
    }
    CHECK(worst < 1e-12, "final norm output differs from the unscaled norm by %g", worst);
    model_destroy(&m);
}

static void test_post_matches_formula(void)
{
    double e = compare("post", 3, always_post, one, 1);
    CHECK(e < 1e-12, "post differs by %g", e);
}

static void test_deepnorm_alpha_sqrt8(void)
{
    double e = compare("deepnorm", 3, always_post, one, sqrt(8.0));
    CHECK(e < 1e-12, "deepnorm differs from alpha = sqrt 8 by %g", e);
}

static void test_mixln_first_quarter_post(void)
{
    double e = compare("mixln", 8, mix, one, 1);
    CHECK(e < 1e-12, "mixln (L=8: blocks 1-2 Post-LN) differs by %g", e);
    struct norm_variant v;
    variant_preset("mixln", &v);
    CHECK(variant_mix_post_layers(&v, 12) == 3 && variant_mix_post_layers(&v, 24) == 6,
          "k = L/4: 130M 3, 250M+ 6");
}

static void test_sandwich_matches_formula(void)
{
    double e = compare("sandwich", 3, always_sandwich, one, 1);
    CHECK(e < 1e-12, "sandwich differs by %g", e);
}

int main(void)
{
    make_batch();
    RUN(test_gradients_every_preset);
    RUN(test_gradients_lns_positions);
    RUN(test_pre_matches_formula);
    RUN(test_lns_is_pre_scaled_by_inv_sqrt_depth);
    RUN(test_lns_final_norm_unscaled);
    RUN(test_post_matches_formula);
    RUN(test_deepnorm_alpha_sqrt8);
    RUN(test_mixln_first_quarter_post);
    RUN(test_sandwich_matches_formula);
    CHECK_EXIT();
}
