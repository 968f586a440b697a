/* The job spec: the recipe's defaults, one error per kind of bad field with
 * the field named, the explicit JSON form parsing back to the same spec,
 * the object forms of model and norm, and parameter counts against
 * docs/spec.md. Fine-tuning's fields: test_spec_finetune.c; the data
 * checks on real shard files: test_spec_data.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/spec_check.h"

static void test_defaults_empty(void)
{
    struct job_spec s;
    struct spec_error e;
    int rc = parse("{}", &s, &e);
    CHECK(rc == 0, "{}: %s: %s", e.field, e.message);
    if (rc)
        return;
    CHECK(!strcmp(s.name, "llama-130m-pre"), "name %s", s.name);
    CHECK(!strcmp(s.model.preset, "llama-130m"), "preset %s", s.model.preset);
    CHECK(s.model.dim == 768 && s.model.ffn_dim == 2048 && s.model.n_heads == 12 &&
              s.model.n_layers == 12 && s.model.vocab == 0,
          "shape %d %d %d %d %d", s.model.dim, s.model.ffn_dim, s.model.n_heads,
          s.model.n_layers, s.model.vocab);
    CHECK(!strcmp(s.norm.name, "pre") && s.norm.placement == PLACE_PRE &&
              s.norm.ln_scale == LN_SCALE_NONE,
          "norm %s", s.norm.name);
    CHECK(!strcmp(s.train_glob, "var/data/default/train_*.bin"), "%s", s.train_glob);
    CHECK(!strcmp(s.val_glob, "var/data/default/val_*.bin"), "%s", s.val_glob);
    const struct train_cfg *t = &s.train;
    CHECK(t->steps == 20000 && t->warmup == 2000 && t->lr == 1e-3, "recipe %ld %ld %g", t->steps,
          t->warmup, t->lr);
    CHECK(t->seq_len == 256 && t->batch_seqs == 512 && t->micro_batch == 64, "batch %d %d %d",
          t->seq_len, t->batch_seqs, t->micro_batch);
    CHECK(t->min_lr_ratio == 0.1 && t->beta1 == 0.9 && t->beta2 == 0.999 && t->eps == 1e-8 &&
              t->weight_decay == 0 && t->clip == 0 && t->seed == 1,
          "adam defaults");
    CHECK(t->precision == PRECISION_MIXED && s.packing == PACKING_STREAM &&
              s.model.embed_std == 0.02 && s.norm.gains == GAINS_LEARNED,
          "precision %d, packing %d, embed_std %g, gains %d", t->precision, s.packing,
          s.model.embed_std, s.norm.gains);
    CHECK(s.eval_every == 1000 && s.eval_tokens == 10000000, "eval %ld %ld", s.eval_every,
          s.eval_tokens);
    CHECK(s.stats_every == 100, "stats %ld", s.stats_every);
    CHECK(s.checkpoint_every == 1000 && s.checkpoint_keep == 3, "checkpoint");
    CHECK(!s.analysis_angular && !s.analysis_prune, "analysis");
    CHECK(!strcmp(s.device, "any") && s.gpus == 1, "resources %s %d", s.device, s.gpus);
    CHECK(s.priority == 0 && s.max_attempts == 3, "priority %d attempts %d", s.priority,
          s.max_attempts);
}

static void test_defaults_lns(void)
{
    struct job_spec s;
    struct spec_error e;
    int rc = parse("{\"model\":\"llama-130m\",\"norm\":\"lns\"}", &s, &e);
    CHECK(rc == 0, "%s: %s", e.field, e.message);
    if (rc)
        return;
    CHECK(!strcmp(s.name, "llama-130m-lns"), "name %s", s.name);
    CHECK(!strcmp(s.norm.name, "lns") && s.norm.ln_scale == LN_SCALE_INV_SQRT_DEPTH &&
              s.norm.lns_position == LNS_AFTER_LN && s.norm.placement == PLACE_PRE,
          "norm");
    CHECK(s.train.steps == 20000 && s.train.warmup == 2000, "recipe");
}

struct recipe_case {
    const char *json;
    long steps, warmup;
    double lr;
    int batch_seqs, micro_batch;
};

static void test_recipes(void)
{
    static const struct recipe_case cases[] = {
        {"{\"model\":\"llama-71m\"}", 10000, 1000, 1e-3, 512, 64},
        {"{\"model\":\"llama-250m\"}", 40000, 4000, 1e-3, 512, 64},
        {"{\"model\":\"llama-350m\"}", 60000, 6000, 5e-4, 512, 64},
        {"{\"model\":\"llama-1b\"}", 100000, 1000, 5e-4, 512, 64},
        /* a recipe preset with its steps changed: warmup is steps/10 */
        {"{\"model\":\"llama-1b\",\"train\":{\"steps\":5000}}", 5000, 500, 5e-4, 512, 64},
        {"{\"model\":\"llama-1b\",\"train\":{\"steps\":5000,\"warmup\":7}}", 5000, 7, 5e-4,
         512, 64},
        /* presets without a recipe */
        {"{\"model\":\"llama-9m\"}", 10000, 1000, 1e-3, 512, 64},
        {"{\"model\":\"llama-7b\",\"train\":{\"steps\":1234}}", 1234, 123, 1e-3, 512, 64},
        {"{\"model\":\"llama-20m\",\"train\":{\"lr\":3e-3}}", 10000, 1000, 3e-3, 512, 64},
        /* micro_batch follows batch_seqs */
        {"{\"train\":{\"batch_seqs\":96}}", 20000, 2000, 1e-3, 96, 96},
        {"{\"train\":{\"batch_seqs\":128}}", 20000, 2000, 1e-3, 128, 64},
        {"{\"train\":{\"batch_seqs\":8}}", 20000, 2000, 1e-3, 8, 8},
        {"{\"train\":{\"batch_seqs\":8,\"micro_batch\":2}}", 20000, 2000, 1e-3, 8, 2},
        /* a reshaped preset is custom and gets no recipe */
        {"{\"model\":{\"preset\":\"llama-130m\",\"n_layers\":6}}", 10000, 1000, 1e-3, 512, 64},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct recipe_case *c = &cases[i];
        struct job_spec s;
        struct spec_error e;
        int rc = parse(c->json, &s, &e);
        CHECK(rc == 0, "%s: %s: %s", c->json, e.field, e.message);
        if (rc)
            continue;
        CHECK(s.train.steps == c->steps && s.train.warmup == c->warmup && s.train.lr == c->lr,
              "%s: steps %ld warmup %ld lr %g", c->json, s.train.steps, s.train.warmup,
              s.train.lr);
        CHECK(s.train.batch_seqs == c->batch_seqs && s.train.micro_batch == c->micro_batch,
              "%s: batch %d micro %d", c->json, s.train.batch_seqs, s.train.micro_batch);
    }
}

