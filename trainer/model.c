#include "trainer/model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/rng.h"

struct sub_acts {
    const real *in;      /* the residual stream entering the sub-layer */
    real *pre;           /* s·u when the depth scale sits before the norm */
    real *nin, *rin;     /* Pre-LN / sandwich input norm and its rstd */
    const real *core_in; /* what attention or the MLP saw */
    real *qr, *kr, *v, *att, *state;
    real *g, *u, *hs;
    real *f;             /* core output, depth-scaled in place when after_sublayer */
    real *fn, *rout;     /* sandwich output norm */
    real *fb;            /* LayerScale / SkipInit branch */
    real *r;             /* α·x + branch */
    real *out, *rpost;   /* Post-LN output norm; otherwise out == r */
};

#define W(m, l, k) ((m)->w[(size_t)(l) * P_KIND_COUNT + (k)])
#define DW(m, l, k) ((m)->dw[(size_t)(l) * P_KIND_COUNT + (k)])

static real *buf(struct model *m, size_t n, int *fail)
{
    m->bytes += n * sizeof(real);
    if (*fail)
        return NULL;
    real *p = m->ops->alloc(n);
    if (!p) {
        *fail = 1;
        return NULL;
    }
    m->allocs[m->n_allocs++] = p;
    return p;
}

static void add_param(struct model *m, const char *name, enum param_kind kind, int layer, int ndim,
                      int64_t r, int64_t c)
{
    struct param_info *p = &m->info[m->n_tensors++];
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->kind = kind;
    p->layer = layer;
    p->ndim = ndim;
    p->shape[0] = r;
    p->shape[1] = ndim == 2 ? c : 1;
    p->n = (size_t)r * (size_t)(ndim == 2 ? c : 1);
    p->offset = m->n_params;
    m->n_params += p->n;
}

static void layout_params(struct model *m)
{
    const struct model_config *c = &m->cfg;
    int d = c->dim, f = c->ffn_dim, L = c->n_layers;
    char nm[96];
    add_param(m, "model.embed_tokens.weight", P_EMBED, 0, 2, c->vocab, d);
    for (int l = 1; l <= L; l++) {
        const struct block_cfg *b = &m->blk[l - 1];
        m->block_first[l - 1] = m->n_params;
#define P(kind, suffix, nd, r, cc)                                                          \
    snprintf(nm, sizeof(nm), "model.layers.%d.%s", l - 1, suffix);                        \
    add_param(m, nm, kind, l, nd, r, cc)
        P(P_Q, "self_attn.q_proj.weight", 2, d, d);
        P(P_K, "self_attn.k_proj.weight", 2, d, d);
        P(P_V, "self_attn.v_proj.weight", 2, d, d);
        P(P_O, "self_attn.o_proj.weight", 2, d, d);
        P(P_GATE, "mlp.gate_proj.weight", 2, f, d);
        P(P_UP, "mlp.up_proj.weight", 2, f, d);
        P(P_DOWN, "mlp.down_proj.weight", 2, d, f);
        if (b->sandwich) {
            /* Gemma 2's names for the four norms of a sandwich block */
            P(P_NORM_IN_ATTN, "input_layernorm.weight", 1, d, 1);
            P(P_NORM_OUT_ATTN, "post_attention_layernorm.weight", 1, d, 1);
            P(P_NORM_IN_FFN, "pre_feedforward_layernorm.weight", 1, d, 1);
            P(P_NORM_OUT_FFN, "post_feedforward_layernorm.weight", 1, d, 1);
        } else {
            P(P_NORM_IN_ATTN, "input_layernorm.weight", 1, d, 1);
            P(P_NORM_IN_FFN, "post_attention_layernorm.weight", 1, d, 1);
        }
        if (b->residual == RES_LAYERSCALE) {
            P(P_LAMBDA_ATTN, "self_attn.layer_scale", 1, d, 1);
            P(P_LAMBDA_FFN, "mlp.layer_scale", 1, d, 1);
        } else if (b->residual == RES_SKIPINIT) {
            P(P_LAMBDA_ATTN, "self_attn.skip_alpha", 1, 1, 1);
            P(P_LAMBDA_FFN, "mlp.skip_alpha", 1, 1, 1);
        }
#undef P
        m->block_end[l - 1] = m->n_params;
    }
    add_param(m, "model.norm.weight", P_FINAL_NORM, L + 1, 1, d, 1);
    add_param(m, "lm_head.weight", P_HEAD, L + 1, 2, c->vocab, d);
}

/* At most 16 buffers per sub-layer, and a few for the model as a whole. */
enum { BUFFERS_PER_SUBLAYER = 16, MODEL_BUFFERS = 32 };

