/* The recipe of one block of the model: a normalization variant (the
 * settings a spec names, spec/variant.h) resolved for block l (1-based) of
 * an L-block model: where its norms sit, the depth scale 1/sqrt(l) of each
 * sub-layer and where it multiplies, and the residual's multiplier. The
 * model and the Hugging Face export read it. */
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
};

void variant_block(const struct norm_variant *v, int layer, int n_layers, struct block_cfg *b);
/* Number of leading Post-LN blocks of a Mix-LN model of n_layers. */
int variant_mix_post_layers(const struct norm_variant *v, int n_layers);

#endif
