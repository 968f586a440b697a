/* Parsing and validating a job spec: see spec.h. */
#include "spec/spec.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/device_name.h"
#include "spec/fields.h"
#include "spec/finetune.h"

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
/* LLaMA's RoPE base and cod's RMSNorm epsilon */
#define DEFAULT_ROPE_THETA 10000.0
#define DEFAULT_NORM_EPS 1e-6

static const char *const precision_names[] = {"mixed", "bf16", NULL};
static const char *const packing_names[] = {"stream", "documents", NULL};
static const char *const format_names[] = {"shards", "instructions", NULL};
static const char *const schedule_names[] = {"cosine", "linear", NULL};

const char *spec_precision_name(enum precision p)
{
    return precision_names[p];
}

const char *spec_packing_name(enum packing p)
{
    return packing_names[p];
}

const char *spec_format_name(enum data_format f)
{
    return format_names[f];
}

const char *spec_schedule_name(enum schedule s)
{
    return schedule_names[s];
}

int spec_rows_partial(const struct job_spec *s)
{
    return s->packing == PACKING_DOCUMENTS || s->format == FORMAT_INSTRUCTIONS;
}

int spec_waits_for(const struct job_spec *s, int64_t *ids)
{
    int n = 0;
    for (int i = 0; i < s->n_after; i++)
        ids[n++] = s->after[i];
    if (s->init.kind == INIT_EXPERIMENT) {
        int named = 0;
        for (int i = 0; i < n; i++)
            named |= ids[i] == s->init.experiment;
        if (!named)
            ids[n++] = s->init.experiment;
    }
    return n;
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
    static const char *const keys[] = {"preset",    "dim",       "n_layers", "n_heads",
                                       "ffn_dim",   "vocab",     "embed_std", "rope_theta",
                                       "norm_eps",  NULL};
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
    m->rope_theta = DEFAULT_ROPE_THETA;
    m->norm_eps = DEFAULT_NORM_EPS;
    if (json_is_object(v) && (field_real(v, "model", "embed_std", &m->embed_std, err) < 0 ||
                              field_real(v, "model", "rope_theta", &m->rope_theta, err) < 0 ||
                              field_real(v, "model", "norm_eps", &m->norm_eps, err) < 0))
        return -1;
    if (m->rope_theta <= 1)
        return spec_fail(err, "model.rope_theta", "must be more than 1 (got %g)", m->rope_theta);
    if (m->norm_eps <= 0 || m->norm_eps > 1e-2)
        return spec_fail(err, "model.norm_eps", "must be in (0, 0.01] (got %g)", m->norm_eps);
    if (m->embed_std <= 0)
        return spec_fail(err, "model.embed_std", "must be positive (got %g)", m->embed_std);
    return 0;
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
    const char *keys[32] = {"base"};
    size_t n_settings = variant_setting_count();
    for (size_t i = 0; i < n_settings && i + 2 < sizeof keys / sizeof keys[0]; i++)
        keys[i + 1] = variant_setting_at(i)->name;
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
    for (size_t i = 0; i < n_settings; i++) {
        const struct variant_setting *set = variant_setting_at(i);
        json_t *e = json_object_get(v, set->name);
        if (!e)
            continue;
        char field[64];
        field_join(field, sizeof(field), "norm", set->name);
        if (set->kind == SETTING_ENUM) {
            if (!json_is_string(e))
                return spec_fail(err, field, "must be a string (one of: %s)", variant_enum_choices(set->name));
            int x = variant_enum(set->name, json_string_value(e));
            if (x < 0)
                return spec_fail(err, field, "unknown value \"%s\" (choices: %s)", json_string_value(e),
                            variant_enum_choices(set->name));
            variant_set_int(n, set, x);
        } else if (set->kind == SETTING_INT) {
            int x = variant_get_int(n, set);
            if (field_int(v, "norm", set->name, set->min, &x, err) < 0)
                return -1;
            variant_set_int(n, set, x);
        } else {
            double x = variant_get_real(n, set);
            if (field_real(v, "norm", set->name, &x, err) < 0)
                return -1;
            if (set->positive && !(x > 0))
                return spec_fail(err, field, "must be positive (got %g)", x);
            variant_set_real(n, set, x);
        }
    }
    /* Settings that restate a preset take its name, so that spec_to_json's
     * explicit form parses back to the same spec and an object spelling of
     * "lns" is filed under lns. */
    if (!custom_base && variant_same(n, &start))
        return 0;
    variant_name_it(n);
    return 0;
}

