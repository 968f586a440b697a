#include "trainer/stats.h"

#include <math.h>
#include <stdlib.h>

int stats_alloc(struct layer_stats *s, int n_layers)
{
    s->n_layers = n_layers;
    double **fields[] = {&s->out_var, &s->out_rms, &s->angular, &s->grad_norm, &s->update_ratio};
    int fail = 0;
    for (int i = 0; i < 5; i++) {
        *fields[i] = calloc((size_t)n_layers + 1, sizeof(double));
        fail |= !*fields[i];
    }
    if (fail)
        stats_free(s);
    return fail ? -1 : 0;
}

void stats_free(struct layer_stats *s)
{
    free(s->out_var);
    free(s->out_rms);
    free(s->angular);
    free(s->grad_norm);
    free(s->update_ratio);
    s->out_var = s->out_rms = s->angular = s->grad_norm = s->update_ratio = NULL;
}

void stats_activations(const struct model *m, const struct rows *rows, struct layer_stats *s)
{
    int N = (int)rows->n, d = m->cfg.dim;
    size_t n = (size_t)N * d;
    const act *prev = NULL;
    for (int l = 0; l <= m->cfg.n_layers; l++) {
        const act *x = rows_pack(m->ops, rows, m->stream[l], d, l % 2);
        double sum = m->ops->act_sum(x, n), sq = m->ops->act_sumsq(x, n);
        double mean = sum / (double)n;
        s->out_var[l] = sq / (double)n - mean * mean;
        s->out_rms[l] = sqrt(sq / (double)n);
        if (l > 0)
            s->angular[l] = m->ops->angular_sum(prev, x, N, d) / N;
        prev = x;
    }
}

void stats_grad_norms(const struct model *m, struct layer_stats *s, double clip_factor)
{
    for (int l = 1; l <= m->cfg.n_layers; l++) {
        size_t lo = m->block_first[l - 1], hi = m->block_end[l - 1];
        s->grad_norm[l] = clip_factor * sqrt(m->ops->sumsq(m->grads + lo, hi - lo));
    }
}

void stats_update_ratios(const struct model *m, const real *before, struct layer_stats *s)
{
    for (int l = 1; l <= m->cfg.n_layers; l++) {
        size_t lo = m->block_first[l - 1], hi = m->block_end[l - 1];
        double w = m->ops->sumsq(m->params + lo, hi - lo);
        double dw = m->ops->dist2(m->params + lo, before + lo, hi - lo);
        s->update_ratio[l] = w > 0 ? sqrt(dw / w) : 0;
    }
}
