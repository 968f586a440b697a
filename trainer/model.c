/* The model's layout and allocation (model.h): the parameter buffer's
 * tensors, the activations each sub-layer keeps, the scratch of the
 * backward and of the variants' extra steps, the memory plan's extras, and
 * the tables that find a tensor. model_internal.h lists the model's other
 * files. */
#include "trainer/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_gain(enum param_kind k)
{
    return k == P_NORM_IN_ATTN || k == P_NORM_IN_FFN || k == P_NORM_OUT_ATTN ||
           k == P_NORM_OUT_FFN || k == P_FINAL_NORM;
}

/* With frozen gains, the buffer but the gains' spans (model.h). */
static int learn_ranges(struct model *m)
{
    int frozen = 0;
    for (int l = 0; l <= m->cfg.n_layers; l++)
        frozen |= m->blk[l].frozen_gains;
    if (!frozen)
        return 0;
    m->learn_ranges = malloc(2 * ((size_t)m->n_tensors + 1) * sizeof(size_t));
    if (!m->learn_ranges)
        return -1;
    size_t lo = 0;
    int n = 0;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        if (!is_gain(p->kind) || !m->blk[p->layer - 1].frozen_gains)
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

/* A tensor of spec/params.h's list placed in the buffer: fused ones
 * follow the tensor they continue; the FFN width is padded to f' (ld and
 * span as in param_info). */
static void place(struct model *m, const struct param_tensor *t, const char *name, int layer)
{
    size_t r = (size_t)t->rows, c = (size_t)t->cols, fp = (size_t)m->ffn_pad;
    int bias = t->kind == P_Q_BIAS || t->kind == P_K_BIAS || t->kind == P_V_BIAS;
    size_t ld = t->ndim == 1 ? (bias ? r : 1) : t->ffn_axis == 2 ? fp : c;
    size_t span = t->ffn_axis == 1 ? fp * c : t->ffn_axis == 2 ? r * fp : r * c;
    add_param(m, name, t->kind, layer, t->ndim, t->rows, t->cols, ld, span, !t->fused);
}

static void layout_params(struct model *m)
{
    const struct model_config *c = &m->cfg;
    const struct param_dims dims = {
        .vocab = c->vocab, .dim = c->dim, .ffn_dim = c->ffn_dim,
        .q_dim = (int64_t)c->n_heads * m->hd, .kv_dim = (int64_t)m->n_kv * m->hd,
        .qkv_bias = c->qkv_bias, .tied_embeddings = c->tied_embeddings,
    };
    int L = c->n_layers;
    struct param_tensor t[PARAMS_BLOCK_MAX];
    char nm[96];
    int n = params_outer(&dims, 0, t);
    for (int i = 0; i < n; i++)
        place(m, &t[i], t[i].name, 0);
    n = params_block(&dims, &c->norm, t);
    for (int l = 1; l <= L; l++) {
        m->n_params = (m->n_params + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
        m->block_first[l - 1] = m->n_params;
        for (int i = 0; i < n; i++) {
            snprintf(nm, sizeof(nm), "model.layers.%d.%s", l - 1, t[i].name);
            place(m, &t[i], nm, l);
        }
        m->block_end[l - 1] = m->n_params;
    }
    n = params_outer(&dims, 1, t);
    for (int i = 0; i < n; i++)
        place(m, &t[i], t[i].name, L + 1);
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

/* A shape the model computes only forward: NULL, or what it is. */
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
    m->blk = calloc((size_t)L + 1, sizeof(*m->blk));
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
    for (int l = 1; l <= L + 1; l++)
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
