/* The job spec's fields of fine-tuning: see finetune.h. */
#include "spec/finetune.h"

#include <stdio.h>
#include <string.h>

#include "spec/fields.h"

/* What a recipe fills in (docs/finetune.md says where each value comes
 * from, and which ones no paper states). */
struct recipe {
    const char *name;
    double lr, epochs;
    long warmup;
    int batch_seqs, seq_len;
    enum schedule schedule;
    double min_lr_ratio, clip;
    int cutoff_len, pack, train_on_inputs;
    long val_size, eval_every;
};

/* LLM-Adapters' finetune.py with its README's commands (batch 16, val_set_size
 * 120); Hugging Face's Trainer around it: linear decay to 0, gradient norm
 * clipped at 1, AdamW without weight decay. OwLore's run_lisa.sh over LMFlow:
 * 1 epoch, blocks of 512, batch 16, no warmup, no held-out split. */
static const struct recipe recipes[] = {
    {"llm-adapters", 3e-4, 3, 100, 16, 256, SCHEDULE_LINEAR, 0, 1.0, 256, 0, 1, 120, 200},
    {"owlore", 3e-4, 1, 0, 16, 512, SCHEDULE_LINEAR, 0, 1.0, 0, 1, 0, 0, 0},
};
enum { N_RECIPES = sizeof recipes / sizeof recipes[0] };
static const char *const recipe_names[] = {"none", "llm-adapters", "owlore", NULL};

static const struct recipe *find_recipe(const char *name)
{
    for (int i = 0; i < N_RECIPES; i++)
        if (!strcmp(recipes[i].name, name))
            return &recipes[i];
    return NULL;
}

int finetune_parse_init(json_t *root, struct job_spec *s, struct spec_error *err)
{
    static const char *const keys[] = {"from", NULL};
    json_t *sec;
    s->init.kind = INIT_SEED;
    if (field_section(root, "init", keys, &sec, err))
        return -1;
    json_t *from = sec ? json_object_get(sec, "from") : NULL;
    if (!from || json_is_null(from))
        return 0;
    if (json_is_string(from)) {
        const char *p = json_string_value(from);
        if (!p[0] || strlen(p) >= sizeof s->init.path)
            return spec_fail(err, "init.from", "a path of 1 to %zu bytes",
                             sizeof s->init.path - 1);
        s->init.kind = INIT_PATH;
        snprintf(s->init.path, sizeof s->init.path, "%s", p);
        return 0;
    }
    static const char *const exp_keys[] = {"experiment", NULL};
    if (!json_is_object(from) || field_check_keys(from, "init.from", exp_keys, err))
        return json_is_object(from)
                   ? -1
                   : spec_fail(err, "init.from",
                               "must be a path (a cod checkpoint or a Hugging Face folder) or "
                               "{\"experiment\": ID}");
    json_t *id = json_object_get(from, "experiment");
    if (!json_is_integer(id) || json_integer_value(id) < 1)
        return spec_fail(err, "init.from.experiment", "must be an experiment's id (a positive integer)");
    s->init.kind = INIT_EXPERIMENT;
    s->init.experiment = json_integer_value(id);
    return 0;
}

int finetune_parse_after(json_t *root, struct job_spec *s, struct spec_error *err)
{
    json_t *a = json_object_get(root, "after"), *v;
    s->n_after = 0;
    if (!a)
        return 0;
    if (!json_is_array(a) || json_array_size(a) > SPEC_MAX_AFTER)
        return spec_fail(err, "after", "must be a list of at most %d experiment ids",
                         SPEC_MAX_AFTER);
    size_t i;
    json_array_foreach(a, i, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return spec_fail(err, "after", "entry %zu is not an experiment's id (a positive integer)", i);
        for (int j = 0; j < s->n_after; j++)
            if (s->after[j] == json_integer_value(v))
                return spec_fail(err, "after", "experiment %lld is named twice",
                                 (long long)json_integer_value(v));
        s->after[s->n_after++] = json_integer_value(v);
    }
    return 0;
}

