#include "trainer/eval.h"

#include <math.h>

void eval_shard(struct model *m, const struct loader *val, int64_t tokens, int rank, int world,
                int32_t *tok, int32_t *tgt, double *sum, int64_t *count)
{
    int T = m->cfg.seq_len;
    int64_t seqs = loader_rows_for(val, tokens);
    *sum = 0;
    *count = 0;
    for (int64_t s = rank; s < seqs;) {
        int B = 0;
        for (; B < m->max_B && s < seqs; B++, s += world)
            loader_chunk(val, s, tok + (size_t)B * T, tgt + (size_t)B * T);
        for (int i = 0; i < B * T; i++)
            *count += tgt[i] >= 0;
        *sum += model_forward(m, tok, tgt, B, 0);
    }
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
