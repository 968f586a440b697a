/* Per-layer statistics (docs/metrics.md): out_var, out_rms and angular of each
 * block's output on a fixed held-out batch; grad_norm and update_ratio of
 * each block's parameters. Values are indexed by layer: 0 is the embedding
 * output (out_var, out_rms), 1..L the blocks. */
#ifndef COD_STATS_H
#define COD_STATS_H

#include <stdint.h>

#include <jansson.h>

#include "trainer/dataloader.h"
#include "trainer/model.h"
#include "trainer/rows.h"

struct layer_stats {
    int n_layers;
    double *out_var, *out_rms, *angular;   /* [L+1]; angular[0] unused */
    double *grad_norm, *update_ratio;      /* [L+1]; index 0 unused */
};

int stats_alloc(struct layer_stats *s, int n_layers);
void stats_free(struct layer_stats *s);
/* From the activations of the last forward (on the held-out batch), over
 * its positions with a target (rows.h). */
void stats_activations(const struct model *m, const struct rows *rows, struct layer_stats *s);
/* The same three over the first ceil(tokens / seq_len) held-out
 * sequences of val (cod-analyze stats: the paper's Figure 1 for any
 * model): sums over every batch, so out_var is the variance of every
 * element of the layer's output over all those tokens. *seen gets the
 * tokens. 0, or -1 with err (no held-out sequence). */
int stats_heldout(struct model *m, const struct loader *val, int64_t tokens, struct layer_stats *s,
                  int64_t *seen, char *err, size_t errlen);
/* {"tokens", "n_layers", "layers": [{"layer", "out_var", "out_rms", "angular"}, …]}
 * from layer 0 (the embedding output, no angular) to L; NULL only on
 * out-of-memory. */
json_t *stats_to_json(const struct layer_stats *s, int64_t tokens);
/* From m->grads after a backward, times the clip factor the update applied. */
void stats_grad_norms(const struct model *m, struct layer_stats *s, double clip_factor);
/* ‖w_after − w_before‖ / ‖w_after‖ per block, before being the weights
 * before the update. */
void stats_update_ratios(const struct model *m, const real *before, struct layer_stats *s);

#endif
