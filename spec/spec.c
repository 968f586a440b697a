/* Parsing and validating a job spec: see spec.h. */
#include "spec/spec.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/device_name.h"
#include "spec/fields.h"

/* Model presets and, for the sizes the paper trained, its recipe
 * (docs/spec.md). lr 0 marks a preset without a recipe. */
struct model_preset {
    const char *name;
    int dim, ffn_dim, n_heads, n_layers;
    double lr;
    long steps, warmup;
};

static const struct model_preset presets[] = {
    {"llama-9m", 128, 352, 4, 4, 0, 0, 0},
    {"llama-20m", 256, 688, 4, 4, 0, 0, 0},
    {"llama-35m", 384, 1024, 8, 6, 0, 0, 0},
    {"llama-60m", 512, 1376, 8, 8, 0, 0, 0},
    {"llama-71m", 512, 1368, 8, 12, 1e-3, 10000, 1000},
    {"llama-130m", 768, 2048, 12, 12, 1e-3, 20000, 2000},
    {"llama-250m", 768, 2560, 16, 24, 1e-3, 40000, 4000},
    {"llama-350m", 1024, 2736, 16, 24, 5e-4, 60000, 6000},
    {"llama-1b", 2048, 5461, 32, 24, 5e-4, 100000, 1000},
    {"llama-7b", 4096, 11008, 32, 32, 0, 0, 0},
};
enum { N_PRESETS = sizeof(presets) / sizeof(presets[0]) };

#define PRESET_LIST                                                                        \
    "llama-9m, llama-20m, llama-35m, llama-60m, llama-71m, llama-130m, llama-250m, "       \
    "llama-350m, llama-1b, llama-7b"

/* Without a recipe: the paper's most common peak lr and its shortest run. */
#define DEFAULT_LR 1e-3
#define DEFAULT_STEPS 10000L
#define DEFAULT_MODEL "llama-130m"
#define DEFAULT_TRAIN_GLOB "var/data/default/train_*.bin"
#define DEFAULT_VAL_GLOB "var/data/default/val_*.bin"
/* The embedding's std in the paper's reported runs (docs/variants.md). */
#define DEFAULT_EMBED_STD 0.02

static const char *const precision_names[] = {"mixed", "bf16", NULL};
static const char *const packing_names[] = {"stream", "documents", NULL};

const char *spec_precision_name(enum precision p)
{
    return precision_names[p];
}

const char *spec_packing_name(enum packing p)
{
    return packing_names[p];
}

const char *spec_name_key(const char *section)
{
    return !strcmp(section, "norm") ? "base" : !strcmp(section, "model") ? "preset" : NULL;
}

static const struct model_preset *find_preset(const char *name)
{
    for (int i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

static void model_from_preset(const struct model_preset *p, struct model_shape *m)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->preset, sizeof(m->preset), "%s", p->name);
    m->dim = p->dim;
    m->n_layers = p->n_layers;
    m->n_heads = p->n_heads;
    m->ffn_dim = p->ffn_dim;
}

static int parse_shape(json_t *v, struct model_shape *m, struct spec_error *err)
{
    /* The paper's headline size (its Figure 1 and most of its tables). */
    if (!v) {
        model_from_preset(find_preset(DEFAULT_MODEL), m);
        return 0;
    }
    if (json_is_string(v)) {
        const struct model_preset *p = find_preset(json_string_value(v));
        if (!p)
            return spec_fail(err, "model", "unknown model preset \"%s\" (presets: %s)",
                        json_string_value(v), PRESET_LIST);
        model_from_preset(p, m);
        return 0;
    }
    if (!json_is_object(v))
        return spec_fail(err, "model",
                    "must be a preset name or an object {dim, n_layers, n_heads, ffn_dim, vocab}");
    static const char *const keys[] = {"preset", "dim",   "n_layers",  "n_heads",
                                       "ffn_dim", "vocab", "embed_std", NULL};
    if (field_check_keys(v, "model", keys, err))
        return -1;
    /* "preset" in the object (as spec_to_json writes it) starts from that
     * preset and lets the shape fields override it; "custom" or no preset
     * needs all four shape fields. */
    const struct model_preset *p = NULL;
    char name[32] = "custom";
    if (field_string(v, "model", "preset", name, sizeof(name), err) < 0)
        return -1;
    if (strcmp(name, "custom") != 0) {
        p = find_preset(name);
        if (!p)
            return spec_fail(err, "model.preset", "unknown model preset \"%s\" (presets: %s, custom)",
                        name, PRESET_LIST);
        model_from_preset(p, m);
    } else {
        snprintf(m->preset, sizeof(m->preset), "custom");
    }
    static const char *const shape[] = {"dim", "n_layers", "n_heads", "ffn_dim"};
    int *dst[] = {&m->dim, &m->n_layers, &m->n_heads, &m->ffn_dim};
    for (int i = 0; i < 4; i++) {
        int rc = field_int(v, "model", shape[i], 1, dst[i], err);
        if (rc < 0)
            return -1;
        if (rc == 0 && !p) {
            char field[64];
            field_join(field, sizeof(field), "model", shape[i]);
            return spec_fail(err, field, "missing (required when the model is not a preset)");
        }
    }
    if (field_int(v, "model", "vocab", 2, &m->vocab, err) < 0)
        return -1;
    /* A preset whose shape was overridden is no longer that preset: it must
     * not get the preset's recipe or name. */
    if (p && (m->dim != p->dim || m->n_layers != p->n_layers || m->n_heads != p->n_heads ||
              m->ffn_dim != p->ffn_dim))
        snprintf(m->preset, sizeof(m->preset), "custom");
    return 0;
}

