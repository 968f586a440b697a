#include "spec/variant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct norm_variant base = {
    .name = "pre", .placement = PLACE_PRE, .mix_post_layers = -1, .ln_scale = LN_SCALE_NONE,
    .lns_position = LNS_AFTER_LN, .lns_sublayers = LNS_BOTH, .residual = RES_PLAIN,
    .residual_alpha = 1.0, .branch_init = 0.0, .init = INIT_NORMAL, .init_std = 0.02,
    .gains = GAINS_LEARNED,
};

int variant_preset(const char *name, struct norm_variant *v)
{
    *v = base;
    if (strcmp(name, "pre") == 0) {
    } else if (strcmp(name, "lns") == 0) {
        v->ln_scale = LN_SCALE_INV_SQRT_DEPTH;
    } else if (strcmp(name, "post") == 0) {
        v->placement = PLACE_POST;
    } else if (strcmp(name, "deepnorm") == 0) {
        v->placement = PLACE_POST;
        v->residual = RES_SCALED;
        v->residual_alpha = sqrt(8.0);
        v->init = INIT_DEEPNORM;
    } else if (strcmp(name, "mixln") == 0) {
        v->placement = PLACE_MIX;
    } else if (strcmp(name, "scaled_init") == 0) {
        v->init = INIT_SCALED;
    } else if (strcmp(name, "lns_scaled_init") == 0) {
        v->ln_scale = LN_SCALE_INV_SQRT_DEPTH;
        v->init = INIT_SCALED;
    } else if (strcmp(name, "sandwich") == 0) {
        v->placement = PLACE_SANDWICH;
    } else if (strcmp(name, "layerscale") == 0) {
        v->residual = RES_LAYERSCALE;
        v->branch_init = 0.1;
    } else if (strcmp(name, "skipinit") == 0) {
        v->residual = RES_SKIPINIT;
    } else if (strcmp(name, "depth_scaled_init") == 0) {
        v->init = INIT_DEPTH_SCALED;
    } else {
        return -1;
    }
    snprintf(v->name, sizeof(v->name), "%s", name);
    return 0;
}

const char *variant_preset_names(void)
{
    return "pre, lns, post, deepnorm, mixln, scaled_init, lns_scaled_init, sandwich, layerscale, "
           "skipinit, depth_scaled_init";
}

struct enum_field {
    const char *field;
    const char *values[5];
};

static const struct enum_field fields[VARIANT_N_ENUMS] = {
    {"placement", {"pre", "post", "sandwich", "mix", NULL}},
    {"ln_scale", {"none", "inv_sqrt_depth", NULL}},
    {"lns_position", {"after_ln", "before_ln", "after_sublayer", "after_residual", NULL}},
    {"lns_sublayers", {"both", "attn", "ffn", NULL}},
    {"residual", {"plain", "scaled", "layerscale", "skipinit", NULL}},
    {"init", {"normal", "scaled", "depth_scaled", "deepnorm", NULL}},
    {"gains", {"learned", "frozen", NULL}},
};

static const struct enum_field *find_field(const char *field)
{
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (strcmp(fields[i].field, field) == 0)
            return &fields[i];
    return NULL;
}

int variant_enum(const char *field, const char *value)
{
    const struct enum_field *f = find_field(field);
    for (int i = 0; f && f->values[i]; i++)
        if (strcmp(f->values[i], value) == 0)
            return i;
    return -1;
}

const char *variant_enum_field(int i)
{
    return i >= 0 && i < VARIANT_N_ENUMS ? fields[i].field : NULL;
}

const char *variant_enum_name(const char *field, int value)
{
    const struct enum_field *f = find_field(field);
    for (int i = 0; f && f->values[i]; i++)
        if (i == value)
            return f->values[i];
    return NULL;
}

const char *variant_enum_choices(const char *field)
{
    static _Thread_local char buf[128];
    const struct enum_field *f = find_field(field);
    if (!f)
        return NULL;
    buf[0] = 0;
    for (int i = 0; f->values[i]; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? ", " : "", f->values[i]);
    return buf;
}

int variant_same(const struct norm_variant *a, const struct norm_variant *b)
{
    return a->placement == b->placement && a->mix_post_layers == b->mix_post_layers &&
           a->ln_scale == b->ln_scale && a->lns_position == b->lns_position &&
           a->lns_sublayers == b->lns_sublayers && a->residual == b->residual &&
           a->residual_alpha == b->residual_alpha && a->branch_init == b->branch_init &&
           a->init == b->init && a->init_std == b->init_std;
}
