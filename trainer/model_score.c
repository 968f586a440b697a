/* The evaluation's entry points (model.h): the trunk on rows of any
 * length, the model without one block, and the log-probabilities of a few
 * tokens, over the forward's steps (model_forward.c). */
#include "trainer/model_internal.h"

#include <assert.h>

void model_trunk(struct model *m, const int32_t *tokens, int B, int T)
{
    assert(T >= 1 && T <= m->cfg.seq_len && (size_t)B * T <= (size_t)m->max_B * m->cfg.seq_len);
    m->B = B;
    m->T = T;
    m->ops->upload_i32(m->tokens, tokens, (size_t)B * T);
    m->ops->embedding_fwd(m->stream[0], m->tokens, WA(m, 0, P_EMBED), B * T, m->cfg.dim);
    model_trunk_ops(m, 1, m->stream[0]);
}

void model_trunk_without(struct model *m, int l)
{
    assert(l >= 1 && l <= m->cfg.n_layers && !m->skip);
    model_trunk_ops(m, l + 1, m->stream[l - 1]);
}

double model_trunk_loss(struct model *m, const int32_t *targets)
{
    size_t N = (size_t)m->B * m->T;
    m->ops->upload_i32(m->targets, targets, N);
    model_head_ops(m, 0, NULL);
    return m->ops->sum(m->losses, N);
}

/* The rows asked for are gathered from xf by the embedding's lookup (a
 * table of rows indexed by int32) into d_mid, SwiGLU's scratch, dead once
 * the trunk has run; their indices and targets go where the batch's tokens
 * and targets were, which the trunk has read. */
void model_score(struct model *m, const int32_t *pos, const int32_t *target, int n,
                 real *logprob)
{
    const struct ops *o = m->ops;
    int d = m->cfg.dim, V = m->cfg.vocab, L = m->cfg.n_layers;
    const act *head = WA(m, L + 1, P_HEAD);
    for (int n0 = 0; n0 < n; n0 += m->logit_rows) {
        int rows_n = n - n0 < m->logit_rows ? n - n0 : m->logit_rows;
        o->upload_i32(m->tokens, pos + n0, (size_t)rows_n);
        o->upload_i32(m->targets, target + n0, (size_t)rows_n);
        o->embedding_fwd(m->d_mid, m->tokens, m->xf, rows_n, d);
        o->matmul_fwd(m->logits, m->d_mid, head, rows_n, d, V, 1, NULL, 0);
        o->cross_entropy(m->losses, m->logits, m->targets, rows_n, V, 0);
        o->download(logprob + n0, m->losses, (size_t)rows_n);
        for (int i = n0; i < n0 + rows_n; i++)
            logprob[i] = -logprob[i];
    }
}
