/* The model's memory plan (trainer/model_memory.c): what it spends on
 * speed under its budget (the second stream's scratch first, then rows of
 * logits, then SwiGLU's output kept), the settings that force a choice,
 * a setting that does not read refused by name; and a model trained with
 * the extras forced (two chunks of logits, SwiGLU's output kept) against
 * one without: the same loss, the same gradients. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "trainer/model.h"
#include "trainer/rng.h"

static const size_t MIB = (size_t)1 << 20, GIB = (size_t)1 << 30;

/* llama-130m's shape at a micro-batch of 64 on the GPU (bf16) */
static struct model_memory_need gpu130m(void)
{
    struct model_memory_need n = {.N = 16384, .V = 32000, .forward_only = 0, .beside = 1,
                                  .act_bytes = 2, .activations = 4700 * MIB,
                                  .beside_bytes = 216 * MIB, .swiglu_bytes = 805 * MIB};
    return n;
}

static void unset_all(void)
{
    unsetenv("COD_SPEED_MEMORY");
    unsetenv("COD_LOGIT_ROWS");
    unsetenv("COD_KEEP_SWIGLU");
}

static void budget(void)
{
    unset_all();
    struct model_memory_need n = gpu130m();
    struct model_memory p;
    char err[200];
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0, "%s", err);
    /* 1/8 of 4.6 GiB, less the second scratch, buys rows beyond 2,048 */
    CHECK(p.beside == 1, "the second stream's scratch is part of the plan");
    CHECK(p.logit_rows > 2048 && p.logit_rows <= n.N, "logit rows %d", p.logit_rows);
    CHECK(p.extra <= n.activations / 8 + 64 * (size_t)n.V * 2, "%zu bytes past the budget", p.extra);
    CHECK(!p.keep_swiglu, "SwiGLU kept past the budget");
    /* the chunks even: none a sliver */
    int chunks = (n.N + p.logit_rows - 1) / p.logit_rows;
    CHECK(n.N - (chunks - 1) * p.logit_rows > p.logit_rows / 2, "%d rows in %d chunks: the last %d",
          p.logit_rows, chunks, n.N - (chunks - 1) * p.logit_rows);
    printf("  %s\n", p.said);

    setenv("COD_SPEED_MEMORY", "0", 1);
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0, "%s", err);
    CHECK(p.logit_rows == 2048 && !p.keep_swiglu && p.extra == n.beside_bytes,
          "none: %d rows, keep %d, %zu bytes", p.logit_rows, p.keep_swiglu, p.extra);

    setenv("COD_SPEED_MEMORY", "4", 1);
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0, "%s", err);
    CHECK(p.logit_rows == n.N && p.keep_swiglu, "ample: %d rows, keep %d", p.logit_rows,
          p.keep_swiglu);
    CHECK(p.extra == n.beside_bytes + (size_t)(n.N - 2048) * n.V * 2 + n.swiglu_bytes,
          "ample: %zu bytes", p.extra);

    /* one stream: no second scratch; a forward-only model: nothing */
    unset_all();
    n.beside = 0;
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0 && !p.beside && p.extra < 1 * GIB,
          "one stream");
    n.forward_only = 1;
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0 && p.logit_rows == 2048 && !p.extra,
          "forward only: %d rows, %zu bytes", p.logit_rows, p.extra);
}

static void forced(void)
{
    unset_all();
    struct model_memory_need n = gpu130m();
    struct model_memory p;
    char err[200];
    setenv("COD_LOGIT_ROWS", "64", 1);
    setenv("COD_KEEP_SWIGLU", "1", 1);
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0, "%s", err);
    CHECK(p.logit_rows == 64 && p.keep_swiglu, "forced: %d rows, keep %d", p.logit_rows,
          p.keep_swiglu);
    CHECK(strstr(p.said, "COD_LOGIT_ROWS") && strstr(p.said, "COD_KEEP_SWIGLU"),
          "the log says which were forced: %s", p.said);
    setenv("COD_SPEED_MEMORY", "4", 1);
    setenv("COD_KEEP_SWIGLU", "0", 1);
    CHECK(model_memory_plan(&n, &p, err, sizeof err) == 0 && !p.keep_swiglu,
          "COD_KEEP_SWIGLU=0 keeps nothing, whatever the budget");

    const struct {
        const char *name, *value;
    } bad[] = {{"COD_LOGIT_ROWS", "abc"}, {"COD_LOGIT_ROWS", "0"}, {"COD_LOGIT_ROWS", "16385"},
               {"COD_KEEP_SWIGLU", "2"},  {"COD_SPEED_MEMORY", "-1"}, {"COD_SPEED_MEMORY", "x"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unset_all();
        setenv(bad[i].name, bad[i].value, 1);
        err[0] = 0;
        CHECK(model_memory_plan(&n, &p, err, sizeof err) == -1 && strstr(err, bad[i].name) &&
                  strstr(err, bad[i].value),
              "%s=%s: \"%s\"", bad[i].name, bad[i].value, err);
    }
    unset_all();
}

/* one step of a small model: its loss, and its gradients into g */
static double step(real *g, size_t *n)
{
    struct model_config c = {.dim = 64, .n_layers = 2, .n_heads = 4, .ffn_dim = 172, .vocab = 300,
                             .seq_len = 32, .rope_theta = 10000, .norm_eps = 1e-6,
                             .embed_std = 0.02};
    variant_preset("lns", &c.norm);
    enum { B = 4 };
    struct model m;
    char err[256];
    if (model_create(&m, &ops_cpu, &c, B, err, sizeof err) || model_init_weights(&m, 3, err, sizeof err)) {
        CHECK(0, "%s", err);
        return NAN;
    }
    int32_t tok[B * 32], tgt[B * 32];
    struct rng r;
    rng_seed(&r, 9, 0);
    for (int i = 0; i < B * 32; i++) {
        tok[i] = (int32_t)(rng_uniform(&r) * c.vocab);
        tgt[i] = (int32_t)(rng_uniform(&r) * c.vocab);
    }
    double loss = model_forward(&m, tok, tgt, B, 1.0f / (B * 32));
    model_backward(&m);
    *n = m.n_params;
    if (g)
        ops_cpu.download(g, m.grads, m.n_params);
    model_destroy(&m);
    return loss;
}

static void extras_compute_the_same(void)
{
    unset_all();
    size_t n = 0;
    step(NULL, &n);
    real *a = malloc(n * sizeof(real)), *b = malloc(n * sizeof(real));
    CHECK(a && b, "out of memory");
    if (!a || !b)
        return;
    double la = step(a, &n);
    setenv("COD_LOGIT_ROWS", "64", 1); /* 128 rows in two chunks */
    setenv("COD_KEEP_SWIGLU", "1", 1);
    double lb = step(b, &n);
    unset_all();
    CHECK(la == lb, "loss %.17g without the extras, %.17g with", la, lb);
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)a[i] * a[i];
    }
    /* only the lm_head's gradient is summed otherwise: by chunk */
    CHECK(sqrt(num / den) < 1e-6, "gradients differ by %.3g", sqrt(num / den));
    free(a);
    free(b);
}

int main(void)
{
    RUN(budget);
    RUN(forced);
    RUN(extras_compute_the_same);
    CHECK_EXIT();
}
