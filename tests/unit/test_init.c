/* The init of every variant: the std (or the constant) of each tensor
 * against docs/variants.md, on a model large enough that the
 * sample std is within a percent of the true one. */
#include <math.h>
#include <string.h>

#include "tests/check.h"
#include "trainer/model.h"

enum { D = 256, L = 8, F = 688, V = 1000 };

static double tensor_std(const struct model *m, const struct param_info *p, double *mean)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < p->n; i++) {
        double x = m->params[param_index(p, i)];
        s += x;
        ss += x * x;
    }
    *mean = s / p->n;
    return sqrt(ss / p->n - *mean * *mean);
}

/* expected std of a tensor (0 for constants, whose value is *fill) */
static double expected(const char *preset, const struct param_info *p, double *fill)
{
    *fill = 1;
    int out = p->kind == P_O || p->kind == P_DOWN;
    switch (p->kind) {
    case P_EMBED:
        return sqrt(0.4);
    case P_HEAD:
        return 0.02;
    case P_NORM_IN_ATTN: case P_NORM_IN_FFN: case P_NORM_OUT_ATTN: case P_NORM_OUT_FFN:
    case P_FINAL_NORM:
        return 0;
    case P_LAMBDA_ATTN: case P_LAMBDA_FFN:
        *fill = !strcmp(preset, "layerscale") ? 0.1 : 1 / sqrt((double)L);
        return 0;
    default:
        break;
    }
    if (!strcmp(preset, "deepnorm")) {
        double gain = (p->kind == P_Q || p->kind == P_K) ? 1 : pow(8.0 * L, 0.25);
        return gain * sqrt(2.0 / (p->shape[0] + p->shape[1]));
    }
    if (out && (!strcmp(preset, "scaled_init") || !strcmp(preset, "lns_scaled_init")))
        return 0.02 / sqrt(2.0 * L);
    if (out && !strcmp(preset, "depth_scaled_init"))
        return 0.02 / sqrt(2.0 * p->layer);
    return 0.02;
}

static void test_init_every_preset(void)
{
    const char *presets[] = {"pre", "lns", "post", "deepnorm", "mixln", "scaled_init",
                             "lns_scaled_init", "sandwich", "layerscale", "skipinit",
                             "depth_scaled_init"};
    for (size_t k = 0; k < sizeof(presets) / sizeof(presets[0]); k++) {
        struct model_config c = {.dim = D, .n_layers = L, .n_heads = 4, .ffn_dim = F, .vocab = V,
                                 .seq_len = 4, .rope_theta = 10000, .norm_eps = 1e-6};
        variant_preset(presets[k], &c.norm);
        struct model m;
        char err[256];
        if (model_create(&m, &ops_cpu, &c, 1, err, sizeof(err)) ||
            model_init_weights(&m, 5, err, sizeof(err))) {
            CHECK(0, "%s: %s", presets[k], err);
            continue;
        }
        for (int t = 0; t < m.n_tensors; t++) {
            const struct param_info *p = &m.info[t];
            double fill, want = expected(presets[k], p, &fill), mean, got = tensor_std(&m, p, &mean);
            if (want > 0)
                CHECK(fabs(got / want - 1) < 0.03 && fabs(mean) < 0.05 * want + 1e-3,
                      "%s %s: std %g (mean %g), expected %g", presets[k], p->name, got, mean, want);
            else {
                double worst = 0;
                for (size_t i = 0; i < p->n; i++)
                    worst = fmax(worst, fabs(m.params[param_index(p, i)] - fill));
                CHECK(worst < 1e-6, "%s %s: constant %g expected %g", presets[k], p->name, mean,
                      fill);
            }
        }
        model_destroy(&m);
    }
}

static void test_same_seed_same_shared_weights(void)
{
    /* pre and lns differ in the forward only: the same seed gives the same weights */
    struct model a, b;
    struct model_config c = {.dim = 32, .n_layers = 2, .n_heads = 2, .ffn_dim = 64, .vocab = 50,
                             .seq_len = 4, .rope_theta = 10000, .norm_eps = 1e-6};
    char err[256];
    variant_preset("pre", &c.norm);
    int ok = !model_create(&a, &ops_cpu, &c, 1, err, sizeof(err)) &&
             !model_init_weights(&a, 9, err, sizeof(err));
    variant_preset("lns", &c.norm);
    ok = ok && !model_create(&b, &ops_cpu, &c, 1, err, sizeof(err)) &&
         !model_init_weights(&b, 9, err, sizeof(err));
    CHECK(ok, "%s", err);
    if (!ok)
        return;
    CHECK(a.n_params == b.n_params &&
              !memcmp(a.params, b.params, a.n_params * sizeof(real)),
          "pre and lns weights differ at the same seed");
    model_destroy(&a);
    model_destroy(&b);
}

int main(void)
{
    RUN(test_init_every_preset);
    RUN(test_same_seed_same_shared_weights);
    CHECK_EXIT();
}
