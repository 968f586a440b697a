#include "trainer/eval.h"

#include <math.h>

struct eval_result eval_run(struct model *m, const struct loader *val, int64_t tokens,
                            int32_t *tok, int32_t *tgt)
{
    int T = m->cfg.seq_len;
    int64_t seqs = (tokens + T - 1) / T;
    if (seqs > val->n_chunks)
        seqs = val->n_chunks;
    double sum = 0;
    int64_t count = 0;
    for (int64_t s = 0; s < seqs; s += m->max_B) {
        int B = (int)(seqs - s < m->max_B ? seqs - s : m->max_B);
        for (int b = 0; b < B; b++)
            loader_chunk(val, s + b, tok + (size_t)b * T, tgt + (size_t)b * T);
        for (int i = 0; i < B * T; i++)
            count += tgt[i] >= 0;
        sum += model_forward(m, tok, tgt, B, 0);
    }
    struct eval_result r = {count ? sum / (double)count : NAN, 0, count};
    r.ppl = exp(r.loss);
    return r;
}
