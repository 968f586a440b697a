/* The whole model on the CUDA backend against the CPU backend: the same
 * weights (initialised on the host from one seed) and the same batch, then
 * the loss and the gradient of every tensor. Every model preset up to
 * llama-1b with the default norm, and every norm variant at llama-9m's
 * shape (llama-7b is left out: its fp32 CPU copy alone is 50 GiB).
 * bf16 matmuls: ‖cuda − cpu‖/‖cpu‖ < 1e-2 per tensor; fp32 matmuls
 * (ops_cuda_exact_matmul): < 1e-4 after the dozens of ops a gradient goes
 * through. Needs a GPU: tests/gpu/run.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "trainer/model.h"
#include "trainer/rng.h"
#include "trainer/spec.h"

enum { B = 2, T = 64, VOCAB = 4096 };
static const char *const PRESETS[] = {"llama-9m",   "llama-20m",  "llama-35m", "llama-60m",
                                      "llama-71m",  "llama-130m", "llama-250m", "llama-350m",
                                      "llama-1b"};

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

static double rel(const real *got, const real *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)got[i] - ref[i];
        num += e * e;
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* one forward and backward on both backends; returns the number of tensors off */
static int compare(const char *preset, const char *norm, double tol)
{
    struct model_config cfg;
    if (config(preset, norm, &cfg) != 0)
        return 1;
    struct model mc, mg;
    char err[512];
    if (model_create(&mc, &ops_cpu, &cfg, B, err, sizeof err) != 0 ||
        model_create(&mg, &ops_cuda, &cfg, B, err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: %s\n", preset, norm, err);
        return 1;
    }
    int bad = 0;
    size_t n = mc.n_params;
    real *hc = malloc(n * sizeof(real)), *hg = malloc(n * sizeof(real));
    int32_t tok[B * T], tgt[B * T];
    struct rng r;
    rng_seed(&r, 7, 0);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int32_t)(rng_uniform(&r) * VOCAB);
        tgt[i] = i % 17 == 5 ? -1 : (int32_t)(rng_uniform(&r) * VOCAB);
    }
    if (!hc || !hg || model_init_weights(&mc, 1234, err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: out of host memory\n", preset, norm);
        bad = 1;
        goto out;
    }
    /* the CUDA model gets the CPU model's weights bit for bit */
    ops_cpu.download(hc, mc.params, n);
    ops_cuda.upload(mg.params, hc, n);
    real scale = (real)(1.0 / (B * T));
    double lc = model_forward(&mc, tok, tgt, B, scale), lg = model_forward(&mg, tok, tgt, B, scale);
    model_backward(&mc);
    model_backward(&mg);
    if (!(fabs(lg - lc) <= tol * fabs(lc))) {
        fprintf(stderr, "  %s %s: loss %.8g on cuda, %.8g on cpu\n", preset, norm, lg, lc);
        bad++;
    }
    ops_cpu.download(hc, mc.grads, n);
    ops_cuda.download(hg, mg.grads, n);
    for (int t = 0; t < mc.n_tensors; t++) {
        const struct param_info *p = &mc.info[t];
        double e = rel(hg + p->offset, hc + p->offset, p->n);
        if (!(e < tol)) {
            fprintf(stderr, "  %s %s: gradient of %s off by %.3g (limit %.0e)\n", preset, norm,
                    p->name, e, tol);
            bad++;
        }
    }
    if (ops_cuda_error(err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: %s\n", preset, norm, err);
        bad++;
    }
out:
    free(hc);
    free(hg);
    model_destroy(&mc);
    model_destroy(&mg);
    return bad;
}

static void presets_at(double tol)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        CHECK(compare(PRESETS[i], "pre", tol) == 0, "%s", PRESETS[i]);
}

static void variants_at(double tol)
{
    char names[512];
    snprintf(names, sizeof names, "%s", variant_preset_names());
    for (char *save = NULL, *v = strtok_r(names, ", ", &save); v; v = strtok_r(NULL, ", ", &save))
        CHECK(compare("llama-9m", v, tol) == 0, "variant %s", v);
}

static void presets_bf16(void) { presets_at(1e-2); }
static void variants_bf16(void) { variants_at(1e-2); }

static void presets_fp32(void)
{
    ops_cuda_exact_matmul(1);
    presets_at(1e-4);
    ops_cuda_exact_matmul(0);
}

static void variants_fp32(void)
{
    ops_cuda_exact_matmul(1);
    variants_at(1e-4);
    ops_cuda_exact_matmul(0);
}

int main(void)
{
    if (gpu_start() != 0)
        return 1;
    RUN(presets_bf16);
    RUN(variants_bf16);
    RUN(presets_fp32);
    RUN(variants_fp32);
    CHECK_EXIT();
}
