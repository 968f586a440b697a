/* The recipe of one block of the model: a normalization variant (the
 * settings a spec names, spec/variant.h) resolved for block l (1-based) of
 * an L-block model: where its norms sit, the depth scale 1/sqrt(l) of each
 * sub-layer and where it multiplies, the residual's multiplier, the init of
 * its weights and whether its norms' gains learn. This is the one place
 * the trainer reads a variant's settings: the model and the Hugging Face
 * export read the recipe. Block L+1 is the final norm and the lm_head, of
 * which only the init and the gains mean anything. */
#ifndef COD_BLOCK_H
#define COD_BLOCK_H

#include "spec/variant.h"

/* The resolved recipe of one block. */
struct block_cfg {
    int post;                  /* Post-LN: norms after the residual add */
    int sandwich;              /* extra norm on each sub-layer output */
    double s_attn, s_ffn;      /* depth scale of each sub-layer (1 when unscaled) */
    enum lns_position s_pos;
    double alpha;              /* multiplier of the residual stream at each add */
    enum residual residual;
    /* the init of its weights (variant.h's init, init_std, branch_init) */
    double std;                /* N(0, std): q, k, v, gate, up (and the lm_head, block L+1) */
    double std_out;            /* o and down, the projections into the residual stream */
    double xavier_qk, xavier;  /* > 0: DeepNorm's xavier_normal instead, N(0, gain·√(2 /
                                  (fan_in + fan_out))), the first gain on q and k, the
                                  second on v, o, gate, up and down */
    double branch;             /* LayerScale's λ, SkipInit's α at init */
    int frozen_gains;          /* its norms' gains stay 1: no gradient, no update */
};

void variant_block(const struct norm_variant *v, int layer, int n_layers, struct block_cfg *b);
/* Number of leading Post-LN blocks of a Mix-LN model of n_layers. */
int variant_mix_post_layers(const struct norm_variant *v, int n_layers);

#endif
