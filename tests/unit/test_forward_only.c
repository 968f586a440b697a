/* The forward-only model (model_config.forward_only, the analyses') against
 * the training model: for every norm variant preset, the same weights and
 * batch give the same losses and the same residual stream at every layer,
 * bit for bit, with a block pruned too (the sub-layers share one set of
 * activations there, which must not change what the stream holds); the
 * training model's shape is unchanged by the fields forward-only models
 * add; and a shape only the forward computes is refused for training,
 * naming it. */
#include <stdlib.h>
#include <string.h>

#include "spec/variant.h"
#include "tests/check.h"
#include "trainer/model.h"

enum { B = 2, T = 8, L = 4, V = 13 };

static int same_stream(struct model *a, struct model *b, const char *what)
{
    size_t n = (size_t)B * T * a->cfg.dim;
    real *x = malloc(n * sizeof(real)), *y = malloc(n * sizeof(real));
    int ok = 1;
    for (int l = 0; x && y && l <= L; l++) {
        a->ops->download_act(x, a->stream[l], n);
        b->ops->download_act(y, b->stream[l], n);
        if (memcmp(x, y, n * sizeof(real))) {
            CHECK(0, "%s: layer %d's output differs", what, l);
            ok = 0;
        }
    }
    free(x);
    free(y);
    return ok;
}

static void every_variant(void)
{
    int32_t tok[B * T], tgt[B * T];
    for (int i = 0; i < B * T; i++) {
        tok[i] = (i * 7 + 3) % V;
        tgt[i] = (i * 5 + 1) % V;
    }
    const char *names = variant_preset_names();
    char list[512];
    snprintf(list, sizeof list, "%s", names);
    for (char *name = strtok(list, ", "); name; name = strtok(NULL, ", ")) {
        struct model_config c = {.dim = 16, .n_layers = L, .n_heads = 2, .ffn_dim = 20,
                                 .vocab = V, .seq_len = T, .rope_theta = 10000,
                                 .norm_eps = 1e-6};
        if (variant_preset(name, &c.norm)) {
            CHECK(0, "no preset %s", name);
            continue;
        }
        struct model a, f;
        char err[512];
        if (model_create(&a, &ops_cpu, &c, B, err, sizeof err) ||
            model_init_weights(&a, 5, err, sizeof err)) {
            CHECK(0, "%s: %s", name, err);
            continue;
        }
        c.forward_only = 1;
        if (model_create(&f, &ops_cpu, &c, B, err, sizeof err) ||
            model_init_weights(&f, 5, err, sizeof err)) {
            CHECK(0, "%s (forward only): %s", name, err);
            model_destroy(&a);
            continue;
        }
        CHECK(f.bytes < a.bytes, "%s: forward only takes %zu bytes, training %zu", name, f.bytes,
              a.bytes);
        double la = model_forward(&a, tok, tgt, B, 0), lf = model_forward(&f, tok, tgt, B, 0);
        CHECK(la == lf, "%s: loss %.9g, forward only %.9g", name, la, lf);
        same_stream(&a, &f, name);
        unsigned char skip[L] = {0, 1, 0, 0};
        a.skip = f.skip = skip;
        la = model_forward(&a, tok, tgt, B, 0);
        lf = model_forward(&f, tok, tgt, B, 0);
        CHECK(la == lf, "%s, block 2 pruned: loss %.9g, forward only %.9g", name, la, lf);
        same_stream(&a, &f, name);
        a.skip = f.skip = NULL;
        model_destroy(&a);
        model_destroy(&f);
    }
}

static void forward_only_shapes_refused_for_training(void)
{
    struct model_config c = {.dim = 16, .n_layers = 2, .n_heads = 4, .ffn_dim = 20, .vocab = V,
                             .seq_len = T, .rope_theta = 10000, .norm_eps = 1e-6};
    variant_preset("pre", &c.norm);
    struct model m;
    char err[512] = "";
    c.n_kv_heads = 2;
    CHECK(model_create(&m, &ops_cpu, &c, 1, err, sizeof err) == -1 &&
              strstr(err, "grouped-query attention is computed forward only"),
          "%s", err);
    c.n_kv_heads = 3;
    c.forward_only = 1;
    CHECK(model_create(&m, &ops_cpu, &c, 1, err, sizeof err) == -1 &&
              strstr(err, "do not divide the query heads"),
          "%s", err);
    c.n_kv_heads = 0;
    c.forward_only = 0;
    c.qkv_bias = 1;
    CHECK(model_create(&m, &ops_cpu, &c, 1, err, sizeof err) == -1 && strstr(err, "biases"), "%s",
          err);
    c.qkv_bias = 0;
    c.tied_embeddings = 1;
    c.forward_only = 1;
    if (model_create(&m, &ops_cpu, &c, 1, err, sizeof err) == 0) {
        CHECK(!model_param(&m, c.n_layers + 1, P_HEAD) && m.woff[(size_t)3 * P_KIND_COUNT + P_HEAD] ==
                                                     model_param(&m, 0, P_EMBED)->offset,
              "a tied model's head is its embedding table");
        model_destroy(&m);
    } else {
        CHECK(0, "%s", err);
    }
}

int main(void)
{
    RUN(every_variant);
    RUN(forward_only_shapes_refused_for_training);
    CHECK_EXIT();
}