static const struct bad_case bad_cases[] = {
    {"[]", "", "JSON object"},
    {"{\"a\":", "", "invalid JSON"},
    {"{\"priority\":1,\"priority\":2}", "", "invalid JSON"},
    {"{\"lrr\":1}", "lrr", "unknown field"},
    {"{\"train\":{\"lrr\":1}}", "train.lrr", "unknown field"},
    {"{\"model\":{" CUSTOM ",\"depth\":3}}", "model.depth", "unknown field"},
    {"{\"norm\":{\"placment\":\"pre\"}}", "norm.placment", "unknown field"},
    {"{\"eval\":{\"every\":10,\"x\":1}}", "eval.x", "unknown field"},
    {"{\"resources\":{\"gpu\":1}}", "resources.gpu", "unknown field"},
    {"{\"data\":{\"test\":\"x\"}}", "data.test", "unknown field"},
    {"{\"model\":\"llama-13m\"}", "model", "llama-130m"},
    {"{\"model\":5}", "model", "preset name or an object"},
    {"{\"model\":{\"preset\":\"llama-5m\"}}", "model.preset", "unknown model preset"},
    {"{\"norm\":\"lns2\"}", "norm", "deepnorm"},
    {"{\"norm\":[1]}", "norm", "preset name or an object"},
    {"{\"norm\":{\"base\":\"foo\"}}", "norm.base", "unknown norm variant"},
    {"{\"norm\":{\"placement\":\"middle\"}}", "norm.placement", "pre, post, sandwich, mix"},
    {"{\"norm\":{\"init\":\"xavier\"}}", "norm.init", "deepnorm"},
    {"{\"norm\":{\"lns_position\":\"after\"}}", "norm.lns_position", "after_sublayer"},
    {"{\"norm\":{\"ln_scale\":1}}", "norm.ln_scale", "must be a string"},
    {"{\"norm\":{\"init_std\":0}}", "norm.init_std", "positive"},
    {"{\"norm\":{\"residual_alpha\":-1}}", "norm.residual_alpha", "positive"},
    {"{\"norm\":{\"mix_post_layers\":20}}", "norm.mix_post_layers", "12 layers"},
    {"{\"norm\":{\"mix_post_layers\":-2}}", "norm.mix_post_layers", "at least -1"},
    {"{\"train\":{\"steps\":0}}", "train.steps", "positive"},
    {"{\"train\":{\"steps\":-5}}", "train.steps", "positive"},
    {"{\"train\":{\"steps\":\"100\"}}", "train.steps", "integer"},
    {"{\"train\":{\"steps\":100.5}}", "train.steps", "integer"},
    {"{\"train\":{\"steps\":100.0}}", "train.steps", "integer"},
    {"{\"train\":{\"seq_len\":0}}", "train.seq_len", "positive"},
    {"{\"train\":{\"seq_len\":3000000000}}", "train.seq_len", "out of range"},
    {"{\"train\":{\"batch_seqs\":0}}", "train.batch_seqs", "positive"},
    {"{\"train\":{\"micro_batch\":0}}", "train.micro_batch", "positive"},
    {"{\"train\":{\"batch_seqs\":100,\"micro_batch\":64}}", "train.micro_batch", "does not divide"},
    {"{\"train\":{\"batch_seqs\":32,\"micro_batch\":64}}", "train.micro_batch", "larger"},
    {"{\"train\":{\"seq_len\":65536,\"batch_seqs\":65536}}", "train.batch_seqs", "too large"},
    {"{\"train\":{\"lr\":0}}", "train.lr", "positive"},
    {"{\"train\":{\"lr\":-1e-3}}", "train.lr", "positive"},
    {"{\"train\":{\"lr\":\"fast\"}}", "train.lr", "must be a number"},
    {"{\"train\":{\"lr\":null}}", "train.lr", "must be a number"},
    {"{\"train\":{\"warmup\":-1}}", "train.warmup", "at least 0"},
    {"{\"train\":{\"steps\":100,\"warmup\":101}}", "train.warmup", "longer than the run"},
    {"{\"train\":{\"min_lr_ratio\":1.5}}", "train.min_lr_ratio", "[0, 1]"},
    {"{\"train\":{\"beta1\":1}}", "train.beta1", "[0, 1)"},
    {"{\"train\":{\"beta2\":-0.1}}", "train.beta2", "[0, 1)"},
    {"{\"train\":{\"eps\":0}}", "train.eps", "positive"},
    {"{\"train\":{\"weight_decay\":-0.1}}", "train.weight_decay", "negative"},
    {"{\"train\":{\"clip\":-1}}", "train.clip", "negative"},
    {"{\"train\":{\"seed\":-1}}", "train.seed", "non-negative integer"},
    {"{\"train\":{\"seed\":1.5}}", "train.seed", "non-negative integer"},
    {"{\"train\":[]}", "train", "must be an object"},
    {"{\"eval\":{\"every\":-1}}", "eval.every", "at least 0"},
    {"{\"eval\":{\"tokens\":0}}", "eval.tokens", "positive"},
    {"{\"eval\":{\"train_tokens\":-1}}", "eval.train_tokens", "at least 0"},
    {"{\"stats\":{\"every\":-1}}", "stats.every", "at least 0"},
    {"{\"checkpoint\":{\"every\":-1}}", "checkpoint.every", "at least 0"},
    {"{\"checkpoint\":{\"keep\":0}}", "checkpoint.keep", "positive"},
    {"{\"analysis\":{\"angular\":1}}", "analysis.angular", "true or false"},
    {"{\"analysis\":{\"prune\":\"yes\"}}", "analysis.prune", "true or false"},
    {"{\"resources\":{\"gpus\":0}}", "resources.gpus", "positive"},
    {"{\"resources\":{\"device\":\"tpu\"}}", "resources.device", "cpu, cuda, any"},
    {"{\"resources\":{\"device\":\"any\",\"gpus\":2}}", "resources.gpus", "needs device"},
    {"{\"train\":{\"batch_seqs\":48,\"micro_batch\":16},\"resources\":{\"device\":\"cuda\",\"gpus\":2}}",
     "train.batch_seqs", "multiple of gpus x micro_batch = 32"},
    {"{\"max_attempts\":0}", "max_attempts", "positive"},
    {"{\"priority\":1.5}", "priority", "integer"},
    {"{\"model\":{" CUSTOM ",\"vocab\":1}}", "model.vocab", "at least 2"},
    {"{\"model\":{" CUSTOM ",\"vocab\":2147483648}}", "model.vocab", "out of range"},
    {"{\"model\":{\"dim\":0,\"n_layers\":2,\"n_heads\":4,\"ffn_dim\":128}}", "model.dim",
     "positive"},
    {"{\"model\":{\"dim\":64,\"n_layers\":0,\"n_heads\":4,\"ffn_dim\":128}}", "model.n_layers",
     "positive"},
    {"{\"model\":{\"dim\":64,\"n_layers\":2,\"n_heads\":-4,\"ffn_dim\":128}}", "model.n_heads",
     "positive"},
    {"{\"model\":{\"dim\":64,\"n_layers\":2,\"n_heads\":4,\"ffn_dim\":0}}", "model.ffn_dim",
     "positive"},
    {"{\"model\":{\"dim\":66,\"n_layers\":2,\"n_heads\":4,\"ffn_dim\":128}}", "model.n_heads",
     "divisible"},
    {"{\"model\":{\"dim\":36,\"n_layers\":2,\"n_heads\":4,\"ffn_dim\":128}}", "model.dim", "even"},
    {"{\"model\":{\"dim\":64,\"n_layers\":2,\"n_heads\":4}}", "model.ffn_dim", "missing"},
    {"{\"name\":\"\"}", "name", "empty"},
    {"{\"name\":\"a/b\"}", "name", "letters"},
    {"{\"name\":\"a b\"}", "name", "letters"},
    {"{\"name\":\"..\"}", "name", "'.'"},
    {"{\"name\":5}", "name", "must be a string"},
    {"{\"data\":{\"train\":\"\"}}", "data.train", "empty"},
    {"{\"data\":\"foo\"}", "data", "must be an object"},
    {"{\"data\":{\"val\":7}}", "data.val", "must be a string"},
    {"{\"data\":{\"packing\":\"rows\"}}", "data.packing", "stream, documents"},
    {"{\"data\":{\"packing\":1}}", "data.packing", "must be a string"},
    {"{\"train\":{\"precision\":\"fp16\"}}", "train.precision", "mixed, bf16"},
    {"{\"model\":{\"preset\":\"llama-9m\",\"embed_std\":0}}", "model.embed_std", "positive"},
    {"{\"model\":{\"preset\":\"llama-9m\",\"embed_std\":\"x\"}}", "model.embed_std",
     "number"},
    {"{\"norm\":{\"base\":\"lns\",\"gains\":\"fixed\"}}", "norm.gains", "learned, frozen"},
    {"{\"analysis\":{\"tasks\":\"arc.jsonl\"}}", "analysis.tasks", "a list"},
    {"{\"analysis\":{\"tasks\":[3]}}", "analysis.tasks[0]", "a file name or an object"},
    {"{\"analysis\":{\"tasks\":[{\"shots\":5}]}}", "analysis.tasks[0]", "no \"file\""},
    {"{\"analysis\":{\"tasks\":[{\"file\":\"a.jsonl\",\"layout\":\"squad\"}]}}",
     "analysis.tasks[0].layout", "unknown layout \"squad\""},
    {"{\"analysis\":{\"tasks\":[{\"file\":\"a.jsonl\",\"shots\":-1}]}}",
     "analysis.tasks[0].shots", "at least 0"},
    {"{\"analysis\":{\"tasks\":[{\"file\":\"a.jsonl\",\"seed\":1}]}}", "analysis.tasks[0].seed",
     "unknown field"},
    {"{\"analysis\":{\"tasks\":[\"d/arc.test.jsonl\",\"e/arc.jsonl.gz\"]}}", "analysis.tasks[1]",
     "\"arc\" is analysis.tasks[0]'s"},
    {"{\"analysis\":{\"tasks\":[\"d/.jsonl\"]}}", "analysis.tasks[0]", "1 to 64 characters"},
    {"{\"analysis\":{\"tasks\":[\"d/a b.jsonl\"]}}", "analysis.tasks[0]", "only letters"},
};

