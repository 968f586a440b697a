/* Held-out evaluation: the exact token-weighted mean loss over the first
 * `tokens` targets of the validation shards, whole rows in file order (in
 * documents packing whole documents, each once, their pads not counted;
 * at most the whole set), and its perplexity exp(loss). The same over a
 * fixed sample of the training rows (eval.train_tokens): every stride-th
 * row in file order, so that the sample spans the whole set, whatever
 * order its sources were written in, and the gap between the two losses
 * measures what the model memorised. */
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

/* The same over rows 0, stride, 2 · stride, … in file order. */
void eval_sample_shard(struct model *m, const struct loader *set, int64_t tokens, int64_t stride,
                       int rank, int world, int32_t *tok, int32_t *tgt, double *sum,
                       int64_t *count);

/* The stride that spreads `tokens` targets over the whole set: its
 * targets over `tokens`, at least 1. */
int64_t eval_sample_stride(const struct loader *set, int64_t tokens);

#endif
