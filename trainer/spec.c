#include "trainer/spec.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trainer/shard.h"

/* Model presets (DESIGN.md §3) and, for the sizes the paper trained, its
 * recipe (PAPER.md §4). lr 0 marks a preset without a recipe. */
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

static const struct model_preset *find_preset(const char *name)
{
    for (int i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

static int fail(struct spec_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct spec_error *err, const char *field, const char *fmt, ...)
{
    snprintf(err->field, sizeof(err->field), "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

static void join(char *out, size_t outlen, const char *prefix, const char *key)
{
    if (prefix[0])
        snprintf(out, outlen, "%s.%s", prefix, key);
    else
        snprintf(out, outlen, "%s", key);
}

/* A misspelt key would otherwise silently fall back to a default and run the
 * wrong experiment, so every level rejects keys it does not know. */
static int check_keys(json_t *obj, const char *prefix, const char *const *allowed,
                      struct spec_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int known = 0;
        for (int i = 0; allowed[i] && !known; i++)
            known = strcmp(allowed[i], key) == 0;
        if (!known) {
            char field[128], list[400] = "";
            join(field, sizeof(field), prefix, key);
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                         allowed[i]);
            return fail(err, field, "unknown field (known here: %s)", list);
        }
    }
    return 0;
}

/* The getters leave *out (the default) alone when the key is absent and
 * return 1 when it was given, 0 when absent, -1 on error. They check the
 * JSON type and that the value fits the C field; semantic ranges are
 * checked by the caller, which knows what the field means. */
static int get_integer(json_t *obj, const char *prefix, const char *key, long long lo,
                       long long hi, long long *out, struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128];
    join(field, sizeof(field), prefix, key);
    if (!json_is_integer(v)) {
        if (json_is_real(v))
            return fail(err, field, "must be an integer, not %g", json_real_value(v));
        return fail(err, field, "must be an integer");
    }
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return fail(err, field, "%lld is out of range (%lld to %lld)", x, lo, hi);
    *out = x;
    return 1;
}

/* An integer field held in a C type of range [type_min, type_max]: the
 * value must fit the type, and be at least min. */
static int get_at_least(json_t *obj, const char *prefix, const char *key, long long min,
                        long long type_min, long long type_max, long long *x,
                        struct spec_error *err)
{
    int rc = get_integer(obj, prefix, key, type_min, type_max, x, err);
    if (rc <= 0)
        return rc;
    if (*x < min) {
        char field[128];
        join(field, sizeof(field), prefix, key);
        if (min == 1)
            return fail(err, field, "must be positive (got %lld)", *x);
        return fail(err, field, "must be at least %lld (got %lld)", min, *x);
    }
    return 1;
}

static int get_int(json_t *obj, const char *prefix, const char *key, int min, int *out,
                   struct spec_error *err)
{
    long long x = *out;
    int rc = get_at_least(obj, prefix, key, min, INT_MIN, INT_MAX, &x, err);
    if (rc > 0)
        *out = (int)x;
    return rc;
}

static int get_long(json_t *obj, const char *prefix, const char *key, long min, long *out,
                    struct spec_error *err)
{
    long long x = *out;
    int rc = get_at_least(obj, prefix, key, min, LONG_MIN, LONG_MAX, &x, err);
    if (rc > 0)
        *out = (long)x;
    return rc;
}

static int get_real(json_t *obj, const char *prefix, const char *key, double *out,
                    struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128];
    join(field, sizeof(field), prefix, key);
    if (!json_is_number(v))
        return fail(err, field, "must be a number");
    double x = json_number_value(v);
    if (!isfinite(x))
        return fail(err, field, "must be finite");
    *out = x;
    return 1;
}

static int get_bool(json_t *obj, const char *prefix, const char *key, int *out,
                    struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_boolean(v)) {
        char field[128];
        join(field, sizeof(field), prefix, key);
        return fail(err, field, "must be true or false");
    }
    *out = json_is_true(v);
    return 1;
}

