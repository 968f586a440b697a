/* A sweep's replicates: cells that differ only in the seed (the grid key
 * train.seed) form one group, summarised as the sweep view sends it: how
 * many finished, how many diverged (never averaged in), the final eval
 * perplexity and loss as mean ± standard deviation, and for every two
 * groups that differ in one grid key a paired t-test of their perplexity
 * at equal seeds. Pure: the cells in, JSON out (no SQL); views/sweep.c
 * shapes the cells the store read. docs/api.md says what each field means. */
#ifndef COD_VIEWS_REPLICATES_H
#define COD_VIEWS_REPLICATES_H

#include <jansson.h>

/* The grid key that names replicates. */
#define REPLICATE_KEY "train.seed"

/* cells: the sweep's cells in grid order, each {"experiment", "state",
 * "reason", "params", "eval/ppl", "eval/loss", ...}. Adds to each cell
 * "group" (its group's index), "seed" and "diverged"; sets *groups and
 * *comparisons (new references). -1 when out of memory. */
int replicates_group(json_t *cells, json_t **groups, json_t **comparisons);

/* {n, mean, sd, min, max} of x (null below one value; a non-finite number null). */
json_t *replicates_summary(const double *x, int n);

/* Diverged: the trainer stopped it for a non-finite loss ("diverged at step
 * N"), or it ended with a final perplexity that is not a finite number. */
int replicates_diverged(const json_t *cell);

#endif
