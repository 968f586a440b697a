/* A sweep's views, as the API sends them: its grid with every cell, the
 * cells' replicate groups and the paired comparisons between them
 * (views/replicates.c), its fine-tuning table (views/tasks.c), and a metric
 * averaged over each group's replicates, step by step and layer by layer
 * (views/stats.c). Made from the store's rows (store_sweep,
 * store_points_of); docs/api.md says what each field means. Each returns
 * the store's codes (enum store_rc). */
#ifndef COD_VIEWS_SWEEP_H
#define COD_VIEWS_SWEEP_H

#include <stdint.h>

#include <jansson.h>

#include "schema/store.h"

int views_sweep(struct store *st, int64_t id, json_t **out);
/* name averaged over each replicate group's finished, non-diverged
 * experiments: per (step, layer) the mean, sd and count; every every-th
 * step and the last. view: the sweep's view (views_sweep), or NULL to read it. */
int views_sweep_series(struct store *st, int64_t id, const json_t *view, const char *name,
                       long every, json_t **out);

#endif
