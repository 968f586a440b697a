/* The tasks' items on a model: each choice's continuation log-likelihood,
 * the sum of its tokens' log-probabilities (model_score), for the whole
 * model and, for the accuracy ΔP, for the model without each block in
 * turn (model_trunk_without: the prefix before the removed block reused).
 *
 * An input is the context's tokens and the continuation's but its last,
 * the last max_len of them (lm_eval's HFLM: (context + continuation)
 * [-(max_length + 1):][:-1]); its last len(continuation) positions are
 * scored. Choices whose inputs are equal share one row: a one-token
 * continuation (MMLU's " A"…" D") is one row an item, its choices scored
 * at its last position. The rows of every task go longest first into
 * batches of B rows of T tokens, T the longest row's length rounded up
 * to a multiple of 8, 32 or 64 (a batch shape that recurs), B as many as
 * the model's batch of max_B·seq_len tokens holds; a row is padded at its
 * end, which its earlier positions never see. */
#ifndef COD_EVAL_SCORE_H
#define COD_EVAL_SCORE_H

#include <stddef.h>

#include "eval/task.h"
#include "trainer/model.h"

struct eval_speed {
    long long rows, tokens, padded, pairs, batches;
    double seconds;
};

/* Fills every task's ll: configuration 0 the whole model, and with prune
 * ℓ = 1…L the model without block ℓ. 0, or -1 with err (out of memory, a
 * device fault). sp (may be NULL) gets what it ran and how long it took. */
int eval_score(struct model *m, struct eval_task *tasks, int n_tasks, int prune,
               struct eval_speed *sp, char *err, size_t errlen);

#endif