static int parse_model(json_t *v, struct model_shape *m, struct spec_error *err)
{
    memset(m, 0, sizeof(*m));
    if (parse_shape(v, m, err))
        return -1;
    m->embed_std = DEFAULT_EMBED_STD;
    if (json_is_object(v) && field_real(v, "model", "embed_std", &m->embed_std, err) < 0)
        return -1;
    if (m->embed_std <= 0)
        return spec_fail(err, "model.embed_std", "must be positive (got %g)", m->embed_std);
    return 0;
}

static int same_variant(const struct norm_variant *a, const struct norm_variant *b)
{
    return a->placement == b->placement && a->mix_post_layers == b->mix_post_layers &&
           a->ln_scale == b->ln_scale && a->lns_position == b->lns_position &&
           a->lns_sublayers == b->lns_sublayers && a->residual == b->residual &&
           a->residual_alpha == b->residual_alpha && a->branch_init == b->branch_init &&
           a->init == b->init && a->init_std == b->init_std;
}


static void set_enum(struct norm_variant *v, int field, int x)
{
    switch (field) {
    case 0: v->placement = (enum placement)x; break;
    case 1: v->ln_scale = (enum ln_scale)x; break;
    case 2: v->lns_position = (enum lns_position)x; break;
    case 3: v->lns_sublayers = (enum lns_sublayers)x; break;
    case 4: v->residual = (enum residual)x; break;
    case 5: v->init = (enum init_kind)x; break;
    default: v->gains = (enum gains)x; break;
    }
}

static int parse_norm(json_t *v, struct norm_variant *n, struct spec_error *err)
{
    if (!v) {
        variant_preset("pre", n);
        return 0;
    }
    if (json_is_string(v)) {
        if (variant_preset(json_string_value(v), n))
            return spec_fail(err, "norm", "unknown norm variant \"%s\" (presets: %s)",
                        json_string_value(v), variant_preset_names());
        return 0;
    }
    if (!json_is_object(v))
        return spec_fail(err, "norm", "must be a preset name or an object of settings");
    static const char *const keys[] = {"base", "placement", "mix_post_layers", "ln_scale",
                                       "lns_position", "lns_sublayers", "residual",
                                       "residual_alpha", "branch_init", "init", "init_std",
                                       "gains", NULL};
    if (field_check_keys(v, "norm", keys, err))
        return -1;
    char base[32] = "pre";
    if (field_string(v, "norm", "base", base, sizeof(base), err) < 0)
        return -1;
    /* "custom" as a base is what spec_to_json writes for a custom variant,
     * whose every setting follows explicitly; it starts from "pre". */
    int custom_base = strcmp(base, "custom") == 0;
    if (variant_preset(custom_base ? "pre" : base, n))
        return spec_fail(err, "norm.base", "unknown norm variant \"%s\" (presets: %s, custom)", base,
                    variant_preset_names());
    struct norm_variant start = *n;
    for (int i = 0; i < VARIANT_N_ENUMS; i++) {
        json_t *e = json_object_get(v, variant_enum_field(i));
        if (!e)
            continue;
        char field[64];
        field_join(field, sizeof(field), "norm", variant_enum_field(i));
        if (!json_is_string(e))
            return spec_fail(err, field, "must be a string (one of: %s)",
                        variant_enum_choices(variant_enum_field(i)));
        int x = variant_enum(variant_enum_field(i), json_string_value(e));
        if (x < 0)
            return spec_fail(err, field, "unknown value \"%s\" (choices: %s)", json_string_value(e),
                        variant_enum_choices(variant_enum_field(i)));
        set_enum(n, i, x);
    }
    if (field_int(v, "norm", "mix_post_layers", -1, &n->mix_post_layers, err) < 0 ||
        field_real(v, "norm", "residual_alpha", &n->residual_alpha, err) < 0 ||
        field_real(v, "norm", "branch_init", &n->branch_init, err) < 0 ||
        field_real(v, "norm", "init_std", &n->init_std, err) < 0)
        return -1;
    if (n->residual_alpha <= 0)
        return spec_fail(err, "norm.residual_alpha", "must be positive (got %g)", n->residual_alpha);
    if (n->init_std <= 0)
        return spec_fail(err, "norm.init_std", "must be positive (got %g)", n->init_std);
    /* Settings that restate a preset take its name, so that spec_to_json's
     * explicit form parses back to the same spec and an object spelling of
     * "lns" is filed under lns. */
    if (!custom_base && same_variant(n, &start))
        return 0;
    snprintf(n->name, sizeof(n->name), "custom");
    const char *names = variant_preset_names();
    while (*names) {
        size_t len = strcspn(names, ", ");
        char name[32];
        struct norm_variant p;
        snprintf(name, sizeof(name), "%.*s", (int)len, names);
        if (variant_preset(name, &p) == 0 && same_variant(n, &p)) {
            snprintf(n->name, sizeof(n->name), "%s", name);
            break;
        }
        names += len;
        names += strspn(names, ", ");
    }
    return 0;
}

