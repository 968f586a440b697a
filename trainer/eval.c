#include "trainer/eval.h"

#include <math.h>

/* How many of rows 0, stride, 2 · stride, … hold at least `tokens`
 * targets; all of them when the set holds fewer. */
static int64_t sample_rows(const struct loader *set, int64_t tokens, int64_t stride)
{
    if (stride == 1)
        return loader_rows_for(set, tokens);
    int64_t n = 0, got = 0;
    for (int64_t k = 0; k < set->n_chunks && got < tokens; k += stride, n++)
        got += loader_targets(set, k);
    return n;
}

int64_t eval_sample_stride(const struct loader *set, int64_t tokens)
{
    int64_t total = 0;
    for (int64_t k = 0; k < set->n_chunks; k++)
        total += loader_targets(set, k);
    return tokens > 0 && total > tokens ? total / tokens : 1;
}

void eval_sample_shard(struct model *m, const struct loader *set, int64_t tokens, int64_t stride,
                       int rank, int world, int32_t *tok, int32_t *tgt, double *sum,
                       int64_t *count)
{
    int T = m->cfg.seq_len;
    int64_t seqs = sample_rows(set, tokens, stride);
    *sum = 0;
    *count = 0;
    for (int64_t s = rank; s < seqs;) {
        int B = 0;
        for (; B < m->max_B && s < seqs; B++, s += world)
            loader_chunk(set, s * stride, tok + (size_t)B * T, tgt + (size_t)B * T);
        for (int i = 0; i < B * T; i++)
            *count += tgt[i] >= 0;
        *sum += model_forward(m, tok, tgt, B, 0);
    }
}

void eval_shard(struct model *m, const struct loader *val, int64_t tokens, int rank, int world,
                int32_t *tok, int32_t *tgt, double *sum, int64_t *count)
{
    eval_sample_shard(m, val, tokens, 1, rank, world, tok, tgt, sum, count);
}

struct eval_result eval_run(struct model *m, const struct loader *val, int64_t tokens,
                            int32_t *tok, int32_t *tgt)
{
    double sum;
    int64_t count;
    eval_shard(m, val, tokens, 0, 1, tok, tgt, &sum, &count);
    struct eval_result r = {count ? sum / (double)count : NAN, 0, count};
    r.ppl = exp(r.loss);
    return r;
}
