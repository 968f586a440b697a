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
 * step twice gives identical gradients, and a micro-batch replayed from its
 * recording (a CUDA graph) the same numbers as one run op by op. The
 * variants run with the memory plan's extras forced (two chunks of logits,
 * SwiGLU's output kept), the presets with its choice. The
 * presets and variants run the backend's default attention (cuDNN's where
 * it takes the call); cod's own kernels and cuDNN's are asked for by name
 * too, cuDNN's at T 128 (attention_cudnn, recorded_cudnn: a SKIP line
 * where there is no cuDNN to use, as on the emulator). And three Adam
 * updates in bf16 precision with frozen gains (bf16_updates). Needs a
 * GPU: tests/gpu/run.sh; or the CUDA emulator: tests/cuda_emu.sh, which
 * names the presets to check (usage: test_model_cuda [preset...]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "tests/twin_update.h"
#include "trainer/model.h"
#include "trainer/rng.h"
#include "trainer/train.h"

enum { B = 2, T_MAX = 128, VOCAB = 4096 };
/* the sequence; cuDNN's checks run at 128, which every cuDNN cod accepts
 * takes (attention_cudnn.cu) */
static int T = 64;
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
    *c = train_model_config(&s);
    c->vocab = VOCAB;
    c->seq_len = T;
    /* The public code's embedding: at 0.02, the paper's, SkipInit's scalar
     * gradient is a sum over the batch that cancels to a small part of its
     * terms, and its relative error is no longer bf16's roundoff's alone. */
    c->embed_std = sqrt(0.4);
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
    if (model_create(&mc, &ops_cpu, &cfg, B, err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: %s\n", preset, norm, err);
        return 1;
    }
    if (model_create(&mg, &ops_cuda, &cfg, B, err, sizeof err) != 0) {
        fprintf(stderr, "  %s %s: %s\n", preset, norm, err);
        model_destroy(&mc);
        return 1;
    }
    int bad = 0, L = cfg.n_layers;
    size_t n = mc.n_params;
    real *hc = malloc(n * sizeof(real)), *hg = malloc(n * sizeof(real)),
         *h2 = malloc(n * sizeof(real));
    int32_t tok[B * T_MAX], tgt[B * T_MAX];
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

/* the presets named on the command line, else every one */
static const char *const *chosen = PRESETS;
static int n_chosen = sizeof PRESETS / sizeof PRESETS[0];

static void presets(void)
{
    for (int i = 0; i < n_chosen; i++)
        CHECK(compare(chosen[i], "pre", 0) == 0, "%s", chosen[i]);
}

/* every variant with the memory plan's extras forced (model_memory.c):
 * the logits in two chunks of 64 rows, SwiGLU's output kept */
static void variants(void)
{
    char names[512];
    snprintf(names, sizeof names, "%s", variant_preset_names());
    setenv("COD_LOGIT_ROWS", "64", 1);
    setenv("COD_KEEP_SWIGLU", "1", 1);
    for (char *save = NULL, *v = strtok_r(names, ", ", &save); v; v = strtok_r(NULL, ", ", &save))
        CHECK(compare("llama-9m", v, 0) == 0, "variant %s", v);
    unsetenv("COD_LOGIT_ROWS");
    unsetenv("COD_KEEP_SWIGLU");
}

static void variants_fallback_attention(void)
{
    ops_cuda_fallback_attention(1);
    CHECK(compare("llama-20m", "lns", 0) == 0, "llama-20m with the CUDA-core attention");
    ops_cuda_fallback_attention(0);
}

/* cod's own attention kernels, asked for, where the default may be cuDNN's */
static void attention_own(void)
{
    ops_cuda_set_attention(OPS_CUDA_ATTENTION_OWN);
    CHECK(compare("llama-20m", "lns", 0) == 0, "llama-20m with cod's attention kernels");
    ops_cuda_set_attention(OPS_CUDA_ATTENTION_ENV);
}

/* cuDNN's fused attention in the whole model, at the presets' three head
 * sizes below 128 (32, 64, 48), one step twice, bit for bit */
static void attention_cudnn(void)
{
    T = 128;
    ops_cuda_set_attention(OPS_CUDA_ATTENTION_CUDNN);
    CHECK(compare("llama-9m", "pre", 0) == 0, "llama-9m with cuDNN's attention");
    CHECK(compare("llama-20m", "pre", 1) == 0, "llama-20m with cuDNN's attention, twice");
    CHECK(compare("llama-35m", "pre", 0) == 0, "llama-35m with cuDNN's attention");
    ops_cuda_set_attention(OPS_CUDA_ATTENTION_ENV);
    T = 64;
}

static void repeatable(void)
{
    CHECK(compare("llama-60m", "layerscale", 1) == 0, "the same step twice, bit for bit");
    printf("  worst: %s at %.2f of its limit\n", worst_what, worst_ratio);
}

/* A micro-batch replayed from its recording (a CUDA graph) computes what
 * its ops compute one by one, bit for bit. Two copies of a model on the
 * GPU, one recording and one not, take the same Adam updates on a new
 * batch each time, so the embedding's token groups change under the
 * recording. Between updates: scratch memory grows (the recording must be
 * made again), a batch of another size, an evaluation. */
static void recorded(void)
{
    struct model_config cfg;
    if (config("llama-20m", "lns", &cfg) != 0) {
        CHECK(0, "llama-20m lns");
        return;
    }
    struct model a, b;
    char err[640];
    if (model_create(&a, &ops_cuda, &cfg, B, err, sizeof err) != 0 ||
        model_create(&b, &ops_cuda, &cfg, B, err, sizeof err) != 0) {
        CHECK(0, "%s", err);
        return;
    }
    a.rec.off = 1; /* the copy that runs op by op */
    size_t n = a.n_params;
    real *am = ops_cuda.alloc(n), *av = ops_cuda.alloc(n), *bm = ops_cuda.alloc(n),
         *bv = ops_cuda.alloc(n), *ha = malloc(n * sizeof(real)), *hb = malloc(n * sizeof(real));
    size_t big_n = (size_t)8192 * 2048;
    act *big_x = ops_cuda.alloc_act(big_n), *big_dx = ops_cuda.alloc_act(big_n);
    real *big_g = ops_cuda.alloc(2048), *big_dg = ops_cuda.alloc(2048),
         *big_rstd = ops_cuda.alloc(8192);
    if (!am || !av || !bm || !bv || !ha || !hb || !big_x || !big_dx || !big_g || !big_dg ||
        !big_rstd || model_init_weights(&a, 99, err, sizeof err) != 0 ||
        model_init_weights(&b, 99, err, sizeof err) != 0) {
        CHECK(0, "out of memory");
        goto out;
    }
    int32_t tok[B * T_MAX], tgt[B * T_MAX];
    struct model *both[2] = {&a, &b};
    real *ms[2] = {am, bm}, *vs[2] = {av, bv};
    struct rng r;
    rng_seed(&r, 11, 0);
    int same = 1, grew = 0;
    for (int step = 0; step < 9 && same; step++) {
        int Bk = step == 5 ? 1 : B;
        for (int i = 0; i < Bk * T; i++) {
            tok[i] = (int32_t)(rng_uniform(&r) * VOCAB);
            tgt[i] = (int32_t)(rng_uniform(&r) * VOCAB);
        }
        if (step == 3) {
            /* A wider norm's backward: its partial sums, one row of d a
             * block, need more scratch than llama-20m's, unless something
             * earlier in this process left that much (the scratch is the
             * backend's, and grows only; main runs this check first).
             * Scratch is the only memory the op allocates. */
            size_t before, after, peak;
            ops_cuda_memory(&before, &peak);
            ops_cuda.rmsnorm_bwd(big_dx, big_dg, big_x, big_x, big_g, big_rstd, 8192, 2048, 1, 1,
                                 NULL, 0);
            ops_cuda_memory(&after, &peak);
            grew = after > before;
        }
        double l[2], gn[2];
        twin_update(both, ms, vs, tok, tgt, Bk, 1e-3f, step + 1, l, gn);
        double ea = 0, eb = 0;
        if (step == 6) {
            ea = model_forward(&a, tok, tgt, B, 0);
            eb = model_forward(&b, tok, tgt, B, 0);
        }
        ops_cuda.download(ha, a.params, n);
        ops_cuda.download(hb, b.params, n);
        same = l[0] == l[1] && gn[0] == gn[1] && ea == eb && memcmp(ha, hb, n * sizeof(real)) == 0;
        printf("  step %d, batch %d: loss %.9g / %.9g, ‖g‖ %.9g / %.9g, %ld replayed\n", step + 1,
               Bk, l[0] / (Bk * T), l[1] / (Bk * T), gn[0], gn[1], b.rec.replays);
    }
    CHECK(same, "the recorded copy's losses, gradient norms and weights equal the other's");
    CHECK(!b.rec.off, "the step was recorded: %s", b.rec.why);
    /* replayed: steps 2 and 3; 4, unless the scratch moved under the
     * recording (then 4 runs op by op and 5 records anew); 5; 8 and 9
     * (6, a batch of 1, and 7, back to 2, each run op by op first) */
    long expect = grew ? 5 : 6;
    printf("  the scratch %s at step 4\n", grew ? "grew" : "did not grow");
    CHECK(b.rec.replays == expect && a.rec.replays == 0, "%ld micro-batches replayed, %ld expected",
          b.rec.replays, expect);
    CHECK(ops_cuda.error(err, sizeof err) == 0, "%s", err);
out:
    ops_cuda.free(am), ops_cuda.free(av), ops_cuda.free(bm), ops_cuda.free(bv);
    ops_cuda.free(big_x), ops_cuda.free(big_dx), ops_cuda.free(big_g), ops_cuda.free(big_dg);
    ops_cuda.free(big_rstd);
    free(ha), free(hb);
    model_destroy(&a);
    model_destroy(&b);
}

/* the same with cuDNN's attention: its plans and workspace fixed before
 * the recording, its kernels in the graph */
static void recorded_cudnn(void)
{
    T = 128;
    ops_cuda_set_attention(OPS_CUDA_ATTENTION_CUDNN);
    recorded();
    ops_cuda_set_attention(OPS_CUDA_ATTENTION_ENV);
    T = 64;
}

/* train.precision "bf16" with frozen gains (norm.gains): three Adam
 * updates of the same weights on both backends. Weights and both moments
 * hold bf16 values on each, the matmuls' copy is the weights themselves,
 * every gain is still exactly 1 with no moment, and each other tensor has
 * moved and agrees with the CPU's within the gradients' bound (an update
 * near a bf16 rounding boundary may land on the neighbouring value). */
static void bf16_updates(void)
{
    struct model_config cfg;
    if (config("llama-9m", "lns", &cfg) != 0) {
        CHECK(0, "llama-9m lns");
        return;
    }
    cfg.bf16 = 1;
    cfg.norm.gains = GAINS_FROZEN;
    struct model mc, mg;
    char err[640];
    if (model_create(&mc, &ops_cpu, &cfg, B, err, sizeof err) != 0 ||
        model_create(&mg, &ops_cuda, &cfg, B, err, sizeof err) != 0) {
        CHECK(0, "%s", err);
        return;
    }
    size_t n = mc.n_params;
    const struct ops *o[2] = {&ops_cpu, &ops_cuda};
    struct model *m[2] = {&mc, &mg};
    real *am[2] = {ops_cpu.alloc(n), ops_cuda.alloc(n)}, *av[2] = {ops_cpu.alloc(n),
                                                                   ops_cuda.alloc(n)};
    real *h[2][3], *init = malloc(n * sizeof(real)), *copy = malloc(n * sizeof(real));
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            h[k][j] = malloc(n * sizeof(real));
    int ok = am[0] && am[1] && av[0] && av[1] && init && copy &&
             model_init_weights(&mc, 77, err, sizeof err) == 0;
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            ok = ok && h[k][j];
    if (!ok) {
        CHECK(0, "out of memory");
        goto out;
    }
    ops_cpu.download(init, mc.params, n);
    ops_cuda.upload(mg.params, init, n);
    model_sync_weights(&mg);
    int32_t tok[B * T_MAX], tgt[B * T_MAX];
    struct rng r;
    rng_seed(&r, 5, 0);
    for (long step = 1; step <= 3; step++) {
        for (int i = 0; i < B * T; i++) {
            tok[i] = (int32_t)(rng_uniform(&r) * VOCAB);
            tgt[i] = (int32_t)(rng_uniform(&r) * VOCAB);
        }
        struct adam_extra x = {.grad_scale = 1, .bf16 = 1, .ranges = mc.learn_ranges,
                               .n_ranges = mc.n_learn_ranges};
        for (int k = 0; k < 2; k++) {
            o[k]->zero(m[k]->grads, n);
            model_step(m[k], tok, tgt, B, (real)(1.0 / (B * T)));
            model_losses_take(m[k]);
            o[k]->adam(m[k]->params, m[k]->wact, m[k]->grads, am[k], av[k], n, 1e-3f, 0.9f,
                       0.999f, 1e-8f, 0, step, 0, &x);
        }
    }
    for (int k = 0; k < 2; k++) {
        o[k]->download(h[k][0], m[k]->params, n);
        o[k]->download(h[k][1], am[k], n);
        o[k]->download(h[k][2], av[k], n);
    }
    ops_cuda.download_act(copy, mg.wact, n);
    size_t not_bf16 = 0, copy_off = 0;
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            for (size_t i = 0; i < n; i++)
                not_bf16 += h[k][j][i] != bf16_round(h[k][j][i]);
    for (size_t i = 0; i < n; i++)
        copy_off += copy[i] != h[1][0][i];
    CHECK(not_bf16 == 0 && copy_off == 0,
          "%zu weights or moments not in bf16; %zu of the matmuls' copy not the weights", not_bf16,
          copy_off);
    double L = cfg.n_layers, tol = 3 * U / sqrt(3.0) * sqrt(11.0 * 2 * L + 10), worst = 0;
    for (int t = 0; t < mc.n_tensors; t++) {
        const struct param_info *p = &mc.info[t];
        int gain = p->kind == P_NORM_IN_ATTN || p->kind == P_NORM_IN_FFN ||
                   p->kind == P_FINAL_NORM;
        size_t off = 0, still = 0;
        for (size_t i = 0; i < p->n; i++) {
            size_t q = param_index(p, i);
            for (int k = 0; k < 2; k++)
                off += gain && (h[k][0][q] != 1 || h[k][1][q] != 0 || h[k][2][q] != 0);
            still += h[1][0][q] == init[q];
        }
        if (gain) {
            CHECK(off == 0, "%s: %zu gains not 1 or with a moment", p->name, off);
            continue;
        }
        double e = rel(p, h[1][0], h[0][0]);
        worst = e > worst ? e : worst;
        /* the embedding: only the rows of the batches' tokens move */
        CHECK(e < tol && still < (p->kind == P_EMBED ? p->n : p->n / 2),
              "%s: %.3g from the CPU's (limit %.3g), %zu of %zu unmoved", p->name, e, tol, still,
              (size_t)p->n);
    }
    printf("  bf16, frozen gains: worst tensor %.3e from the CPU's (limit %.2e)\n", worst, tol);
    CHECK(ops_cuda.error(err, sizeof err) == 0, "%s", err);
out:
    for (int k = 0; k < 2; k++) {
        o[k]->free(am[k]);
        o[k]->free(av[k]);
        for (int j = 0; j < 3; j++)
            free(h[k][j]);
    }
    free(init);
    free(copy);
    model_destroy(&mc);
    model_destroy(&mg);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        chosen = (const char *const *)argv + 1;
        n_chosen = argc - 1;
    }
    if (gpu_start() != 0)
        return 1;
    /* first, while the backend's scratch memory is still small, so that
     * its wide norm grows it under the recording (presets leave it at
     * llama-1b's size) */
    RUN(recorded);
    RUN(presets);
    RUN(variants);
    RUN(variants_fallback_attention);
    RUN(attention_own);
    RUN(repeatable);
    /* cuDNN's, where there is a cuDNN to use (a SKIP line otherwise, never
     * a pass; the emulator has none) */
    char why[800];
    if (ops_cuda_cudnn_usable(why, sizeof why) != 0) {
        printf("SKIP attention_cudnn: %s\nSKIP recorded_cudnn: %s\n", why, why);
    } else {
        RUN(attention_cudnn);
        RUN(recorded_cudnn);
    }
    RUN(bf16_updates);
    CHECK_EXIT();
}
