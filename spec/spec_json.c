/* The spec as JSON, every default explicit, and the model's parameter
 * count: see spec.h. */
#include "spec/spec.h"

#include <math.h>

#include "spec/finetune.h"
#include "spec/params.h"

/* json_object_set_new takes ownership even on failure and refuses a NULL
 * value, so a chain of sets needs only one check at the end. */
static int put(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v) ? -1 : 0;
}

json_t *spec_to_json(const struct job_spec *s)
{
    json_t *root = json_object(), *model = json_object(), *norm = json_object(),
           *data = json_object(), *train = json_object(), *eval = json_object(),
           *stats = json_object(), *ck = json_object(), *an = json_object(),
           *res = json_object();
    int bad = !root;
    bad |= put(root, "name", json_string(s->name));
    /* left out until the worker has read them from the starting checkpoint */
    if (s->model_from_init)
        json_decref(model), model = NULL;
    else
        bad |= put(root, "model", model);
    if (s->norm_from_init)
        json_decref(norm), norm = NULL;
    else
        bad |= put(root, "norm", norm);
    bad |= put(root, "data", data);
    bad |= put(root, "train", train);
    bad |= put(root, "eval", eval);
    bad |= put(root, "stats", stats);
    bad |= put(root, "checkpoint", ck);
    bad |= put(root, "analysis", an);
    bad |= put(root, "resources", res);
    bad |= put(root, "priority", json_integer(s->priority));
    bad |= put(root, "max_attempts", json_integer(s->max_attempts));
    bad |= finetune_to_json(s, root);
    if (bad) {
        json_decref(root);
        return NULL;
    }
    if (model) {
        bad |= put(model, "preset", json_string(s->model.preset));
        bad |= put(model, "dim", json_integer(s->model.dim));
        bad |= put(model, "n_layers", json_integer(s->model.n_layers));
        bad |= put(model, "n_heads", json_integer(s->model.n_heads));
        bad |= put(model, "ffn_dim", json_integer(s->model.ffn_dim));
        /* An unknown vocab (0) is left out: it is not a valid value to parse. */
        if (s->model.vocab > 0)
            bad |= put(model, "vocab", json_integer(s->model.vocab));
        bad |= put(model, "embed_std", json_real(s->model.embed_std));
        /* a pretrained model's own, only where they differ from cod's */
        if (s->model.rope_theta != 10000.0)
            bad |= put(model, "rope_theta", json_real(s->model.rope_theta));
        if (s->model.norm_eps != 1e-6)
            bad |= put(model, "norm_eps", json_real(s->model.norm_eps));
    }

    const struct norm_variant *n = &s->norm;
    if (norm) {
        bad |= put(norm, "base", json_string(n->name));
        for (size_t i = 0; i < variant_setting_count(); i++) {
            const struct variant_setting *set = variant_setting_at(i);
            json_t *value;
            if (set->kind == SETTING_ENUM) {
                const char *name = variant_enum_name(set->name, variant_get_int(n, set));
                value = name ? json_string(name) : NULL;
            } else if (set->kind == SETTING_INT) {
                value = json_integer(variant_get_int(n, set));
            } else {
                value = json_real(variant_get_real(n, set));
            }
            bad |= !value || put(norm, set->name, value);
        }
    }

    bad |= put(data, "format", json_string(spec_format_name(s->format)));
    bad |= put(data, "train", json_string(s->train_glob));
    bad |= put(data, "val", json_string(s->val_glob));
    bad |= put(data, "packing", json_string(spec_packing_name(s->packing)));

    const struct train_cfg *t = &s->train;
    /* epochs stand in for steps, which the data gives at the start of each run */
    if (t->epochs > 0)
        bad |= put(train, "epochs", json_real(t->epochs));
    else
        bad |= put(train, "steps", json_integer(t->steps));
    bad |= put(train, "seq_len", json_integer(t->seq_len));
    bad |= put(train, "batch_seqs", json_integer(t->batch_seqs));
    bad |= put(train, "micro_batch", json_integer(t->micro_batch));
    bad |= put(train, "lr", json_real(t->lr));
    if (t->warmup >= 0)
        bad |= put(train, "warmup", json_integer(t->warmup));
    bad |= put(train, "min_lr_ratio", json_real(t->min_lr_ratio));
    bad |= put(train, "beta1", json_real(t->beta1));
    bad |= put(train, "beta2", json_real(t->beta2));
    bad |= put(train, "eps", json_real(t->eps));
    bad |= put(train, "weight_decay", json_real(t->weight_decay));
    bad |= put(train, "clip", json_real(t->clip));
    /* Parsed seeds are at most 2^63-1, so the cast is exact for them. */
    bad |= put(train, "seed", json_integer((json_int_t)t->seed));
    bad |= put(train, "precision", json_string(spec_precision_name(t->precision)));
    bad |= put(train, "schedule", json_string(spec_schedule_name(t->schedule)));

    bad |= put(eval, "every", json_integer(s->eval_every));
    bad |= put(eval, "tokens", json_integer(s->eval_tokens));
    /* only when asked for, so that a spec without it keeps its JSON form
     * (and a checkpoint written before the field resumes) */
    if (s->eval_train_tokens > 0)
        bad |= put(eval, "train_tokens", json_integer(s->eval_train_tokens));
    bad |= put(stats, "every", json_integer(s->stats_every));
    bad |= put(ck, "every", json_integer(s->checkpoint_every));
    bad |= put(ck, "keep", json_integer(s->checkpoint_keep));
    bad |= put(an, "angular", json_boolean(s->analysis_angular));
    bad |= put(an, "prune", json_boolean(s->analysis_prune));
    /* none is left out, as specs written before the field were */
    if (s->n_tasks)
        bad |= put(an, "tasks", spec_tasks_json(s));
    bad |= put(res, "device", json_string(s->device));
    bad |= put(res, "gpus", json_integer(s->gpus));
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* key = value in section, unless section is no object or has key already */
static int fill(json_t *spec, const char *section, const char *key, json_t *value)
{
    json_t *sec = json_object_get(spec, section);
    if (!json_is_object(sec) || json_object_get(sec, key)) {
        json_decref(value);
        return 0;
    }
    return put(sec, key, value);
}

int spec_upgrade(json_t *spec)
{
    return fill(spec, "model", "embed_std", json_real(sqrt(0.4))) |
           fill(spec, "norm", "gains", json_string("learned")) |
           fill(spec, "data", "packing", json_string("stream")) |
           fill(spec, "data", "format", json_string("shards")) |
           fill(spec, "train", "precision", json_string("mixed")) |
           fill(spec, "train", "schedule", json_string("cosine"));
}

int64_t spec_param_count(const struct job_spec *s)
{
    if (s->model.vocab <= 0)
        return -1;
    struct param_dims d = params_dims_of_spec(s);
    return params_count(&d, &s->norm, s->model.n_layers);
}
