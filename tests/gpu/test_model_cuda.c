/* The whole model on the CUDA backend against the CPU backend: the same
 * weights (initialised on the host from one seed and rounded to bf16, so
 * that the matmuls of both backends see the same values) and the same
 * batch, then the loss and the gradient of every tensor. Every model preset
 * up to llama-1b with the default norm, and every norm variant at llama-9m's
 * shape (llama-7b is left out: its fp32 CPU copy alone is 50 GiB).
 *
 * The tolerance comes from bf16's unit roundoff u = 2⁻⁸: the CUDA backend
 * rounds each activation and activation gradient to bf16 once per op, so a
 * gradient reaches a weight through at most R roundings, R = 11 per
 * sub-layer on the way up and back (norm, q|k|v, rope, attention, output
 * projection; and their gradients) for 2L sub-layers, plus 10 for the
 * embedding, final norm, lm_head and loss. Independent rounding errors of
 * relative size up to u, uniformly spread (RMS u/√3), add in quadrature:
 * the expected relative L2 error is (u/√3)·√R; the limit is three times
 * that. The loss, a mean over B·T tokens, gets the same bound over the
 * forward's roundings alone. A run also repeats bit for bit: the same
 * step twice gives identical gradients. Needs a GPU: tests/gpu/run.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "trainer/model.h"
#include "trainer/rng.h"

enum { B = 2, T = 64, VOCAB = 4096 };
static const double U = 1.0 / 256;
static const char *const PRESETS[] = {"llama-9m",   "llama-20m",  "llama-35m", "llama-60m",
                                      "llama-71m",  "llama-130m", "llama-250m", "llama-350m",
                                      "llama-1b"};
static double worst_ratio;
static char worst_what[160];

static int config(const char *preset, const char *norm, struct model_config *c)
{
    char text[256];
    snprintf(text, sizeof text, "{\"model\": \"%s\", \"norm\": \"%s\"}", preset, norm);
    struct job_spec s;
    struct spec_error e;
    if (spec_parse(text, strlen(text), &s, &e) != 0) {
        fprintf(stderr, "  %s %s: %s: %s\n", preset, norm, e.field, e.message);
        return -1;
    }
    *c = (struct model_config){.dim = s.model.dim, .n_layers = s.model.n_layers,
                               .n_heads = s.model.n_heads, .ffn_dim = s.model.ffn_dim,
                               .vocab = VOCAB, .seq_len = T, .norm = s.norm,
                               .rope_theta = 10000, .norm_eps = 1e-6};
    return 0;
}

static double rel(const struct param_info *p, const real *got, const real *ref)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < p->n; i++) {
        size_t k = param_index(p, i);
        double e = (double)got[k] - ref[k];
        num += e * e;
        den += (double)ref[k] * ref[k];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void note(double ratio, const char *preset, const char *norm, const char *what)
{
    if (ratio > worst_ratio) {
        worst_ratio = ratio;
        snprintf(worst_what, sizeof worst_what, "%s %s %s", preset, norm, what);
    }
}

/* one forward and backward on both backends; returns the number of checks off */
static int compare(const char *preset, const char *norm, int twice)
{
    struct model_config cfg;
    if (config(preset, norm, &cfg) != 0)
        return 1;
    struct model mc, mg;
    char err[640];
    if (model_create(&mc, &ops_cpu, &cfg, B, err, sizeof err) != 0 ||
        model_create(&mg, &ops_cuda, &cfg, B, err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: %s\n", preset, norm, err);
        return 1;
    }
    int bad = 0, L = cfg.n_layers;
    size_t n = mc.n_params;
    real *hc = malloc(n * sizeof(real)), *hg = malloc(n * sizeof(real)),
         *h2 = malloc(n * sizeof(real));
    int32_t tok[B * T], tgt[B * T];
    struct rng r;
    rng_seed(&r, 7, 0);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int32_t)(rng_uniform(&r) * VOCAB);
        tgt[i] = i % 17 == 5 ? -1 : (int32_t)(rng_uniform(&r) * VOCAB);
    }
    if (!hc || !hg || !h2 || model_init_weights(&mc, 1234, err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: out of host memory\n", preset, norm);
        bad = 1;
        goto out;
    }
    ops_cpu.download(hc, mc.params, n);
    for (size_t i = 0; i < n; i++)
        hc[i] = bf16_round(hc[i]);
    ops_cpu.upload(mc.params, hc, n);
    ops_cuda.upload(mg.params, hc, n);
    model_sync_weights(&mc);
    model_sync_weights(&mg);
    real scale = (real)(1.0 / (B * T));
    double lc = model_forward(&mc, tok, tgt, B, scale), lg = model_forward(&mg, tok, tgt, B, scale);
    model_backward(&mc);
    model_backward(&mg);
    double R_fwd = 5.0 * 2 * L + 5, R = 11.0 * 2 * L + 10;
    double tol_loss = 3 * U / sqrt(3.0) * sqrt(R_fwd), tol = 3 * U / sqrt(3.0) * sqrt(R);
    double e = fabs(lg - lc) / fabs(lc);
    note(e / tol_loss, preset, norm, "loss");
    if (!(e < tol_loss)) {
        fprintf(stderr, "  %s %s: loss %.8g on cuda, %.8g on cpu (relative %.3g, limit %.3g)\n",
                preset, norm, lg, lc, e, tol_loss);
        bad++;
    }
    ops_cpu.download(hc, mc.grads, n);
    ops_cuda.download(hg, mg.grads, n);
    double worst = 0;
    for (int t = 0; t < mc.n_tensors; t++) {
        const struct param_info *p = &mc.info[t];
        double et = rel(p, hg, hc);
        worst = et > worst ? et : worst;
        note(et / tol, preset, norm, p->name);
        if (!(et < tol)) {
            fprintf(stderr, "  %s %s: gradient of %s off by %.3g (limit %.3g)\n", preset, norm,
                    p->name, et, tol);
            bad++;
        }
    }
    printf("  %-11s %-18s loss %.3e (limit %.2e)  worst gradient %.3e (limit %.2e)\n", preset,
           norm, e, tol_loss, worst, tol);
    if (twice) {
        ops_cuda.zero(mg.grads, n);
        double lg2 = model_forward(&mg, tok, tgt, B, scale);
        model_backward(&mg);
        ops_cuda.download(h2, mg.grads, n);
        if (lg2 != lg || memcmp(h2, hg, n * sizeof(real)) != 0) {
            fprintf(stderr, "  %s %s: a second identical step differs (loss %.17g vs %.17g)\n",
                    preset, norm, lg2, lg);
            bad++;
        }
    }
    if (ops_cuda.error(err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: %s\n", preset, norm, err);
        bad++;
    }
out:
    free(hc);
    free(hg);
    free(h2);
    model_destroy(&mc);
    model_destroy(&mg);
    return bad;
}

static void presets(void)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        CHECK(compare(PRESETS[i], "pre", 0) == 0, "%s", PRESETS[i]);
}

static void variants(void)
{
    char names[512];
    snprintf(names, sizeof names, "%s", variant_preset_names());
    for (char *save = NULL, *v = strtok_r(names, ", ", &save); v; v = strtok_r(NULL, ", ", &save))
        CHECK(compare("llama-9m", v, 0) == 0, "variant %s", v);
}

static void variants_fallback_attention(void)
{
    ops_cuda_fallback_attention(1);
    CHECK(compare("llama-20m", "lns", 0) == 0, "llama-20m with the CUDA-core attention");
    ops_cuda_fallback_attention(0);
}

static void repeatable(void)
{
    CHECK(compare("llama-60m", "layerscale", 1) == 0, "the same step twice, bit for bit");
    printf("  worst: %s at %.2f of its limit\n", worst_what, worst_ratio);
}

int main(void)
{
    if (gpu_start() != 0)
        return 1;
    RUN(presets);
    RUN(variants);
    RUN(variants_fallback_attention);
    RUN(repeatable);
    CHECK_EXIT();
}