int model_create(struct model *m, const struct ops *ops, const struct model_config *cfg, int max_B,
                 char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->ops = ops;
    m->cfg = *cfg;
    m->max_B = max_B;
    int L = cfg->n_layers, d = cfg->dim, f = cfg->ffn_dim, T = cfg->seq_len, nh = cfg->n_heads;
    size_t N = (size_t)max_B * T;
    int maxtensors = 1 + L * 13 + 2;
    m->blk = calloc((size_t)L, sizeof(*m->blk));
    m->info = calloc((size_t)maxtensors, sizeof(*m->info));
    m->block_first = calloc((size_t)L, sizeof(size_t));
    m->block_end = calloc((size_t)L, sizeof(size_t));
    m->w = calloc((size_t)(L + 2) * P_KIND_COUNT, sizeof(real *));
    m->dw = calloc((size_t)(L + 2) * P_KIND_COUNT, sizeof(real *));
    m->stream = calloc((size_t)L + 1, sizeof(real *));
    m->acts = calloc((size_t)2 * L, sizeof(struct sub_acts));
    m->allocs = calloc((size_t)L * 2 * BUFFERS_PER_SUBLAYER + MODEL_BUFFERS, sizeof(void *));
    if (!m->blk || !m->info || !m->block_first || !m->block_end || !m->w || !m->dw || !m->stream ||
        !m->acts || !m->allocs) {
        snprintf(err, errlen, "out of host memory for the model tables");
        model_destroy(m);
        return -1;
    }
    for (int l = 1; l <= L; l++)
        variant_block(&cfg->norm, l, L, &m->blk[l - 1]);
    layout_params(m);

    int fail = 0;
    m->params = buf(m, m->n_params, &fail);
    m->grads = buf(m, m->n_params, &fail);
    for (int t = 0; !fail && t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        W(m, p->layer, p->kind) = m->params + p->offset;
        DW(m, p->layer, p->kind) = m->grads + p->offset;
    }
    m->tokens = fail ? NULL : ops->alloc_i32(N);
    m->targets = fail ? NULL : ops->alloc_i32(N);
    if (!fail && (!m->tokens || !m->targets))
        fail = 1;
    if (m->tokens)
        m->allocs[m->n_allocs++] = m->tokens;
    if (m->targets)
        m->allocs[m->n_allocs++] = m->targets;

    size_t Nd = N * d, Nf = N * f;
    m->stream[0] = buf(m, Nd, &fail);
    for (int i = 0; i < 2 * L; i++) {
        struct sub_acts *a = &m->acts[i];
        const struct block_cfg *b = &m->blk[i / 2];
        int attn = i % 2 == 0;
        double s = attn ? b->s_attn : b->s_ffn;
        if (b->s_pos == LNS_BEFORE_LN && s != 1.0)
            a->pre = buf(m, Nd, &fail);
        if (!b->post) {
            a->nin = buf(m, Nd, &fail);
            a->rin = buf(m, N, &fail);
        }
        if (attn) {
            a->qr = buf(m, Nd, &fail);
            a->kr = buf(m, Nd, &fail);
            a->v = buf(m, Nd, &fail);
            a->att = buf(m, Nd, &fail);
            a->state = buf(m, ops->attn_state_size(max_B, T, nh), &fail);
        } else {
            a->g = buf(m, Nf, &fail);
            a->u = buf(m, Nf, &fail);
            a->hs = buf(m, Nf, &fail);
        }
        a->f = buf(m, Nd, &fail);
        if (b->sandwich) {
            a->fn = buf(m, Nd, &fail);
            a->rout = buf(m, N, &fail);
        }
        if (b->residual == RES_LAYERSCALE || b->residual == RES_SKIPINIT)
            a->fb = buf(m, Nd, &fail);
        a->r = buf(m, Nd, &fail);
        if (b->post) {
            a->out = buf(m, Nd, &fail);
            a->rpost = buf(m, N, &fail);
        } else {
            a->out = a->r;
        }
        if (!attn)
            m->stream[i / 2 + 1] = a->out;
    }
    m->xf = buf(m, Nd, &fail);
    m->rstd_f = buf(m, N, &fail);
    m->logits = buf(m, N * (size_t)cfg->vocab, &fail);
    m->losses = buf(m, N, &fail);
    m->dstream[0] = buf(m, Nd, &fail);
    m->dstream[1] = buf(m, Nd, &fail);
    for (int i = 0; i < 8; i++)
        m->scratch[i] = buf(m, N * (size_t)(d > f ? d : f), &fail);
    if (fail) {
        size_t asked = m->bytes;
        model_destroy(m);
        snprintf(err, errlen,
                 "out of memory on %s: model dim %d, %d layers, ffn %d, vocab %d with a "
                 "micro-batch of %d × %d tokens asks for %.2f GiB (weights, gradients and "
                 "activations); lower train.micro_batch",
                 ops->name, d, L, f, cfg->vocab, max_B, T, (double)asked / (1 << 30));
        return -1;
    }
    return 0;
}

