/* What an evaluation writes: eval.json (each task's acc, acc_norm, their
 * standard errors, n, shots, layout, the harness version followed), a
 * line per item in samples_TASK.jsonl (its rendered context, the
 * continuations, each one's log-likelihood and token count, the
 * predictions and the gold: every score can be audited), the tables on
 * stdout, and the accuracy ΔP of each removed block. */
#ifndef COD_EVAL_OUTPUT_H
#define COD_EVAL_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "eval/task.h"

/* {"harness", "tasks": {NAME: {...}}} of the whole model; NULL when out of memory. */
json_t *eval_results_json(const struct eval_task *tasks, int n);
/* DIR/samples_NAME.jsonl, written whole. 0, or -1 with err. */
int eval_write_samples(const struct eval_task *t, const char *dir, char *err, size_t errlen);
void eval_print_table(FILE *f, const struct eval_task *tasks, int n);

/* ΔP(ℓ) in accuracy: acc without block ℓ minus the whole model's. */
double eval_delta_acc(const struct eval_task *t, int l);
/* {NAME: {"acc", "acc_norm", "layers": [{"layer", "acc", "acc_norm",
 * "delta_acc", "delta_acc_norm"}, …]}} of a pruned evaluation; NULL when
 * out of memory. */
json_t *eval_prune_json(const struct eval_task *tasks, int n);
void eval_print_prune(FILE *f, const struct eval_task *tasks, int n);

#endif
