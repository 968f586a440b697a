/* A task's prompts as lm-evaluation-harness v0.4.12 renders them
 * (lm_eval/api/task.py's fewshot_context and construct_requests): the
 * description (MMLU's), the few-shot examples, each its question, the
 * target delimiter, its answer and "\n\n", then the item's question; each
 * choice's continuation is the delimiter and the choice. WinoGrande's
 * choices are contexts instead (its sentence up to the blank, filled),
 * and their continuation the rest of the sentence. */
#ifndef COD_EVAL_PROMPT_H
#define COD_EVAL_PROMPT_H

#include <stddef.h>

#include "eval/layout.h"
#include "eval/pyrandom.h"
#include "eval/task.h"

/* Where a task's examples come from. MMLU takes the first k of the pool
 * of its item's subject (the harness's first_n sampler over the dev
 * split); the others random.Random(seed).sample(pool, k), one draw an
 * item in file order, and where the pool is the task's own file k + 1
 * with the item itself dropped (the harness's ContextSampler). */
struct eval_shots {
    int k;
    const struct eval_doc *pool;
    int n_pool;
    int own;
    struct py_random rng;
};

/* The item's contexts and continuations. 0, or -1 with why (too few
 * examples of its subject, out of memory). */
int eval_render(enum eval_layout l, const struct eval_doc *d, struct eval_shots *s,
                struct eval_item *it, char *why, size_t whylen);
void eval_item_free(struct eval_item *it);

#endif