void model_destroy(struct model *m)
{
    for (int i = 0; m->allocs && i < m->n_allocs; i++)
        m->ops->free(m->allocs[i]);
    free(m->allocs);
    free(m->blk);
    free(m->info);
    free(m->block_first);
    free(m->block_end);
    free(m->w);
    free(m->dw);
    free(m->stream);
    free(m->acts);
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
    return 6.0 * matmul + 12.0 * c->n_layers * c->dim * (double)c->seq_len;
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
    real *host = malloc(m->n_params * sizeof(real));
    if (!host) {
        snprintf(err, errlen, "out of host memory for %zu initial weights", m->n_params);
        return -1;
    }
    int L = m->cfg.n_layers;
    for (int t = 0; t < m->n_tensors; t++) {
        const struct param_info *p = &m->info[t];
        real *dst = host + p->offset;
        /* the stream id names the tensor, not its position, so variants
         * that add tensors leave the others' values unchanged */
        struct rng r;
        rng_seed(&r, seed, (uint64_t)p->layer * 64 + p->kind);
        double fill = 0, std = 0;
        switch (p->kind) {
        case P_EMBED:
            std = sqrt(0.4);
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
        for (size_t i = 0; i < p->n; i++)
            dst[i] = (real)(std > 0 ? std * rng_normal(&r) : fill);
    }
    m->ops->upload(m->params, host, m->n_params);
    free(host);
    return 0;
}

/* ---- forward ---- */

static void core_fwd(struct model *m, int l, int attn, struct sub_acts *a, int N)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int d = c->dim, f = c->ffn_dim, hd = d / c->n_heads;
    const real *u = a->core_in;
    if (attn) {
        real *q = m->scratch[0], *k = m->scratch[1];
        o->matmul_fwd(q, u, W(m, l, P_Q), N, d, d);
        o->matmul_fwd(k, u, W(m, l, P_K), N, d, d);
        o->matmul_fwd(a->v, u, W(m, l, P_V), N, d, d);
        o->rope(a->qr, q, m->B, c->seq_len, c->n_heads, hd, (real)c->rope_theta, 1);
        o->rope(a->kr, k, m->B, c->seq_len, c->n_heads, hd, (real)c->rope_theta, 1);
        o->attention_fwd(a->att, a->state, a->qr, a->kr, a->v, m->B, c->seq_len, c->n_heads, hd);
        o->matmul_fwd(a->f, a->att, W(m, l, P_O), N, d, d);
    } else {
        o->matmul_fwd(a->g, u, W(m, l, P_GATE), N, d, f);
        o->matmul_fwd(a->u, u, W(m, l, P_UP), N, d, f);
        o->swiglu_fwd(a->hs, a->g, a->u, (size_t)N * f);
        o->matmul_fwd(a->f, a->hs, W(m, l, P_DOWN), N, f, d);
    }
}

static void sublayer_fwd(struct model *m, int l, int attn, struct sub_acts *a, const real *x, int N)
{
    const struct ops *o = m->ops;
    const struct block_cfg *b = &m->blk[l - 1];
    int d = m->cfg.dim;
    size_t Nd = (size_t)N * d;
    real s = (real)(attn ? b->s_attn : b->s_ffn), eps = (real)m->cfg.norm_eps;
    real s_ln = b->s_pos == LNS_AFTER_LN ? s : 1;
    const real *gin = W(m, l, attn ? P_NORM_IN_ATTN : P_NORM_IN_FFN);
    a->in = x;
    if (!b->post) {
        const real *u = x;
        if (a->pre) {
            o->axpby(a->pre, s, x, 0, Nd);
            u = a->pre;
        }
        o->rmsnorm_fwd(a->nin, a->rin, u, gin, N, d, s_ln, eps);
        a->core_in = a->nin;
    } else {
        a->core_in = x;
    }
    core_fwd(m, l, attn, a, N);
    const real *br = a->f;
    if (b->s_pos == LNS_AFTER_SUBLAYER && s != 1)
        o->axpby(a->f, 0, a->f, s, Nd);
    if (b->sandwich) {
        o->rmsnorm_fwd(a->fn, a->rout, a->f, W(m, l, attn ? P_NORM_OUT_ATTN : P_NORM_OUT_FFN), N,
                       d, 1, eps);
        br = a->fn;
    }
    if (a->fb) {
        const real *lam = W(m, l, attn ? P_LAMBDA_ATTN : P_LAMBDA_FFN);
        o->chscale_fwd(a->fb, br, lam, N, d, b->residual == RES_SKIPINIT ? 1 : d);
        br = a->fb;
    }
    o->copy(a->r, br, Nd);
    o->axpby(a->r, (real)b->alpha, x, 1, Nd);
    if (b->post) {
        const real *u = a->r;
        if (a->pre) {
            o->axpby(a->pre, s, a->r, 0, Nd);
            u = a->pre;
        }
        o->rmsnorm_fwd(a->out, a->rpost, u, gin, N, d, s_ln, eps);
    }
    if (b->s_pos == LNS_AFTER_RESIDUAL && s != 1)
        o->axpby(a->out, 0, a->out, s, Nd);
}