static int parse_train(json_t *sec, const struct model_shape *m, int gpus, struct train_cfg *t,
                       struct spec_error *err)
{
    const struct model_preset *p = find_preset(m->preset);
    int recipe = p && p->lr > 0;
    t->steps = recipe ? p->steps : DEFAULT_STEPS;
    t->seq_len = 256;
    t->batch_seqs = 512;
    t->lr = recipe ? p->lr : DEFAULT_LR;
    t->min_lr_ratio = 0.1;
    t->beta1 = 0.9;
    t->beta2 = 0.999;
    t->eps = 1e-8;
    t->weight_decay = 0;
    t->clip = 0;
    t->seed = 1;
    t->precision = PRECISION_MIXED;
    int steps_given = 0, warmup_given = 0, micro_given = 0, precision = PRECISION_MIXED;
    long long seed = 1;
    if (sec) {
        if ((steps_given = field_long(sec, "train", "steps", 1, &t->steps, err)) < 0 ||
            field_int(sec, "train", "seq_len", 1, &t->seq_len, err) < 0 ||
            field_int(sec, "train", "batch_seqs", 1, &t->batch_seqs, err) < 0 ||
            (micro_given = field_int(sec, "train", "micro_batch", 1, &t->micro_batch, err)) < 0 ||
            field_real(sec, "train", "lr", &t->lr, err) < 0 ||
            (warmup_given = field_long(sec, "train", "warmup", 0, &t->warmup, err)) < 0 ||
            field_real(sec, "train", "min_lr_ratio", &t->min_lr_ratio, err) < 0 ||
            field_real(sec, "train", "beta1", &t->beta1, err) < 0 ||
            field_real(sec, "train", "beta2", &t->beta2, err) < 0 ||
            field_real(sec, "train", "eps", &t->eps, err) < 0 ||
            field_real(sec, "train", "weight_decay", &t->weight_decay, err) < 0 ||
            field_real(sec, "train", "clip", &t->clip, err) < 0 ||
            field_choice(sec, "train", "precision", precision_names, &precision, err) < 0)
            return -1;
        t->precision = (enum precision)precision;
        /* json_int_t is signed 64-bit, so the seed's range is [0, 2^63-1]. */
        json_t *sv = json_object_get(sec, "seed");
        if (sv && (!json_is_integer(sv) || json_integer_value(sv) < 0))
            return spec_fail(err, "train.seed", "must be a non-negative integer");
        if (sv)
            seed = json_integer_value(sv);
    }
    t->seed = (uint64_t)seed;
    /* The paper's warmups are a tenth of its runs (1B: 1% of 100k steps).
     * A preset's own warmup applies only with its own step count: a spec
     * that changes steps but not warmup gets steps/10, as does every model
     * without a recipe. */
    if (!warmup_given)
        t->warmup = recipe && !steps_given ? p->warmup : t->steps / 10;
    /* by default each rank's share of the batch goes in micro-batches of 64 */
    int share = t->batch_seqs % gpus == 0 ? t->batch_seqs / gpus : t->batch_seqs;
    if (!micro_given)
        t->micro_batch = share % 64 == 0 ? 64 : share;
    if (t->micro_batch > t->batch_seqs)
        return spec_fail(err, "train.micro_batch", "micro_batch %d is larger than batch_seqs %d",
                    t->micro_batch, t->batch_seqs);
    if (t->batch_seqs % t->micro_batch)
        return spec_fail(err, "train.micro_batch",
                    "batch that does not divide: batch_seqs %d is not a multiple of micro_batch %d",
                    t->batch_seqs, t->micro_batch);
    /* every rank of a gang takes the same number of whole micro-batches; the
     * product in 64 bits, as an int it could overflow, even to 0 */
    long long gang_batch = (long long)gpus * t->micro_batch;
    if (gpus > 1 && t->batch_seqs % gang_batch)
        return spec_fail(err, "train.batch_seqs",
                    "batch_seqs %d does not split over %d GPUs in micro-batches of %d "
                    "(it must be a multiple of gpus x micro_batch = %lld)",
                    t->batch_seqs, gpus, t->micro_batch, gang_batch);
    /* The trainer indexes a step's tokens with int. */
    if ((long long)t->seq_len * t->batch_seqs > INT_MAX)
        return spec_fail(err, "train.batch_seqs",
                    "a batch of %lld tokens (seq_len x batch_seqs) is too large",
                    (long long)t->seq_len * t->batch_seqs);
    if (t->lr <= 0)
        return spec_fail(err, "train.lr", "must be positive (got %g)", t->lr);
    if (t->warmup > t->steps)
        return spec_fail(err, "train.warmup", "warmup %ld is longer than the run (%ld steps)",
                    t->warmup, t->steps);
    if (t->min_lr_ratio < 0 || t->min_lr_ratio > 1)
        return spec_fail(err, "train.min_lr_ratio", "must be in [0, 1] (got %g)", t->min_lr_ratio);
    if (t->beta1 < 0 || t->beta1 >= 1)
        return spec_fail(err, "train.beta1", "must be in [0, 1) (got %g)", t->beta1);
    if (t->beta2 < 0 || t->beta2 >= 1)
        return spec_fail(err, "train.beta2", "must be in [0, 1) (got %g)", t->beta2);
    if (t->eps <= 0)
        return spec_fail(err, "train.eps", "must be positive (got %g)", t->eps);
    if (t->weight_decay < 0)
        return spec_fail(err, "train.weight_decay", "must not be negative (got %g)", t->weight_decay);
    if (t->clip < 0)
        return spec_fail(err, "train.clip", "must not be negative (got %g; 0 turns clipping off)",
                    t->clip);
    return 0;
}

