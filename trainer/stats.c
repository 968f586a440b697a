#include "trainer/stats.h"

#include <math.h>
#include <stdio.h>
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

int stats_heldout(struct model *m, const struct loader *val, int64_t tokens, struct layer_stats *s,
                  int64_t *seen, char *err, size_t errlen)
{
    int L = m->cfg.n_layers, T = m->cfg.seq_len, d = m->cfg.dim;
    int64_t seqs = loader_rows_for(val, tokens);
    size_t bt = (size_t)m->max_B * T;
    double *sum = calloc((size_t)L + 1, sizeof(double)), *sq = calloc((size_t)L + 1, sizeof(double));
    int32_t *tok = malloc(bt * sizeof(int32_t)), *tgt = malloc(bt * sizeof(int32_t));
    act *pack[2] = {NULL, NULL};
    int rc = -1;
    if (seqs < 1)
        snprintf(err, errlen, "no held-out sequence of %d tokens for the statistics", T);
    else if (!sum || !sq || !tok || !tgt || (val->partial && rows_alloc(m->ops, pack, bt * d)))
        snprintf(err, errlen, "out of memory for the statistics of %d layers", L);
    else
        rc = 0;
    *seen = 0;
    for (int64_t q = 0; rc == 0 && q < seqs; q += m->max_B) {
        int B = (int)(seqs - q < m->max_B ? seqs - q : m->max_B);
        loader_rows(val, q, B, tok, tgt);
        model_forward(m, tok, tgt, B, 0);
        struct rows rows;
        rows_of(&rows, tgt, B, T, val->partial ? pack : NULL);
        size_t n = (size_t)rows.n * d;
        const act *prev = NULL;
        for (int l = 0; l <= L; l++) {
            const act *x = rows_pack(m->ops, &rows, m->stream[l], d, l % 2);
            sum[l] += m->ops->act_sum(x, n);
            sq[l] += m->ops->act_sumsq(x, n);
            if (l > 0)
                s->angular[l] += m->ops->angular_sum(prev, x, (int)rows.n, d);
            prev = x;
        }
        *seen += rows.n;
    }
    for (int l = 0; rc == 0 && l <= L; l++) {
        double n = (double)*seen * d, mean = sum[l] / n;
        s->out_var[l] = sq[l] / n - mean * mean;
        s->out_rms[l] = sqrt(sq[l] / n);
        if (l > 0)
            s->angular[l] /= (double)*seen;
    }
    rows_free(m->ops, pack);
    free(sum);
    free(sq);
    free(tok);
    free(tgt);
    return rc;
}

/* JSON has no inf or NaN: such a value is written as null. */
static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *stats_to_json(const struct layer_stats *s, int64_t tokens)
{
    json_t *layers = json_array();
    json_t *root = json_pack("{s:I, s:i, s:o}", "tokens", (json_int_t)tokens, "n_layers",
                             s->n_layers, "layers", layers);
    if (!root)
        return NULL;
    for (int l = 0; l <= s->n_layers; l++) {
        json_t *row = json_pack("{s:i, s:o, s:o}", "layer", l, "out_var", number(s->out_var[l]),
                                "out_rms", number(s->out_rms[l]));
        if (!row || (l > 0 && json_object_set_new(row, "angular", number(s->angular[l]))) ||
            json_array_append_new(layers, row)) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
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
