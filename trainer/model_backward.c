/* The model's backward (model.h), the forward's (model_forward.c) step
 * for step in reverse. */
#include "trainer/model_internal.h"

#include <assert.h>

/* The core's backward from df (scaled by cs): the output projection's
 * gradients, then the core's own, ending with the gradient of the core's
 * input u, written to du = a·(…) + b·res. */
static void core_bwd(struct model *m, int l, int attn, struct sub_acts *a, const act *u,
                     const act *df, real cs, act *du, const act *res, real b, int N)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int d = c->dim, fp = m->ffn_pad, hd = m->hd, qd = c->n_heads * hd;
    if (attn) {
        act *datt = m->d_mid, *dqkv = m->d_wide;
        o->matmul_bwd(datt, DW(m, l, P_O), df, a->att, WA(m, l, P_O), N, qd, d, cs, NULL, 0);
        o->attention_bwd(dqkv, datt, a->att, a->state, a->qkv, m->rope_cos, m->rope_sin, m->B,
                         m->T, c->n_heads, hd);
        o->matmul_bwd(du, DW(m, l, P_Q), dqkv, u, WA(m, l, P_Q), N, d, 3 * qd, 1, res, b);
        return;
    }
    act *dh = m->d_mid, *dgu = m->d_wide;
    if (a->h) {
        /* the kept h: the down projection's gradients at once, its weight
         * gradient beside SwiGLU's backward where it runs beside */
        o->matmul_bwd(dh, DW(m, l, P_DOWN), df, a->h, WA(m, l, P_DOWN), N, fp, d, cs, NULL, 0);
        o->swiglu_bwd(dgu, NULL, dh, a->gu, N, fp);
    } else {
        /* the down projection's input gradient first: SwiGLU's backward
         * recomputes h (over dh), which the weight gradient then reads */
        o->matmul_bwd(dh, NULL, df, NULL, WA(m, l, P_DOWN), N, fp, d, cs, NULL, 0);
        o->swiglu_bwd(dgu, m->h_tmp, dh, a->gu, N, fp);
        o->matmul_bwd(NULL, DW(m, l, P_DOWN), df, m->h_tmp, NULL, N, fp, d, cs, NULL, 0);
    }
    o->matmul_bwd(du, DW(m, l, P_GATE), dgu, u, WA(m, l, P_GATE), N, d, 2 * fp, 1, res, b);
}

/* g: gradient of the sub-layer's output; dx receives the gradient of its
 * input (overwritten); g is left as it was. */
static void sublayer_bwd(struct model *m, int l, int attn, struct sub_acts *a, const act *g, act *dx,
                         int N)
{
    const struct ops *o = m->ops;
    const struct sub_cfg c = sub_cfg(m, l, attn);
    int d = m->cfg.dim;
    size_t Nd = (size_t)N * d;
    const real *gin = W(m, l, attn ? P_NORM_IN_ATTN : P_NORM_IN_FFN);
    real *dgin = DG(m, l, attn ? P_NORM_IN_ATTN : P_NORM_IN_FFN);

    /* dr = dr_s·dr_buf, the gradient of r */
    const act *dr_buf = g;
    real dr_s = c.post ? 1 : c.s_res;
    if (c.post) {
        o->rmsnorm_bwd(m->tmp[0], dgin, g, a->r, gin, a->rpost, N, d, c.s_in, c.s_out * c.s_res,
                       NULL, 0);
        dr_buf = m->tmp[0];
    } else if (c.generic && dr_s != 1) {
        o->copy_act(m->tmp[0], g, Nd);
        o->axpby(m->tmp[0], 0, m->tmp[0], dr_s, Nd);
        dr_buf = m->tmp[0];
        dr_s = 1;
    }
    /* df = cs·df_buf, the gradient of the output projection's result */
    const act *df_buf = dr_buf;
    real cs = c.a_br * dr_s;
    if (c.generic) {
        if (c.fb) {
            const real *lam = W(m, l, attn ? P_LAMBDA_ATTN : P_LAMBDA_FFN);
            o->chscale_bwd(m->tmp[1], DW(m, l, attn ? P_LAMBDA_ATTN : P_LAMBDA_FFN), df_buf,
                           c.sandwich ? a->fn : a->f, lam, N, d,
                           m->blk[l - 1].residual == RES_SKIPINIT ? 1 : d);
            df_buf = m->tmp[1];
        }
        if (c.sandwich) {
            int k = attn ? P_NORM_OUT_ATTN : P_NORM_OUT_FFN;
            o->rmsnorm_bwd(m->tmp[2], DG(m, l, k), df_buf, a->f, W(m, l, k), a->rout, N, d, 1, 1,
                           NULL, 0);
            df_buf = m->tmp[2];
        }
    }
    if (c.post) {
        /* the core saw x itself: its input gradient and the residual's in one matmul */
        core_bwd(m, l, attn, a, a->in, df_buf, cs, dx, dr_buf, c.alpha * dr_s, N);
        return;
    }
    core_bwd(m, l, attn, a, a->u, df_buf, cs, m->norm_tmp, NULL, 0, N);
    o->rmsnorm_bwd(dx, dgin, m->norm_tmp, a->in, gin, a->rin, N, d, c.s_in, c.s_out, dr_buf,
                   c.alpha * dr_s);
}