/* A non-empty string that fits a buffer of cap bytes. */
static int get_string(json_t *obj, const char *prefix, const char *key, char *out, size_t cap,
                      struct spec_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char field[128];
    join(field, sizeof(field), prefix, key);
    if (!json_is_string(v))
        return fail(err, field, "must be a string");
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n == 0)
        return fail(err, field, "must not be empty");
    if (strlen(s) != n)
        return fail(err, field, "must not contain NUL characters");
    if (n >= cap)
        return fail(err, field, "is too long (%zu bytes, at most %zu)", n, cap - 1);
    memcpy(out, s, n + 1);
    return 1;
}

/* A section must be an object when present; *sec is NULL when it is absent. */
static int get_section(json_t *root, const char *key, const char *const *allowed, json_t **sec,
                       struct spec_error *err)
{
    *sec = json_object_get(root, key);
    if (!*sec)
        return 0;
    if (!json_is_object(*sec))
        return fail(err, key, "must be an object");
    return check_keys(*sec, key, allowed, err);
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

static int parse_model(json_t *v, struct model_shape *m, struct spec_error *err)
{
    memset(m, 0, sizeof(*m));
    /* The paper's headline size (its Figure 1 and most of its tables). */
    if (!v) {
        model_from_preset(find_preset(DEFAULT_MODEL), m);
        return 0;
    }
    if (json_is_string(v)) {
        const struct model_preset *p = find_preset(json_string_value(v));
        if (!p)
            return fail(err, "model", "unknown model preset \"%s\" (presets: %s)",
                        json_string_value(v), PRESET_LIST);
        model_from_preset(p, m);
        return 0;
    }
    if (!json_is_object(v))
        return fail(err, "model",
                    "must be a preset name or an object {dim, n_layers, n_heads, ffn_dim, vocab}");
    static const char *const keys[] = {"preset",  "dim",   "n_layers", "n_heads",
                                       "ffn_dim", "vocab", NULL};
    if (check_keys(v, "model", keys, err))
        return -1;
    /* "preset" in the object (as spec_to_json writes it) starts from that
     * preset and lets the shape fields override it; "custom" or no preset
     * needs all four shape fields. */
    const struct model_preset *p = NULL;
    char name[32] = "custom";
    if (get_string(v, "model", "preset", name, sizeof(name), err) < 0)
        return -1;
    if (strcmp(name, "custom") != 0) {
        p = find_preset(name);
        if (!p)
            return fail(err, "model.preset", "unknown model preset \"%s\" (presets: %s, custom)",
                        name, PRESET_LIST);
        model_from_preset(p, m);
    } else {
        snprintf(m->preset, sizeof(m->preset), "custom");
    }
    static const char *const shape[] = {"dim", "n_layers", "n_heads", "ffn_dim"};
    int *dst[] = {&m->dim, &m->n_layers, &m->n_heads, &m->ffn_dim};
    for (int i = 0; i < 4; i++) {
        int rc = get_int(v, "model", shape[i], 1, dst[i], err);
        if (rc < 0)
            return -1;
        if (rc == 0 && !p) {
            char field[64];
            join(field, sizeof(field), "model", shape[i]);
            return fail(err, field, "missing (required when the model is not a preset)");
        }
    }
    if (get_int(v, "model", "vocab", 2, &m->vocab, err) < 0)
        return -1;
    /* A preset whose shape was overridden is no longer that preset: it must
     * not get the preset's recipe or name. */
    if (p && (m->dim != p->dim || m->n_layers != p->n_layers || m->n_heads != p->n_heads ||
              m->ffn_dim != p->ffn_dim))
        snprintf(m->preset, sizeof(m->preset), "custom");
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

static const char *const enum_fields[] = {"placement", "ln_scale", "lns_position",
                                          "lns_sublayers", "residual", "init"};

static void set_enum(struct norm_variant *v, int field, int x)
{
    switch (field) {
    case 0: v->placement = (enum placement)x; break;
    case 1: v->ln_scale = (enum ln_scale)x; break;
    case 2: v->lns_position = (enum lns_position)x; break;
    case 3: v->lns_sublayers = (enum lns_sublayers)x; break;
    case 4: v->residual = (enum residual)x; break;
    default: v->init = (enum init_kind)x; break;
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
            return fail(err, "norm", "unknown norm variant \"%s\" (presets: %s)",
                        json_string_value(v), variant_preset_names());
        return 0;
    }
    if (!json_is_object(v))
        return fail(err, "norm", "must be a preset name or an object of settings");
    static const char *const keys[] = {"base", "placement", "mix_post_layers", "ln_scale",
                                       "lns_position", "lns_sublayers", "residual",
                                       "residual_alpha", "branch_init", "init", "init_std", NULL};
    if (check_keys(v, "norm", keys, err))
        return -1;
    char base[32] = "pre";
    if (get_string(v, "norm", "base", base, sizeof(base), err) < 0)
        return -1;
    /* "custom" as a base is what spec_to_json writes for a custom variant,
     * whose every setting follows explicitly; it starts from "pre". */
    int custom_base = strcmp(base, "custom") == 0;
    if (variant_preset(custom_base ? "pre" : base, n))
        return fail(err, "norm.base", "unknown norm variant \"%s\" (presets: %s, custom)", base,
                    variant_preset_names());
    struct norm_variant start = *n;
    for (int i = 0; i < 6; i++) {
        json_t *e = json_object_get(v, enum_fields[i]);
        if (!e)
            continue;
        char field[64];
        join(field, sizeof(field), "norm", enum_fields[i]);
        if (!json_is_string(e))
            return fail(err, field, "must be a string (one of: %s)",
                        variant_enum_choices(enum_fields[i]));
        int x = variant_enum(enum_fields[i], json_string_value(e));
        if (x < 0)
            return fail(err, field, "unknown value \"%s\" (choices: %s)", json_string_value(e),
                        variant_enum_choices(enum_fields[i]));
        set_enum(n, i, x);
    }
    if (get_int(v, "norm", "mix_post_layers", -1, &n->mix_post_layers, err) < 0 ||
        get_real(v, "norm", "residual_alpha", &n->residual_alpha, err) < 0 ||
        get_real(v, "norm", "branch_init", &n->branch_init, err) < 0 ||
        get_real(v, "norm", "init_std", &n->init_std, err) < 0)
        return -1;
    if (n->residual_alpha <= 0)
        return fail(err, "norm.residual_alpha", "must be positive (got %g)", n->residual_alpha);
    if (n->init_std <= 0)
        return fail(err, "norm.init_std", "must be positive (got %g)", n->init_std);
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

static int parse_train(json_t *sec, const struct model_shape *m, struct train_cfg *t,
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
    int steps_given = 0, warmup_given = 0, micro_given = 0;
    long long seed = 1;
    if (sec) {
        if ((steps_given = get_long(sec, "train", "steps", 1, &t->steps, err)) < 0 ||
            get_int(sec, "train", "seq_len", 1, &t->seq_len, err) < 0 ||
            get_int(sec, "train", "batch_seqs", 1, &t->batch_seqs, err) < 0 ||
            (micro_given = get_int(sec, "train", "micro_batch", 1, &t->micro_batch, err)) < 0 ||
            get_real(sec, "train", "lr", &t->lr, err) < 0 ||
            (warmup_given = get_long(sec, "train", "warmup", 0, &t->warmup, err)) < 0 ||
            get_real(sec, "train", "min_lr_ratio", &t->min_lr_ratio, err) < 0 ||
            get_real(sec, "train", "beta1", &t->beta1, err) < 0 ||
            get_real(sec, "train", "beta2", &t->beta2, err) < 0 ||
            get_real(sec, "train", "eps", &t->eps, err) < 0 ||
            get_real(sec, "train", "weight_decay", &t->weight_decay, err) < 0 ||
            get_real(sec, "train", "clip", &t->clip, err) < 0)
            return -1;
        /* json_int_t is signed 64-bit, so the seed's range is [0, 2^63-1]. */
        json_t *sv = json_object_get(sec, "seed");
        if (sv && (!json_is_integer(sv) || json_integer_value(sv) < 0))
            return fail(err, "train.seed", "must be a non-negative integer");
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
    if (!micro_given)
        t->micro_batch = t->batch_seqs % 64 == 0 ? 64 : t->batch_seqs;
    if (t->micro_batch > t->batch_seqs)
        return fail(err, "train.micro_batch", "micro_batch %d is larger than batch_seqs %d",
                    t->micro_batch, t->batch_seqs);
    if (t->batch_seqs % t->micro_batch)
        return fail(err, "train.micro_batch",
                    "batch that does not divide: batch_seqs %d is not a multiple of micro_batch %d",
                    t->batch_seqs, t->micro_batch);
    /* The trainer indexes a step's tokens with int. */
    if ((long long)t->seq_len * t->batch_seqs > INT_MAX)
        return fail(err, "train.batch_seqs",
                    "a batch of %lld tokens (seq_len x batch_seqs) is too large",
                    (long long)t->seq_len * t->batch_seqs);
    if (t->lr <= 0)
        return fail(err, "train.lr", "must be positive (got %g)", t->lr);
    if (t->warmup > t->steps)
        return fail(err, "train.warmup", "warmup %ld is longer than the run (%ld steps)",
                    t->warmup, t->steps);
    if (t->min_lr_ratio < 0 || t->min_lr_ratio > 1)
        return fail(err, "train.min_lr_ratio", "must be in [0, 1] (got %g)", t->min_lr_ratio);
    if (t->beta1 < 0 || t->beta1 >= 1)
        return fail(err, "train.beta1", "must be in [0, 1) (got %g)", t->beta1);
    if (t->beta2 < 0 || t->beta2 >= 1)
        return fail(err, "train.beta2", "must be in [0, 1) (got %g)", t->beta2);
    if (t->eps <= 0)
        return fail(err, "train.eps", "must be positive (got %g)", t->eps);
    if (t->weight_decay < 0)
        return fail(err, "train.weight_decay", "must not be negative (got %g)", t->weight_decay);
    if (t->clip < 0)
        return fail(err, "train.clip", "must not be negative (got %g; 0 turns clipping off)",
                    t->clip);
    return 0;
}

/* Names become directory and file names on workers: a restricted alphabet
 * and no leading dot keep them from escaping or hiding. */
static int check_name(const char *name, struct spec_error *err)
{
    if (name[0] == '.')
        return fail(err, "name", "must not start with '.'");
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return fail(err, "name", "may hold only letters, digits, '.', '_' and '-' (found '%c')",
                        *c);
    return 0;
}

int spec_from_json(json_t *root, struct job_spec *out, struct spec_error *err)
{
    memset(err, 0, sizeof(*err));
    struct job_spec s;
    memset(&s, 0, sizeof(s));
    if (!json_is_object(root))
        return fail(err, "", "the spec must be a JSON object");
    static const char *const top[] = {"name", "model", "norm", "data", "train", "eval", "stats",
                                      "checkpoint", "analysis", "resources", "priority",
                                      "max_attempts", NULL};
    if (check_keys(root, "", top, err))
        return -1;

    if (parse_model(json_object_get(root, "model"), &s.model, err) ||
        parse_norm(json_object_get(root, "norm"), &s.norm, err))
        return -1;
    const struct model_shape *m = &s.model;
    if (m->dim % m->n_heads)
        return fail(err, "model.n_heads", "dim %d is not divisible by n_heads %d", m->dim,
                    m->n_heads);
    if ((m->dim / m->n_heads) % 2)
        return fail(err, "model.dim", "head dim %d (dim/n_heads) must be even for RoPE",
                    m->dim / m->n_heads);
    if (s.norm.mix_post_layers > m->n_layers)
        return fail(err, "norm.mix_post_layers", "%d is more than the model's %d layers",
                    s.norm.mix_post_layers, m->n_layers);

    json_t *sec;
    static const char *const data_keys[] = {"train", "val", NULL};
    snprintf(s.train_glob, sizeof(s.train_glob), "%s", DEFAULT_TRAIN_GLOB);
    snprintf(s.val_glob, sizeof(s.val_glob), "%s", DEFAULT_VAL_GLOB);
    if (get_section(root, "data", data_keys, &sec, err) ||
        (sec && (get_string(sec, "data", "train", s.train_glob, sizeof(s.train_glob), err) < 0 ||
                 get_string(sec, "data", "val", s.val_glob, sizeof(s.val_glob), err) < 0)))
        return -1;

    static const char *const train_keys[] = {"steps", "seq_len", "batch_seqs", "micro_batch",
                                             "lr", "warmup", "min_lr_ratio", "beta1", "beta2",
                                             "eps", "weight_decay", "clip", "seed", NULL};
    if (get_section(root, "train", train_keys, &sec, err) || parse_train(sec, m, &s.train, err))
        return -1;

    s.eval_every = 1000;
    s.eval_tokens = 10000000;
    static const char *const eval_keys[] = {"every", "tokens", NULL};
    if (get_section(root, "eval", eval_keys, &sec, err) ||
        (sec && (get_long(sec, "eval", "every", 0, &s.eval_every, err) < 0 ||
                 get_long(sec, "eval", "tokens", 1, &s.eval_tokens, err) < 0)))
        return -1;

    s.stats_every = 100;
    static const char *const stats_keys[] = {"every", NULL};
    if (get_section(root, "stats", stats_keys, &sec, err) ||
        (sec && get_long(sec, "stats", "every", 0, &s.stats_every, err) < 0))
        return -1;

    s.checkpoint_every = 1000;
    s.checkpoint_keep = 3;
    static const char *const ck_keys[] = {"every", "keep", NULL};
    if (get_section(root, "checkpoint", ck_keys, &sec, err) ||
        (sec && (get_long(sec, "checkpoint", "every", 0, &s.checkpoint_every, err) < 0 ||
                 get_int(sec, "checkpoint", "keep", 1, &s.checkpoint_keep, err) < 0)))
        return -1;

    static const char *const an_keys[] = {"angular", "prune", NULL};
    if (get_section(root, "analysis", an_keys, &sec, err) ||
        (sec && (get_bool(sec, "analysis", "angular", &s.analysis_angular, err) < 0 ||
                 get_bool(sec, "analysis", "prune", &s.analysis_prune, err) < 0)))
        return -1;

    snprintf(s.device, sizeof(s.device), "any");
    s.gpus = 1;
    static const char *const res_keys[] = {"device", "gpus", NULL};
    if (get_section(root, "resources", res_keys, &sec, err) ||
        (sec && (get_string(sec, "resources", "device", s.device, sizeof(s.device), err) < 0 ||
                 get_int(sec, "resources", "gpus", 1, &s.gpus, err) < 0)))
        return -1;
    if (strcmp(s.device, "cpu") && strcmp(s.device, "cuda") && strcmp(s.device, "any"))
        return fail(err, "resources.device", "unknown device \"%s\" (choices: cpu, cuda, any)",
                    s.device);

    s.priority = 0;
    s.max_attempts = 3;
    if (get_int(root, "", "priority", INT_MIN, &s.priority, err) < 0 ||
        get_int(root, "", "max_attempts", 1, &s.max_attempts, err) < 0)
        return -1;

    snprintf(s.name, sizeof(s.name), "%s-%s", s.model.preset, s.norm.name);
    if (get_string(root, "", "name", s.name, sizeof(s.name), err) < 0 || check_name(s.name, err))
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
        return fail(err, "", "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
    int rc = spec_from_json(root, out, err);
    json_decref(root);
    return rc;
}

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

    const struct norm_variant *n = &s->norm;
    int values[6] = {n->placement, n->ln_scale, n->lns_position, n->lns_sublayers, n->residual,
                     n->init};
    bad |= put(norm, "base", json_string(n->name));
    for (int i = 0; i < 6; i++) {
        const char *name = variant_enum_name(enum_fields[i], values[i]);
        bad |= !name || put(norm, enum_fields[i], json_string(name));
    }
    bad |= put(norm, "mix_post_layers", json_integer(n->mix_post_layers));
    bad |= put(norm, "residual_alpha", json_real(n->residual_alpha));
    bad |= put(norm, "branch_init", json_real(n->branch_init));
    bad |= put(norm, "init_std", json_real(n->init_std));

    bad |= put(data, "train", json_string(s->train_glob));
    bad |= put(data, "val", json_string(s->val_glob));

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

    bad |= put(eval, "every", json_integer(s->eval_every));
    bad |= put(eval, "tokens", json_integer(s->eval_tokens));
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

/* The largest token id in a shard. */
static uint32_t shard_max_token(const struct shard *sh)
{
    uint32_t mx = 0;
    for (int64_t i = 0; i < sh->n_tokens; i++) {
        uint32_t t = shard_token(sh, i);
        if (t > mx)
            mx = t;
    }
    return mx;
}

/* Opens every shard a glob matches. With scan, *max_tok becomes the largest
 * token id seen (it is only raised, so calls accumulate). */
static int check_glob(const char *pattern, const char *field, int scan, uint32_t *max_tok,
                      struct spec_error *err)
{
    char **paths = NULL, msg[4600];
    int n = 0;
    if (shard_glob(pattern, &paths, &n, msg, sizeof(msg)))
        return fail(err, field, "%s", msg);
    for (int i = 0; i < n; i++) {
        struct shard sh;
        if (shard_open(&sh, paths[i], msg, sizeof(msg))) {
            shard_free_paths(paths, n);
            return fail(err, field, "%s", msg);
        }
        if (scan) {
            uint32_t mx = shard_max_token(&sh);
            if (mx > *max_tok)
                *max_tok = mx;
        }
        shard_close(&sh);
    }
    shard_free_paths(paths, n);
    return 0;
}

/* vocab_size from meta.json beside the shards: 1 and *vocab when it exists
 * and is valid, 0 when there is none, -1 when it is unreadable or wrong. */
static int read_meta_vocab(const char *first_shard, int *vocab, struct spec_error *err)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof(dir), "%s", first_shard);
    snprintf(path, sizeof(path), "%s/meta.json", dirname(dir));
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return fail(err, "model.vocab", "%s: %s", path, strerror(errno));
    }
    json_error_t je;
    json_t *meta = json_load_file(path, 0, &je);
    if (!meta)
        return fail(err, "model.vocab", "%s: invalid JSON at line %d: %s", path, je.line, je.text);
    json_t *v = json_is_object(meta) ? json_object_get(meta, "vocab_size") : NULL;
    int ok = json_is_integer(v) && json_integer_value(v) >= 2 && json_integer_value(v) <= INT_MAX;
    if (ok)
        *vocab = (int)json_integer_value(v);
    json_decref(meta);
    if (!ok)
        return fail(err, "model.vocab", "%s: no valid integer \"vocab_size\" (2 to %d)", path,
                    INT_MAX);
    return 1;
}

int spec_check_data(struct job_spec *s, struct spec_error *err)
{
    memset(err, 0, sizeof(*err));
    /* meta.json sits beside the first train shard and decides whether the
     * tokens need scanning, so that shard is found first. */
    char **train = NULL, msg[4600];
    int n_train = 0, meta_vocab = 0;
    if (shard_glob(s->train_glob, &train, &n_train, msg, sizeof(msg)))
        return fail(err, "data.train", "%s", msg);
    int have_meta = read_meta_vocab(train[0], &meta_vocab, err);
    shard_free_paths(train, n_train);
    if (have_meta < 0)
        return -1;
    /* The tokenizer's vocabulary is trusted when meta.json states it, which
     * spares reading every token of a large corpus on each submission. */
    int scan = !have_meta;
    uint32_t max_tok = 0;
    if (check_glob(s->train_glob, "data.train", scan, &max_tok, err) ||
        check_glob(s->val_glob, "data.val", scan, &max_tok, err))
        return -1;
    if (s->model.vocab == 0) {
        if (have_meta)
            s->model.vocab = meta_vocab;
        else if (max_tok >= (uint32_t)INT_MAX)
            return fail(err, "model.vocab", "the data's largest token id %u is too large", max_tok);
        else
            s->model.vocab = max_tok < 1 ? 2 : (int)max_tok + 1;
        return 0;
    }
    if (have_meta && meta_vocab > s->model.vocab)
        return fail(err, "model.vocab",
                    "vocab %d is smaller than the data's vocabulary (%d in meta.json)",
                    s->model.vocab, meta_vocab);
    if (!have_meta && max_tok >= (uint32_t)s->model.vocab)
        return fail(err, "model.vocab", "the data holds token id %u, outside vocab %d", max_tok,
                    s->model.vocab);
    return 0;
}
