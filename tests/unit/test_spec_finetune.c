/* The job spec's fine-tuning fields (spec/finetune.c): init.from, after,
 * instruction data, the recipes, epochs. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"
#include "tests/spec_check.h"

/* Fine-tuning's fields: init.from, after, instruction data, the recipes,
 * epochs; each refusal names its field; the JSON form leaves the model and
 * variant out until the start gives them, and parses back the same. */
static const struct bad_case ft_bad[] = {
    {"{\"init\":{\"from\":3}}", "init.from", "a path"},
    {"{\"init\":{\"from\":\"\"}}", "init.from", "a path of 1"},
    {"{\"init\":{\"from\":{\"experiment\":0}}}", "init.from.experiment", "positive"},
    {"{\"init\":{\"from\":{\"run\":3}}}", "init.from.run", "unknown field"},
    {"{\"init\":{\"to\":\"x\"}}", "init.to", "unknown field"},
    {"{\"after\":3}", "after", "a list"},
    {"{\"after\":[1,0]}", "after", "entry 1"},
    {"{\"after\":[4,4]}", "after", "named twice"},
    {"{\"sft\":{\"pack\":true}}", "sft", "instruction data"},
    {"{\"data\":{\"format\":\"text\"}}", "data.format", "shards, instructions"},
    {"{\"data\":{\"format\":\"instructions\"},\"init\":{\"from\":\"/c\"}}", "data.train",
     "names its files"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"}}", "init.from",
     "starting checkpoint"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\",\"packing\":\"documents\"},"
     "\"init\":{\"from\":\"/c\"}}", "data.packing", "rows of their own"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},\"init\":{\"from\":\"/c\"},"
     "\"sft\":{\"recipe\":\"alpaca\"}}", "sft.recipe", "none, llm-adapters, owlore"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},\"init\":{\"from\":\"/c\"},"
     "\"sft\":{\"cutoff_len\":300}}", "sft.cutoff_len", "seq_len + 1 = 257"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},\"init\":{\"from\":\"/c\"},"
     "\"sft\":{\"cutoff_len\":0}}", "sft.cutoff_len", "only with sft.pack"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},\"init\":{\"from\":\"/c\"},"
     "\"eval\":{\"every\":10}}", "eval.every", "held-out records"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\",\"val\":\"/v.json\"},"
     "\"init\":{\"from\":\"/c\"},\"sft\":{\"val_size\":5}}", "sft.val_size", "not both"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},\"init\":{\"from\":\"/c\"},"
     "\"train\":{\"epochs\":2,\"steps\":9}}", "train.epochs", "give one of them"},
    {"{\"train\":{\"epochs\":2}}", "train.epochs", "instruction records"},
    {"{\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},\"init\":{\"from\":\"/c\"},"
     "\"train\":{\"epochs\":0}}", "train.epochs", "positive"},
    {"{\"train\":{\"schedule\":\"step\"}}", "train.schedule", "cosine, linear"},
    {"{\"model\":{\"preset\":\"llama-9m\",\"norm_eps\":0}}", "model.norm_eps", "(0, 0.01]"},
};

static void test_finetune_fields(void)
{
    for (size_t i = 0; i < sizeof ft_bad / sizeof ft_bad[0]; i++)
        check_bad(ft_bad[i].json, ft_bad[i].field, ft_bad[i].needle);
    struct job_spec s, b;
    struct spec_error e;
    const char *la = "{\"init\":{\"from\":{\"experiment\":7}},\"after\":[3],"
                     "\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},"
                     "\"sft\":{\"recipe\":\"llm-adapters\"}}";
    CHECK(parse(la, &s, &e) == 0, "%s: %s", e.field, e.message);
    CHECK(s.model_from_init && s.norm_from_init && !strcmp(s.name, "finetune"),
          "the model and the variant are the start's");
    CHECK(s.train.lr == 3e-4 && s.train.epochs == 3 && s.train.steps == 0 &&
              s.train.warmup == 100 && s.train.batch_seqs == 16 && s.train.seq_len == 256 &&
              s.train.schedule == SCHEDULE_LINEAR && s.train.min_lr_ratio == 0 &&
              s.train.clip == 1.0 && s.sft.cutoff_len == 256 && !s.sft.pack &&
              s.sft.train_on_inputs && s.sft.val_size == 120 && s.eval_every == 200,
          "llm-adapters' values");
    int64_t ids[SPEC_MAX_AFTER + 1];
    CHECK(spec_waits_for(&s, ids) == 2 && ids[0] == 3 && ids[1] == 7,
          "it waits for after's and init.from's experiments");
    json_t *j = spec_to_json(&s);
    CHECK(j && !json_object_get(j, "model") && !json_object_get(j, "norm") &&
              !json_object_get(json_object_get(j, "train"), "steps") &&
              json_object_get(json_object_get(j, "train"), "epochs"),
          "the JSON form: no model, norm or steps until the start and the data give them");
    char *text = json_dumps(j, JSON_COMPACT);
    CHECK(text && parse(text, &b, &e) == 0, "parses back: %s", e.message);
    json_t *j2 = spec_to_json(&b);
    CHECK(json_equal(j, j2), "the same spec");
    free(text);
    json_decref(j);
    json_decref(j2);

    const char *ow = "{\"init\":{\"from\":\"/ck\"},\"model\":\"llama-9m\","
                     "\"data\":{\"format\":\"instructions\",\"train\":\"/r.json\"},"
                     "\"sft\":{\"recipe\":\"owlore\"},\"train\":{\"lr\":1e-4}}";
    CHECK(parse(ow, &s, &e) == 0, "%s: %s", e.field, e.message);
    CHECK(!s.model_from_init && s.norm_from_init && s.sft.pack && s.sft.cutoff_len == 0 &&
              s.train.seq_len == 512 && s.train.epochs == 1 && s.train.warmup == 0 &&
              s.train.lr == 1e-4 && !s.sft.train_on_inputs && s.eval_every == 0,
          "owlore's values, the spec's lr over them");
    const char *steps = "{\"init\":{\"from\":\"/ck\"},\"data\":{\"format\":\"instructions\","
                        "\"train\":\"/r.json\"},\"train\":{\"epochs\":2}}";
    CHECK(parse(steps, &s, &e) == 0 && s.train.warmup == -1 && s.train.steps == 0,
          "epochs without a recipe: the warmup a tenth of the steps the data gives");
    CHECK(parse("{\"init\":{\"from\":\"/ck\"},\"model\":\"llama-9m\",\"norm\":\"lns\"}", &s,
                &e) == 0 && s.format == FORMAT_SHARDS && s.init.kind == INIT_PATH &&
              !strcmp(s.name, "llama-9m-lns"),
          "a start for more pretraining on shards");
}

int main(void)
{
    RUN(test_finetune_fields);
    CHECK_EXIT();
}
