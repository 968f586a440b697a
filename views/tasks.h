/* A sweep's fine-tuning table: its later stages (a fine-tuning after each
 * pretraining, scored at its end on evaluation tasks: task/NAME/acc and
 * task/NAME/acc_norm) gathered as the paper's table: a row for each
 * variant (the cells' params but the seed), a column for each task, and
 * their average, each as mean ± sd over the seeds that finished. Pure: the
 * cells in, JSON out (no SQL); views/sweep.c shapes the cells, docs/api.md
 * says what each field means. */
#ifndef COD_VIEWS_TASKS_H
#define COD_VIEWS_TASKS_H

#include <jansson.h>

/* cells: the sweep's later stages, each {"experiment", "state", "stage",
 * "params", "tasks": {NAME: {"acc", "acc_norm"}}}. *out: a table per stage
 * that has scores (a new reference). -1 when out of memory. */
int tasks_table(const json_t *cells, json_t **out);

#endif
