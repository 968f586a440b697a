/* What the files of the model (model.h) share and nobody else reads: what
 * a sub-layer keeps for its backward, a sub-layer's recipe in the ops'
 * terms, the parameters' addresses, and the forward's steps that the
 * scoring, the backward and the recorded micro-batch reuse. The model is
 * split along its seams: model.c the layout and allocation, model_init.c
 * the initial weights, model_forward.c the forward, model_score.c the
 * evaluation's entry points, model_backward.c the backward (it mirrors the
 * forward step for step: read the two side by side; the CUDA backend was
 * verified against exactly this code), model_step.c a training
 * micro-batch and its recording. */
#ifndef COD_MODEL_INTERNAL_H
#define COD_MODEL_INTERNAL_H

#include "trainer/model.h"

/* What one sub-layer keeps for its backward. The SwiGLU output is kept
 * only where the memory plan affords it (model_memory.c): else its
 * backward recomputes it into the model's h_tmp, on the pass it makes
 * anyway. The normed input is kept: recomputing it cost a pass over
 * [N,d] a sub-layer (0.5 ms of llama-130m's 33 ms step on an H100), for
 * memory the GPU had to spare (2L·N·d activations, 0.6 GiB there). */
struct sub_acts {
    const act *in;      /* the residual stream entering the sub-layer */
    act *u;             /* its norm, the core's input (not Post-LN) */
    real *rin;          /* 1/rms of the input norm (not Post-LN) */
    act *qkv, *att;     /* attention: q, k (before their rotation) and v; its output */
    act *qkvp;          /* grouped-query attention: the projection before repeat_kv */
    real *state;
    act *gu;            /* MLP: gate | up */
    act *h;             /* MLP: SwiGLU's output, where kept (model_memory.c) */
    act *f;             /* the output projection's result, when a step sits between it and
                           the residual add (sandwich, LayerScale, SkipInit, after_sublayer) */
    act *fn;            /* sandwich output norm, kept when a channel scale follows it */
    real *rout;
    act *r;             /* α·x + branch: the stream out (Pre-LN) or the post norm's input */
    act *out;           /* the sub-layer's output: r, or the post norm of r */
    real *rpost;
};

/* A sub-layer's recipe in the ops' terms (variant.h has its meaning). */
struct sub_cfg {
    int attn, post, sandwich, fb;
    real s_in, s_out;   /* the input (Pre-LN) or output (Post-LN) norm's scales */
    real a_br;          /* after_sublayer: the branch scale */
    real s_res;         /* after_residual: the output scale */
    real alpha;         /* the residual stream's multiplier */
    int generic;        /* the output projection cannot add the residual itself */
};

static inline struct sub_cfg sub_cfg(const struct model *m, int l, int attn)
{
    const struct block_cfg *b = &m->blk[l - 1];
    real s = (real)(attn ? b->s_attn : b->s_ffn);
    struct sub_cfg c = {
        .attn = attn, .post = b->post, .sandwich = b->sandwich,
        .fb = b->residual == RES_LAYERSCALE || b->residual == RES_SKIPINIT,
        .s_in = b->s_pos == LNS_BEFORE_LN ? s : 1,
        .s_out = b->s_pos == LNS_AFTER_LN ? s : 1,
        .a_br = b->s_pos == LNS_AFTER_SUBLAYER ? s : 1,
        .s_res = b->s_pos == LNS_AFTER_RESIDUAL ? s : 1,
        .alpha = (real)b->alpha,
    };
    c.generic = c.sandwich || c.fb;
    return c;
}

static inline size_t woff(const struct model *m, int l, int k)
{
    return m->woff[(size_t)l * P_KIND_COUNT + k];
}

/* master weight, its gradient, and the matmuls' copy */
static inline real *W(const struct model *m, int l, int k)
{
    return m->params + m->roff[(size_t)l * P_KIND_COUNT + k];
}
static inline real *DW(const struct model *m, int l, int k) { return m->grads + woff(m, l, k); }
static inline const act *WA(const struct model *m, int l, int k)
{
    return act_at_c(m->ops, m->wact, woff(m, l, k));
}
/* a norm gain's gradient: none when the gains are frozen */
static inline real *DG(const struct model *m, int l, int k)
{
    return m->blk[l - 1].frozen_gains ? NULL : DW(m, l, k);
}

/* model_forward.c: a training batch onto the backend; the forward's ops on
 * it; blocks from…L on the stream entering block `from`, then the final
 * norm into xf; the lm_head on xf. */
void model_load_batch(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                      real grad_scale);
void model_forward_ops(struct model *m, real grad_scale, real *logits_out);
void model_trunk_ops(struct model *m, int from, const act *in);
void model_head_ops(struct model *m, real grad_scale, real *logits_out);

#endif
