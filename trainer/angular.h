/* The angular distance matrix of docs/metrics.md (Gromov et al.'s measure of
 * how much a span of blocks changes the residual stream):
 *   d(ℓ, n) = mean over tokens of arccos(cos(x_ℓ, x_{ℓ+n}))/π,
 * x_ℓ the input of block ℓ (model.stream[ℓ-1]), so d(ℓ, n) spans blocks
 * ℓ … ℓ+n−1, for ℓ = 1…L and n = 1…L−ℓ+1; d(ℓ, 1) is layer/angular.
 * Averaged over every token of a held-out sample, not only the last one as
 * the paper's code does. The row-scaled form maps each row's minimum to 0
 * and maximum to 1, as the paper's figure plots it. */
#ifndef COD_ANGULAR_H
#define COD_ANGULAR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "trainer/dataloader.h"
#include "trainer/model.h"

struct angular_result {
    int n_layers;
    int64_t tokens;          /* tokens averaged over */
    double *d;               /* [L·L]: d(ℓ, n) at (ℓ−1)·L + n−1; NAN where ℓ+n−1 > L */
};

/* Runs the first ceil(tokens / seq_len) held-out sequences of val through
 * the model. 0, or -1 with err (out of memory, or no validation sequence). */
int angular_run(struct model *m, const struct loader *val, int64_t tokens,
                struct angular_result *r, char *err, size_t errlen);
void angular_free(struct angular_result *r);

static inline double angular_at(const struct angular_result *r, int l, int n)
{
    return r->d[(size_t)(l - 1) * r->n_layers + (n - 1)];
}
/* Row ℓ scaled to [0, 1]; a row whose values are all equal (the last, of
 * one value) scales to 0. */
double angular_scaled(const struct angular_result *r, int l, int n);

/* {"tokens", "n_layers", "distance": [[d(1,1), …], [d(2,1), …], …],
 * "scaled": same shape}: row ℓ holds n = 1…L−ℓ+1. NULL only on out-of-memory. */
json_t *angular_to_json(const struct angular_result *r);

#endif
