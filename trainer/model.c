/* The model (model.h) in one file, over 600 lines on purpose: the layout
 * of the parameter and activation buffers, the forward and the backward
 * share private structures (sub_acts, sub_cfg) and mirror each other step
 * for step, and the CUDA backend was verified against exactly this code;
 * read the forward and its backward side by side here rather than across
 * files. */
#include "trainer/model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/bf16.h"
#include "trainer/rng.h"

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

static struct sub_cfg sub_cfg(const struct model *m, int l, int attn)
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

static size_t woff(const struct model *m, int l, int k)
{
    return m->woff[(size_t)l * P_KIND_COUNT + k];
}

/* master weight, its gradient, and the matmuls' copy */
static real *W(const struct model *m, int l, int k)
{
    return m->params + m->roff[(size_t)l * P_KIND_COUNT + k];
}
static real *DW(const struct model *m, int l, int k) { return m->grads + woff(m, l, k); }
static const act *WA(const struct model *m, int l, int k)
{
    return act_at_c(m->ops, m->wact, woff(m, l, k));
}
/* a norm gain's gradient: none when the gains are frozen */
static real *DG(const struct model *m, int l, int k)
{
    return m->cfg.norm.gains == GAINS_FROZEN ? NULL : DW(m, l, k);
}

static int is_gain(enum param_kind k)
{
    return k == P_NORM_IN_ATTN || k == P_NORM_IN_FFN || k == P_NORM_OUT_ATTN ||
           k == P_NORM_OUT_FFN || k == P_FINAL_NORM;
}

/* With frozen gains, the buffer but the gains' spans (model.h). */
static int learn_ranges(struct model *m)
{
    if (m->cfg.norm.gains != GAINS_FROZEN)
        return 0;
    m->learn_ranges = malloc(2 * ((size_t)m->n_tensors + 1) * sizeof(size_t));
    if (!m->learn_ranges)
        return -1;
    size_t lo = 0;
    int n = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        if (!is_gain(p->kind))
            continue;
        if (p->offset > lo) {
            m->learn_ranges[2 * n] = lo;
            m->learn_ranges[2 * n + 1] = p->offset;
            n++;
        }
        lo = p->offset + p->span;
    }
    if (m->n_params > lo) {
        m->learn_ranges[2 * n] = lo;
        m->learn_ranges[2 * n + 1] = m->n_params;
        n++;
    }
    m->n_learn_ranges = n;
    return 0;
}

static act *rows(const struct model *m, act *p, size_t n0, size_t width)
{
    return act_at(m->ops, p, n0 * width);
}

static void track(struct model *m, void *p, size_t bytes, int *fail)
{
    m->bytes += bytes;
    if (*fail)
        return;
    if (!p) {
        *fail = 1;
        return;
    }
    m->allocs[m->n_allocs++] = p;
}

static real *buf(struct model *m, size_t n, int *fail)
{
    real *p = *fail ? NULL : m->ops->alloc(n);
    track(m, p, n * sizeof(real), fail);
    return p;
}

static act *abuf(struct model *m, size_t n, int *fail)
{
    act *p = *fail ? NULL : m->ops->alloc_act(n);
    track(m, p, n * m->ops->act_bytes, fail);
    return p;
}

static int32_t *ibuf(struct model *m, size_t n, int *fail)
{
    int32_t *p = *fail ? NULL : m->ops->alloc_i32(n);
    track(m, p, n * sizeof(int32_t), fail);
    return p;
}

/* aligned: start on a PARAM_ALIGN boundary (a tensor that continues a fused
 * weight does not); ld and span as in param_info */
