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
}
