/* The variant's two tables: see variant.h. */
#include "spec/variant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An enum setting is read and written as an int at its offset: every enum
 * of struct norm_variant has int's size (its values are small and
 * non-negative, so int and the compiler's choice of type agree on them). */
_Static_assert(sizeof(enum placement) == sizeof(int) && sizeof(enum ln_scale) == sizeof(int) &&
                   sizeof(enum lns_position) == sizeof(int) && sizeof(enum lns_sublayers) == sizeof(int) &&
                   sizeof(enum residual) == sizeof(int) && sizeof(enum init_kind) == sizeof(int) &&
                   sizeof(enum gains) == sizeof(int),
               "variant enums are int-sized");

#define AT(field) offsetof(struct norm_variant, field)
#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct variant_setting settings[] = {
    {"placement", SETTING_ENUM, AT(placement), NAMES("pre", "post", "sandwich", "mix"), 1, 0, 0},
    {"ln_scale", SETTING_ENUM, AT(ln_scale), NAMES("none", "inv_sqrt_depth"), 1, 0, 0},
    {"lns_position", SETTING_ENUM, AT(lns_position),
     NAMES("after_ln", "before_ln", "after_sublayer", "after_residual"), 1, 0, 0},
    {"lns_sublayers", SETTING_ENUM, AT(lns_sublayers), NAMES("both", "attn", "ffn"), 1, 0, 0},
    {"residual", SETTING_ENUM, AT(residual), NAMES("plain", "scaled", "layerscale", "skipinit"), 1, 0, 0},
    {"init", SETTING_ENUM, AT(init), NAMES("normal", "scaled", "depth_scaled", "deepnorm"), 1, 0, 0},
    {"gains", SETTING_ENUM, AT(gains), NAMES("learned", "frozen"), 0, 0, 0},
    {"mix_post_layers", SETTING_INT, AT(mix_post_layers), NULL, 1, -1, 0},
    {"residual_alpha", SETTING_REAL, AT(residual_alpha), NULL, 1, 0, 1},
    {"branch_init", SETTING_REAL, AT(branch_init), NULL, 1, 0, 0},
    {"init_std", SETTING_REAL, AT(init_std), NULL, 1, 0, 1},
};
#define N_SETTINGS (sizeof settings / sizeof settings[0])

/* Pre-LN, from which every preset differs by the settings of its row. */
static const struct norm_variant base = {
    .name = "pre", .placement = PLACE_PRE, .mix_post_layers = -1, .ln_scale = LN_SCALE_NONE,
    .lns_position = LNS_AFTER_LN, .lns_sublayers = LNS_BOTH, .residual = RES_PLAIN,
    .residual_alpha = 1.0, .branch_init = 0.0, .init = INIT_NORMAL, .init_std = 0.02,
    .gains = GAINS_LEARNED,
};

/* name, the paper's label, "setting=value ..." over Pre-LN. DeepNorm's α
 * is √8, written as the double nearest to it. */
static const struct {
    const char *name, *label, *settings;
} presets[] = {
    {"pre", "Pre-LN", ""},
    {"lns", "LNS", "ln_scale=inv_sqrt_depth"},
    {"post", "Post-LN", "placement=post"},
    {"deepnorm", "DeepNorm", "placement=post residual=scaled residual_alpha=2.8284271247461903 init=deepnorm"},
    {"mixln", "Mix-LN", "placement=mix"},
    {"scaled_init", "Scaled Init", "init=scaled"},
    {"lns_scaled_init", "LNS + Scaled Init", "ln_scale=inv_sqrt_depth init=scaled"},
    {"sandwich", "Sandwich-LN", "placement=sandwich"},
    {"layerscale", "LayerScale", "residual=layerscale branch_init=0.1"},
    {"skipinit", "SkipInit", "residual=skipinit"},
    {"depth_scaled_init", "Depth-Scaled Init", "init=depth_scaled"},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

size_t variant_setting_count(void) { return N_SETTINGS; }

const struct variant_setting *variant_setting_at(size_t i) { return i < N_SETTINGS ? &settings[i] : NULL; }

const struct variant_setting *variant_setting_find(const char *name)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(settings[i].name, name) == 0)
            return &settings[i];
    return NULL;
}

int variant_get_int(const struct norm_variant *v, const struct variant_setting *s)
{
    int x;
    memcpy(&x, (const char *)v + s->offset, sizeof x);
    return x;
}

