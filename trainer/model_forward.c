/* The model's forward (model.h): a sub-layer of every variant, the trunk
 * of blocks, the lm_head and its loss, the training batch's upload. */
#include "trainer/model_internal.h"

#include <string.h>

static act *rows(const struct model *m, act *p, size_t n0, size_t width)
{
    return act_at(m->ops, p, n0 * width);
}

/* The core of a sub-layer up to the input of its output projection, which
 * it returns (attention's output, or SwiGLU's into h_tmp). */
static const act *core_fwd(struct model *m, int l, int attn, struct sub_acts *a, const act *u,
                           int N)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int d = c->dim, fp = m->ffn_pad, hd = m->hd, nh = c->n_heads;
    if (attn) {
        /* grouped-query attention: the projection's fewer K and V heads
         * repeated for the query heads, as transformers' repeat_kv */
        act *proj = a->qkvp ? a->qkvp : a->qkv;
        int width = (nh + 2 * m->n_kv) * hd;
        o->matmul_fwd(proj, u, WA(m, l, P_Q), N, d, width, 1, NULL, 0);
        if (c->qkv_bias)
            o->bias_add(proj, W(m, l, P_Q_BIAS), N, width);
        if (a->qkvp)
            o->repeat_kv(a->qkv, a->qkvp, N, nh, m->n_kv, hd);
        o->attention_fwd(a->att, a->state, a->qkv, m->rope_cos, m->rope_sin, m->B, m->T, nh, hd);
        return a->att;
    }
    o->matmul_fwd(a->gu, u, WA(m, l, P_GATE), N, d, 2 * fp, 1, NULL, 0);
    act *h = a->h ? a->h : m->h_tmp;
    o->swiglu_fwd(h, a->gu, N, fp);
    return h;
}

static void sublayer_fwd(struct model *m, int l, int attn, struct sub_acts *a, const act *x, int N)
{
    const struct ops *o = m->ops;
    const struct sub_cfg c = sub_cfg(m, l, attn);
    int d = m->cfg.dim, in_dim = attn ? m->cfg.n_heads * m->hd : m->ffn_pad;
    size_t Nd = (size_t)N * d;
    real eps = (real)m->cfg.norm_eps;
    const real *gin = W(m, l, attn ? P_NORM_IN_ATTN : P_NORM_IN_FFN);
    const act *wout = WA(m, l, attn ? P_O : P_DOWN);
    a->in = x;
    const act *u = x;
    if (!c.post) {
        o->rmsnorm_fwd(a->u, a->rin, x, gin, N, d, c.s_in, c.s_out, eps, NULL, 0);
        u = a->u;
    }
    const act *core = core_fwd(m, l, attn, a, u, N);
    /* the branch scales; with Pre-LN, after_residual scales the sum itself */
    real s_sum = c.post ? 1 : c.s_res;
    if (!c.generic) {
        o->matmul_fwd(a->r, core, wout, N, in_dim, d, s_sum * c.a_br, x, s_sum * c.alpha);
    } else {
        o->matmul_fwd(a->f, core, wout, N, in_dim, d, c.a_br, NULL, 0);
        const act *br = a->f;
        const real *gout = c.sandwich ? W(m, l, attn ? P_NORM_OUT_ATTN : P_NORM_OUT_FFN) : NULL;
        if (c.sandwich && !c.fb) {
            o->rmsnorm_fwd(a->r, a->rout, a->f, gout, N, d, 1, 1, eps, x, c.alpha);
        } else {
            if (c.sandwich) {
                o->rmsnorm_fwd(a->fn, a->rout, a->f, gout, N, d, 1, 1, eps, NULL, 0);
                br = a->fn;
            }
            const real *lam = W(m, l, attn ? P_LAMBDA_ATTN : P_LAMBDA_FFN);
            o->chscale_fwd(a->r, br, lam, N, d, m->blk[l - 1].residual == RES_SKIPINIT ? 1 : d);
            o->axpby(a->r, c.alpha, x, 1, Nd);
        }
        if (s_sum != 1)
            o->axpby(a->r, 0, a->r, s_sum, Nd);
    }
    if (c.post)
        o->rmsnorm_fwd(a->out, a->rpost, a->r, gin, N, d, c.s_in, c.s_out * c.s_res, eps, NULL,
                       0);
}

/* The rows of each token, in row order, for the deterministic embedding
 * backward: a counting sort over the vocabulary. The groups are padded
 * with empty ones to as many as N rows can have, so that embedding_bwd
 * takes the same arguments for every batch of N rows (a recorded step
 * replays them). */
