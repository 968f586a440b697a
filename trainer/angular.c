#include "trainer/angular.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "trainer/rows.h"

int angular_run(struct model *m, const struct loader *val, int64_t tokens,
                struct angular_result *r, char *err, size_t errlen)
{
    int L = m->cfg.n_layers, T = m->cfg.seq_len, d = m->cfg.dim;
    int64_t seqs = loader_rows_for(val, tokens);
    if (seqs < 1) {
        snprintf(err, errlen, "no held-out sequence of %d tokens for the angular distance", T);
        return -1;
    }
    size_t bt = (size_t)m->max_B * T;
    r->n_layers = L;
    r->tokens = 0;
    r->d = calloc((size_t)L * L, sizeof(double));
    int32_t *tok = malloc(bt * sizeof(int32_t)), *tgt = malloc(bt * sizeof(int32_t));
    act *pack[2] = {NULL, NULL};
    if (!r->d || !tok || !tgt || (val->partial && rows_alloc(m->ops, pack, bt * d))) {
        snprintf(err, errlen, "out of memory for the angular distances of %d layers", L);
        free(tok);
        free(tgt);
        angular_free(r);
        return -1;
    }
    for (int64_t s = 0; s < seqs; s += m->max_B) {
        int B = (int)(seqs - s < m->max_B ? seqs - s : m->max_B);
        loader_rows(val, s, B, tok, tgt);
        model_forward(m, tok, tgt, B, 0);
        struct rows rows;
        rows_of(&rows, tgt, B, T, val->partial ? pack : NULL);
        for (int l = 1; l <= L; l++) {
            const act *x = rows_pack(m->ops, &rows, m->stream[l - 1], d, 0);
            for (int n = 1; l + n - 1 <= L; n++)
                r->d[(size_t)(l - 1) * L + n - 1] += m->ops->angular_sum(
                    x, rows_pack(m->ops, &rows, m->stream[l - 1 + n], d, 1), (int)rows.n, d);
        }
        r->tokens += rows.n;
    }
    rows_free(m->ops, pack);
    for (int l = 1; l <= L; l++)
        for (int n = 1; n <= L; n++)
            r->d[(size_t)(l - 1) * L + n - 1] =
                l + n - 1 <= L ? r->d[(size_t)(l - 1) * L + n - 1] / (double)r->tokens : NAN;
    free(tok);
    free(tgt);
    return 0;
}

void angular_free(struct angular_result *r)
{
    free(r->d);
    r->d = NULL;
}

double angular_scaled(const struct angular_result *r, int l, int n)
{
    int L = r->n_layers;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 1; l + k - 1 <= L; k++) {
        lo = fmin(lo, angular_at(r, l, k));
        hi = fmax(hi, angular_at(r, l, k));
    }
    return hi > lo ? (angular_at(r, l, n) - lo) / (hi - lo) : 0;
}

/* A zero vector in the stream has no angle: its NaN is written as null. */
static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *angular_to_json(const struct angular_result *r)
{
    int L = r->n_layers;
    json_t *dist = json_array(), *scaled = json_array();
    json_t *root = json_pack("{s:I, s:i, s:o, s:o}", "tokens", (json_int_t)r->tokens, "n_layers",
                             L, "distance", dist, "scaled", scaled);
    if (!root)
        return NULL;
    for (int l = 1; l <= L; l++) {
        json_t *row = json_array(), *srow = json_array();
        int bad = json_array_append_new(dist, row) | json_array_append_new(scaled, srow);
        for (int n = 1; !bad && l + n - 1 <= L; n++)
            bad = json_array_append_new(row, number(angular_at(r, l, n))) |
                  json_array_append_new(srow, number(angular_scaled(r, l, n)));
        if (bad) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
