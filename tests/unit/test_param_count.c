/* The spec's parameter count (spec_param_count, what a server checks a
 * model's size by) against the model a worker builds from the same spec
 * (model_create's n_weights): both read spec/params.h's list of tensors,
 * and this ties them, for every preset of the variant on two model sizes
 * and for the variants that add tensors on every model preset up to
 * llama-130m (larger ones take gigabytes to build; test_spec checks their
 * counts against the paper's). */
#include <stdio.h>
#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "trainer/model.h"
#include "trainer/train.h"

/* the spec's count and the built model's for one model preset and one variant */
static void check_count(const char *model, const char *norm)
{
    char json[256], err[512];
    snprintf(json, sizeof(json), "{\"model\":{\"preset\":\"%s\",\"vocab\":1000},\"norm\":\"%s\"}",
             model, norm);
    struct job_spec s;
    struct spec_error e;
    if (spec_parse(json, strlen(json), &s, &e)) {
        CHECK(0, "%s: %s", json, e.message);
        return;
    }
    struct model_config c = train_model_config(&s);
    c.seq_len = 8;
    c.forward_only = 1;
    struct model m;
    if (model_create(&m, &ops_cpu, &c, 1, err, sizeof(err))) {
        CHECK(0, "%s, %s: %s", model, norm, err);
        return;
    }
    int64_t spec = spec_param_count(&s);
    CHECK(spec == (int64_t)m.n_weights, "%s, %s: the spec counts %lld, the model has %zu", model,
          norm, (long long)spec, m.n_weights);
    model_destroy(&m);
}

static void test_every_variant_preset(void)
{
    for (size_t i = 0; i < variant_preset_count(); i++) {
        check_count("llama-9m", variant_preset_name(i));
        check_count("llama-35m", variant_preset_name(i));
    }
}

static void test_every_model_preset(void)
{
    const char *models[] = {"llama-9m", "llama-20m", "llama-35m", "llama-60m", "llama-71m",
                            "llama-130m"};
    const char *norms[] = {"pre", "sandwich", "layerscale", "skipinit"};
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        for (size_t k = 0; k < sizeof(norms) / sizeof(norms[0]); k++)
            check_count(models[i], norms[k]);
}

int main(void)
{
    RUN(test_every_variant_preset);
    RUN(test_every_model_preset);
    CHECK_EXIT();
}
