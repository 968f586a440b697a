/* The model's initial weights (model_init_weights) and the matmuls' copy
 * of them (model_sync_weights): see model.h. */
#include "trainer/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/bf16.h"
#include "trainer/rng.h"

/* The std of a matmul weight (or a bias) of the block's recipe (block.h). */
static double init_std(const struct block_cfg *b, const struct param_info *p)
{
    if (b->xavier > 0 && p->ndim == 2) {
        double gain = p->kind == P_Q || p->kind == P_K ? b->xavier_qk : b->xavier;
        return gain * sqrt(2.0 / (double)(p->shape[0] + p->shape[1]));
    }
    return p->kind == P_O || p->kind == P_DOWN ? b->std_out : b->std;
}

int model_init_weights(struct model *m, uint64_t seed, char *err, size_t errlen)
{
    if (m->n_real != m->n_params) {
        snprintf(err, errlen, "a forward-only model on %s is loaded, not initialised",
                 m->ops->name);
        return -1;
    }
    real *host = calloc(m->n_params, sizeof(real));
    if (!host) {
        snprintf(err, errlen, "out of host memory for %zu initial weights", m->n_params);
        return -1;
    }
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        /* the stream id names the tensor, not its position, so variants
         * that add tensors leave the others' values unchanged */
        struct rng r;
        rng_seed(&r, seed, (uint64_t)p->layer * 64 + p->kind);
        double fill = 0, std = 0;
        switch (p->kind) {
        case P_EMBED:
            std = m->cfg.embed_std;
            break;
        case P_NORM_IN_ATTN: case P_NORM_IN_FFN: case P_NORM_OUT_ATTN: case P_NORM_OUT_FFN:
        case P_FINAL_NORM:
            fill = 1;
            break;
        case P_LAMBDA_ATTN: case P_LAMBDA_FFN:
            fill = m->blk[p->layer - 1].branch;
            break;
        default:
            std = init_std(&m->blk[p->layer - 1], p);
        }
        for (size_t i = 0; i < p->n; i++) {
            real x = (real)(std > 0 ? std * rng_normal(&r) : fill);
            host[param_index(p, i)] = m->cfg.bf16 ? real_bf16(x) : x;
        }
    }
    m->ops->upload(m->params, host, m->n_params);
    free(host);
    model_sync_weights(m);
    return 0;
}

void model_sync_weights(struct model *m)
{
    if (!m->ops->act_is_real && m->n_real == m->n_params)
        m->ops->to_act(m->wact, m->params, m->n_params);
}
