/* Normalization variants (docs/variants.md). A variant is four orthogonal
 * settings: placement, LN scaling (with its position), residual and init.
 * Presets are named points in that space. This is what a spec names; the
 * recipe of each block of a model follows from it in trainer/block.h.
 * Whether the norms' gains learn is a fifth setting beside them that names
 * no variant: LNS with frozen gains is still LNS. */
#ifndef COD_VARIANT_H
#define COD_VARIANT_H

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

/* Fills *v with a preset; -1 if the name is unknown. */
int variant_preset(const char *name, struct norm_variant *v);
/* Whether two variants' blocks compute the same (their settings but the
 * gains, which name no variant, and the name). */
int variant_same(const struct norm_variant *a, const struct norm_variant *b);
/* Comma-separated preset names, for error messages. */
const char *variant_preset_names(void);

/* The enum settings, in this order: placement, ln_scale, lns_position,
 * lns_sublayers, residual, init, gains. variant_enum_field(i) names the i-th. */
#define VARIANT_N_ENUMS 7
const char *variant_enum_field(int i);
/* Maps the object form's string settings onto enums. field is one of
 * placement, ln_scale, lns_position, lns_sublayers, residual, init, gains; returns
 * the enum value, or -1 if the field or the value is unknown. */
int variant_enum(const char *field, const char *value);
/* The accepted values of an enum field, comma-separated (NULL if no such field). */
const char *variant_enum_choices(const char *field);
/* The string of an enum value (inverse of variant_enum). */
const char *variant_enum_name(const char *field, int value);

#endif