/* Names become directory and file names on workers: a restricted alphabet
 * and no leading dot keep them from escaping or hiding. */
static int check_name(const char *name, struct spec_error *err)
{
    if (name[0] == '.')
        return spec_fail(err, "name", "must not start with '.'");
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return spec_fail(err, "name", "may hold only letters, digits, '.', '_' and '-' (found '%c')",
                        *c);
    return 0;
}

int spec_from_json(json_t *root, struct job_spec *out, struct spec_error *err)
{
    memset(err, 0, sizeof(*err));
    struct job_spec s;
    memset(&s, 0, sizeof(s));
    if (!json_is_object(root))
        return spec_fail(err, "", "the spec must be a JSON object");
    static const char *const top[] = {"name", "model", "norm", "data", "train", "eval", "stats",
                                      "checkpoint", "analysis", "resources", "priority",
                                      "max_attempts", NULL};
    if (field_check_keys(root, "", top, err))
        return -1;

    if (parse_model(json_object_get(root, "model"), &s.model, err) ||
        parse_norm(json_object_get(root, "norm"), &s.norm, err))
        return -1;
    const struct model_shape *m = &s.model;
    if (m->dim % m->n_heads)
        return spec_fail(err, "model.n_heads", "dim %d is not divisible by n_heads %d", m->dim,
                    m->n_heads);
    if ((m->dim / m->n_heads) % 2)
        return spec_fail(err, "model.dim", "head dim %d (dim/n_heads) must be even for RoPE",
                    m->dim / m->n_heads);
    if (s.norm.mix_post_layers > m->n_layers)
        return spec_fail(err, "norm.mix_post_layers", "%d is more than the model's %d layers",
                    s.norm.mix_post_layers, m->n_layers);

    json_t *sec;
    static const char *const data_keys[] = {"train", "val", "packing", NULL};
    snprintf(s.train_glob, sizeof(s.train_glob), "%s", DEFAULT_TRAIN_GLOB);
    snprintf(s.val_glob, sizeof(s.val_glob), "%s", DEFAULT_VAL_GLOB);
    int packing = PACKING_STREAM;
    if (field_section(root, "data", data_keys, &sec, err) ||
        (sec && (field_string(sec, "data", "train", s.train_glob, sizeof(s.train_glob), err) < 0 ||
                 field_string(sec, "data", "val", s.val_glob, sizeof(s.val_glob), err) < 0 ||
                 field_choice(sec, "data", "packing", packing_names, &packing, err) < 0)))
        return -1;
    s.packing = (enum packing)packing;

    snprintf(s.device, sizeof(s.device), "any");
    s.gpus = 1;
    static const char *const res_keys[] = {"device", "gpus", NULL};
    if (field_section(root, "resources", res_keys, &sec, err) ||
        (sec && (field_string(sec, "resources", "device", s.device, sizeof(s.device), err) < 0 ||
                 field_int(sec, "resources", "gpus", 1, &s.gpus, err) < 0)))
        return -1;
    /* A spec asks for a kind of device; which GPU is the worker's business. */
    struct device_name dev;
    if (device_parse(s.device, &dev) != 0 || dev.index >= 0)
        return spec_fail(err, "resources.device", "unknown device \"%s\" (choices: cpu, cuda, any)",
                    s.device);

    /* A gang is of cuda workers, one GPU a rank. */
    if (s.gpus > 1 && strcmp(s.device, "cuda"))
        return spec_fail(err, "resources.gpus", "gpus %d needs device \"cuda\" (a gang is of GPUs), not \"%s\"",
                    s.gpus, s.device);

    static const char *const train_keys[] = {"steps", "seq_len", "batch_seqs", "micro_batch",
                                             "lr", "warmup", "min_lr_ratio", "beta1", "beta2",
                                             "eps", "weight_decay", "clip", "seed", "precision",
                                             NULL};
    if (field_section(root, "train", train_keys, &sec, err) || parse_train(sec, m, s.gpus, &s.train, err))
        return -1;

    s.eval_every = 1000;
    s.eval_tokens = 10000000;
    static const char *const eval_keys[] = {"every", "tokens", "train_tokens", NULL};
    if (field_section(root, "eval", eval_keys, &sec, err) ||
        (sec && (field_long(sec, "eval", "every", 0, &s.eval_every, err) < 0 ||
                 field_long(sec, "eval", "tokens", 1, &s.eval_tokens, err) < 0 ||
                 field_long(sec, "eval", "train_tokens", 0, &s.eval_train_tokens, err) < 0)))
        return -1;

    s.stats_every = 100;
    static const char *const stats_keys[] = {"every", NULL};
    if (field_section(root, "stats", stats_keys, &sec, err) ||
        (sec && field_long(sec, "stats", "every", 0, &s.stats_every, err) < 0))
        return -1;

    s.checkpoint_every = 1000;
    s.checkpoint_keep = 3;
    static const char *const ck_keys[] = {"every", "keep", NULL};
    if (field_section(root, "checkpoint", ck_keys, &sec, err) ||
        (sec && (field_long(sec, "checkpoint", "every", 0, &s.checkpoint_every, err) < 0 ||
                 field_int(sec, "checkpoint", "keep", 1, &s.checkpoint_keep, err) < 0)))
        return -1;

    static const char *const an_keys[] = {"angular", "prune", NULL};
    if (field_section(root, "analysis", an_keys, &sec, err) ||
        (sec && (field_bool(sec, "analysis", "angular", &s.analysis_angular, err) < 0 ||
                 field_bool(sec, "analysis", "prune", &s.analysis_prune, err) < 0)))
        return -1;

    s.priority = 0;
    s.max_attempts = 3;
    if (field_int(root, "", "priority", INT_MIN, &s.priority, err) < 0 ||
        field_int(root, "", "max_attempts", 1, &s.max_attempts, err) < 0)
        return -1;

    snprintf(s.name, sizeof(s.name), "%s-%s", s.model.preset, s.norm.name);
    if (field_string(root, "", "name", s.name, sizeof(s.name), err) < 0 || check_name(s.name, err))
        return -1;
    *out = s;
    return 0;
}

int spec_parse(const char *text, size_t len, struct job_spec *out, struct spec_error *err)
{
    memset(err, 0, sizeof(*err));
    json_error_t je;
    /* Duplicate keys would make the value that wins depend on the parser. */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return spec_fail(err, "", "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
    int rc = spec_from_json(root, out, err);
    json_decref(root);
    return rc;
}