static void add_param(struct model *m, const char *name, enum param_kind kind, int layer, int ndim,
                      int64_t r, int64_t c, size_t ld, size_t span, int aligned)
{
    struct param_info *p = &m->info[m->n_tensors++];
    if (aligned)
        m->n_params = (m->n_params + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->kind = kind;
    p->layer = layer;
    p->ndim = ndim;
    p->shape[0] = r;
    p->shape[1] = ndim == 2 ? c : 1;
    p->n = (size_t)r * (size_t)p->shape[1];
    p->ld = ld;
    p->span = span;
    p->offset = m->n_params;
    m->n_params += span;
    m->n_weights += p->n;
}

static void layout_params(struct model *m)
{
    const struct model_config *c = &m->cfg;
    size_t d = (size_t)c->dim, f = (size_t)c->ffn_dim, fp = (size_t)m->ffn_pad;
    size_t qd = (size_t)c->n_heads * m->hd, kvd = (size_t)m->n_kv * m->hd;
    int L = c->n_layers;
    char nm[96];
    add_param(m, "model.embed_tokens.weight", P_EMBED, 0, 2, c->vocab, d, d, c->vocab * d, 1);
    for (int l = 1; l <= L; l++) {
        const struct block_cfg *b = &m->blk[l - 1];
        m->n_params = (m->n_params + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
        m->block_first[l - 1] = m->n_params;
#define P(kind, suffix, nd, r, cc, ld, span, al)                                            \
    snprintf(nm, sizeof(nm), "model.layers.%d.%s", l - 1, suffix);                        \
    add_param(m, nm, kind, l, nd, r, cc, ld, span, al)
        P(P_Q, "self_attn.q_proj.weight", 2, qd, d, d, qd * d, 1);
        P(P_K, "self_attn.k_proj.weight", 2, kvd, d, d, kvd * d, 0);
        P(P_V, "self_attn.v_proj.weight", 2, kvd, d, d, kvd * d, 0);
        if (c->qkv_bias) {
            P(P_Q_BIAS, "self_attn.q_proj.bias", 1, qd, 0, qd, qd, 1);
            P(P_K_BIAS, "self_attn.k_proj.bias", 1, kvd, 0, kvd, kvd, 0);
            P(P_V_BIAS, "self_attn.v_proj.bias", 1, kvd, 0, kvd, kvd, 0);
        }
        P(P_O, "self_attn.o_proj.weight", 2, d, qd, qd, d * qd, 1);
        P(P_GATE, "mlp.gate_proj.weight", 2, f, d, d, fp * d, 1);
        P(P_UP, "mlp.up_proj.weight", 2, f, d, d, fp * d, 0);
        P(P_DOWN, "mlp.down_proj.weight", 2, d, f, fp, d * fp, 1);
        if (b->sandwich) {
            /* Gemma 2's names for the four norms of a sandwich block */
            P(P_NORM_IN_ATTN, "input_layernorm.weight", 1, d, 1, 1, d, 1);
            P(P_NORM_OUT_ATTN, "post_attention_layernorm.weight", 1, d, 1, 1, d, 1);
            P(P_NORM_IN_FFN, "pre_feedforward_layernorm.weight", 1, d, 1, 1, d, 1);
            P(P_NORM_OUT_FFN, "post_feedforward_layernorm.weight", 1, d, 1, 1, d, 1);
        } else {
            P(P_NORM_IN_ATTN, "input_layernorm.weight", 1, d, 1, 1, d, 1);
            P(P_NORM_IN_FFN, "post_attention_layernorm.weight", 1, d, 1, 1, d, 1);
        }
        if (b->residual == RES_LAYERSCALE) {
            P(P_LAMBDA_ATTN, "self_attn.layer_scale", 1, d, 1, 1, d, 1);
            P(P_LAMBDA_FFN, "mlp.layer_scale", 1, d, 1, 1, d, 1);
        } else if (b->residual == RES_SKIPINIT) {
            P(P_LAMBDA_ATTN, "self_attn.skip_alpha", 1, 1, 1, 1, 1, 1);
            P(P_LAMBDA_FFN, "mlp.skip_alpha", 1, 1, 1, 1, 1, 1);
        }
#undef P
        m->block_end[l - 1] = m->n_params;
    }
    add_param(m, "model.norm.weight", P_FINAL_NORM, L + 1, 1, d, 1, 1, d, 1);
    if (!c->tied_embeddings)
        add_param(m, "lm_head.weight", P_HEAD, L + 1, 2, c->vocab, d, d, c->vocab * d, 1);
    m->n_params = (m->n_params + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
}

/* Buffers: per sub-layer at most 10, and the model's own. */
enum { BUFFERS_PER_SUBLAYER = 10, MODEL_BUFFERS = 40 };

static void rope_tables(const struct model_config *c, int hd, real *cos_h, real *sin_h)
{
    int h2 = hd / 2;
    for (int t = 0; t < c->seq_len; t++)
        for (int i = 0; i < h2; i++) {
            double a = t * (c->rope_freq ? c->rope_freq[i] : pow(c->rope_theta, -2.0 * i / hd));
            cos_h[(size_t)t * h2 + i] = (real)cos(a);
            sin_h[(size_t)t * h2 + i] = (real)sin(a);
        }
}

/* A shape model.c computes only forward: NULL, or what it is. */
static const char *forward_only_shape(const struct model_config *c, int n_kv)
{
    if (n_kv != c->n_heads)
        return "grouped-query attention";
    if (c->qkv_bias)
        return "q/k/v biases";
    if (c->tied_embeddings)
        return "tied embeddings";
    return NULL;
}

/* Activation buffers of one sub-layer: forward_only, every layer's share
 * the first one's (the slot), but for the residual stream. */
static act *sub_abuf(struct model *m, act **slot, size_t n, int *fail)
{
    if (!m->cfg.forward_only)
        return abuf(m, n, fail);
    if (!*slot)
        *slot = abuf(m, n, fail);
    return *slot;
}

static real *sub_buf(struct model *m, real **slot, size_t n, int *fail)
{
    if (!m->cfg.forward_only)
        return buf(m, n, fail);
    if (!*slot)
        *slot = buf(m, n, fail);
    return *slot;
}

/* Where act is not real, a forward-only model keeps as real only the
 * vectors the ops take as real (norm gains, channel scales, biases):
 * m->roff places them one after another. */
static int compact_params(struct model *m)
{
    int L = m->cfg.n_layers;
    size_t n = (size_t)(L + 2) * P_KIND_COUNT;
    m->roff = malloc(n * sizeof(size_t));
    if (!m->roff)
        return -1;
    memset(m->roff, 0xff, n * sizeof(size_t));
    size_t off = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t], *q = t ? p - 1 : NULL;
        if (p->ndim != 1)
            continue;
        /* a vector that continues a fused one (the q, k, v biases) stays next to it */
        if (!q || q->ndim != 1 || p->offset != q->offset + q->span)
            off = (off + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
        m->roff[(size_t)p->layer * P_KIND_COUNT + p->kind] = off;
        off += p->span;
    }
    m->n_real = off;
    return 0;
}

/* The memory plan (model_memory.c) for N rows, from the bytes the
 * sub-layers' activations took and what each extra would take: the
 * backward's scratch a second time (d_wide, d_mid, a third stream
 * gradient and those of tmp[0..2] the variants use: tmp0..tmp2) where the
 * weight gradients run beside, SwiGLU's output of every layer. */
static int speed_extras(struct model *m, size_t N, size_t wide, size_t mid, int tmp0, int tmp1,
                        int tmp2, size_t activations, char *err, size_t errlen)
{
    const struct ops *o = m->ops;
    size_t Nd = N * (size_t)m->cfg.dim, a = o->act_bytes;
    int fwd = m->cfg.forward_only;
    struct model_memory_need need = {
        .N = (int)N, .V = m->cfg.vocab, .forward_only = fwd,
        .beside = !fwd && o->wgrad_beside && o->wgrad_beside(),
        .act_bytes = a, .activations = activations,
        .beside_bytes = (N * (wide + mid) + Nd * (size_t)(1 + tmp0 + tmp1 + tmp2)) * a,
        .swiglu_bytes = (size_t)m->cfg.n_layers * N * (size_t)m->ffn_pad * a,
    };
    return model_memory_plan(&need, &m->mem, err, errlen);
}

int model_create(struct model *m, const struct ops *ops, const struct model_config *cfg, int max_B,
                 char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->ops = ops;
    m->cfg = *cfg;
    m->cfg.rope_freq = NULL;
    m->max_B = max_B;
    int L = cfg->n_layers, d = cfg->dim, T = cfg->seq_len, nh = cfg->n_heads;
    int fwd = cfg->forward_only;
    m->n_kv = cfg->n_kv_heads > 0 ? cfg->n_kv_heads : nh;
    m->hd = cfg->head_dim > 0 ? cfg->head_dim : d / nh;
    const char *why = nh % m->n_kv ? "the key/value heads do not divide the query heads"
                      : m->hd % 2  ? "RoPE needs an even head size"
                                   : NULL;
    const char *shape = forward_only_shape(cfg, m->n_kv);
    if (why || (shape && !fwd)) {
        if (why)
            snprintf(err, errlen, "model: %s", why);
        else
            snprintf(err, errlen, "model: %s is computed forward only (analyses), not trained",
                     shape);
        return -1;
    }
    m->ffn_pad = (cfg->ffn_dim + 7) / 8 * 8;
    int fp = m->ffn_pad, hd = m->hd;
    size_t qd = (size_t)nh * hd, kvd = (size_t)m->n_kv * hd;
    size_t N = (size_t)max_B * T;
    int maxtensors = 1 + L * 16 + 2;
    size_t h2 = (size_t)T * (hd / 2);
    m->blk = calloc((size_t)L, sizeof(*m->blk));
    m->info = calloc((size_t)maxtensors, sizeof(*m->info));
    m->block_first = calloc((size_t)L, sizeof(size_t));
    m->block_end = calloc((size_t)L, sizeof(size_t));
    m->woff = malloc((size_t)(L + 2) * P_KIND_COUNT * sizeof(size_t));
    m->stream = calloc((size_t)L + 1, sizeof(act *));
    m->acts = calloc((size_t)2 * L, sizeof(struct sub_acts));
    m->allocs = calloc((size_t)L * 2 * BUFFERS_PER_SUBLAYER + MODEL_BUFFERS, sizeof(void *));
    m->h_pos = malloc(N * sizeof(int32_t));
    m->h_start = malloc((N + 1) * sizeof(int32_t));
    m->h_count = malloc(((size_t)cfg->vocab + 1) * sizeof(int32_t));
    real *rope_h = malloc(2 * h2 * sizeof(real) + 1);
    if (!m->blk || !m->info || !m->block_first || !m->block_end || !m->woff || !m->stream ||
        !m->acts || !m->allocs || !m->h_pos || !m->h_start || !m->h_count || !rope_h) {
        snprintf(err, errlen, "out of host memory for the model tables");
        free(rope_h);
        model_destroy(m);
        return -1;
    }
    memset(m->woff, 0xff, (size_t)(L + 2) * P_KIND_COUNT * sizeof(size_t));
    for (int l = 1; l <= L; l++)
        variant_block(&cfg->norm, l, L, &m->blk[l - 1]);
    layout_params(m);
    for (int t = 0; t < m->n_tensors; t++)
        m->woff[(size_t)m->info[t].layer * P_KIND_COUNT + m->info[t].kind] = m->info[t].offset;
    if (cfg->tied_embeddings)
        m->woff[(size_t)(L + 1) * P_KIND_COUNT + P_HEAD] = m->woff[P_EMBED];
    m->roff = m->woff;
    m->n_real = m->n_params;
    if ((fwd && !ops->act_is_real && compact_params(m)) || learn_ranges(m)) {
        snprintf(err, errlen, "out of host memory for the model tables");
        free(rope_h);
        model_destroy(m);
        return -1;
    }

    int fail = 0;
    m->params = buf(m, m->n_real, &fail);
    m->grads = fwd ? NULL : buf(m, m->n_params, &fail);
    m->wact = ops->act_is_real ? (act *)m->params : abuf(m, m->n_params, &fail);
    m->tokens = ibuf(m, N, &fail);
    m->targets = ibuf(m, N, &fail);
    if (!fwd) {
        m->emb_pos = ibuf(m, N, &fail);
        m->emb_start = ibuf(m, N + 1, &fail);
    }
    m->rope_cos = buf(m, h2, &fail);
    m->rope_sin = buf(m, h2, &fail);

    size_t Nd = N * d, Nf = N * fp;
    int any_post = 0, any_generic = 0, any_fb = 0, any_sandwich = 0;
    struct sub_acts shared[2];
    memset(shared, 0, sizeof(shared));
    m->stream[0] = abuf(m, Nd, &fail);
    size_t before_acts = m->bytes;
    for (int i = 0; i < 2 * L; i++) {
        struct sub_acts *a = &m->acts[i], *sh = &shared[i % 2];
        struct sub_cfg c = sub_cfg(m, i / 2 + 1, i % 2 == 0);
        any_post |= c.post;
        any_generic |= c.generic;
        any_fb |= c.fb;
        any_sandwich |= c.sandwich;
        if (!c.post) {
            a->u = sub_abuf(m, &sh->u, Nd, &fail);
            a->rin = sub_buf(m, &sh->rin, N, &fail);
        }
        if (c.attn) {
            a->qkv = sub_abuf(m, &sh->qkv, 3 * N * qd, &fail);
            if (m->n_kv != nh)
                a->qkvp = sub_abuf(m, &sh->qkvp, N * (qd + 2 * kvd), &fail);
            a->att = sub_abuf(m, &sh->att, N * qd, &fail);
            a->state = sub_buf(m, &sh->state, ops->attn_state_size(max_B, T, nh, hd), &fail);
        } else {
            a->gu = sub_abuf(m, &sh->gu, 2 * Nf, &fail);
        }
        if (c.generic)
            a->f = sub_abuf(m, &sh->f, Nd, &fail);
        if (c.sandwich) {
            a->rout = sub_buf(m, &sh->rout, N, &fail);
            if (c.fb)
                a->fn = sub_abuf(m, &sh->fn, Nd, &fail);
        }
        /* the stream itself, the MLP sub-layer's output, is every layer's own */
        int stream_out = !c.attn;
        a->r = stream_out && !c.post ? abuf(m, Nd, &fail) : sub_abuf(m, &sh->r, Nd, &fail);
        if (c.post) {
            a->out = stream_out ? abuf(m, Nd, &fail) : sub_abuf(m, &sh->out, Nd, &fail);
            a->rpost = sub_buf(m, &sh->rpost, N, &fail);
        } else {
            a->out = a->r;
        }
        if (!c.attn)
            m->stream[i / 2 + 1] = a->out;
    }
    size_t wide = 3 * qd > 2 * (size_t)fp ? 3 * qd : 2 * (size_t)fp;
    size_t mid = qd > (size_t)fp ? qd : (size_t)fp;
    mid = mid > (size_t)d ? mid : (size_t)d;
    if (speed_extras(m, N, wide, mid, any_post || any_generic, any_fb, any_sandwich,
                     m->bytes - before_acts, err, errlen) != 0) {
        free(rope_h);
        model_destroy(m);
        return -1;
    }
    for (int i = 1; i < 2 * L && m->mem.keep_swiglu; i += 2)
        m->acts[i].h = abuf(m, Nf, &fail);
    m->logit_rows = m->mem.logit_rows;
    m->rstd_f = buf(m, N, &fail);
    m->logits = abuf(m, (size_t)m->logit_rows * cfg->vocab, &fail);
    m->losses = buf(m, N, &fail);
    m->norm_tmp = abuf(m, Nd, &fail);
    m->d_mid = abuf(m, N * mid, &fail);
    if (!fwd) {
        m->dstream[0] = abuf(m, Nd, &fail);
        m->dstream[1] = abuf(m, Nd, &fail);
        m->d_wide = abuf(m, N * wide, &fail);
    }
    /* Buffers whose lives do not overlap share memory: the final norm's
     * output is dead once the forward has taken the lm_head's gradient,
     * before the backward's first use of norm_tmp; that gradient
     * (dxf) is consumed before the first sub-layer's backward writes
     * dstream[1]; SwiGLU's output is rewritten over its own gradient. */
    m->xf = m->norm_tmp;
    m->dxf = m->dstream[1];
    m->h_tmp = m->d_mid;
    if (!fwd && (any_post || any_generic))
        m->tmp[0] = abuf(m, Nd, &fail);
    if (!fwd && any_fb)
        m->tmp[1] = abuf(m, Nd, &fail);
    if (!fwd && any_sandwich)
        m->tmp[2] = abuf(m, Nd, &fail);
    if (m->mem.beside) {
        m->dstream[2] = abuf(m, Nd, &fail);
        m->alt.d_wide = abuf(m, N * wide, &fail);
        m->alt.d_mid = abuf(m, N * mid, &fail);
        for (int k = 0; k < 3; k++)
            if (m->tmp[k])
                m->alt.tmp[k] = abuf(m, Nd, &fail);
    }
    if (fail) {
        size_t asked = m->bytes;
        free(rope_h);
        model_destroy(m);
        snprintf(err, errlen,
                 "out of memory on %s: model dim %d, %d layers, ffn %d, vocab %d with a "
                 "micro-batch of %d × %d tokens asks for %.2f GiB (%s); lower %s",
                 ops->name, d, L, cfg->ffn_dim, cfg->vocab, max_B, T, (double)asked / (1 << 30),
                 fwd ? "weights and activations" : "weights, gradients and activations",
                 fwd ? "the batch" : "train.micro_batch");
        return -1;
    }
    rope_tables(cfg, hd, rope_h, rope_h + h2);
    ops->upload(m->rope_cos, rope_h, h2);
    ops->upload(m->rope_sin, rope_h + h2, h2);
    free(rope_h);
    return 0;
}

void model_destroy(struct model *m)
{
    if (m->rec.r)
        m->ops->recording_free(m->rec.r);
    if (m->loss_rows)
        m->ops->free(m->loss_rows);
    for (int i = 0; m->allocs && i < m->n_allocs; i++)
        m->ops->free(m->allocs[i]);
    free(m->allocs);
    free(m->blk);
    free(m->info);
    free(m->block_first);
    free(m->block_end);
    if (m->roff != m->woff)
        free(m->roff);
    free(m->woff);
    free(m->learn_ranges);
    free(m->stream);
    free(m->acts);
    free(m->h_pos);
    free(m->h_start);
    free(m->h_count);
    memset(m, 0, sizeof(*m));
}

const struct param_info *model_param(const struct model *m, int layer, enum param_kind kind)
{
    for (int t = 0; t < m->n_tensors; t++)
        if (m->info[t].layer == layer && m->info[t].kind == kind)
            return &m->info[t];
    return NULL;
}

double model_flops_per_token(const struct model *m)
{
    double matmul = 0;
    for (int t = 0; t < m->n_tensors; t++)
        if (m->info[t].ndim == 2 && m->info[t].kind != P_EMBED)
            matmul += (double)m->info[t].n;
    const struct model_config *c = &m->cfg;
    return 6.0 * matmul + 12.0 * c->n_layers * c->n_heads * m->hd * (double)c->seq_len;
}

void param_pack(const struct param_info *p, const real *image, real *dst)
{
    size_t cols = (size_t)p->shape[1];
    for (int64_t r = 0; r < p->shape[0]; r++)
        memcpy(dst + (size_t)r * cols, image + p->offset + (size_t)r * p->ld, cols * sizeof(real));
}

void param_unpack(const struct param_info *p, const real *src, real *image)
{
    size_t cols = (size_t)p->shape[1];
    for (int64_t r = 0; r < p->shape[0]; r++)
        memcpy(image + p->offset + (size_t)r * p->ld, src + (size_t)r * cols, cols * sizeof(real));
}

/* ---- initialisation ---- */

static double init_std(const struct model *m, const struct param_info *p)
{
    const struct norm_variant *v = &m->cfg.norm;
    int L = m->cfg.n_layers;
    double std = v->init_std;
    int out_proj = p->kind == P_O || p->kind == P_DOWN;
    switch (v->init) {
    case INIT_NORMAL:
        break;
    case INIT_SCALED:
        if (out_proj)
            std = v->init_std / sqrt(2.0 * L);
        break;
    case INIT_DEPTH_SCALED:
        if (out_proj)
            std = v->init_std / sqrt(2.0 * p->layer);
        break;
    case INIT_DEEPNORM:
        if (p->layer >= 1 && p->layer <= L && p->ndim == 2) {
            /* xavier_normal: gain·√(2/(fan_in+fan_out)); the code's gain (8L)^¼ on v,o,gate,up,down, 1 on q,k */
            double gain = (p->kind == P_Q || p->kind == P_K) ? 1.0 : pow(8.0 * L, 0.25);
            std = gain * sqrt(2.0 / (double)(p->shape[0] + p->shape[1]));
        }
        break;
    }
    return std;
}

int model_init_weights(struct model *m, uint64_t seed, char *err, size_t errlen)
{
    if (m->n_real != m->n_params) {
        snprintf(err, errlen, "a forward-only model on %s is loaded, not initialised",
                 m->ops->name);
        return -1;
    }
    real *host = calloc(m->n_params, sizeof(real));
    if (!host) {
        snprintf(err, errlen, "out of host memory for %zu initial weights", m->n_params);
        return -1;
    }
    int L = m->cfg.n_layers;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        /* the stream id names the tensor, not its position, so variants
         * that add tensors leave the others' values unchanged */
        struct rng r;
        rng_seed(&r, seed, (uint64_t)p->layer * 64 + p->kind);
        double fill = 0, std = 0;
        switch (p->kind) {
        case P_EMBED:
            std = m->cfg.embed_std;
            break;
        case P_NORM_IN_ATTN: case P_NORM_IN_FFN: case P_NORM_OUT_ATTN: case P_NORM_OUT_FFN:
        case P_FINAL_NORM:
            fill = 1;
            break;
        case P_LAMBDA_ATTN: case P_LAMBDA_FFN:
            fill = m->cfg.norm.branch_init > 0 ? m->cfg.norm.branch_init : 1.0 / sqrt((double)L);
            break;
        default:
            std = init_std(m, p);
        }
        for (size_t i = 0; i < p->n; i++) {
            real x = (real)(std > 0 ? std * rng_normal(&r) : fill);
            host[param_index(p, i)] = m->cfg.bf16 ? real_bf16(x) : x;
        }
    }
    m->ops->upload(m->params, host, m->n_params);
    free(host);
    model_sync_weights(m);
    return 0;
}

void model_sync_weights(struct model *m)
{
    if (!m->ops->act_is_real && m->n_real == m->n_params)
        m->ops->to_act(m->wact, m->params, m->n_params);
}

/* ---- forward ---- */

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

static void load_batch(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
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
static void trunk_ops(struct model *m, int from, const act *in)
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
static void head_ops(struct model *m, real grad_scale, real *logits_out)
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
static void forward_ops(struct model *m, real grad_scale, real *logits_out)
{
    m->ops->embedding_fwd(m->stream[0], m->tokens, WA(m, 0, P_EMBED), m->B * m->T, m->cfg.dim);
    trunk_ops(m, 1, m->stream[0]);
    head_ops(m, grad_scale, logits_out);
}

/* logits_out != NULL: the logits of every row also go there (host) */
static double forward(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                      real grad_scale, real *logits_out)
{
    load_batch(m, tokens, targets, B, grad_scale);
    forward_ops(m, grad_scale, logits_out);
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

void model_trunk(struct model *m, const int32_t *tokens, int B, int T)
{
    assert(T >= 1 && T <= m->cfg.seq_len && (size_t)B * T <= (size_t)m->max_B * m->cfg.seq_len);
    m->B = B;
    m->T = T;
    m->ops->upload_i32(m->tokens, tokens, (size_t)B * T);
    m->ops->embedding_fwd(m->stream[0], m->tokens, WA(m, 0, P_EMBED), B * T, m->cfg.dim);
    trunk_ops(m, 1, m->stream[0]);
}

void model_trunk_without(struct model *m, int l)
{
    assert(l >= 1 && l <= m->cfg.n_layers && !m->skip);
    trunk_ops(m, l + 1, m->stream[l - 1]);
}

double model_trunk_loss(struct model *m, const int32_t *targets)
{
    size_t N = (size_t)m->B * m->T;
    m->ops->upload_i32(m->targets, targets, N);
    head_ops(m, 0, NULL);
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

/* ---- backward ---- */

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

/* ---- a micro-batch replayed ---- */

/* Runs the loaded micro-batch's forward and backward from a recording
 * when the backend can record (ops.h): the first micro-batch of a shape
 * runs op by op, which settles what a backend sizes on first use
 * (cuBLASLt's plans, scratch memory); the second is recorded and
 * replayed, later ones replayed. A shape is the batch size and the loss
 * scale, the only values of the step that the ops take by value and the
 * model could change; everything else they take is a buffer. Returns 0
 * where the caller must run the ops itself. */
static int replayed(struct model *m, real grad_scale)
{
    const struct ops *o = m->ops;
    if (!o->record_begin || m->rec.off || m->grads_ready || m->skip)
        return 0;
    int same = m->rec.B == m->B && m->rec.scale == grad_scale;
    if (m->rec.r && !same) {
        o->recording_free(m->rec.r);
        m->rec.r = NULL;
    }
    if (!m->rec.r) {
        if (!same) {
            m->rec.B = m->B;
            m->rec.scale = grad_scale;
            return 0;
        }
        if (o->record_begin(m->rec.why, sizeof m->rec.why)) {
            m->rec.off = 1;
            return 0;
        }
        forward_ops(m, grad_scale, NULL);
        model_backward(m);
        m->rec.r = o->record_end(m->rec.why, sizeof m->rec.why);
        if (!m->rec.r) {
            m->rec.off = 1;
            return 0;
        }
    }
    if (o->replay(m->rec.r) != 0) {
        /* the backend's memory moved under it: op by op now, recorded anew next time */
        o->recording_free(m->rec.r);
        m->rec.r = NULL;
        return 0;
    }
    m->rec.replays++;
    return 1;
}

/* The micro-batch's n per-token losses after those kept before: a copy in
 * the backend's stream order. Reading their sum at once made the host wait
 * for the GPU at the end of every micro-batch, and the GPU then wait for
 * the host to sample, sort and upload the next one (the H200's profile:
 * 0.4-0.5 ms idle a micro-batch). The rows grow by doubling, in
 * the first update; where the memory is refused, the sum is read now. */
static void keep_losses(struct model *m, size_t n)
{
    const struct ops *o = m->ops;
    if (m->loss_n + n > m->loss_cap) {
        size_t cap = m->loss_cap ? 2 * m->loss_cap : n;
        while (cap < m->loss_n + n)
            cap *= 2;
        real *rows = o->alloc(cap);
        if (!rows) {
            m->loss_host += o->sum(m->losses, n);
            return;
        }
        if (m->loss_n)
            o->copy(rows, m->loss_rows, m->loss_n);
        if (m->loss_rows)
            o->free(m->loss_rows);
        m->loss_rows = rows;
        m->loss_cap = cap;
    }
    o->copy(m->loss_rows + m->loss_n, m->losses, n);
    m->loss_n += n;
}

void model_step(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                real grad_scale)
{
    load_batch(m, tokens, targets, B, grad_scale);
    if (!replayed(m, grad_scale)) {
        forward_ops(m, grad_scale, NULL);
        model_backward(m);
    }
    keep_losses(m, (size_t)B * m->cfg.seq_len);
}

double model_losses_take(struct model *m)
{
    double sum = m->loss_host + (m->loss_n ? m->ops->sum(m->loss_rows, m->loss_n) : 0);
    m->loss_host = 0;
    m->loss_n = 0;
    return sum;
}