static int parse_train(json_t *sec, const struct job_spec *s, struct train_cfg *t,
                       long *eval_every, struct spec_error *err)
{
    const struct model_shape *m = &s->model;
    int gpus = s->gpus, instructions = s->format == FORMAT_INSTRUCTIONS;
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
    t->epochs = 0;
    t->schedule = SCHEDULE_COSINE;
    int with_recipe = instructions && strcmp(s->sft.recipe, "none");
    if (instructions)
        finetune_recipe_defaults(&s->sft, t, eval_every);
    int steps_given = 0, warmup_given = 0, micro_given = 0, epochs_given = 0;
    int precision = PRECISION_MIXED, schedule = (int)t->schedule;
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
            field_choice(sec, "train", "precision", precision_names, &precision, err) < 0 ||
            field_choice(sec, "train", "schedule", schedule_names, &schedule, err) < 0 ||
            (epochs_given = field_real(sec, "train", "epochs", &t->epochs, err)) < 0)
            return -1;
        t->precision = (enum precision)precision;
        t->schedule = (enum schedule)schedule;
        /* json_int_t is signed 64-bit, so the seed's range is [0, 2^63-1]. */
        json_t *sv = json_object_get(sec, "seed");
        if (sv && (!json_is_integer(sv) || json_integer_value(sv) < 0))
            return spec_fail(err, "train.seed", "must be a non-negative integer");
        if (sv)
            seed = json_integer_value(sv);
    }
    t->seed = (uint64_t)seed;
    if (epochs_given && steps_given)
        return spec_fail(err, "train.epochs", "stands in for train.steps: give one of them");
    if (epochs_given && !instructions)
        return spec_fail(err, "train.epochs",
                         "counts passes over instruction records (data.format \"instructions\"); "
                         "shard data counts train.steps");
    if (epochs_given && t->epochs <= 0)
        return spec_fail(err, "train.epochs", "must be positive (got %g)", t->epochs);
    if (steps_given)
        t->epochs = 0;
    else if (t->epochs > 0)
        t->steps = 0;
    /* The paper's warmups are a tenth of its runs (1B: 1% of 100k steps).
     * A preset's own warmup applies only with its own step count: a spec
     * that changes steps but not warmup gets steps/10, as does every model
     * without a recipe. */
    if (!warmup_given && with_recipe)
        ;  /* the recipe's own */
    else if (!warmup_given && t->epochs > 0)
        t->warmup = -1;  /* a tenth of the steps, once the data has given them */
    else if (!warmup_given)
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
    if (t->steps > 0 && t->warmup > t->steps)
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

/* Names become directory and file names on workers, and words on command
 * lines: a restricted alphabet, no leading dot and no leading dash keep
 * them from escaping, hiding, or being read as flags (-rf). */
