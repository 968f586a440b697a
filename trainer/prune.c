#include "trainer/prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "trainer/eval.h"

int prune_run(struct model *m, const struct loader *val, int64_t tokens, struct prune_result *r,
              char *err, size_t errlen)
{
    int L = m->cfg.n_layers;
    size_t bt = (size_t)m->max_B * m->cfg.seq_len;
    r->n_layers = L;
    r->loss = calloc((size_t)L + 1, sizeof(double));
    r->ppl = calloc((size_t)L + 1, sizeof(double));
    unsigned char *skip = calloc((size_t)L, 1);
    int32_t *tok = malloc(bt * sizeof(int32_t)), *tgt = malloc(bt * sizeof(int32_t));
    if (!r->loss || !r->ppl || !skip || !tok || !tgt) {
        snprintf(err, errlen, "out of memory for the pruning of %d layers", L);
        free(skip);
        free(tok);
        free(tgt);
        prune_free(r);
        return -1;
    }
    struct eval_result e = eval_run(m, val, tokens, tok, tgt);
    r->base_loss = e.loss;
    r->base_ppl = e.ppl;
    r->tokens = e.tokens;
    m->skip = skip;
    for (int l = 1; l <= L; l++) {
        skip[l - 1] = 1;
        e = eval_run(m, val, tokens, tok, tgt);
        skip[l - 1] = 0;
        r->loss[l] = e.loss;
        r->ppl[l] = e.ppl;
    }
    m->skip = NULL;
    free(skip);
    free(tok);
    free(tgt);
    return 0;
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