/* Where the weight gradients run beside (model_memory.c), sub-layer s of
 * the backward swaps in the other copy of the scratch: the weight
 * gradients of sub-layer s − 1 may still read theirs. */
static void swap_scratch(struct model *m)
{
    act *t;
#define SWAP(a, b) (t = (a), (a) = (b), (b) = t)
    SWAP(m->d_wide, m->alt.d_wide);
    SWAP(m->d_mid, m->alt.d_mid);
    for (int k = 0; k < 3; k++)
        SWAP(m->tmp[k], m->alt.tmp[k]);
#undef SWAP
    m->h_tmp = m->d_mid;
}

/* The gradients of block l's range are complete: told to grads_ready,
 * the weight gradients beside joined first. */
static void block_ready(struct model *m, size_t lo, size_t hi)
{
    if (!m->grads_ready)
        return;
    if (m->mem.beside)
        m->ops->wgrad_join(-1);
    m->grads_ready(m->grads_ctx, lo, hi);
}

void model_backward(struct model *m)
{
    assert(!m->skip && !m->cfg.forward_only);
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int N = m->B * m->T, d = c->dim, L = c->n_layers;
    /* The stream's gradient rotates through the buffers: sub-layer s reads
     * its output's gradient from D[s % nd] and writes its input's to
     * D[(s + 1) % nd]. Beside, three of them, and sub-layer s waits first
     * for the weight gradients of sub-layer s − 2, whose inputs it is the
     * first to overwrite (its stream gradient, its copy of the scratch);
     * the forward's lm_head weight gradient reads xf, which is norm_tmp,
     * which sub-layer 0 writes. */
    int beside = m->mem.beside, nd = beside ? 3 : 2, s = 0;
    long marks[2] = {-1, -1};
    act **D = m->dstream;
    if (beside)
        o->wgrad_join(-1);
    o->rmsnorm_bwd(D[0], DG(m, L + 1, P_FINAL_NORM), m->dxf, m->stream[L], W(m, L + 1, P_FINAL_NORM),
                   m->rstd_f, N, d, 1, 1, NULL, 0);
    block_ready(m, m->block_end[L - 1], m->n_params);
    for (int l = L; l >= 1; l--) {
        for (int k = 0; k < 2; k++, s++) { /* the MLP sub-layer, then the attention's */
            if (beside) {
                if (s >= 2)
                    o->wgrad_join(marks[s % 2]);
                swap_scratch(m);
            }
            sublayer_bwd(m, l, k, &m->acts[2 * (l - 1) + 1 - k], D[s % nd], D[(s + 1) % nd], N);
            if (beside)
                marks[s % 2] = o->wgrad_mark();
        }
        block_ready(m, m->block_first[l - 1], m->block_end[l - 1]);
    }
    o->embedding_bwd(DW(m, 0, P_EMBED), D[s % nd], m->tokens, m->emb_pos, m->emb_start,
                     m->emb_groups, d);
    if (beside)
        o->wgrad_join(-1);
    block_ready(m, 0, m->block_first[0]);
}