int spec_check_name(const char *name, const char *field, struct spec_error *err)
{
    if (name[0] == '.' || name[0] == '-')
        return spec_fail(err, field, "must not start with '%c'", name[0]);
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return spec_fail(err, field, "may hold only letters, digits, '.', '_' and '-' (found '%c')",
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
                                      "max_attempts", "init", "after", "sft", NULL};
    if (field_check_keys(root, "", top, err))
        return -1;

    if (finetune_parse_init(root, &s, err) || finetune_parse_after(root, &s, err))
        return -1;
    /* a start's model and variant are the checkpoint's unless the spec says them */
    s.model_from_init = s.init.kind != INIT_SEED && !json_object_get(root, "model");
    s.norm_from_init = s.init.kind != INIT_SEED && !json_object_get(root, "norm");
    if ((!s.model_from_init && parse_model(json_object_get(root, "model"), &s.model, err)) ||
        (!s.norm_from_init && parse_norm(json_object_get(root, "norm"), &s.norm, err)))
        return -1;
    if (s.model_from_init) {
        snprintf(s.model.preset, sizeof s.model.preset, "custom");
        s.model.embed_std = DEFAULT_EMBED_STD;
        s.model.rope_theta = DEFAULT_ROPE_THETA;
        s.model.norm_eps = DEFAULT_NORM_EPS;
    }
    const struct model_shape *m = &s.model;
    if (s.model_from_init)
        ;  /* checked against the checkpoint's shape by the worker */
    else if (m->dim % m->n_heads)
        return spec_fail(err, "model.n_heads", "dim %d is not divisible by n_heads %d", m->dim,
                    m->n_heads);
    else if ((m->dim / m->n_heads) % 2)
        return spec_fail(err, "model.dim", "head dim %d (dim/n_heads) must be even for RoPE",
                    m->dim / m->n_heads);
    if (!s.model_from_init && s.norm.mix_post_layers > m->n_layers)
        return spec_fail(err, "norm.mix_post_layers", "%d is more than the model's %d layers",
                    s.norm.mix_post_layers, m->n_layers);

    json_t *sec;
    static const char *const data_keys[] = {"train", "val", "packing", "format", NULL};
    int packing = PACKING_STREAM, format = FORMAT_SHARDS, train_given = 0;
    if (field_section(root, "data", data_keys, &sec, err) ||
        (sec && field_choice(sec, "data", "format", format_names, &format, err) < 0))
        return -1;
    s.format = (enum data_format)format;
    /* instruction records have no default set, and held-out ones are optional */
    int instructions = s.format == FORMAT_INSTRUCTIONS;
    snprintf(s.train_glob, sizeof(s.train_glob), "%s", instructions ? "" : DEFAULT_TRAIN_GLOB);
    snprintf(s.val_glob, sizeof(s.val_glob), "%s", instructions ? "" : DEFAULT_VAL_GLOB);
    json_t *val = sec ? json_object_get(sec, "val") : NULL;
    if (sec && ((train_given = field_string(sec, "data", "train", s.train_glob,
                                            sizeof(s.train_glob), err)) < 0 ||
                (!(instructions && json_is_string(val) && !json_string_length(val)) &&
                 field_string(sec, "data", "val", s.val_glob, sizeof(s.val_glob), err) < 0) ||
                field_choice(sec, "data", "packing", packing_names, &packing, err) < 0))
        return -1;
    s.packing = (enum packing)packing;
    if (instructions && !train_given)
        return spec_fail(err, "data.train", "instruction data names its files (JSON or JSON lines)");
    if (instructions && s.packing != PACKING_STREAM)
        return spec_fail(err, "data.packing",
                         "instruction records are rows of their own (sft.pack packs them)");
    if (finetune_parse_sft(root, &s, err))
        return -1;

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
                                             "schedule", "epochs", NULL};
    s.eval_every = 1000;
    if (field_section(root, "train", train_keys, &sec, err) ||
        parse_train(sec, &s, &s.train, &s.eval_every, err))
        return -1;

    s.eval_tokens = 10000000;
    int every_given = 0;
    static const char *const eval_keys[] = {"every", "tokens", "train_tokens", NULL};
    if (field_section(root, "eval", eval_keys, &sec, err) ||
        (sec && ((every_given = field_long(sec, "eval", "every", 0, &s.eval_every, err)) < 0 ||
                 field_long(sec, "eval", "tokens", 1, &s.eval_tokens, err) < 0 ||
                 field_long(sec, "eval", "train_tokens", 0, &s.eval_train_tokens, err) < 0)))
        return -1;
    if (finetune_check(&s, every_given, err))
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

    static const char *const an_keys[] = {"angular", "prune", "tasks", NULL};
    if (field_section(root, "analysis", an_keys, &sec, err) ||
        (sec && (field_bool(sec, "analysis", "angular", &s.analysis_angular, err) < 0 ||
                 field_bool(sec, "analysis", "prune", &s.analysis_prune, err) < 0 ||
                 spec_tasks_parse(json_object_get(sec, "tasks"), &s, err) < 0)))
        return -1;

    s.priority = 0;
    s.max_attempts = 3;
    if (field_int(root, "", "priority", INT_MIN, &s.priority, err) < 0 ||
        field_int(root, "", "max_attempts", 1, &s.max_attempts, err) < 0)
        return -1;

    if (s.model_from_init || s.norm_from_init)
        snprintf(s.name, sizeof(s.name), "finetune");
    else
        snprintf(s.name, sizeof(s.name), "%s-%s", s.model.preset, s.norm.name);
    if (field_string(root, "", "name", s.name, sizeof(s.name), err) < 0 || spec_check_name(s.name, "name", err))
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