static void test_bad_fields(void)
{
    size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
    CHECK(n >= 25, "only %zu cases", n);
    for (size_t i = 0; i < n; i++)
        check_bad(bad_cases[i].json, bad_cases[i].field, bad_cases[i].needle);
}

/* Strings that overflow their buffers are built here rather than written out. */
static void test_bad_lengths(void)
{
    char json[3000], name[200], glob[1100];
    memset(name, 'x', sizeof(name) - 1);
    name[sizeof(name) - 1] = 0;
    snprintf(json, sizeof(json), "{\"name\":\"%s\"}", name);
    check_bad(json, "name", "too long");
    name[127] = 0; /* the longest that fits */
    snprintf(json, sizeof(json), "{\"name\":\"%s\"}", name);
    struct job_spec s;
    struct spec_error e;
    CHECK(parse(json, &s, &e) == 0 && strlen(s.name) == 127, "127-byte name: %s", e.message);
    memset(glob, 'g', sizeof(glob) - 1);
    glob[sizeof(glob) - 1] = 0;
    snprintf(json, sizeof(json), "{\"data\":{\"val\":\"%s\"}}", glob);
    check_bad(json, "data.val", "too long");
    /* jansson refuses a NUL in JSON text, but a json_t built in code may
     * hold one, which would silently cut the name short */
    json_t *root = json_pack("{s:s%}", "name", "a\0b", (size_t)3);
    int rc = root ? spec_from_json(root, &s, &e) : 0;
    CHECK(root && rc == -1 && !strcmp(e.field, "name") && strstr(e.message, "NUL"), "NUL: %s",
          e.message);
    json_decref(root);
    /* the seed spans the whole non-negative json_int_t range */
    CHECK(parse("{\"train\":{\"seed\":9223372036854775807}}", &s, &e) == 0 &&
              s.train.seed == 9223372036854775807ULL,
          "largest seed: %s", e.message);
}

