/* The model's initial weights (model_init_weights) and the matmuls' copy
 * of them (model_sync_weights): see model.h. */
#include "trainer/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/bf16.h"
#include "trainer/rng.h"

static double init_std(const struct model *m, const struct param_info *p)
{
    const struct norm_variant *v = &m->cfg.norm;
    int L = m->cfg.n_layers;
    double std = v->init_std;
    int out_proj = p->kind == P_O || p->kind == P_DOWN;
    switch (v->init) {
    case INIT_NORMAL:
        break;
    case INIT_SCALED:
        if (out_proj)
            std = v->init_std / sqrt(2.0 * L);
        break;
    case INIT_DEPTH_SCALED:
        if (out_proj)
            std = v->init_std / sqrt(2.0 * p->layer);
        break;
    case INIT_DEEPNORM:
        if (p->layer >= 1 && p->layer <= L && p->ndim == 2) {
            /* xavier_normal: gain·√(2/(fan_in+fan_out)); the code's gain (8L)^¼ on v,o,gate,up,down, 1 on q,k */
            double gain = (p->kind == P_Q || p->kind == P_K) ? 1.0 : pow(8.0 * L, 0.25);
            std = gain * sqrt(2.0 / (double)(p->shape[0] + p->shape[1]));
        }
        break;
    }
    return std;
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
    int L = m->cfg.n_layers;
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
            fill = m->cfg.norm.branch_init > 0 ? m->cfg.norm.branch_init : 1.0 / sqrt((double)L);
            break;
        default:
            std = init_std(m, p);
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