static void group_tokens(struct model *m, const int32_t *tokens, int N)
{
    int V = m->cfg.vocab;
    int32_t *count = m->h_count;
    memset(count, 0, ((size_t)V + 1) * sizeof(int32_t));
    for (int n = 0; n < N; n++)
        count[tokens[n] + 1]++;
    int groups = 0;
    for (int v = 0; v < V; v++) {
        if (count[v + 1])
            m->h_start[groups++] = count[v];
        count[v + 1] += count[v];
    }
    int most = N < V ? N : V; /* the last group's end, then the empty ones */
    for (int k = groups; k <= most; k++)
        m->h_start[k] = N;
    groups = most;
    for (int n = 0; n < N; n++)
        m->h_pos[count[tokens[n]]++] = n;
    m->emb_groups = groups;
    m->ops->upload_i32(m->emb_pos, m->h_pos, (size_t)N);
    m->ops->upload_i32(m->emb_start, m->h_start, (size_t)groups + 1);
}

void model_load_batch(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                       real grad_scale)
{
    int N = B * m->cfg.seq_len;
    m->B = B;
    m->T = m->cfg.seq_len;
    m->ops->upload_i32(m->tokens, tokens, (size_t)N);
    m->ops->upload_i32(m->targets, targets, (size_t)N);
    if (grad_scale != 0)
        group_tokens(m, tokens, N);
}

/* Blocks from…L on the stream entering block `from` (in), then the final
 * norm into xf. */
void model_trunk_ops(struct model *m, int from, const act *in)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int N = m->B * m->T, d = c->dim, L = c->n_layers;
    const act *x = in;
    for (int l = from; l <= L; l++) {
        struct sub_acts *aa = &m->acts[2 * (l - 1)], *af = aa + 1;
        if (m->skip && m->skip[l - 1]) {
            o->copy_act(m->stream[l], x, (size_t)N * d);
        } else {
            sublayer_fwd(m, l, 1, aa, x, N);
            sublayer_fwd(m, l, 0, af, aa->out, N);
        }
        x = m->stream[l];
    }
    o->rmsnorm_fwd(m->xf, m->rstd_f, x, W(m, L + 1, P_FINAL_NORM), N, d, 1, 1,
                   (real)c->norm_eps, NULL, 0);
}

/* The lm_head on xf, up to the per-row losses (and the lm_head's
 * gradient); nothing comes back to the host unless logits_out asks for
 * the logits. */
void model_head_ops(struct model *m, real grad_scale, real *logits_out)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int N = m->B * m->T, d = c->dim, L = c->n_layers, V = c->vocab;
    const act *head = WA(m, L + 1, P_HEAD);
    for (int n0 = 0; n0 < N; n0 += m->logit_rows) {
        int rows_n = N - n0 < m->logit_rows ? N - n0 : m->logit_rows;
        /* the chunk before's lm_head weight gradient, beside, still reads the logits */
        if (m->mem.beside && n0 > 0 && grad_scale != 0)
            o->wgrad_join(-1);
        const act *x = rows(m, m->xf, (size_t)n0, (size_t)d);
        o->matmul_fwd(m->logits, x, head, rows_n, d, V, 1, NULL, 0);
        if (logits_out)
            o->download_act(logits_out + (size_t)n0 * V, m->logits, (size_t)rows_n * V);
        o->cross_entropy(m->losses + n0, m->logits, m->targets + n0, rows_n, V, grad_scale);
        if (grad_scale != 0)
            o->matmul_bwd(rows(m, m->dxf, (size_t)n0, (size_t)d), DW(m, L + 1, P_HEAD), m->logits,
                          x, head, rows_n, d, V, 1, NULL, 0);
    }
}

/* The forward's ops on the loaded batch. */
void model_forward_ops(struct model *m, real grad_scale, real *logits_out)
{
    m->ops->embedding_fwd(m->stream[0], m->tokens, WA(m, 0, P_EMBED), m->B * m->T, m->cfg.dim);
    model_trunk_ops(m, 1, m->stream[0]);
    model_head_ops(m, grad_scale, logits_out);
}

/* logits_out != NULL: the logits of every row also go there (host) */
static double forward(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                      real grad_scale, real *logits_out)
{
    model_load_batch(m, tokens, targets, B, grad_scale);
    model_forward_ops(m, grad_scale, logits_out);
    return m->ops->sum(m->losses, (size_t)B * m->cfg.seq_len);
}

double model_forward(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                     real grad_scale)
{
    return forward(m, tokens, targets, B, grad_scale, NULL);
}

void model_logits(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                  real *logits)
{
    forward(m, tokens, targets, B, 0, logits);
}