double model_forward(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                     real grad_scale)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int N = B * c->seq_len, d = c->dim, L = c->n_layers;
    m->B = B;
    o->upload_i32(m->tokens, tokens, (size_t)N);
    o->upload_i32(m->targets, targets, (size_t)N);
    o->embedding_fwd(m->stream[0], m->tokens, W(m, 0, P_EMBED), N, d);
    for (int l = 1; l <= L; l++) {
        struct sub_acts *aa = &m->acts[2 * (l - 1)], *af = aa + 1;
        if (m->skip && m->skip[l - 1]) {
            o->copy(m->stream[l], m->stream[l - 1], (size_t)N * d);
            continue;
        }
        sublayer_fwd(m, l, 1, aa, m->stream[l - 1], N);
        sublayer_fwd(m, l, 0, af, aa->out, N);
    }
    o->rmsnorm_fwd(m->xf, m->rstd_f, m->stream[L], W(m, L + 1, P_FINAL_NORM), N, d, 1,
                   (real)c->norm_eps);
    o->matmul_fwd(m->logits, m->xf, W(m, L + 1, P_HEAD), N, d, c->vocab);
    o->cross_entropy(m->losses, m->logits, m->targets, N, c->vocab, grad_scale);
    return o->sum(m->losses, (size_t)N);
}

/* ---- backward ---- */

/* dout is the gradient of the core output f (after the depth scale when
 * after_sublayer, which the caller has already undone); du receives the
 * gradient of the core input, accumulated. */
static void core_bwd(struct model *m, int l, int attn, struct sub_acts *a, const real *df, real *du,
                     int N)
{
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int d = c->dim, f = c->ffn_dim, hd = d / c->n_heads;
    const real *u = a->core_in;
    if (attn) {
        real *datt = m->scratch[3], *dqr = m->scratch[4], *dkr = m->scratch[5],
             *dv = m->scratch[6], *dq = m->scratch[7], *dk = m->scratch[4];
        o->zero(datt, (size_t)N * d);
        o->matmul_bwd(datt, DW(m, l, P_O), df, a->att, W(m, l, P_O), N, d, d);
        o->attention_bwd(dqr, dkr, dv, datt, a->state, a->qr, a->kr, a->v, m->B, c->seq_len,
                         c->n_heads, hd);
        o->rope(dq, dqr, m->B, c->seq_len, c->n_heads, hd, (real)c->rope_theta, -1);
        o->matmul_bwd(du, DW(m, l, P_Q), dq, u, W(m, l, P_Q), N, d, d);
        o->rope(dk, dkr, m->B, c->seq_len, c->n_heads, hd, (real)c->rope_theta, -1);
        o->matmul_bwd(du, DW(m, l, P_K), dk, u, W(m, l, P_K), N, d, d);
        o->matmul_bwd(du, DW(m, l, P_V), dv, u, W(m, l, P_V), N, d, d);
    } else {
        real *dhs = m->scratch[3], *dg = m->scratch[4], *dup = m->scratch[5];
        o->zero(dhs, (size_t)N * f);
        o->matmul_bwd(dhs, DW(m, l, P_DOWN), df, a->hs, W(m, l, P_DOWN), N, f, d);
        o->swiglu_bwd(dg, dup, dhs, a->g, a->u, (size_t)N * f);
        o->matmul_bwd(du, DW(m, l, P_GATE), dg, u, W(m, l, P_GATE), N, d, f);
        o->matmul_bwd(du, DW(m, l, P_UP), dup, u, W(m, l, P_UP), N, d, f);
    }
}

