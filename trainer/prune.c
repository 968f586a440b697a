#include "trainer/prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "trainer/eval.h"

/* Each block removed in turn over the whole set: L + 1 full forwards. */
static void recompute(struct model *m, const struct loader *val, int64_t tokens,
                      unsigned char *skip, int32_t *tok, int32_t *tgt, struct prune_result *r)
{
    m->skip = skip;
    for (int l = 1; l <= r->n_layers; l++) {
        skip[l - 1] = 1;
        struct eval_result e = eval_run(m, val, tokens, tok, tgt);
        skip[l - 1] = 0;
        r->loss[l] = e.loss;
        r->ppl[l] = e.ppl;
    }
    m->skip = NULL;
}

/* Batch by batch: the full forward, then each block removed from the last
 * to the first, on the stream that entered it (model_trunk_without). */
static void reuse(struct model *m, const struct loader *val, int64_t tokens, int32_t *tok,
                  int32_t *tgt, struct prune_result *r)
{
    int T = m->cfg.seq_len, L = r->n_layers;
    int64_t seqs = loader_rows_for(val, tokens), count = 0;
    for (int64_t s = 0; s < seqs;) {
        int B = 0;
        for (; B < m->max_B && s < seqs; B++, s++)
            loader_chunk(val, s, tok + (size_t)B * T, tgt + (size_t)B * T);
        for (int i = 0; i < B * T; i++)
            count += tgt[i] >= 0;
        model_trunk(m, tok, B, T);
        r->loss[0] += model_trunk_loss(m, tgt);
        for (int l = L; l >= 1; l--) {
            model_trunk_without(m, l);
            r->loss[l] += model_trunk_loss(m, tgt);
        }
    }
    for (int l = 0; l <= L; l++) {
        r->loss[l] = count ? r->loss[l] / (double)count : NAN;
        r->ppl[l] = exp(r->loss[l]);
    }
    r->base_loss = r->loss[0];
    r->base_ppl = r->ppl[0];
    r->tokens = count;
}

int prune_run(struct model *m, const struct loader *val, int64_t tokens, enum prune_path path,
              struct prune_result *r, char *err, size_t errlen)
{
    int L = m->cfg.n_layers;
    size_t bt = (size_t)m->max_B * m->cfg.seq_len;
    r->n_layers = L;
    r->loss = calloc((size_t)L + 1, sizeof(double));
    r->ppl = calloc((size_t)L + 1, sizeof(double));
    unsigned char *skip = calloc((size_t)L, 1);
    int32_t *tok = malloc(bt * sizeof(int32_t)), *tgt = malloc(bt * sizeof(int32_t));
    int rc = 0;
    if (!r->loss || !r->ppl || !skip || !tok || !tgt) {
        snprintf(err, errlen, "out of memory for the pruning of %d layers", L);
        prune_free(r);
        rc = -1;
    } else if (path == PRUNE_REUSE) {
        reuse(m, val, tokens, tok, tgt, r);
    } else {
        struct eval_result e = eval_run(m, val, tokens, tok, tgt);
        r->base_loss = e.loss;
        r->base_ppl = e.ppl;
        r->tokens = e.tokens;
        recompute(m, val, tokens, skip, tok, tgt, r);
    }
    free(skip);
    free(tok);
    free(tgt);
    return rc;
}

void prune_free(struct prune_result *r)
{
    free(r->loss);
    free(r->ppl);
    r->loss = r->ppl = NULL;
}

/* JSON has no inf or NaN: a perplexity that overflowed is written as null. */
static json_t *number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *prune_to_json(const struct prune_result *r)
{
    json_t *layers = json_array();
    json_t *root = json_pack("{s:I, s:o, s:o, s:o}", "tokens", (json_int_t)r->tokens, "base_loss",
                             number(r->base_loss), "base_ppl", number(r->base_ppl), "layers",
                             layers);
    if (!root)
        return NULL;
    for (int l = 1; l <= r->n_layers; l++)
        if (json_array_append_new(layers,
                                  json_pack("{s:i, s:o, s:o, s:o, s:o}", "layer", l, "loss",
                                            number(r->loss[l]), "ppl", number(r->ppl[l]),
                                            "delta_loss", number(prune_delta_loss(r, l)),
                                            "delta_ppl", number(prune_delta_ppl(r, l))))) {
            json_decref(root);
            return NULL;
        }
    return root;
}
