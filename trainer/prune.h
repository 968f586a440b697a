/* Layer pruning, the paper's performance drop ΔP(ℓ) (docs/metrics.md): the
 * held-out loss and perplexity with block ℓ removed, for each ℓ in turn, no
 * fine-tuning. Unlike the paper's code, which reloads through a stock
 * Hugging Face LLaMA, every remaining block keeps its variant exactly as
 * trained, its 1/√ℓ scale and Mix-LN placement included (model.skip). */
#ifndef COD_PRUNE_H
#define COD_PRUNE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "trainer/dataloader.h"
#include "trainer/model.h"

struct prune_result {
    int n_layers;
    int64_t tokens;          /* targets evaluated per model */
    double base_loss, base_ppl;
    double *loss, *ppl;      /* [L+1], index ℓ = the removed block; [0] unused */
};

/* How the models without a block are computed: PRUNE_REUSE takes each
 * from the stream that entered the removed block in the full model's
 * forward (model_trunk_without: about half the work); PRUNE_RECOMPUTE
 * runs each whole, the removed block the identity (model.skip). The two
 * give the same numbers: the benchmark and the tests compare them. */
enum prune_path { PRUNE_REUSE, PRUNE_RECOMPUTE };

/* Evaluates the whole model, then each block removed, over the first
 * `tokens` targets of val (eval_run's rows). 0, or -1 with err (out of
 * memory). */
int prune_run(struct model *m, const struct loader *val, int64_t tokens, enum prune_path path,
              struct prune_result *r, char *err, size_t errlen);
void prune_free(struct prune_result *r);

/* prune/delta_loss and prune/delta_ppl of block ℓ: positive when removing it hurts. */
static inline double prune_delta_loss(const struct prune_result *r, int l)
{
    return r->loss[l] - r->base_loss;
}
static inline double prune_delta_ppl(const struct prune_result *r, int l)
{
    return r->ppl[l] - r->base_ppl;
}

/* {"tokens", "base_loss", "base_ppl", "layers": [{"layer", "loss", "ppl",
 * "delta_loss", "delta_ppl"}, …]}; NULL only on out-of-memory. */
json_t *prune_to_json(const struct prune_result *r);

#endif