static void test_model_object(void)
{
    struct job_spec s;
    struct spec_error e;
    int rc = parse("{\"model\":{" CUSTOM ",\"vocab\":300}}", &s, &e);
    CHECK(rc == 0, "%s: %s", e.field, e.message);
    CHECK(rc || (!strcmp(s.model.preset, "custom") && s.model.dim == 64 && s.model.n_layers == 2 &&
                 s.model.n_heads == 4 && s.model.ffn_dim == 128 && s.model.vocab == 300),
          "custom shape");
    CHECK(rc || !strcmp(s.name, "custom-pre"), "name %s", s.name);
    CHECK(rc || (s.train.steps == 10000 && s.train.warmup == 1000 && s.train.lr == 1e-3),
          "custom recipe");
    rc = parse("{\"model\":{\"preset\":\"llama-350m\",\"vocab\":32000}}", &s, &e);
    CHECK(rc == 0, "%s: %s", e.field, e.message);
    CHECK(rc || (!strcmp(s.model.preset, "llama-350m") && s.model.dim == 1024 &&
                 s.model.vocab == 32000 && s.train.lr == 5e-4),
          "preset with vocab stays the preset");
    rc = parse("{\"model\":{\"preset\":\"llama-350m\",\"dim\":1024}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.model.preset, "llama-350m"), "restating a preset keeps it");
    rc = parse("{\"model\":{\"preset\":\"llama-130m\",\"n_layers\":6}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.model.preset, "custom") && s.model.n_layers == 6 &&
              s.model.dim == 768,
          "reshaped preset is custom");
    /* the embedding's std is no part of the shape: the preset and its recipe stay */
    rc = parse("{\"model\":{\"preset\":\"llama-130m\",\"embed_std\":0.6324555320336759}}", &s,
               &e);
    CHECK(rc == 0 && !strcmp(s.model.preset, "llama-130m") && s.model.embed_std == sqrt(0.4) &&
              s.train.steps == 20000,
          "embed_std on a preset: %s", e.message);
}

/* The settings of the paper's recipe beside cod's: precision, packing and
 * frozen gains parse, and frozen gains leave the variant its name. */
static void test_recipe_settings(void)
{
    struct job_spec s;
    struct spec_error e;
    int rc = parse("{\"norm\":{\"base\":\"lns\",\"gains\":\"frozen\"},"
                   "\"train\":{\"precision\":\"bf16\"},\"data\":{\"packing\":\"documents\"}}",
                   &s, &e);
    CHECK(rc == 0, "%s: %s", e.field, e.message);
    CHECK(rc || (!strcmp(s.norm.name, "lns") && s.norm.gains == GAINS_FROZEN &&
                 s.norm.ln_scale == LN_SCALE_INV_SQRT_DEPTH && s.train.precision == PRECISION_BF16 &&
                 s.packing == PACKING_DOCUMENTS && !strcmp(s.name, "llama-130m-lns")),
          "norm %s gains %d precision %d packing %d name %s", s.norm.name, s.norm.gains,
          s.train.precision, s.packing, s.name);
    rc = parse("{\"norm\":{\"base\":\"custom\",\"gains\":\"frozen\"}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.norm.name, "pre") && s.norm.gains == GAINS_FROZEN,
          "frozen gains on Pre-LN keep its name: %s", s.norm.name);
    json_t *j = rc ? NULL : spec_to_json(&s);
    CHECK(j && !strcmp(json_string_value(json_object_get(json_object_get(j, "norm"), "gains")),
                       "frozen"),
          "the JSON form says the gains are frozen");
    json_decref(j);
}

static void test_norm_object(void)
{
    struct job_spec s;
    struct spec_error e;
    /* the paper's position ablation (Table 8) */
    int rc = parse("{\"norm\":{\"placement\":\"pre\",\"ln_scale\":\"inv_sqrt_depth\","
                   "\"lns_position\":\"before_ln\"}}",
                   &s, &e);
    CHECK(rc == 0, "%s: %s", e.field, e.message);
    CHECK(rc || (!strcmp(s.norm.name, "custom") && s.norm.placement == PLACE_PRE &&
                 s.norm.ln_scale == LN_SCALE_INV_SQRT_DEPTH &&
                 s.norm.lns_position == LNS_BEFORE_LN && s.norm.init_std == 0.02),
          "ablation");
    CHECK(rc || !strcmp(s.name, "llama-130m-custom"), "name %s", s.name);
    /* a spelling of a preset is filed under that preset */
    rc = parse("{\"norm\":{\"ln_scale\":\"inv_sqrt_depth\",\"init\":\"scaled\"}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.norm.name, "lns_scaled_init"), "name %s", s.norm.name);
    rc = parse("{\"norm\":{\"base\":\"custom\",\"placement\":\"sandwich\"}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.norm.name, "sandwich"), "name %s", s.norm.name);
    rc = parse("{\"norm\":{\"base\":\"lns\"}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.norm.name, "lns"), "bare base keeps the preset name");
    rc = parse("{\"norm\":{\"base\":\"lns\",\"lns_sublayers\":\"ffn\"}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.norm.name, "custom") && s.norm.ln_scale == LN_SCALE_INV_SQRT_DEPTH &&
              s.norm.lns_sublayers == LNS_FFN,
          "override on a base");
    rc = parse("{\"norm\":{\"base\":\"deepnorm\",\"residual_alpha\":2}}", &s, &e);
    CHECK(rc == 0 && !strcmp(s.norm.name, "custom") && s.norm.residual == RES_SCALED &&
              s.norm.residual_alpha == 2 && s.norm.init == INIT_DEEPNORM,
          "deepnorm with another alpha");
    rc = parse("{\"norm\":{\"placement\":\"mix\",\"mix_post_layers\":3,\"residual\":\"layerscale\","
               "\"branch_init\":0.5,\"init\":\"depth_scaled\",\"init_std\":0.01}}",
               &s, &e);
    CHECK(rc == 0 && s.norm.placement == PLACE_MIX && s.norm.mix_post_layers == 3 &&
              s.norm.residual == RES_LAYERSCALE && s.norm.branch_init == 0.5 &&
              s.norm.init == INIT_DEPTH_SCALED && s.norm.init_std == 0.01,
          "every setting: %s", e.message);
}

/* to_json → from_json → to_json gives the same JSON, and the specs agree
 * field by field on what the trainer reads. */
static void test_round_trip(void)
{
    static const char *const specs[] = {
        "{}",
        "{\"model\":\"llama-130m\",\"norm\":\"lns\"}",
        "{\"model\":\"llama-1b\",\"norm\":\"deepnorm\",\"train\":{\"steps\":777,\"seed\":42}}",
        "{\"model\":\"llama-9m\",\"norm\":\"mixln\",\"eval\":{\"every\":0,\"tokens\":5,"
        "\"train_tokens\":7},"
        "\"analysis\":{\"angular\":true,\"prune\":true},\"resources\":{\"device\":\"cuda\","
        "\"gpus\":2},\"priority\":-3,\"max_attempts\":9,\"name\":\"x.y_z-1\"}",
        "{\"model\":{" CUSTOM ",\"vocab\":300},\"norm\":{\"base\":\"skipinit\",\"init_std\":0.03}}",
        "{\"model\":{\"preset\":\"llama-60m\",\"vocab\":50257},\"norm\":\"layerscale\","
        "\"data\":{\"train\":\"/d/t_*.bin\",\"val\":\"/d/v_*.bin\"},"
        "\"train\":{\"lr\":0.1234567890123,"
        "\"clip\":1.0,\"weight_decay\":0.1,\"batch_seqs\":24,\"micro_batch\":8},"
        "\"checkpoint\":{\"every\":0,\"keep\":1},\"stats\":{\"every\":7}}",
        "{\"norm\":{\"placement\":\"sandwich\",\"lns_position\":\"after_residual\"}}",
        "{\"analysis\":{\"prune\":true,\"tasks\":[\"/t/arc_easy.jsonl\",{\"file\":\"m/mmlu.test.jsonl.zst\","
        "\"layout\":\"mmlu\",\"shots\":5,\"fewshot_from\":\"m/mmlu.dev.jsonl\",\"limit\":100}]}}",
        "{\"model\":{\"preset\":\"llama-130m\",\"embed_std\":0.6324555320336759},"
        "\"norm\":{\"base\":\"lns\",\"gains\":\"frozen\"},\"train\":{\"precision\":\"bf16\"},"
        "\"data\":{\"packing\":\"documents\"}}",
    };
    const char *norms[] = {"pre", "lns", "post", "deepnorm", "mixln", "scaled_init",
                           "lns_scaled_init", "sandwich", "layerscale", "skipinit",
                           "depth_scaled_init"};
    char buf[256];
    size_t n_specs = sizeof(specs) / sizeof(specs[0]), n_norms = sizeof(norms) / sizeof(norms[0]);
    for (size_t i = 0; i < n_specs + n_norms; i++) {
        const char *text = specs[i < n_specs ? i : 0];
        if (i >= n_specs) {
            snprintf(buf, sizeof(buf), "{\"model\":\"llama-35m\",\"norm\":\"%s\"}",
                     norms[i - n_specs]);
            text = buf;
        }
        struct job_spec a, b;
        struct spec_error e;
        if (parse(text, &a, &e)) {
            CHECK(0, "%s: %s: %s", text, e.field, e.message);
            continue;
        }
        json_t *ja = spec_to_json(&a);
        CHECK(ja != NULL, "to_json");
        if (!ja)
            continue;
        int rc = spec_from_json(ja, &b, &e);
        CHECK(rc == 0, "%s: explicit form refused: %s: %s", text, e.field, e.message);
        json_t *jb = rc ? NULL : spec_to_json(&b);
        CHECK(rc || (jb && json_equal(ja, jb)), "%s: round trip differs", text);
        if (!rc) {
            CHECK(!strcmp(a.name, b.name) && !strcmp(a.model.preset, b.model.preset) &&
                      !strcmp(a.norm.name, b.norm.name),
                  "%s: names", text);
            CHECK(a.model.dim == b.model.dim && a.model.vocab == b.model.vocab &&
                      a.train.lr == b.train.lr && a.train.seed == b.train.seed &&
                      a.train.warmup == b.train.warmup && a.norm.init_std == b.norm.init_std &&
                      a.norm.residual_alpha == b.norm.residual_alpha &&
                      a.checkpoint_every == b.checkpoint_every &&
                      a.model.embed_std == b.model.embed_std && a.norm.gains == b.norm.gains &&
                      a.train.precision == b.train.precision && a.packing == b.packing &&
                      a.eval_train_tokens == b.eval_train_tokens,
                  "%s: fields", text);
        }
        /* every default is explicit */
        json_t *t = json_object_get(ja, "train");
        CHECK(json_object_size(t) == 15, "%s: train has %zu fields", text, json_object_size(t));
        CHECK(json_object_size(json_object_get(ja, "norm")) == 12, "%s: norm fields", text);
        CHECK(json_object_size(json_object_get(ja, "data")) == 4, "%s: data fields", text);
        /* eval.train_tokens only where asked for: a spec without it keeps its form */
        CHECK(json_object_size(json_object_get(ja, "eval")) == (strstr(text, "train_tokens") ? 3u : 2u),
              "%s: eval has %zu fields", text, json_object_size(json_object_get(ja, "eval")));
        json_decref(ja);
        json_decref(jb);
    }
}

/* A complete spec of a cod before the recipe's settings (a checkpoint's)
 * reads as what it ran: the embedding's √0.4, mixed precision, stream
 * packing, learned gains; the server's migration writes the std as text
 * that parses to the same double; fields a spec has stay. */
/* analysis.tasks: a file name or an object; its JSON form writes every
 * field but an absent fewshot_from, and no tasks leaves the key out, as
 * every spec written before it (a stored spec reads back the same). */
static void test_tasks(void)
{
    struct job_spec s;
    struct spec_error e;
    int rc = parse("{\"analysis\":{\"tasks\":[\"/t/hs.val.jsonl.gz\",{\"file\":\"arc-e.jsonl\","
                   "\"layout\":\"arc_easy\",\"shots\":25}]}}",
                   &s, &e);
    CHECK(rc == 0, "%s: %s", e.field, e.message);
    if (rc)
        return;
    CHECK(s.n_tasks == 2 && !strcmp(s.tasks[0].file, "/t/hs.val.jsonl.gz") &&
              !s.tasks[0].layout[0] && s.tasks[0].shots == 0 && !s.tasks[0].fewshot_from[0] &&
              !strcmp(s.tasks[1].layout, "arc_easy") && s.tasks[1].shots == 25,
          "tasks read as given");
    char name[80];
    spec_task_name(s.tasks[0].file, name, sizeof name);
    CHECK(!strcmp(name, "hs"), "the name is the base name up to its first '.': %s", name);
    json_t *j = spec_to_json(&s);
    json_t *t = json_object_get(json_object_get(j, "analysis"), "tasks");
    CHECK(json_array_size(t) == 2 &&
              !strcmp(json_string_value(json_object_get(json_array_get(t, 0), "layout")), "auto") &&
              !json_object_get(json_array_get(t, 0), "fewshot_from"),
          "the JSON form: layout auto, no fewshot_from");
    json_decref(j);
    CHECK(parse("{}", &s, &e) == 0 && s.n_tasks == 0, "none by default");
    j = spec_to_json(&s);
    CHECK(!json_object_get(json_object_get(j, "analysis"), "tasks"), "none is left out");
    json_decref(j);
    char big[8192];
    int at = snprintf(big, sizeof big, "{\"analysis\":{\"tasks\":[");
    for (int i = 0; i <= SPEC_MAX_TASKS; i++)
        at += snprintf(big + at, sizeof big - (size_t)at, "%s\"t%d.jsonl\"", i ? "," : "", i);
    snprintf(big + at, sizeof big - (size_t)at, "]}}");
    check_bad(big, "analysis.tasks", "at most 16");
}

static void test_upgrade(void)
{
    json_t *old = json_loads("{\"model\":{\"preset\":\"llama-9m\"},\"norm\":{\"base\":\"lns\"},"
                             "\"data\":{},\"train\":{\"steps\":5}}",
                             0, NULL);
    struct job_spec s, m;
    struct spec_error e;
    CHECK(old && spec_upgrade(old) == 0 && spec_from_json(old, &s, &e) == 0, "upgrade: %s",
          e.message);
    CHECK(s.model.embed_std == sqrt(0.4) && s.train.precision == PRECISION_MIXED &&
              s.packing == PACKING_STREAM && s.norm.gains == GAINS_LEARNED &&
              s.format == FORMAT_SHARDS && s.train.schedule == SCHEDULE_COSINE &&
              !strcmp(s.norm.name, "lns") && s.train.steps == 5,
          "the old recipe: embed_std %.17g", s.model.embed_std);
    CHECK(parse("{\"model\":{\"preset\":\"llama-9m\",\"embed_std\":0.6324555320336759}}", &m,
                &e) == 0 && m.model.embed_std == sqrt(0.4),
          "schema/recipe_fields.sql's text is √0.4 to the last bit");
    json_decref(old);
    json_t *now = json_loads("{\"model\":{\"embed_std\":0.02},\"norm\":{\"gains\":\"frozen\"},"
                             "\"data\":{\"packing\":\"documents\",\"format\":\"shards\"},"
                             "\"train\":{\"precision\":\"bf16\",\"schedule\":\"linear\"}}",
                             0, NULL);
    json_t *copy = json_deep_copy(now);
    CHECK(now && copy && spec_upgrade(now) == 0 && json_equal(now, copy), "fields given stay");
    json_decref(now);
    json_decref(copy);
}

static int parse_file(const char *path, struct job_spec *s)
{
    FILE *f = fopen(path, "r");
    static char text[8192];
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f)
        fclose(f);
    struct spec_error e;
    int rc = n ? parse((text[n] = 0, text), s, &e) : -1;
    CHECK(rc == 0, "%s: %s: %s", path, n ? e.field : "unreadable", n ? e.message : "");
    return rc;
}

/* studies/recipe/paper-130m.json is the official 130M run (docs/spec.md),
 * and the recipe study's two bases differ in the paper's three settings
 * alone. */
static void test_recipe_files(void)
{
    struct job_spec p, today, paper;
    if (parse_file("studies/recipe/paper-130m.json", &p))
        return;
    const struct train_cfg *t = &p.train;
    CHECK(!strcmp(p.model.preset, "llama-130m") && p.model.embed_std == 0.02 &&
              !strcmp(p.norm.name, "lns") && p.norm.gains == GAINS_LEARNED &&
              p.packing == PACKING_DOCUMENTS && t->precision == PRECISION_BF16 &&
              t->steps == 20000 && t->warmup == 2000 && t->lr == 1e-3 && t->seq_len == 256 &&
              t->batch_seqs == 512 && t->min_lr_ratio == 0.1 && t->beta1 == 0.9 &&
              t->beta2 == 0.999 && t->eps == 1e-8 && t->weight_decay == 0 && t->clip == 0 &&
              p.eval_every == 1000 && p.eval_tokens == 10000000,
          "paper-130m.json is not the official recipe");
    if (parse_file("studies/recipe/today-cpu.json", &today) ||
        parse_file("studies/recipe/paper-cpu.json", &paper))
        return;
    CHECK(today.train.precision == PRECISION_MIXED && today.packing == PACKING_STREAM &&
              today.model.embed_std == sqrt(0.4) && paper.train.precision == PRECISION_BF16 &&
              paper.packing == PACKING_DOCUMENTS && paper.model.embed_std == 0.02,
          "today's and the paper's recipes");
    paper.train.precision = today.train.precision;
    paper.packing = today.packing;
    paper.model.embed_std = today.model.embed_std;
    snprintf(paper.name, sizeof paper.name, "%s", today.name);
    json_t *a = spec_to_json(&today), *b = spec_to_json(&paper);
    CHECK(a && b && json_equal(a, b), "the two bases differ in more than the three settings");
    json_decref(a);
    json_decref(b);
}

static void test_param_counts(void)
{
    static const struct {
        const char *preset;
        double millions; /* docs/spec.md, vocab 32000 */
    } table[] = {
        {"llama-9m", 9.0},     {"llama-20m", 19.6},   {"llama-35m", 35.2},  {"llama-60m", 58.1},
        {"llama-71m", 70.6},   {"llama-130m", 134.1}, {"llama-250m", 247.4}, {"llama-350m", 368.0},
        {"llama-1b", 1339.1},  {"llama-7b", 6738.4},
    };
    char json[256];
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        snprintf(json, sizeof(json), "{\"model\":{\"preset\":\"%s\",\"vocab\":32000}}",
                 table[i].preset);
        struct job_spec s;
        struct spec_error e;
        if (parse(json, &s, &e)) {
            CHECK(0, "%s: %s", json, e.message);
            continue;
        }
        double got = spec_param_count(&s) / 1e6;
        /* 0.1% of the table's figure, or its rounding to 0.1M for the small
         * ones; the paper's 20M is 19.55M counted by the same formula. */
        double tol = fmax(0.001 * table[i].millions, 0.05);
        if (!strcmp(table[i].preset, "llama-20m"))
            tol = 0.06;
        CHECK(fabs(got - table[i].millions) <= tol, "%s: %.2fM, paper %.1fM", table[i].preset, got,
              table[i].millions);
    }
    struct job_spec s;
    struct spec_error e;
    int rc = parse("{\"model\":{" CUSTOM ",\"vocab\":10}}", &s, &e);
    CHECK(rc == 0, "%s", e.message);
    int64_t base = 2 * 10 * 64 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64;
    CHECK(rc || spec_param_count(&s) == base, "pre: %lld vs %lld", (long long)spec_param_count(&s),
          (long long)base);
    const struct {
        const char *norm;
        int64_t extra; /* per block */
    } extras[] = {{"sandwich", 2 * 64}, {"layerscale", 2 * 64}, {"skipinit", 2}, {"lns", 0}};
    for (size_t i = 0; i < sizeof(extras) / sizeof(extras[0]); i++) {
        char j[256];
        snprintf(j, sizeof(j), "{\"model\":{" CUSTOM ",\"vocab\":10},\"norm\":\"%s\"}",
                 extras[i].norm);
        rc = parse(j, &s, &e);
        CHECK(rc == 0 && spec_param_count(&s) == base + 2 * extras[i].extra, "%s: %lld",
              extras[i].norm, (long long)spec_param_count(&s));
    }
    rc = parse("{}", &s, &e);
    CHECK(rc == 0 && spec_param_count(&s) == -1, "unknown vocab");
}

int main(void)
{
    RUN(test_defaults_empty);
    RUN(test_defaults_lns);
    RUN(test_recipes);
    RUN(test_bad_fields);
    RUN(test_bad_lengths);
    RUN(test_model_object);
    RUN(test_norm_object);
    RUN(test_recipe_settings);
    RUN(test_round_trip);
    RUN(test_param_counts);
    RUN(test_upgrade);
    RUN(test_tasks);
    RUN(test_recipe_files);
    CHECK_EXIT();
}
