/* Block recipes from variants: see block.h. */
#include "trainer/block.h"

#include <math.h>

int variant_mix_post_layers(const struct norm_variant *v, int n_layers)
{
    return v->mix_post_layers >= 0 ? v->mix_post_layers : n_layers / 4;
}

void variant_block(const struct norm_variant *v, int layer, int n_layers, struct block_cfg *b)
{
    b->post = v->placement == PLACE_POST ||
              (v->placement == PLACE_MIX && layer <= variant_mix_post_layers(v, n_layers));
    b->sandwich = v->placement == PLACE_SANDWICH;
    double s = v->ln_scale == LN_SCALE_INV_SQRT_DEPTH ? 1.0 / sqrt((double)layer) : 1.0;
    b->s_attn = v->lns_sublayers == LNS_FFN ? 1.0 : s;
    b->s_ffn = v->lns_sublayers == LNS_ATTN ? 1.0 : s;
    b->s_pos = v->lns_position;
    b->alpha = v->residual == RES_SCALED ? v->residual_alpha : 1.0;
    b->residual = v->residual;
    int out_scaled = v->init == INIT_SCALED || v->init == INIT_DEPTH_SCALED;
    b->std = v->init_std;
    b->std_out = !out_scaled ? v->init_std
                 : v->init == INIT_SCALED ? v->init_std / sqrt(2.0 * n_layers)
                                          : v->init_std / sqrt(2.0 * layer);
    int xavier = v->init == INIT_DEEPNORM && layer <= n_layers;
    b->xavier_qk = xavier ? 1.0 : 0;
    b->xavier = xavier ? pow(8.0 * n_layers, 0.25) : 0;
    b->branch = v->branch_init > 0 ? v->branch_init : 1.0 / sqrt((double)n_layers);
    b->frozen_gains = v->gains == GAINS_FROZEN;
}
