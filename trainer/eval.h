/* Held-out evaluation: the exact token-weighted mean loss over the first
 * `tokens` targets of the validation shards, whole rows in file order (in
 * documents packing whole documents, each once, their pads not counted;
 * at most the whole set), and its perplexity exp(loss). */
#ifndef COD_EVAL_H
#define COD_EVAL_H

#include <stdint.h>

#include "trainer/dataloader.h"
#include "trainer/model.h"

struct eval_result {
    double loss, ppl;
    int64_t tokens;
};

/* tok/tgt: host scratch of m->max_B · seq_len entries each. */
struct eval_result eval_run(struct model *m, const struct loader *val, int64_t tokens,
                            int32_t *tok, int32_t *tgt);

/* The share of rank `rank` of `world` (every world-th row from the
 * rank-th): its summed loss and its count of targets, for the ranks to add. */
void eval_shard(struct model *m, const struct loader *val, int64_t tokens, int rank, int world,
                int32_t *tok, int32_t *tgt, double *sum, int64_t *count);

#endif
