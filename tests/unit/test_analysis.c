/* Export to a Hugging Face LLaMA folder: the tensors read back equal the
 * checkpoint's, the config describes the model, and every variant stock
 * LLaMA cannot compute is refused with its name. (The logits check against
 * transformers is tests/gpu/export_matches_transformers.py.) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "trainer/checkpoint.h"
#include "trainer/export_hf.h"
#include "trainer/model.h"
#include "trainer/safetensors.h"

static int parse(const char *norm, struct job_spec *s)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"model\": {\"dim\": 16, \"n_layers\": 4, \"n_heads\": 2, \"ffn_dim\": 24, "
             "\"vocab\": 11}, \"norm\": %s, \"train\": {\"seq_len\": 8}}",
             norm);
    struct spec_error se;
    if (spec_parse(text, strlen(text), s, &se)) {
        CHECK(0, "%s: %s: %s", norm, se.field, se.message);
        return -1;
    }
    return 0;
}

static void export_reads_back_equal(void)
{
    char dir[] = "/tmp/cod-export-XXXXXX", err[1024], ck[600], out[700], path[800];
    struct job_spec s;
    struct model m;
    if (!mkdtemp(dir) || parse("\"pre\"", &s))
        return;
    struct model_config c = {.dim = 16, .n_layers = 4, .n_heads = 2, .ffn_dim = 24, .vocab = 11,
                             .seq_len = 8, .norm = s.norm, .rope_theta = 10000, .norm_eps = 1e-6,
                             .embed_std = s.model.embed_std};
    if (model_create(&m, &ops_cpu, &c, 1, err, sizeof(err)) ||
        model_init_weights(&m, 1, err, sizeof(err))) {
        CHECK(0, "%s", err);
        return;
    }
    json_t *spec = spec_to_json(&s);
    struct train_state st = {.step = 7, .samples = 0, .tokens = 0, .seed = 1};
    CHECK(!checkpoint_save(dir, &m, NULL, NULL, &st, spec, 1, err, sizeof(err)), "%s", err);
    json_decref(spec);
    snprintf(ck, sizeof(ck), "%.100s/checkpoints/step_00000007", dir);
    snprintf(out, sizeof(out), "%.100s/hf", dir);
    CHECK(!export_hf(ck, &s, out, err, sizeof(err)), "%s", err);
    struct st_file a, b;
    snprintf(path, sizeof(path), "%s/model.safetensors", out);
    CHECK(!st_read(path, &b, err, sizeof(err)), "%s", err);
    snprintf(path, sizeof(path), "%s/model.safetensors", ck);
    CHECK(!st_read(path, &a, err, sizeof(err)), "%s", err);
    CHECK(b.n == 3 + 9 * 4 && b.n == a.n, "%d tensors exported, %d in the checkpoint", b.n, a.n);
    for (int i = 0; i < b.n; i++) {
        const struct st_tensor *x = &b.tensors[i], *y = st_find(&a, x->name);
        size_t n = (size_t)x->shape[0] * (x->ndim == 2 ? (size_t)x->shape[1] : 1);
        CHECK(y && x->dtype == ST_F32 && y->ndim == x->ndim && y->shape[0] == x->shape[0] &&
                  !memcmp(x->data, y->data, n * sizeof(float)),
              "%s differs from the checkpoint's", x->name);
    }
    CHECK(st_find(&b, "lm_head.weight") && st_find(&b, "model.layers.3.mlp.down_proj.weight"),
          "HF names");
    st_free(&a);
    st_free(&b);
    snprintf(path, sizeof(path), "%s/config.json", out);
    json_t *cfg = json_load_file(path, 0, NULL);
    CHECK(cfg && json_integer_value(json_object_get(cfg, "hidden_size")) == 16 &&
              json_integer_value(json_object_get(cfg, "num_hidden_layers")) == 4 &&
              json_integer_value(json_object_get(cfg, "num_key_value_heads")) == 2 &&
              json_integer_value(json_object_get(cfg, "vocab_size")) == 11 &&
              json_integer_value(json_object_get(cfg, "max_position_embeddings")) == 8 &&
              json_is_false(json_object_get(cfg, "tie_word_embeddings")) &&
              !strcmp(json_string_value(json_array_get(json_object_get(cfg, "architectures"), 0)),
                      "LlamaForCausalLM"),
          "config.json");
    json_decref(cfg);
    model_destroy(&m);
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cleanup");
}

static void export_refuses_other_variants(void)
{
    const char *ok[] = {"\"pre\"", "\"scaled_init\"", "\"depth_scaled_init\"",
                        "{\"placement\": \"pre\", \"init\": \"scaled\"}"};
    const char *refused[] = {"\"lns\"", "\"lns_scaled_init\"", "\"post\"", "\"deepnorm\"",
                             "\"mixln\"", "\"sandwich\"", "\"layerscale\"", "\"skipinit\"",
                             "{\"ln_scale\": \"inv_sqrt_depth\", \"lns_position\": \"after_sublayer\"}"};
    struct job_spec s;
    char err[1024];
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (!parse(ok[i], &s))
            CHECK(!export_hf_supported(&s, err, sizeof(err)), "%s refused: %s", ok[i], err);
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        if (parse(refused[i], &s))
            continue;
        err[0] = 0;
        CHECK(export_hf_supported(&s, err, sizeof(err)) == -1 && strstr(err, s.norm.name) &&
                  strstr(err, "cannot be exported"),
              "%s: %s", refused[i], err);
    }
}

int main(void)
{
    RUN(export_reads_back_equal);
    RUN(export_refuses_other_variants);
    CHECK_EXIT();
}