double variant_get_real(const struct norm_variant *v, const struct variant_setting *s)
{
    double x;
    memcpy(&x, (const char *)v + s->offset, sizeof x);
    return x;
}

void variant_set_int(struct norm_variant *v, const struct variant_setting *s, int x)
{
    memcpy((char *)v + s->offset, &x, sizeof x);
}

void variant_set_real(struct norm_variant *v, const struct variant_setting *s, double x)
{
    memcpy((char *)v + s->offset, &x, sizeof x);
}

int variant_enum(const char *field, const char *value)
{
    const struct variant_setting *s = variant_setting_find(field);
    for (int i = 0; s && s->values && s->values[i]; i++)
        if (strcmp(s->values[i], value) == 0)
            return i;
    return -1;
}

const char *variant_enum_name(const char *field, int value)
{
    const struct variant_setting *s = variant_setting_find(field);
    for (int i = 0; s && s->values && s->values[i]; i++)
        if (i == value)
            return s->values[i];
    return NULL;
}

/* n names joined by ", " into a thread's own buffer */
static const char *joined(const char *(*name)(const void *ctx, size_t i), const void *ctx, size_t n)
{
    static _Thread_local char buf[512];
    buf[0] = 0;
    for (size_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? ", " : "", name(ctx, i));
    return buf;
}

static const char *value_name(const void *setting, size_t i)
{
    return ((const struct variant_setting *)setting)->values[i];
}

const char *variant_enum_choices(const char *field)
{
    const struct variant_setting *s = variant_setting_find(field);
    if (!s || !s->values)
        return NULL;
    size_t n = 0;
    while (s->values[n])
        n++;
    return joined(value_name, s, n);
}

/* One "setting=value" word of a preset's row onto *v; -1 if it does not parse. */
static int apply_word(struct norm_variant *v, const char *word, size_t len)
{
    char buf[96];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, word, len);
    buf[len] = 0;
    char *eq = strchr(buf, '=');
    if (!eq)
        return -1;
    *eq = 0;
    const struct variant_setting *s = variant_setting_find(buf);
    if (!s)
        return -1;
    char *end;
    if (s->kind == SETTING_ENUM) {
        int x = variant_enum(buf, eq + 1);
        if (x < 0)
            return -1;
        variant_set_int(v, s, x);
    } else if (s->kind == SETTING_INT) {
        long x = strtol(eq + 1, &end, 10);
        if (*end)
            return -1;
        variant_set_int(v, s, (int)x);
    } else {
        double x = strtod(eq + 1, &end);
        if (*end)
            return -1;
        variant_set_real(v, s, x);
    }
    return 0;
}

int variant_preset(const char *name, struct norm_variant *v)
{
    *v = base;
    for (size_t i = 0; i < N_PRESETS; i++) {
        if (strcmp(presets[i].name, name) != 0)
            continue;
        for (const char *p = presets[i].settings; *p;) {
            size_t len = strcspn(p, " ");
            if (len && apply_word(v, p, len))
                return -1;
            p += len;
            p += strspn(p, " ");
        }
        snprintf(v->name, sizeof(v->name), "%s", name);
        return 0;
    }
    return -1;
}

size_t variant_preset_count(void) { return N_PRESETS; }

const char *variant_preset_name(size_t i) { return i < N_PRESETS ? presets[i].name : NULL; }

static const char *preset_name(const void *ctx, size_t i)
{
    (void)ctx;
    return presets[i].name;
}

const char *variant_preset_names(void) { return joined(preset_name, NULL, N_PRESETS); }

const char *variant_preset_label(const char *name)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return presets[i].label;
    return NULL;
}

int variant_same(const struct norm_variant *a, const struct norm_variant *b)
{
    for (size_t i = 0; i < N_SETTINGS; i++) {
        const struct variant_setting *s = &settings[i];
        if (!s->names_variant)
            continue;
        if (s->kind == SETTING_REAL ? variant_get_real(a, s) != variant_get_real(b, s)
                                    : variant_get_int(a, s) != variant_get_int(b, s))
            return 0;
    }
    return 1;
}

void variant_name_it(struct norm_variant *v)
{
    for (size_t i = 0; i < N_PRESETS; i++) {
        struct norm_variant p;
        if (variant_preset(presets[i].name, &p) == 0 && variant_same(v, &p)) {
            snprintf(v->name, sizeof(v->name), "%s", presets[i].name);
            return;
        }
    }
    snprintf(v->name, sizeof(v->name), "custom");
}
