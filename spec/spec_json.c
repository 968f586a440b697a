/* The spec as JSON, every default explicit, and the model's parameter
 * count: see spec.h. */
#include "spec/spec.h"

#include <math.h>

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
    bad |= put(root, "model", model);
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
    if (bad) {
        json_decref(root);
        return NULL;
    }
    bad |= put(model, "preset", json_string(s->model.preset));
    bad |= put(model, "dim", json_integer(s->model.dim));
    bad |= put(model, "n_layers", json_integer(s->model.n_layers));
    bad |= put(model, "n_heads", json_integer(s->model.n_heads));
    bad |= put(model, "ffn_dim", json_integer(s->model.ffn_dim));
    /* An unknown vocab (0) is left out: it is not a valid value to parse. */
    if (s->model.vocab > 0)
        bad |= put(model, "vocab", json_integer(s->model.vocab));
    bad |= put(model, "embed_std", json_real(s->model.embed_std));

    const struct norm_variant *n = &s->norm;
    int values[VARIANT_N_ENUMS] = {n->placement, n->ln_scale, n->lns_position, n->lns_sublayers,
                                   n->residual, n->init, n->gains};
    bad |= put(norm, "base", json_string(n->name));
    for (int i = 0; i < VARIANT_N_ENUMS; i++) {
        const char *name = variant_enum_name(variant_enum_field(i), values[i]);
        bad |= !name || put(norm, variant_enum_field(i), json_string(name));
    }
    bad |= put(norm, "mix_post_layers", json_integer(n->mix_post_layers));
    bad |= put(norm, "residual_alpha", json_real(n->residual_alpha));
    bad |= put(norm, "branch_init", json_real(n->branch_init));
    bad |= put(norm, "init_std", json_real(n->init_std));

    bad |= put(data, "train", json_string(s->train_glob));
    bad |= put(data, "val", json_string(s->val_glob));
    bad |= put(data, "packing", json_string(spec_packing_name(s->packing)));

    const struct train_cfg *t = &s->train;
    bad |= put(train, "steps", json_integer(t->steps));
    bad |= put(train, "seq_len", json_integer(t->seq_len));
    bad |= put(train, "batch_seqs", json_integer(t->batch_seqs));
    bad |= put(train, "micro_batch", json_integer(t->micro_batch));
    bad |= put(train, "lr", json_real(t->lr));
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
           fill(spec, "train", "precision", json_string("mixed"));
}

int64_t spec_param_count(const struct job_spec *s)
{
    const struct model_shape *m = &s->model;
    if (m->vocab <= 0)
        return -1;
    int64_t V = m->vocab, d = m->dim, f = m->ffn_dim, L = m->n_layers;
    int64_t block = 4 * d * d + 3 * d * f;
    block += (s->norm.placement == PLACE_SANDWICH ? 4 : 2) * d;
    if (s->norm.residual == RES_LAYERSCALE)
        block += 2 * d;
    else if (s->norm.residual == RES_SKIPINIT)
        block += 2;
    /* untied embedding and head, and the final norm */
    return 2 * V * d + L * block + d;
}