int finetune_parse_sft(json_t *root, struct job_spec *s, struct spec_error *err)
{
    static const char *const keys[] = {"recipe", "train_on_inputs", "cutoff_len", "pack",
                                       "val_size", NULL};
    json_t *sec;
    if (field_section(root, "sft", keys, &sec, err))
        return -1;
    if (sec && s->format != FORMAT_INSTRUCTIONS)
        return spec_fail(err, "sft", "is for instruction data (data.format \"instructions\")");
    struct sft_cfg *c = &s->sft;
    int recipe = 0;
    if (sec && field_choice(sec, "sft", "recipe", recipe_names, &recipe, err) < 0)
        return -1;
    snprintf(c->recipe, sizeof c->recipe, "%s", recipe_names[recipe]);
    const struct recipe *r = find_recipe(c->recipe);
    c->cutoff_len = r ? r->cutoff_len : -1;  /* finetune_check's default */
    c->pack = r ? r->pack : 0;
    c->train_on_inputs = r ? r->train_on_inputs : 0;
    c->val_size = r ? r->val_size : 0;
    if (sec && (field_bool(sec, "sft", "train_on_inputs", &c->train_on_inputs, err) < 0 ||
                field_int(sec, "sft", "cutoff_len", 0, &c->cutoff_len, err) < 0 ||
                field_bool(sec, "sft", "pack", &c->pack, err) < 0 ||
                field_long(sec, "sft", "val_size", 0, &c->val_size, err) < 0))
        return -1;
    return 0;
}

void finetune_recipe_defaults(const struct sft_cfg *sft, struct train_cfg *t, long *eval_every)
{
    const struct recipe *r = find_recipe(sft->recipe);
    if (!r)
        return;
    t->lr = r->lr;
    t->epochs = r->epochs;
    t->steps = 0;
    t->warmup = r->warmup;
    t->batch_seqs = r->batch_seqs;
    t->seq_len = r->seq_len;
    t->schedule = r->schedule;
    t->min_lr_ratio = r->min_lr_ratio;
    t->clip = r->clip;
    t->weight_decay = 0;
    *eval_every = r->eval_every;
}

int finetune_check(struct job_spec *s, int eval_every_given, struct spec_error *err)
{
    if (s->format != FORMAT_INSTRUCTIONS)
        return 0;
    if (s->init.kind == INIT_SEED)
        return spec_fail(err, "init.from",
                         "instruction data needs a starting checkpoint: its tokenizer reads the "
                         "records and its weights are what is fine-tuned");
    int row = s->train.seq_len + 1;
    /* 256 (LLM-Adapters'), or a row's length where rows are shorter; no cut
     * when packing */
    if (s->sft.cutoff_len < 0)
        s->sft.cutoff_len = s->sft.pack ? 0 : row < 256 ? row : 256;
    if (!s->sft.pack && (s->sft.cutoff_len < 2 || s->sft.cutoff_len > row))
        return spec_fail(err, "sft.cutoff_len",
                         "%d: a record is cut to fit one row, so from 2 to seq_len + 1 = %d "
                         "tokens (0, no cut, only with sft.pack)",
                         s->sft.cutoff_len, row);
    if (s->sft.cutoff_len == 1)
        return spec_fail(err, "sft.cutoff_len", "1 token holds no target (0: no cut)");
    if (s->val_glob[0] && s->sft.val_size > 0)
        return spec_fail(err, "sft.val_size",
                         "held-out records come from data.val or from data.train (val_size), "
                         "not both");
    if (!s->val_glob[0] && s->sft.val_size == 0) {
        if (eval_every_given && s->eval_every > 0)
            return spec_fail(err, "eval.every",
                             "evaluation needs held-out records: data.val, or sft.val_size of "
                             "data.train's");
        s->eval_every = 0;
    }
    return 0;
}

int finetune_to_json(const struct job_spec *s, json_t *root)
{
    int bad = 0;
    if (s->init.kind != INIT_SEED) {
        json_t *from = s->init.kind == INIT_PATH
                           ? json_string(s->init.path)
                           : json_pack("{s:I}", "experiment", (json_int_t)s->init.experiment);
        bad |= json_object_set_new(root, "init", json_pack("{s:o}", "from", from)) != 0;
    }
    if (s->n_after) {
        json_t *a = json_array();
        for (int i = 0; a && i < s->n_after; i++)
            bad |= json_array_append_new(a, json_integer((json_int_t)s->after[i])) != 0;
        bad |= json_object_set_new(root, "after", a) != 0;
    }
    if (s->format == FORMAT_INSTRUCTIONS) {
        const struct sft_cfg *c = &s->sft;
        bad |= json_object_set_new(root, "sft",
                                   json_pack("{s:s,s:b,s:i,s:b,s:I}", "recipe", c->recipe,
                                             "train_on_inputs", c->train_on_inputs, "cutoff_len",
                                             c->cutoff_len, "pack", c->pack, "val_size",
                                             (json_int_t)c->val_size)) != 0;
    }
    return bad ? -1 : 0;
}