/* g: gradient of the sub-layer output (overwritten as scratch); dx receives
 * the gradient of its input x (overwritten). Scratch 0–2 are this
 * function's, 3–7 belong to core_bwd. */
static void sublayer_bwd(struct model *m, int l, int attn, struct sub_acts *a, real *g, real *dx,
                         int N)
{
    const struct ops *o = m->ops;
    const struct block_cfg *b = &m->blk[l - 1];
    int d = m->cfg.dim;
    size_t Nd = (size_t)N * d;
    real s = (real)(attn ? b->s_attn : b->s_ffn);
    real s_ln = b->s_pos == LNS_AFTER_LN ? s : 1;
    const real *gin = W(m, l, attn ? P_NORM_IN_ATTN : P_NORM_IN_FFN);
    real *dgin = DW(m, l, attn ? P_NORM_IN_ATTN : P_NORM_IN_FFN);
    real *t0 = m->scratch[0], *t1 = m->scratch[1], *t2 = m->scratch[2];

    if (b->s_pos == LNS_AFTER_RESIDUAL && s != 1)
        o->axpby(g, 0, g, s, Nd);
    real *dr = g;
    if (b->post) {
        o->zero(t0, Nd);
        o->rmsnorm_bwd(t0, dgin, g, a->pre ? a->pre : a->r, gin, a->rpost, N, d, s_ln);
        if (a->pre)
            o->axpby(t0, 0, t0, s, Nd);
        dr = t0;
    }
    o->axpby(dx, (real)b->alpha, dr, 0, Nd);
    const real *df = dr;
    if (a->fb) {
        const real *lam = W(m, l, attn ? P_LAMBDA_ATTN : P_LAMBDA_FFN);
        o->zero(t1, Nd);
        o->chscale_bwd(t1, DW(m, l, attn ? P_LAMBDA_ATTN : P_LAMBDA_FFN), dr,
                       b->sandwich ? a->fn : a->f, lam, N, d, b->residual == RES_SKIPINIT ? 1 : d);
        df = t1;
    }
    if (b->sandwich) {
        o->zero(t2, Nd);
        o->rmsnorm_bwd(t2, DW(m, l, attn ? P_NORM_OUT_ATTN : P_NORM_OUT_FFN), df, a->f,
                       W(m, l, attn ? P_NORM_OUT_ATTN : P_NORM_OUT_FFN), a->rout, N, d, 1);
        df = t2;
    }
    if (b->s_pos == LNS_AFTER_SUBLAYER && s != 1) {
        o->axpby(t1, s, df, 0, Nd);
        df = t1;
    }
    if (b->post) {
        core_bwd(m, l, attn, a, df, dx, N);
        return;
    }
    o->zero(t0, Nd);
    core_bwd(m, l, attn, a, df, t0, N);
    if (a->pre) {
        o->zero(t2, Nd);
        o->rmsnorm_bwd(t2, dgin, t0, a->pre, gin, a->rin, N, d, s_ln);
        o->axpby(dx, s, t2, 1, Nd);
    } else {
        o->rmsnorm_bwd(dx, dgin, t0, a->in, gin, a->rin, N, d, s_ln);
    }
}

void model_backward(struct model *m)
{
    assert(!m->skip);
    const struct ops *o = m->ops;
    const struct model_config *c = &m->cfg;
    int N = m->B * c->seq_len, d = c->dim, L = c->n_layers;
    size_t Nd = (size_t)N * d;
    /* the stream's gradient alternates between two buffers: each sub-layer
     * reads its output's gradient from one and writes its input's to the other */
    real *dxf = m->scratch[0], *ga = m->dstream[0], *gnext = m->dstream[1];
    o->zero(dxf, Nd);
    o->matmul_bwd(dxf, DW(m, L + 1, P_HEAD), m->logits, m->xf, W(m, L + 1, P_HEAD), N, d, c->vocab);
    o->zero(ga, Nd);
    o->rmsnorm_bwd(ga, DW(m, L + 1, P_FINAL_NORM), dxf, m->stream[L], W(m, L + 1, P_FINAL_NORM),
                   m->rstd_f, N, d, 1);
    for (int l = L; l >= 1; l--) {
        struct sub_acts *aa = &m->acts[2 * (l - 1)], *af = aa + 1;
        sublayer_bwd(m, l, 0, af, ga, gnext, N);
        sublayer_bwd(m, l, 1, aa, gnext, ga, N);
    }
    o->embedding_bwd(DW(m, 0, P_EMBED), ga, m->tokens, N, d);
}
