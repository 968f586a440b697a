/* Normalization variants (DESIGN.md §4, PAPER.md §1). A variant is four
 * orthogonal settings: placement, LN scaling (with its position), residual
 * and init. Presets are named points in that space; variant_block() turns a
 * variant into the exact recipe of block ℓ (1-based) of an L-block model. */
#ifndef COD_VARIANT_H
#define COD_VARIANT_H

enum placement { PLACE_PRE, PLACE_POST, PLACE_SANDWICH, PLACE_MIX };
enum ln_scale { LN_SCALE_NONE, LN_SCALE_INV_SQRT_DEPTH };
/* Where s_ℓ = 1/√ℓ multiplies (paper Table 8). after_ln is LNS proper. */
enum lns_position { LNS_AFTER_LN, LNS_BEFORE_LN, LNS_AFTER_SUBLAYER, LNS_AFTER_RESIDUAL };
enum lns_sublayers { LNS_BOTH, LNS_ATTN, LNS_FFN };
enum residual { RES_PLAIN, RES_SCALED, RES_LAYERSCALE, RES_SKIPINIT };
enum init_kind { INIT_NORMAL, INIT_SCALED, INIT_DEPTH_SCALED, INIT_DEEPNORM };

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
};

/* The resolved recipe of one block. */
struct block_cfg {
    int post;                  /* Post-LN: norms after the residual add */
    int sandwich;              /* extra norm on each sub-layer output */
    double s_attn, s_ffn;      /* depth scale of each sub-layer (1 when unscaled) */
    enum lns_position s_pos;
    double alpha;              /* multiplier of the residual stream at each add */
    enum residual residual;
};

/* Fills *v with a preset; -1 if the name is unknown. */
int variant_preset(const char *name, struct norm_variant *v);
/* Comma-separated preset names, for error messages. */
const char *variant_preset_names(void);

/* Maps the object form's string settings onto enums. field is one of
 * placement, ln_scale, lns_position, lns_sublayers, residual, init; returns
 * the enum value, or -1 if the field or the value is unknown. */
int variant_enum(const char *field, const char *value);
/* The accepted values of an enum field, comma-separated (NULL if no such field). */
const char *variant_enum_choices(const char *field);
/* The string of an enum value (inverse of variant_enum). */
const char *variant_enum_name(const char *field, int value);

void variant_block(const struct norm_variant *v, int layer, int n_layers, struct block_cfg *b);
/* Number of leading Post-LN blocks of a Mix-LN model of n_layers. */
int variant_mix_post_layers(const struct norm_variant *v, int n_layers);

#endif
