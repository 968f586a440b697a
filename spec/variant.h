/* Normalization variants (docs/variants.md). A variant is four orthogonal
 * settings: placement, LN scaling (with its position), residual and init.
 * Presets are named points in that space. This is what a spec names; the
 * recipe of each block of a model follows from it in trainer/block.h.
 * Whether the norms' gains learn is a setting beside them that names no
 * variant: LNS with frozen gains is still LNS.
 *
 * variant.c owns the variant as two tables: the settings (a name, where the
 * value lives in struct norm_variant, an enum's names) and the presets (a
 * name, the paper's label, the settings that differ from Pre-LN). Parsing
 * (spec.c), the JSON form (spec_json.c), the report's labels and the check
 * that api/openapi.json and docs/variants.md agree (test_variant_table) all
 * read these tables, so a preset or a setting is added in one place. */
#ifndef COD_VARIANT_H
#define COD_VARIANT_H

#include <stddef.h>

enum placement { PLACE_PRE, PLACE_POST, PLACE_SANDWICH, PLACE_MIX };
enum ln_scale { LN_SCALE_NONE, LN_SCALE_INV_SQRT_DEPTH };
/* Where s_ℓ = 1/√ℓ multiplies (paper Table 8). after_ln is LNS proper. */
enum lns_position { LNS_AFTER_LN, LNS_BEFORE_LN, LNS_AFTER_SUBLAYER, LNS_AFTER_RESIDUAL };
enum lns_sublayers { LNS_BOTH, LNS_ATTN, LNS_FFN };
enum residual { RES_PLAIN, RES_SCALED, RES_LAYERSCALE, RES_SKIPINIT };
enum init_kind { INIT_NORMAL, INIT_SCALED, INIT_DEPTH_SCALED, INIT_DEEPNORM };
/* frozen: every RMSNorm gain stays 1 (no gradient, no update) */
enum gains { GAINS_LEARNED, GAINS_FROZEN };

struct norm_variant {
    char name[32];             /* preset name, or "custom" for the object form */
    enum placement placement;
    int mix_post_layers;       /* PLACE_MIX: leading Post-LN blocks; < 0 means ⌊L/4⌋ */
    enum ln_scale ln_scale;
    enum lns_position lns_position;
    enum lns_sublayers lns_sublayers;
    enum residual residual;
    double residual_alpha;     /* RES_SCALED: y = α·x + f (DeepNorm: √8) */
    double branch_init;        /* LayerScale λ / SkipInit α initial value; <= 0: 1/√L */
    enum init_kind init;
    double init_std;           /* std of N(0, σ) Linear init (0.02) */
    enum gains gains;
};

/* ---- the settings ---- */

enum setting_kind { SETTING_ENUM, SETTING_INT, SETTING_REAL };

struct variant_setting {
    const char *name;          /* the key in a spec's "norm" object */
    enum setting_kind kind;
    size_t offset;             /* of the value in struct norm_variant */
    const char *const *values; /* SETTING_ENUM: the names in the enum's order, NULL-ended */
    int names_variant;         /* 0: a preset is told without it (gains) */
    int min;                   /* SETTING_INT: the least value */
    int positive;              /* SETTING_REAL: must be > 0 */
};

/* The settings in the order a spec's JSON form writes them. */
size_t variant_setting_count(void);
const struct variant_setting *variant_setting_at(size_t i);
const struct variant_setting *variant_setting_find(const char *name);

/* A setting's value in *v, as an int (an enum's index, or the integer) or
 * a double (a real). */
int variant_get_int(const struct norm_variant *v, const struct variant_setting *s);
double variant_get_real(const struct norm_variant *v, const struct variant_setting *s);
void variant_set_int(struct norm_variant *v, const struct variant_setting *s, int x);
void variant_set_real(struct norm_variant *v, const struct variant_setting *s, double x);

/* The index of an enum setting's value, or -1 if the field or the value is unknown. */
int variant_enum(const char *field, const char *value);
/* The name of an enum value (inverse of variant_enum), NULL if there is none. */
const char *variant_enum_name(const char *field, int value);
/* The accepted values of an enum setting, comma-separated (NULL if no such setting). */
const char *variant_enum_choices(const char *field);

/* ---- the presets ---- */

/* Fills *v with a preset; -1 if the name is unknown. */
int variant_preset(const char *name, struct norm_variant *v);
/* Comma-separated preset names, for error messages. */
const char *variant_preset_names(void);
size_t variant_preset_count(void);
/* The i-th preset's name and the paper's label for it ("lns", "LNS"). */
const char *variant_preset_name(size_t i);
const char *variant_preset_label(const char *name);

/* 1 if a and b agree on every setting that names a variant (all but gains). */
int variant_same(const struct norm_variant *a, const struct norm_variant *b);
/* The preset *v restates, else "custom", into v->name. */
void variant_name_it(struct norm_variant *v);

#endif
